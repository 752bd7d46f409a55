"""LIST at scale through the conversion webhook: 500 DGDs stored as v1beta1 (created as v1alpha1, so
they carry the ``nvidia.com/dgd-spec`` payload annotation, as migrated objects do) listed as
v1alpha1, and 500 stored as v1alpha1 (the CRD's storage version switched for their creation)
listed as v1beta1. The API server converts each object through the webhook (one object per
ConversionReview) into its per-version watch cache and answers the LIST from there; the timings are
printed in the session summary.
"""

from __future__ import annotations

import copy
import re
import statistics
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import yaml

from tests.e2e.cluster import Cluster
from tests.e2e.legacy import set_storage_version, stored_versions
from tests.e2e.objects import ALPHA, BETA, convert_offline, namespace, user_view
from tests.e2e.schema_layer import apply_schema
from tests.e2e.testenv import ROOT, ControlPlane, wait_until

COUNT = 500
PLURAL = "dynamographdeployments"
CRD = f"{PLURAL}.nvidia.com"
SOURCE = ROOT / "examples" / "manifests" / "dgd-disagg-v1alpha1.yaml"
Obj = dict[str, Any]


def _objects(ns: str) -> list[Obj]:
    base = yaml.safe_load(SOURCE.read_text())
    objs = []
    for i in range(COUNT):
        obj = copy.deepcopy(base)
        obj["metadata"] = {"name": f"dgd-{i:03d}", "namespace": ns, "labels": {"e2e/index": str(i)}}
        objs.append(obj)
    return objs


def _path(ns: str, version: str) -> str:
    return f"/apis/nvidia.com/{version.split('/')[1]}/namespaces/{ns}/dynamographdeployments"


def _list(cp: ControlPlane, ns: str, version: str) -> tuple[float, list[Obj]]:
    start = time.perf_counter()
    status, body = cp.raw("GET", _path(ns, version), timeout=120)
    elapsed = time.perf_counter() - start
    assert status == 200, body[:2000]
    items: list[Obj] = orjson.loads(body)["items"]
    return elapsed, items


def conversion_histogram(cp: ControlPlane) -> dict[tuple[str, str], tuple[float, float]]:
    """(from, to) -> (seconds, calls) so far of the API server's per-CRD histogram of conversion
    webhook calls for DGDs."""
    status, body = cp.raw("GET", "/metrics")
    assert status == 200
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for line in body.decode().splitlines():
        if not line.startswith("apiserver_crd_conversion_webhook_duration_seconds_") or CRD not in line:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
        key = (labels.get("from_version", ""), labels.get("to_version", ""))
        seconds, calls = out.get(key, (0.0, 0.0))
        value = float(line.rsplit(" ", 1)[1])
        if line.startswith("apiserver_crd_conversion_webhook_duration_seconds_sum{"):
            out[key] = (seconds + value, calls)
        elif line.startswith("apiserver_crd_conversion_webhook_duration_seconds_count{"):
            out[key] = (seconds, calls + value)
    return out


@pytest.fixture(scope="module")
def seeded(cluster: Cluster, e2e_figures: list[str]) -> Iterator[dict[str, str]]:
    """namespace by storage version; 500 DGDs in each."""
    kubectl = cluster.kubectl
    stored_beta = namespace(kubectl, "e2e-list-beta")
    stored_alpha = namespace(kubectl, "e2e-list-alpha")
    before = conversion_histogram(cluster.cp)
    start = time.perf_counter()
    kubectl("create", "-f", "-", input=yaml.safe_dump_all(_objects(stored_beta)), timeout=600)
    elapsed = time.perf_counter() - start
    after = conversion_histogram(cluster.cp)
    calls = {
        k: (v[0] - before.get(k, (0.0, 0.0))[0], v[1] - before.get(k, (0.0, 0.0))[1])
        for k, v in after.items()
    }
    detail = ", ".join(
        f"{f}->{t}: {n:.0f} calls of {1000 * sec / n:.2f} ms"
        for (f, t), (sec, n) in sorted(calls.items())
        if n
    )
    e2e_figures.append(
        f"CREATE {COUNT} v1alpha1 DGDs with kubectl: {elapsed:.1f} s; conversion webhook calls as "
        f"the API server times them: {detail}"
    )
    set_storage_version(cluster, PLURAL, "v1alpha1")
    try:
        kubectl("create", "-f", "-", input=yaml.safe_dump_all(_objects(stored_alpha)), timeout=600)
    finally:
        set_storage_version(cluster, PLURAL, "v1beta1")
    stored = stored_versions(cluster.cp, PLURAL)
    for version, ns in ((BETA, stored_beta), (ALPHA, stored_alpha)):
        assert {stored[f"{ns}/dgd-{i:03d}"] for i in range(COUNT)} == {version.split("/")[1]}
    yield {BETA: stored_beta, ALPHA: stored_alpha}


@pytest.mark.parametrize(("stored", "listed"), [(BETA, ALPHA), (ALPHA, BETA)])
def test_list_500_converted(
    cluster: Cluster, seeded: dict[str, str], stored: str, listed: str, e2e_figures: list[str]
) -> None:
    """Timed as a client sees it, straight against the API server. The API server keeps a watch cache per
    served version, filled through one-object ConversionReviews as objects are written or read from
    etcd (the seeding figure gives those calls as the API server times them, one per object and
    direction); a LIST in the other version is then served from that cache without calling the
    webhook, so its cost per object is what remains on the API server's side."""
    ns = seeded[stored]
    cp = cluster.cp
    # After the CRD storage switch the API server answers 429 until the watch cache is filled again.
    wait_until(
        lambda: cp.raw("GET", _path(ns, stored), timeout=120)[0] == 200, 120, "the DGD watch cache", 0.5
    )
    native = statistics.median(_list(cp, ns, stored)[0] for _ in range(3)) * 1000
    first, items = _list(cp, ns, listed)
    warm = statistics.median(_list(cp, ns, listed)[0] for _ in range(3)) * 1000
    assert len(items) == COUNT
    assert {i["apiVersion"] for i in items} == {listed}
    # Every item is the conversion of what is stored: spot-check first, middle and last exactly.
    by_name = {i["metadata"]["name"]: i for i in items}
    for i in (0, COUNT // 2, COUNT - 1):
        name = f"dgd-{i:03d}"
        stored_obj = cluster.kubectl.get(
            f"dynamographdeployments.{stored.split('/')[1]}.nvidia.com", name, ns
        )
        expected = apply_schema(convert_offline([stored_obj], listed)[0], defaults=False)
        assert user_view(by_name[name]) == user_view(expected), name
    e2e_figures.append(
        f"LIST {COUNT} DGDs stored as {stored}, read as {listed}: first LIST {first * 1000:.0f} ms "
        f"({first * 1000 / COUNT:.3f} ms/object), later LISTs {warm:.0f} ms; the same LIST in the stored "
        f"version {native:.0f} ms"
    )
