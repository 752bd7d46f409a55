"""One focused test per DGDSA mapping row (§2.5, §10.5, checklist §11.5), both directions."""

from __future__ import annotations

import copy
from typing import Any

from conversion.v1alpha1 import dgdsa

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
KIND = "DynamoGraphDeploymentScalingAdapter"


def _obj(version: str, spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": version,
        "kind": KIND,
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def test_worked_example_alpha_to_beta() -> None:
    out = dgdsa.to_hub(
        _obj(
            ALPHA,
            {"replicas": 3, "dgdRef": {"name": "g", "serviceName": "decode"}},
            {"replicas": 2, "selector": "app=x"},
        )
    )
    assert out == {
        "apiVersion": BETA,
        "kind": KIND,
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": {"replicas": 3, "dgdRef": {"name": "g", "componentName": "decode"}},
        "status": {"replicas": 2, "selector": "app=x"},
    }


def test_worked_example_beta_to_alpha() -> None:
    out = dgdsa.from_hub(
        _obj(
            BETA,
            {"replicas": 3, "dgdRef": {"name": "g", "componentName": "decode"}},
            {"replicas": 2, "selector": "app=x"},
        )
    )
    assert out == {
        "apiVersion": ALPHA,
        "kind": KIND,
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": {"replicas": 3, "dgdRef": {"name": "g", "serviceName": "decode"}},
        "status": {"replicas": 2, "selector": "app=x"},
    }


def test_spec_replicas_native_both_directions() -> None:
    assert dgdsa.to_hub(_obj(ALPHA, {"replicas": 7}))["spec"]["replicas"] == 7
    assert dgdsa.from_hub(_obj(BETA, {"replicas": 7}))["spec"]["replicas"] == 7
    # replicas is not omitempty in either version
    assert dgdsa.to_hub(_obj(ALPHA, {}))["spec"]["replicas"] == 0
    assert dgdsa.from_hub(_obj(BETA, {}))["spec"]["replicas"] == 0


def test_dgd_ref_name_native_both_directions() -> None:
    assert dgdsa.to_hub(_obj(ALPHA, {"dgdRef": {"name": "g"}}))["spec"]["dgdRef"] == {
        "name": "g",
        "componentName": "",
    }
    assert dgdsa.from_hub(_obj(BETA, {"dgdRef": {"name": "g"}}))["spec"]["dgdRef"] == {
        "name": "g",
        "serviceName": "",
    }


def test_service_name_renamed_to_component_name() -> None:
    out = dgdsa.to_hub(_obj(ALPHA, {"dgdRef": {"name": "g", "serviceName": "VllmDecodeWorker"}}))
    assert out["spec"]["dgdRef"] == {"name": "g", "componentName": "VllmDecodeWorker"}


def test_component_name_renamed_to_service_name() -> None:
    out = dgdsa.from_hub(_obj(BETA, {"dgdRef": {"name": "g", "componentName": "prefill"}}))
    assert out["spec"]["dgdRef"] == {"name": "g", "serviceName": "prefill"}


def test_status_replicas_zero_written_on_beta_omitted_on_alpha() -> None:
    assert dgdsa.to_hub(_obj(ALPHA, {}))["status"] == {"replicas": 0}
    assert dgdsa.from_hub(_obj(BETA, {}, {"replicas": 0}))["status"] == {}
    assert dgdsa.from_hub(_obj(BETA, {}, {"replicas": 4}))["status"] == {"replicas": 4}


def test_status_selector_native_both_directions() -> None:
    assert dgdsa.to_hub(_obj(ALPHA, {}, {"selector": "app=x"}))["status"]["selector"] == "app=x"
    assert dgdsa.from_hub(_obj(BETA, {}, {"selector": "app=y"}))["status"]["selector"] == "app=y"


def test_status_last_scale_time_native_and_printed_in_utc() -> None:
    t = "2026-01-01T00:00:00Z"
    assert dgdsa.to_hub(_obj(ALPHA, {}, {"lastScaleTime": t}))["status"]["lastScaleTime"] == t
    assert dgdsa.from_hub(_obj(BETA, {}, {"lastScaleTime": t}))["status"]["lastScaleTime"] == t
    # metav1.Time marshals as RFC 3339 in UTC with whole seconds
    offset = dgdsa.from_hub(_obj(BETA, {}, {"lastScaleTime": "2026-01-01T02:30:00.5+02:00"}))
    assert offset["status"]["lastScaleTime"] == "2026-01-01T00:30:00Z"


def test_metadata_copied_verbatim_including_conversion_like_annotations() -> None:
    src = _obj(ALPHA, {"replicas": 1})
    src["metadata"]["annotations"] = {"nvidia.com/dgd-spec": "{}", "x": "y"}
    src["metadata"]["labels"] = {"a": "b"}
    out = dgdsa.to_hub(src)
    assert out["metadata"] == src["metadata"]
    assert out["metadata"] is not src["metadata"]


def test_input_not_mutated_and_output_independent() -> None:
    src = _obj(BETA, {"replicas": 1, "dgdRef": {"name": "g", "componentName": "c"}}, {"replicas": 1})
    src["metadata"]["labels"] = {"a": "b"}
    before = copy.deepcopy(src)
    out = dgdsa.from_hub(src)
    assert src == before
    out["metadata"]["labels"]["a"] = "changed"
    assert src == before
