"""DGDR metadata handling and payload annotations (§1): read, scrub, write, tolerate garbage."""

from __future__ import annotations

import copy
import json

import pytest

from conversion.v1alpha1 import dgdr
from tests.conversion.test_dgdr_builders import (
    ANN_SPEC,
    ANN_STATUS,
    a2b,
    alpha,
    anns,
    b2a,
    beta,
    envelope,
    spec_payload,
)

RETIRED = [
    "nvidia.com/dgdr-config-map-ref",
    "nvidia.com/dgdr-output-pvc",
    "nvidia.com/dgdr-enable-gpu-discovery",
    "nvidia.com/dgdr-deployment-overrides",
    "nvidia.com/dgdr-profiling-config",
    "nvidia.com/dgdr-status-backend",
    "nvidia.com/dgdr-profiling-results",
    "nvidia.com/dgdr-deployment-status",
    "nvidia.com/dgdr-profiling-job-name",
]


@pytest.mark.parametrize("convert", [a2b, b2a], ids=["alpha_to_beta", "beta_to_alpha"])
def test_retired_keys_scrubbed_and_never_read(convert) -> None:  # type: ignore[no-untyped-def]
    keep = {"nvidia.com/dgdr-unknown": "x", "nvidia.com/current-worker-hash": "abc", "team": "ml"}
    values = {k: '{"name":"cm","key":"k"}' for k in RETIRED}
    out = convert({"model": "m"}, anns={**keep, **values})
    assert anns(out) == keep


@pytest.mark.parametrize("convert", [a2b, b2a], ids=["alpha_to_beta", "beta_to_alpha"])
def test_emptied_annotation_map_disappears(convert) -> None:  # type: ignore[no-untyped-def]
    assert "annotations" not in convert({"model": "m"}, anns={RETIRED[0]: "x"})["metadata"]
    # a map that arrives empty disappears too (Go sets a nil map after scrubbing)
    assert "annotations" not in convert({"model": "m"}, anns={})["metadata"]


def test_metadata_deep_copied() -> None:
    src = alpha({"model": "m"}, anns={"a": "b"})
    src["metadata"]["labels"] = {"l": "v"}
    src["metadata"]["ownerReferences"] = [{"name": "o", "uid": "u"}]
    before = copy.deepcopy(src)
    out = dgdr.to_hub(src)
    assert out["metadata"] == before["metadata"]
    out["metadata"]["labels"]["l"] = "changed"
    out["metadata"]["ownerReferences"][0]["name"] = "changed"
    assert src == before


def test_beta_root_always_has_metadata() -> None:
    out = dgdr.to_hub({"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest"})
    assert out["metadata"] == {}
    back = dgdr.from_hub({"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeploymentRequest"})
    assert back["metadata"] == {}
    assert back["spec"] == {
        "model": "",
        "backend": "",
        "profilingConfig": {"profilerImage": ""},
        "autoApply": True,
    }
    assert back["status"] == {"state": "Pending"}


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[1,2]",
        '"string"',
        "42",
        "NaN",
        envelope({"hardware": {"totalGpus": "8"}, "searchStrategy": "rapid"}),
        envelope({"hardware": {"totalGpus": 1.5}, "searchStrategy": "rapid"}),
        envelope(
            {
                "overrides": {
                    "profilingJob": {
                        "template": {
                            "spec": {"containers": [{"name": "p", "resources": {"limits": {"cpu": "x!"}}}]}
                        }
                    }
                },
                "searchStrategy": "rapid",
            }
        ),
        json.dumps({"version": "1", "spec": {"searchStrategy": "rapid"}}),
        json.dumps(
            {"version": 1, "spec": {"searchStrategy": "rapid"}, "rawJSON": [{"path": "p", "raw": "%%%"}]}
        ),
    ],
)
def test_undecodable_hub_spec_payload_is_ignored(raw: str) -> None:
    out = a2b({"model": "m"}, anns={ANN_SPEC: raw})
    assert "searchStrategy" not in out["spec"]
    assert "hardware" not in out["spec"]
    assert "annotations" not in out["metadata"]


def test_undecodable_spoke_spec_payload_is_ignored() -> None:
    raw = envelope({"enableGpuDiscovery": "yes", "profilingConfig": {"outputPVC": "out"}})
    out = b2a({"model": "m"}, anns={ANN_SPEC: raw})
    assert "enableGpuDiscovery" not in out["spec"]
    assert "outputPVC" not in out["spec"]["profilingConfig"]


@pytest.mark.parametrize("raw", ["{", '{"state": 5}', '{"deployment": []}'])
def test_undecodable_status_payloads_are_ignored_both_directions(raw: str) -> None:
    out = b2a({"model": "m"}, {"phase": "Ready"}, anns={ANN_STATUS: raw})
    assert out["status"] == {"state": "Ready"}
    bad_hub = raw.replace("state", "phase").replace("deployment", "deploymentInfo")
    out2 = a2b({"model": "m"}, {"state": "Ready"}, anns={ANN_STATUS: bad_hub})
    assert out2["status"] == {"phase": "Ready"}


def test_legacy_payload_without_envelope_is_read() -> None:
    out = a2b(
        {"model": "m"},
        anns={ANN_SPEC: json.dumps({"searchStrategy": "rapid", "hardware": {"gpuSku": "a30"}})},
    )
    assert out["spec"]["searchStrategy"] == "rapid"
    assert out["spec"]["hardware"] == {"gpuSku": "a30"}


def test_null_payload_is_present_and_empty() -> None:
    out = b2a({"model": "m"}, {"phase": "Ready"}, anns={ANN_SPEC: "null", ANN_STATUS: "null"})
    assert out["spec"]["profilingConfig"] == {"profilerImage": ""}
    assert out["status"] == {"state": "Ready"}
    assert "annotations" not in out["metadata"]


def test_empty_string_payload_is_absent() -> None:
    out = a2b({"model": "m"}, anns={ANN_SPEC: "", ANN_STATUS: ""})
    assert "annotations" not in out["metadata"]


def test_payload_field_names_match_case_insensitively() -> None:
    raw = json.dumps({"Version": 1, "spec": {"SearchStrategy": "rapid", "HARDWARE": {"GPUSKU": "h100_sxm"}}})
    out = a2b({"model": "m"}, anns={ANN_SPEC: raw})
    assert out["spec"]["searchStrategy"] == "rapid"
    assert out["spec"]["hardware"] == {"gpuSku": "h100_sxm"}


def test_payload_unknown_keys_ignored() -> None:
    raw = envelope({"searchStrategy": "rapid", "futureField": {"x": 1}})
    out = a2b({"model": "m"}, anns={ANN_SPEC: raw})
    assert out["spec"]["searchStrategy"] == "rapid"
    assert "futureField" not in out["spec"]


def test_payload_never_overrides_live_alpha_fields() -> None:
    stale = envelope(
        {"model": "old", "backend": "sglang", "image": "old:1", "autoApply": False, "sla": {"ttft": 1}}
    )
    out = a2b({"model": "m", "backend": "vllm", "autoApply": True}, anns={ANN_SPEC: stale})
    assert out["spec"] == {"model": "m", "backend": "vllm", "autoApply": True, "sla": {}}


def test_payload_never_overrides_live_beta_fields() -> None:
    stale = envelope(
        {
            "model": "old",
            "backend": "sglang",
            "useMocker": True,
            "profilingConfig": {"profilerImage": "old:1"},
        }
    )
    out = b2a({"model": "m", "image": "new:1", "autoApply": False}, anns={ANN_SPEC: stale})
    assert out["spec"] == {"model": "m", "backend": "", "profilingConfig": {"profilerImage": "new:1"}}


def test_quantities_in_profiling_job_are_canonical() -> None:
    job = {
        "template": {
            "spec": {
                "containers": [
                    {"name": "other", "resources": {"requests": {"memory": "1024Mi", "cpu": "1000m"}}}
                ]
            }
        }
    }
    out = b2a({"overrides": {"profilingJob": job}})
    saved = spec_payload(out)["overrides"]["profilingJob"]["template"]["spec"]["containers"][0]  # type: ignore[index]
    assert saved["resources"] == {"requests": {"memory": "1Gi", "cpu": "1"}}


def test_input_objects_are_never_mutated() -> None:
    job = {
        "template": {
            "spec": {"containers": [{"name": ""}, {"name": "x", "resources": {"limits": {"cpu": "1"}}}]}
        }
    }
    src_b = beta(
        {"overrides": {"profilingJob": job}, "sla": {"ttft": 1}},
        {"phase": "Profiling"},
        anns={ANN_SPEC: envelope({"profilingConfig": {"config": {"sla": {"a": 1}}}})},
    )
    before_b = copy.deepcopy(src_b)
    dgdr.from_hub(src_b)
    assert src_b == before_b
    src_a = alpha(
        {"profilingConfig": {"config": {"sla": {"ttft": 1, "x": 2}}, "resources": {"limits": {"cpu": "1"}}}},
        {"state": "Ready", "deployment": {"name": "d", "created": True}},
        anns={
            ANN_SPEC: envelope(
                {"overrides": {"profilingJob": {"template": {"spec": {"containers": [{"name": ""}]}}}}}
            )
        },
    )
    before_a = copy.deepcopy(src_a)
    dgdr.to_hub(src_a)
    assert src_a == before_a


def test_saved_workload_or_sla_creates_the_beta_object() -> None:
    # restoring a saved hub-only block creates the β object even when the payload carries nothing
    # for it (upstream allocates workload/sla before copying the hub-only leaves)
    out = a2b({"model": "m"}, anns={ANN_SPEC: envelope({"workload": {}, "sla": {}})})
    assert out["spec"]["workload"] == {}
    assert out["spec"]["sla"] == {}
