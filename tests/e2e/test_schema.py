"""The schema layer of the real API server: what the CRD schema refuses (patterns, CEL rules) is refused
by the API server itself, before the validating webhook; where the service emulates a schema rule for
offline use (the topology-domain pattern, for ``lint``/``review``), its message agrees with the API
server's; the schema's rules inside the core types the CRDs embed (list-map keys, nested required
fields, nulls in lists) are answered by lint as by the API server."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from tests.apiserver.test_embedded import CASES as EMBEDDED
from tests.apiserver.test_openapi import CASES as CORE_TYPES
from tests.apiserver.test_openapi import document
from tests.e2e.admission import create_raw, offline_review
from tests.e2e.cluster import Cluster
from tests.e2e.objects import PLURALS, in_namespace, namespace
from tests.e2e.testenv import ROOT

NS = "e2e-schema"
Obj = dict[str, Any]
VALIDATE_DGD = "/validate/nvidia.com/v1beta1/dynamographdeployments"


@pytest.fixture(scope="module")
def ns(cluster: Cluster) -> str:
    return namespace(cluster.kubectl, NS)


def _dgd(name: str) -> Obj:
    obj: Obj = yaml.safe_load((ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text())
    return in_namespace(obj, NS, name)


def test_topology_domain_pattern_is_the_api_servers_and_the_service_says_the_same(
    cluster: Cluster, ns: str
) -> None:
    obj = _dgd("bad-domain")
    obj["spec"]["topologyConstraint"] = {"clusterTopologyName": "default", "packDomain": "Rack_1"}
    code, status = create_raw(cluster, obj)
    assert code == 422, status
    assert not status["message"].startswith("admission webhook"), "the validating webhook was reached"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "Rack_1": spec.topologyConstraint.packDomain in body should match '
            "'^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'",
            "field": "spec.topologyConstraint.packDomain",
        }
    ]
    # The service's own check (what `dynamo-webhook lint` reports for the same manifest) agrees.
    offline = offline_review(VALIDATE_DGD, obj)
    assert not offline["allowed"]
    assert offline["status"]["message"] == status["message"]


def test_cel_rule_is_enforced_before_the_webhook(cluster: Cluster, ns: str) -> None:
    obj = in_namespace(
        yaml.safe_load((ROOT / "examples" / "manifests" / "dgd-agg-v1alpha1.yaml").read_text()), NS, "cel"
    )
    obj["spec"]["pvcs"] = [{"name": "model-cache", "create": True}]
    code, status = create_raw(cluster, obj)
    assert code == 422, status
    assert not status["message"].startswith("admission webhook")
    assert "When create is true, size, storageClass, and volumeAccessMode are required" in status["message"]
    fixed = copy.deepcopy(obj)
    fixed["spec"]["pvcs"] = [
        {
            "name": "model-cache",
            "create": True,
            "size": "10Gi",
            "storageClass": "standard",
            "volumeAccessMode": "ReadWriteOnce",
        }
    ]
    code, status = create_raw(cluster, fixed)
    assert code == 201, status


def test_wrong_json_type_is_refused_by_the_defaulter_before_the_schema(cluster: Cluster, ns: str) -> None:
    """The API server calls the mutating webhooks before it validates against the schema, so a value of the
    wrong JSON type reaches the defaulter, whose typed decode refuses it (400, naming the field) as the
    operator's does; the schema's own message is never seen. Offline, ``review`` says the same."""
    obj = _dgd("wrong-type")
    obj["spec"]["components"][0]["replicas"] = "two"
    code, status = create_raw(cluster, obj)
    assert code == 400, status
    offline = offline_review("/mutate/nvidia.com/v1beta1/dynamographdeployments", obj)
    assert not offline["allowed"]
    assert status["message"] == (
        f'admission webhook "mdynamographdeployment.kb.io" denied the request: {offline["status"]["message"]}'
    )
    assert "spec.components[0].replicas" in status["message"]


def _lint_status(obj: Obj) -> Obj | None:
    """What ``dynamo-webhook lint`` answers for ``obj`` (the service's settings: the Checkpoint gate on)."""
    from apiserver import pipeline
    from app.cli.main import OfflineService
    from app.server.settings import Settings

    outcome = pipeline.create(obj, OfflineService(Settings(feature_checkpoint=True)), namespace=NS)
    return outcome.status


def _cel_cases() -> list[tuple[str, Obj]]:
    beta = _dgd("cel-beta")
    alpha = in_namespace(
        yaml.safe_load((ROOT / "examples" / "manifests" / "dgd-agg-v1alpha1.yaml").read_text()),
        NS,
        "cel-alpha",
    )
    service = next(iter(alpha["spec"]["services"]))
    cases: list[tuple[str, Obj]] = []

    def beta_case(name: str, edit: Any) -> None:
        obj = copy.deepcopy(beta)
        edit(obj["spec"])
        cases.append((name, obj))

    def alpha_case(name: str, edit: Any) -> None:
        obj = copy.deepcopy(alpha)
        edit(obj["spec"]["services"][service])
        cases.append((name, obj))

    beta_case("restart-on-create", lambda s: s.update(restart={"id": "now"}))
    beta_case(
        "names-unique-case-insensitively",
        lambda s: s["components"].append({**s["components"][0], "name": s["components"][0]["name"].upper()}),
    )
    beta_case(
        "gms-mode",
        lambda s: s["components"][0].update(
            experimental={"gpuMemoryService": {"extraClientContainers": ["a"], "mode": "InterPod"}}
        ),
    )
    beta_case(
        "gms-mode-defaulted",
        lambda s: s["components"][0].update(
            experimental={"gpuMemoryService": {"extraClientPods": [{"name": "p"}]}}
        ),
    )
    beta_case(
        "kv-policy", lambda s: s.update(experimental={"kvTransferPolicy": {"enforcement": "preferred"}})
    )
    beta_case(
        "label-key-prefix",
        lambda s: s.update(experimental={"kvTransferPolicy": {"labelKey": "a" * 254 + "/zone"}}),
    )
    beta_case(
        "epp-config-without-epp",
        lambda s: s["components"][0].update(eppConfig={"configMapRef": {"name": "x"}}),
    )
    beta_case(
        "sidecar-without-image",
        lambda s: s["components"][0].update(
            podTemplate={"spec": {"containers": [{"name": "main"}, {"name": "side"}]}}
        ),
    )
    beta_case(
        "backend-annotation",
        lambda s: s["components"][0].update(
            podTemplate={
                "metadata": {"annotations": {"nvidia.com/vllm-distributed-executor-backend": "RAY2"}}
            }
        ),
    )
    beta_case("min-available", lambda s: s["components"][0].update(replicas=1, minAvailable=3))
    alpha_case("shared-memory-size-integer", lambda s: s.update(sharedMemory={"size": 1}))
    alpha_case("shared-memory-size-zero", lambda s: s.update(sharedMemory={"size": "0"}))
    alpha_case("shared-memory-without-size", lambda s: s.update(sharedMemory={"disabled": False}))
    alpha_case("shared-memory-bad-quantity", lambda s: s.update(sharedMemory={"size": "1Gb"}))
    alpha_case("pvc-create", lambda s: None)
    cases[-1][1]["spec"]["pvcs"] = [{"name": "cache", "create": True}]
    alpha_case("checkpoint-job-and-ref", lambda s: s.update(checkpoint={"job": {}, "checkpointRef": "c"}))
    return cases


def _same_answer(cluster: Cluster, obj: Obj) -> None:
    """The API server's Status for a dry-run create of ``obj`` (strict field validation) is the one ``lint``
    computes offline, causes in any order (the API server walks maps in Go's random order)."""
    group, version = obj["apiVersion"].split("/")
    code, body = cluster.cp.raw(
        "POST",
        f"/apis/{group}/{version}/namespaces/{NS}/{PLURALS[obj['kind']]}?dryRun=All&fieldValidation=Strict",
        obj,
    )
    status = json.loads(body)
    ours = _lint_status(obj)
    if code in (200, 201):
        assert ours is None, ours
        return
    assert ours is not None, status
    assert (ours["code"], ours["reason"]) == (code, status["reason"]), status
    causes = (status.get("details") or {}).get("causes") or []
    our_causes = (ours.get("details") or {}).get("causes") or []
    key = lambda c: json.dumps(c, sort_keys=True)  # noqa: E731
    assert sorted(map(key, our_causes)) == sorted(map(key, causes)), status
    if len(causes) < 2:
        assert ours["message"] == status["message"]


@pytest.mark.parametrize("case", _cel_cases(), ids=lambda c: c[0])
def test_cel_rules_are_the_api_servers_and_lint_says_the_same(
    cluster: Cluster, ns: str, case: tuple[str, Obj]
) -> None:
    """Each CEL rule of the pinned CRDs, broken."""
    _same_answer(cluster, case[1])


@pytest.mark.parametrize("case", EMBEDDED, ids=[c[0] for c in EMBEDDED])
def test_embedded_resources_are_the_api_servers_and_lint_says_the_same(
    cluster: Cluster, ns: str, case: tuple[str, Any, int, str]
) -> None:
    """A DGDR's ``spec.overrides.dgd`` (an embedded resource) with a broken type or object meta; the same
    documents' answers are kept verbatim in tests/apiserver/test_embedded.py."""
    obj = in_namespace(
        yaml.safe_load((ROOT / "examples" / "manifests" / "dgdr-v1beta1.yaml").read_text()), NS, "p"
    )
    obj["spec"]["overrides"] = {"dgd": copy.deepcopy(case[1])}
    _same_answer(cluster, obj)


@pytest.mark.parametrize("case", CORE_TYPES, ids=[c[0] for c in CORE_TYPES])
def test_core_type_rules_are_the_api_servers_and_lint_says_the_same(
    cluster: Cluster, ns: str, case: tuple[str, str, Any, str | None]
) -> None:
    """A pod template's list-map key or nested required field left out, or a null in one of its lists;
    the same documents' answers are kept verbatim in tests/apiserver/test_openapi.py."""
    _same_answer(cluster, in_namespace(document(case[1], case[2]), NS))
