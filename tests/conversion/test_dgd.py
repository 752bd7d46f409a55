"""DGD mapping rows (§2.1, §2.2, §2.4, §3, §11.2), payload handling and errors."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.review.compare import normalize
from conversion import ConversionError
from conversion.dgd import CONVERTER as DGD_CONVERTER
from conversion.hub import Reuse
from kinds import convert
from tests.conversion.strategies import alpha_dgd

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
J = dict[str, Any]


def alpha(spec: J | None = None, status: J | None = None, annotations: J | None = None) -> J:
    obj: J = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
    }
    if annotations is not None:
        obj["metadata"]["annotations"] = annotations
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


def beta(spec: J | None = None, status: J | None = None, annotations: J | None = None) -> J:
    obj = alpha(spec, status, annotations)
    obj["apiVersion"] = BETA
    return obj


def payload(obj: J, key: str = "nvidia.com/dgd-spec") -> Any:
    raw = (obj["metadata"].get("annotations") or {}).get(key)
    return None if raw is None else orjson.loads(raw)


ROOT_ROWS = [
    (
        "providerOverride",
        {"providerOverride": {"apiVersion": "v1", "value": {"k": None}}},
        {"providerOverride": {"apiVersion": "v1", "value": {"k": None}}},
    ),
    (
        "annotations/labels",
        {"annotations": {"a": "1"}, "labels": {"b": "2"}},
        {"annotations": {"a": "1"}, "labels": {"b": "2"}},
    ),
    (
        "priorityClassName/backendFramework",
        {"priorityClassName": "p", "backendFramework": "vllm"},
        {"priorityClassName": "p", "backendFramework": "vllm"},
    ),
    ("envs -> env", {"envs": [{"name": "A", "value": "1"}]}, {"env": [{"name": "A", "value": "1"}]}),
    (
        "restart",
        {"restart": {"id": "r1", "strategy": {"type": "Sequential", "order": ["a", "b"]}}},
        {"restart": {"id": "r1", "strategy": {"type": "Sequential", "order": ["a", "b"]}}},
    ),
    (
        "topologyConstraint",
        {"topologyConstraint": {"topologyProfile": "t", "packDomain": "rack"}},
        {"topologyConstraint": {"clusterTopologyName": "t", "packDomain": "rack"}},
    ),
    (
        "kvTransferPolicy",
        {
            "experimental": {
                "kvTransferPolicy": {
                    "clusterTopologyName": "c",
                    "labelKey": "l",
                    "domain": "rack",
                    "enforcement": "Preferred",
                    "preferredWeight": 10,
                }
            }
        },
        {
            "experimental": {
                "kvTransferPolicy": {
                    "clusterTopologyName": "c",
                    "labelKey": "l",
                    "domain": "rack",
                    "enforcement": "Preferred",
                    "preferredWeight": 10,
                }
            }
        },
    ),
    ("experimental {}", {"experimental": {}}, {"experimental": {}}),
]


@pytest.mark.parametrize(("row", "a", "b"), ROOT_ROWS, ids=[r[0] for r in ROOT_ROWS])
def test_root_row_both_directions(row: str, a: J, b: J) -> None:
    assert normalize(convert(alpha(a), BETA))["spec"] == normalize(b)
    assert normalize(convert(beta(b), ALPHA))["spec"] == normalize(a)


def test_pvcs_are_alpha_only() -> None:
    pvcs = [{"create": True, "name": "m", "size": "10Gi"}]
    out = convert(alpha({"pvcs": pvcs}), BETA)
    assert "spec" not in normalize(out)
    assert payload(out) == {"version": 1, "spec": {"pvcs": pvcs}}
    assert convert(out, ALPHA)["spec"] == {"pvcs": pvcs}


def test_null_service_entries_survive() -> None:
    out = convert(alpha({"services": {"a": None, "b": {"componentType": "frontend"}}}), BETA)
    assert [c["name"] for c in out["spec"]["components"]] == ["b"]
    assert payload(out)["spec"]["services"] == {"a": None}
    assert convert(out, ALPHA)["spec"]["services"] == {"a": None, "b": {"componentType": "frontend"}}


def test_components_sorted_byte_wise_then_restored_order() -> None:
    out = convert(alpha({"services": {"b": {}, "B": {}, "a": {}}}), BETA)
    assert [c["name"] for c in out["spec"]["components"]] == ["B", "a", "b"]
    hub = convert(beta({"components": [{"name": "z"}, {"name": "a"}]}), ALPHA)
    assert payload(hub) == {"version": 1, "spec": {"components": [{"name": "z"}, {"name": "a"}]}}
    # new services are appended after the restored order, sorted
    hub["spec"]["services"]["m"] = {}
    assert [c["name"] for c in convert(hub, BETA)["spec"]["components"]] == ["z", "a", "m"]


def test_duplicate_component_names_fail() -> None:
    with pytest.raises(ConversionError, match=r'^duplicate component name "x" in spec\.components$'):
        convert(beta({"components": [{"name": "x"}, {"name": "x"}]}), ALPHA)


def test_component_errors_are_prefixed() -> None:
    bad = beta({"components": [{"name": "w", "podTemplate": {"spec": {"containers": "nope"}}}]})
    with pytest.raises(ConversionError):
        convert(bad, ALPHA)


def test_status_rows() -> None:
    a_status = {
        "observedGeneration": 3,
        "state": "successful",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "r",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        "services": {
            "w": {
                "componentKind": "Deployment",
                "componentName": "w-1",
                "componentNames": ["w-0", "w-1"],
                "replicas": 2,
                "updatedReplicas": 1,
                "readyReplicas": 0,
            }
        },
        "restart": {"observedID": "r", "phase": "Completed", "inProgress": ["w"]},
        "checkpoints": {
            "w": {"checkpointName": "c", "checkpointID": "id", "identityHash": "h", "ready": True}
        },
        "rollingUpdate": {
            "phase": "InProgress",
            "startTime": "2026-01-01T00:00:00Z",
            "updatedServices": ["w"],
        },
        "placement": {"score": 0.5, "state": "Scored"},
    }
    out = convert(alpha(status=a_status), BETA)
    st = out["status"]
    assert st["components"]["w"] == {
        "componentKind": "Deployment",
        "componentNames": ["w-0", "w-1"],
        "replicas": 2,
        "updatedReplicas": 1,
        "readyReplicas": 0,
    }
    assert st["rollingUpdate"] == {
        "phase": "InProgress",
        "startTime": "2026-01-01T00:00:00Z",
        "updatedComponents": ["w"],
    }
    assert st["placement"] == {"score": 0.5, "state": "Scored"}
    assert payload(out, "nvidia.com/dgd-status") is None
    assert normalize(convert(out, ALPHA))["status"] == normalize(alpha(status=a_status))["status"]


@pytest.mark.parametrize(
    ("entry", "saved"),
    [
        ({"componentName": "only"}, True),
        ({"componentName": "x", "componentNames": ["a", "b"]}, True),
        ({"componentName": "b", "componentNames": ["a", "b"]}, False),
        ({}, False),
    ],
)
def test_replica_component_name_preservation(entry: J, saved: bool) -> None:
    st = {"services": {"w": {"componentKind": "Deployment", "replicas": 1, "updatedReplicas": 1, **entry}}}
    out = convert(alpha(status=st), BETA)
    assert (payload(out, "nvidia.com/dgd-status") is not None) == saved
    assert normalize(convert(out, ALPHA))["status"] == normalize(alpha(status=st))["status"]


def test_stale_replica_status_payload_is_ignored() -> None:
    st = {
        "services": {"w": {"componentKind": "Deployment", "componentName": "x", "componentNames": ["a", "b"]}}
    }
    out = convert(alpha(status=st), BETA)
    out["status"]["components"]["w"]["componentNames"] = ["c"]
    assert convert(out, ALPHA)["status"]["services"]["w"]["componentName"] == "c"


def test_payloads_are_scrubbed_and_other_annotations_kept() -> None:
    anns = {
        "nvidia.com/dgd-spec": "garbage",
        "nvidia.com/dgd-status": "{}",
        "nvidia.com/dgd-other": "x",
        "nvidia.com/current-worker-hash": "h",
    }
    out = convert(alpha({"services": {"a": {}}}, annotations=anns), BETA)
    assert out["metadata"]["annotations"] == {
        "nvidia.com/dgd-other": "x",
        "nvidia.com/current-worker-hash": "h",
    }
    only = convert(alpha({"services": {"a": {}}}, annotations={"nvidia.com/dgd-spec": "x"}), BETA)
    assert "annotations" not in only["metadata"]


def test_undecodable_status_payload_is_an_error() -> None:
    obj = beta({"components": [{"name": "a"}]}, annotations={"nvidia.com/dgd-status": '{"services":[]}'})
    with pytest.raises(ConversionError, match=r"^unmarshal nvidia\.com/dgd-status annotation: "):
        convert(obj, ALPHA)


def test_undecodable_spec_payload_is_ignored() -> None:
    obj = beta(
        {"components": [{"name": "a"}]},
        annotations={"nvidia.com/dgd-spec": '{"version":1,"spec":{"pvcs":"x"}}'},
    )
    out = convert(obj, ALPHA)
    assert out["spec"] == {"services": {"a": {}}}


def test_spoke_origin_suppresses_hub_origin_marker() -> None:
    comp = {"name": "a", "podTemplate": {"spec": {"containers": [{"name": "main", "image": "i"}]}}}
    assert payload(convert(beta({"components": [comp]}), ALPHA)) == {
        "version": 1,
        "spec": {"components": [{"name": "a"}]},
    }
    marked = beta({"components": [comp]}, annotations={"nvidia.com/dgd-status": ""})
    assert payload(convert(marked, ALPHA)) is None


def test_partial_object_keeps_metadata() -> None:
    out = convert({"apiVersion": ALPHA, "kind": "DynamoGraphDeployment"}, BETA)
    assert out["metadata"] == {}


# --- an UPDATE's two objects converted with one Reuse ------------------------------------------------


def _convert_pair(new: J, old: J) -> tuple[J | str, J | str, Reuse]:
    """Both objects converted to the hub sharing one Reuse, new first (a ConversionError's text in
    place of a refused object)."""
    reuse = Reuse()
    out: list[J | str] = []
    for obj in (new, old):
        try:
            out.append(DGD_CONVERTER.convert(obj, BETA, reuse))
        except ConversionError as exc:
            out.append(f"error: {exc}")
    return out[0], out[1], reuse


def _convert_alone(obj: J) -> J | str:
    try:
        return DGD_CONVERTER.convert(obj, BETA)
    except ConversionError as exc:
        return f"error: {exc}"


@st.composite
def _pairs(draw: Any) -> tuple[J, J]:
    """A v1alpha1 DGD and an edit of it: services or the status changed, removed, swapped for
    values of the same JSON that Python's == takes for equal (1 and 1.0 and true), or left alone."""
    old = draw(alpha_dgd())
    new = copy.deepcopy(old)
    services = new["spec"].get("services") or {}
    for name in sorted(services):
        edit = draw(st.sampled_from(["keep", "keep", "replicas", "float", "drop", "null", "bad"]))
        svc = services[name]
        if edit == "replicas" and isinstance(svc, dict):
            svc["replicas"] = draw(st.integers(0, 5))
        elif edit == "float" and isinstance(svc, dict) and isinstance(svc.get("replicas"), int):
            svc["replicas"] = float(svc["replicas"])  # == to the int, another JSON text
        elif edit == "drop":
            del services[name]
        elif edit == "null":
            services[name] = None
        elif edit == "bad" and isinstance(svc, dict):
            svc["sharedMemory"] = {"size": "bogus"}
    if draw(st.booleans()) and isinstance(new.get("status"), dict):
        new["status"]["state"] = draw(st.sampled_from(["pending", "failed"]))
    if draw(st.booleans()):
        new, old = old, new
    return new, old


@given(_pairs())
def test_a_pair_converted_with_one_reuse_is_each_converted_alone(pair: tuple[J, J]) -> None:
    new, old = pair
    before = orjson.dumps([new, old])
    got_new, got_old, _ = _convert_pair(new, old)
    assert got_new == _convert_alone(new)
    assert got_old == _convert_alone(old)
    assert orjson.dumps(got_new) == orjson.dumps(_convert_alone(new))
    assert orjson.dumps(got_old) == orjson.dumps(_convert_alone(old))
    assert orjson.dumps([new, old]) == before


def test_unchanged_services_and_status_are_converted_once() -> None:
    old = alpha(
        spec={
            "services": {
                "a": {"replicas": 1, "extraPodSpec": {"mainContainer": {"image": "i"}}},
                "b": {"replicas": 2},
            }
        },
        status={
            "state": "successful",
            "services": {"a": {"componentKind": "Deployment", "componentName": "x"}},
        },
    )
    new = copy.deepcopy(old)
    new["spec"]["services"]["b"]["replicas"] = 3
    reuse = Reuse()
    DGD_CONVERTER.convert(new, BETA, reuse)
    assert sorted((k[0], k[1] if k[0] == "dgd-service" else "") for k in reuse.parts) == [
        ("dgd-service", "a"),
        ("dgd-service", "b"),
        ("dgd-status", ""),
    ]
    # Mark what the new object's conversion kept: the old object's conversion takes a and the status from there.
    for key, (_, (first, second)) in reuse.parts.items():
        if key[0] == "dgd-service":
            first["replicas"] = 7
        else:
            second["state"] = "kept"
    got_old = DGD_CONVERTER.convert(old, BETA, reuse)
    assert [c["replicas"] for c in got_old["spec"]["components"]] == [7, 2]
    assert got_old["status"]["state"] == "kept"
    assert len(reuse.parts) == 4


def test_values_python_takes_for_equal_are_not_shared() -> None:
    old = alpha(spec={"services": {"a": {"replicas": 1}}}, status={"state": "x", "observedGeneration": 1})
    new = copy.deepcopy(old)
    new["spec"]["services"]["a"]["replicas"] = True  # == 1 in Python; Go refuses a bool here
    new["status"]["observedGeneration"] = 1.0
    got_new, got_old, _ = _convert_pair(new, old)
    assert got_new == _convert_alone(new) and isinstance(got_new, str)
    assert got_old == _convert_alone(old)
    nan_old = alpha(spec={"services": {"a": {"replicas": 1, "annotations": {"k": "v"}}}})
    nan_new = copy.deepcopy(nan_old)
    nan_new["spec"]["services"]["a"]["scalingAdapter"] = None
    nan_old["spec"]["services"]["a"]["scalingAdapter"] = float("nan")  # the same JSON text as null
    assert _convert_pair(nan_new, nan_old)[:2] == (_convert_alone(nan_new), _convert_alone(nan_old))
