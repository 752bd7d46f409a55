"""Conversion by the API server: every example manifest of the four convertible kinds, in both
versions, is applied with ``kubectl apply`` and read back through the CRD conversion webhook.

- Read in the other version, each object equals what ``dynamo-webhook convert`` gives offline
  (metadata aside, except labels and annotations, where the private payload annotations live).
- Read in its own version, it equals the offline round trip (for a v1beta1 object the stored object
  itself), and that round trip keeps the manifest as the conversion contract says: no field lost
  (``app.review.compare`` semantics, the same rule as ``dynamo-webhook convert --check``).

The objects live in a namespace a valid namespace-scope Lease excludes from admission, so the
conversion path is judged alone: the admission scenarios cover the webhooks' decisions.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.review.compare import diff_paths, normalize
from tests.e2e.cluster import Cluster
from tests.e2e.objects import (
    ALPHA,
    BETA,
    convert_offline,
    in_namespace,
    load_manifests,
    namespace,
    other_version,
    resource,
    scope_lease,
    user_view,
)
from tests.e2e.schema_layer import apply_schema
from tests.e2e.testenv import wait_until

NS = "e2e-conversion"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def applied(cluster: Cluster) -> list[tuple[str, Obj]]:
    """(label, object as applied) for every manifest and its offline counterpart in the other version."""
    kubectl = cluster.kubectl
    namespace(kubectl, NS)
    kubectl.apply(scope_lease(NS))
    wait_until(lambda: cluster.service.readyz()[0] == 200, 10, "service ready")
    manifests = load_manifests()
    originals = [
        in_namespace(obj, NS, f"{obj['metadata']['name']}-{i}") for i, (_, obj) in enumerate(manifests)
    ]
    counterparts: list[Obj] = []
    for version in (ALPHA, BETA):
        picked = [o for o in originals if o["apiVersion"] != version]
        converted = convert_offline(picked, version)
        counterparts += [in_namespace(c, NS, f"{c['metadata']['name']}-{version[-7:]}") for c in converted]
    objs = [
        *zip((label for label, _ in manifests), originals, strict=True),
        *((f"offline {c['apiVersion']} of {c['metadata']['name']}", c) for c in counterparts),
    ]
    versions = {(o["kind"], o["apiVersion"]) for _, o in objs}
    assert len(versions) == 8, f"both versions of all four kinds expected, got {sorted(versions)}"
    # The Lease watcher sees the Lease within a moment; until then admission would check the objects.
    wait_until(lambda: kubectl.apply([o for _, o in objs], check=False).returncode == 0, 30, "kubectl apply")
    return objs


def not_kept(want: Any, got: Any, path: str = "") -> list[str]:
    """Paths of ``want`` that ``got`` lacks or holds differently (what ``got`` adds is not reported)."""
    if isinstance(want, dict) and isinstance(got, dict):
        return [
            p
            for k, v in want.items()
            for p in (not_kept(v, got[k], f"{path}.{k}") if k in got else [f"{path}.{k}"])
        ]
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [
            p for i, (a, b) in enumerate(zip(want, got, strict=True)) for p in not_kept(a, b, f"{path}[{i}]")
        ]
    return [] if want == got else [path or "."]


def _read(cluster: Cluster, obj: Obj, api_version: str) -> Obj:
    got: Obj = cluster.kubectl.get(resource(obj["kind"], api_version), obj["metadata"]["name"], NS)
    assert got["apiVersion"] == api_version
    return got


def through_api(obj: Obj, read_as: str) -> Obj:
    """What the API server returns for ``obj`` created as it is and read in ``read_as``: its schema layer
    on the request; the conversion to the storage version (v1beta1); the schema layer again on the
    read from etcd; the conversion to ``read_as``, pruned but not defaulted."""
    stored = apply_schema(obj)
    stored.pop("status", None)  # a create ignores status: the CRDs have the status subresource
    if stored["apiVersion"] != BETA:
        stored = convert_offline([stored], BETA)[0]
    out = apply_schema(stored)
    if read_as != BETA:
        out = apply_schema(convert_offline([out], read_as)[0], defaults=False)
    return comparable(out)


def comparable(obj: Obj) -> Obj:
    """:func:`user_view`: the payload annotations are compared byte for byte. They are written in Go's
    member order whatever the input's key order, so the manifest's order and the sorted keys the API
    server sends give the same bytes, as the operator's ``json.Marshal`` does."""
    return user_view(obj)


def test_read_in_the_other_version_equals_offline_conversion(
    cluster: Cluster, applied: list[tuple[str, Obj]]
) -> None:
    wrong: list[str] = []
    for label, obj in applied:
        target = other_version(obj["apiVersion"])
        served = comparable(_read(cluster, obj, target))
        expected = through_api(obj, target)
        if served != expected:
            wrong.append(f"{label} as {target}: {diff_paths(expected, served)}")
    assert not wrong, "\n".join(wrong)


def test_read_in_its_own_version_keeps_the_manifest(cluster: Cluster, applied: list[tuple[str, Obj]]) -> None:
    wrong: list[str] = []
    for label, obj in applied:
        own = obj["apiVersion"]
        served = comparable(_read(cluster, obj, own))
        expected = through_api(obj, own)
        if served != expected:
            wrong.append(f"{label}: differs from the expected object at {diff_paths(expected, served)}")
        # The contract: nothing the manifest says is lost or changed on the trip through the other
        # version (what the schema layer adds, defaults, is not the manifest's; a create ignores status).
        sent = apply_schema(obj, defaults=False)
        sent.pop("status", None)
        lost = not_kept(normalize(user_view(sent)), normalize(user_view(_read(cluster, obj, own))))
        if lost:
            wrong.append(f"{label}: the trip through {other_version(own)} changed {lost}")
    assert not wrong, "\n".join(wrong)


def test_lists_in_either_version_hold_every_object(cluster: Cluster, applied: list[tuple[str, Obj]]) -> None:
    """A LIST converts every item (one ConversionReview per page), not only single GETs."""
    for kind in {o["kind"] for _, o in applied}:
        names = sorted(o["metadata"]["name"] for _, o in applied if o["kind"] == kind)
        for version in (ALPHA, BETA):
            items = cluster.kubectl("get", resource(kind, version), "-n", NS, "-o", "json").json()["items"]
            assert sorted(i["metadata"]["name"] for i in items) == names
            assert {i["apiVersion"] for i in items} == {version}
