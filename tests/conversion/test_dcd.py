"""DCD mapping rows (§2.3, §5, §11.3): serviceName ⇄ name, status, payload markers."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.review.compare import normalize
from conversion import ConversionError
from kinds import convert

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
J = dict[str, Any]


def obj(
    version: str, name: str, spec: J | None = None, status: J | None = None, annotations: J | None = None
) -> J:
    out: J = {"apiVersion": version, "kind": "DynamoComponentDeployment", "metadata": {"name": name}}
    if annotations is not None:
        out["metadata"]["annotations"] = annotations
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


def payload(o: J, key: str = "nvidia.com/dcd-spec") -> Any:
    raw = (o["metadata"].get("annotations") or {}).get(key)
    return None if raw is None else orjson.loads(raw)


def test_backend_framework_and_service_name_are_native() -> None:
    out = convert(
        obj(ALPHA, "d", {"backendFramework": "vllm", "serviceName": "worker", "componentType": "worker"}),
        BETA,
    )
    assert out["spec"] == {"backendFramework": "vllm", "name": "worker", "type": "worker"}
    assert payload(out) is None
    back = convert(out, ALPHA)
    assert back["spec"] == {"backendFramework": "vllm", "serviceName": "worker", "componentType": "worker"}
    assert payload(back) is None


def test_renamed_beta_keeps_live_name_despite_flag() -> None:
    out = convert(obj(ALPHA, "d", {"componentType": "worker"}), BETA)
    assert out["spec"]["name"] == "d"
    out["spec"]["name"] = "renamed"
    assert convert(out, ALPHA)["spec"]["serviceName"] == "renamed"


def test_beta_empty_name_with_object_name_gets_marker() -> None:
    out = convert(obj(BETA, "d", {"name": ""}), ALPHA)
    assert payload(out) == {"version": 1, "spec": {"name": ""}}
    back = convert(out, BETA)
    assert back["spec"] == {"name": ""}


def test_alpha_first_generated_pod_template_marker() -> None:
    out = convert(obj(ALPHA, "d", {"serviceName": "w", "envs": [{"name": "A", "value": "1"}]}), BETA)
    assert payload(out) == {"version": 1, "spec": {}}
    # with the marker the β→α conversion writes no hub-origin marker
    assert payload(convert(out, ALPHA)) is None


def test_status_rows_and_pod_selector() -> None:
    st = {
        "observedGeneration": 2,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "r",
                "message": "m",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        "podSelector": {"app": "w"},
        "service": {
            "componentKind": "Deployment",
            "componentName": "w-1",
            "replicas": 1,
            "updatedReplicas": 1,
        },
    }
    out = convert(obj(ALPHA, "d", {"serviceName": "w"}, st), BETA)
    assert out["status"] == {
        "observedGeneration": 2,
        "conditions": st["conditions"],
        "component": {
            "componentKind": "Deployment",
            "componentNames": ["w-1"],
            "replicas": 1,
            "updatedReplicas": 1,
        },
    }
    assert payload(out, "nvidia.com/dcd-status") == {
        "podSelector": {"app": "w"},
        "service": {"componentName": "w-1"},
    }
    assert normalize(convert(out, ALPHA))["status"] == normalize(obj(ALPHA, "d", status=st))["status"]


def test_pod_selector_restored_only_when_result_has_none() -> None:
    out = convert(
        obj(BETA, "d", {"name": "w"}, annotations={"nvidia.com/dcd-status": '{"podSelector":{"a":"b"}}'}),
        ALPHA,
    )
    assert out["status"]["podSelector"] == {"a": "b"}


def test_undecodable_status_payload_is_an_error() -> None:
    bad = obj(BETA, "d", {"name": "w"}, annotations={"nvidia.com/dcd-status": '{"podSelector":[1]}'})
    with pytest.raises(ConversionError, match=r"^unmarshal nvidia\.com/dcd-status annotation: "):
        convert(bad, ALPHA)


def test_provider_override_and_roles_copied_natively() -> None:
    po = {"apiVersion": "v1", "value": {"a": 1}}
    spec = {
        "serviceName": "w",
        "providerOverride": po,
        "multinode": {"nodeCount": 2, "leader": {"providerOverride": po}},
    }
    out = convert(obj(ALPHA, "d", spec), BETA)
    assert out["spec"]["providerOverride"] == po
    assert out["spec"]["multinode"] == {"nodeCount": 2, "leader": {"providerOverride": po}}
    assert convert(out, ALPHA)["spec"] == spec


def test_legacy_carriers_are_plain_annotations() -> None:
    anns = {"nvidia.com/dcd-hub-spec": '{"name":"x"}', "nvidia.com/dcd-spoke-spec": "{}"}
    out = convert(obj(BETA, "d", {"name": "w"}, annotations=anns), ALPHA)
    assert out["metadata"]["annotations"] == anns
    assert out["spec"] == {"serviceName": "w"}


def test_alpha_status_component_names_must_be_strings_like_dgd() -> None:
    """DGD and DCD share v1alpha1 ServiceReplicaStatus: ``componentNames`` is a list of strings."""
    import pytest

    from conversion import ConversionError
    from kinds import convert

    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "d"},
        "spec": {"componentType": "worker"},
        "status": {"service": {"componentName": "d", "componentNames": ["d-0", 7]}},
    }
    with pytest.raises(ConversionError):
        convert(dcd, "nvidia.com/v1beta1")
    dcd["status"]["service"]["componentNames"] = ["d-0", "d-1"]
    assert convert(dcd, "nvidia.com/v1beta1")["status"]["component"]["componentNames"] == ["d-0", "d-1"]
