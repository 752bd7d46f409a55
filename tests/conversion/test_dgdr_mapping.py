"""One focused test per DGDR spec mapping row (spec tables §6.1/§6.2, checklist §11.4), both directions."""

from __future__ import annotations

import pytest

from conversion import ConversionError
from conversion.v1alpha1 import dgdr
from kinds import convert
from tests.conversion.test_dgdr_builders import (
    ALPHA,
    ANN_SPEC,
    BETA,
    a2b,
    alpha,
    b2a,
    beta,
    envelope,
    profiler_job,
    spec_payload,
)

# ------------------------------------------------------------------------- spec.model


def test_model_alpha_to_beta() -> None:
    out = a2b({"model": "m"})
    assert out["apiVersion"] == BETA
    assert out["spec"]["model"] == "m"


def test_model_beta_to_alpha() -> None:
    out = b2a({"model": "m"})
    assert out["apiVersion"] == ALPHA
    assert out["spec"]["model"] == "m"


# ----------------------------------------------------------------------- spec.backend


def test_backend_alpha_to_beta_copied_and_empty_absent() -> None:
    assert a2b({"model": "m", "backend": "vllm"})["spec"]["backend"] == "vllm"
    assert "backend" not in a2b({"model": "m", "backend": ""})["spec"]


def test_backend_beta_to_alpha_copied_and_absent_written_empty() -> None:
    assert b2a({"model": "m", "backend": "sglang"})["spec"]["backend"] == "sglang"
    # the v1alpha1 field is not omitempty: Go writes ""
    assert b2a({"model": "m"})["spec"]["backend"] == ""


# --------------------------------------------------------------- runtimeVersionOverride


def test_runtime_version_override_both_directions() -> None:
    assert a2b({"runtimeVersionOverride": "1.3.0"})["spec"]["runtimeVersionOverride"] == "1.3.0"
    assert b2a({"runtimeVersionOverride": "1.3.0"})["spec"]["runtimeVersionOverride"] == "1.3.0"


# -------------------------------------------------------------------------- autoApply


@pytest.mark.parametrize("value", [True, False])
def test_auto_apply_alpha_to_beta_always_written(value: bool) -> None:
    assert a2b({"model": "m", "autoApply": value})["spec"]["autoApply"] is value
    assert a2b({"model": "m"})["spec"]["autoApply"] is False


def test_auto_apply_beta_to_alpha_absent_means_true() -> None:
    assert b2a({"model": "m"})["spec"]["autoApply"] is True
    assert b2a({"model": "m", "autoApply": True})["spec"]["autoApply"] is True
    assert "autoApply" not in b2a({"model": "m", "autoApply": False})["spec"]


# -------------------------------------------------------------------------- useMocker


def test_use_mocker_alpha_to_beta() -> None:
    assert a2b({"useMocker": True})["spec"]["features"] == {"mocker": {"enabled": True}}
    assert "features" not in a2b({"useMocker": False})["spec"]


def test_mocker_beta_to_alpha_enabled() -> None:
    out = b2a({"features": {"mocker": {"enabled": True}}})
    assert out["spec"]["useMocker"] is True
    assert spec_payload(out) is None


def test_mocker_disabled_is_hub_only_and_restored_as_marker() -> None:
    out = b2a({"model": "m", "features": {"mocker": {}}})
    assert "useMocker" not in out["spec"]
    assert spec_payload(out) == {"model": "", "features": {"mocker": {}}}
    back = dgdr.to_hub(out)
    assert back["spec"]["features"] == {"mocker": {}}


def test_restored_disabled_mocker_never_overrides_live_use_mocker() -> None:
    out = a2b({"useMocker": True}, anns={ANN_SPEC: envelope({"features": {"mocker": {}}})})
    assert out["spec"]["features"]["mocker"] == {"enabled": True}


# ----------------------------------------------------------------- profilerImage/image


def test_profiler_image_to_image() -> None:
    assert a2b({"profilingConfig": {"profilerImage": "p:1"}})["spec"]["image"] == "p:1"


def test_image_to_profiler_image() -> None:
    out = b2a({"image": "p:1"})
    assert out["spec"]["profilingConfig"]["profilerImage"] == "p:1"
    assert "deploymentOverrides" not in out["spec"]


# --------------------------------------------------------------------- workersImage


def test_workers_image_becomes_image_when_profiler_image_empty_and_is_saved() -> None:
    out = a2b({"deploymentOverrides": {"workersImage": "w:1"}})
    assert out["spec"]["image"] == "w:1"
    assert spec_payload(out)["deploymentOverrides"] == {"workersImage": "w:1"}  # type: ignore[index]
    back = dgdr.from_hub(out)
    assert back["spec"]["deploymentOverrides"] == {"workersImage": "w:1"}
    assert back["spec"]["profilingConfig"]["profilerImage"] == "w:1"


def test_profiler_image_wins_over_workers_image() -> None:
    out = a2b({"profilingConfig": {"profilerImage": "p:1"}, "deploymentOverrides": {"workersImage": "w:1"}})
    assert out["spec"]["image"] == "p:1"


# ------------------------------------------------------------ deploymentOverrides rest


def test_deployment_overrides_saved_and_restored() -> None:
    ovr = {"name": "d", "namespace": "prod", "labels": {"team": "ml"}, "annotations": {"a": "b"}}
    out = a2b({"deploymentOverrides": ovr})
    assert spec_payload(out)["deploymentOverrides"] == ovr  # type: ignore[index]
    assert "image" not in out["spec"]
    assert dgdr.from_hub(out)["spec"]["deploymentOverrides"] == ovr


def test_empty_deployment_overrides_not_saved() -> None:
    assert spec_payload(a2b({"deploymentOverrides": {"labels": {}}})) is None


# ---------------------------------------------------------------- enableGpuDiscovery


@pytest.mark.parametrize("value", [True, False])
def test_enable_gpu_discovery_saved_and_restored(value: bool) -> None:
    out = a2b({"enableGpuDiscovery": value})
    assert spec_payload(out)["enableGpuDiscovery"] is value  # type: ignore[index]
    assert dgdr.from_hub(out)["spec"]["enableGpuDiscovery"] is value


# ---------------------------------------------------------------------- configMapRef


def test_config_map_ref_saved_and_restored() -> None:
    ref = {"name": "cfg", "key": "disagg.yaml"}
    out = a2b({"profilingConfig": {"configMapRef": ref}})
    assert spec_payload(out)["profilingConfig"]["configMapRef"] == ref  # type: ignore[index]
    assert dgdr.from_hub(out)["spec"]["profilingConfig"]["configMapRef"] == ref


# ------------------------------------------------------------------------- outputPVC


def test_output_pvc_saved_and_restored() -> None:
    out = a2b({"profilingConfig": {"outputPVC": "out"}})
    assert spec_payload(out)["profilingConfig"]["outputPVC"] == "out"  # type: ignore[index]
    assert dgdr.from_hub(out)["spec"]["profilingConfig"]["outputPVC"] == "out"


# ------------------------------------------------------------ config → sla (ttft, itl, …)


def test_config_sla_projects_to_beta_sla() -> None:
    cfg = {"sla": {"ttft": 500, "itl": 12.5, "optimizationType": "throughput"}}
    out = a2b({"profilingConfig": {"config": cfg}})
    assert out["spec"]["sla"] == {"ttft": 500, "itl": 12.5, "optimizationType": "throughput"}
    assert spec_payload(out) is None


def test_config_sla_invalid_optimization_type_stays_in_remainder() -> None:
    out = a2b({"profilingConfig": {"config": {"sla": {"optimizationType": "fast", "ttft": 1}}}})
    assert out["spec"]["sla"] == {"ttft": 1}
    assert spec_payload(out)["profilingConfig"]["config"] == {"sla": {"optimizationType": "fast"}}  # type: ignore[index]


def test_config_sla_non_numeric_values_not_projected() -> None:
    out = a2b({"profilingConfig": {"config": {"sla": {"ttft": "500"}}}})
    assert out["spec"]["sla"] == {}
    assert spec_payload(out)["profilingConfig"]["config"] == {"sla": {"ttft": "500"}}  # type: ignore[index]


def test_beta_sla_writes_config_sla() -> None:
    out = b2a({"sla": {"ttft": 200.0, "itl": 20, "optimizationType": "latency"}})
    assert out["spec"]["profilingConfig"]["config"] == {
        "sla": {"ttft": 200, "itl": 20, "optimizationType": "latency"}
    }


def test_beta_empty_sla_alone_writes_nothing() -> None:
    out = b2a({"sla": {}, "workload": {}, "modelCache": {"pvcName": ""}})
    assert "config" not in out["spec"]["profilingConfig"]
    assert spec_payload(out) is None


# ----------------------------------------------------------- config → workload isl/osl


def test_config_isl_osl_project_to_workload_truncated() -> None:
    out = a2b({"profilingConfig": {"config": {"sla": {"isl": 2048.9, "osl": 100}}}})
    assert out["spec"]["workload"] == {"isl": 2048, "osl": 100}
    assert out["spec"]["sla"] == {}


def test_workload_isl_osl_write_config_sla() -> None:
    out = b2a({"workload": {"isl": 3000, "osl": 150}})
    assert out["spec"]["profilingConfig"]["config"] == {"sla": {"isl": 3000, "osl": 150}}


# ------------------------------------------------------------ config → modelCache


def test_config_model_cache_projects_renamed() -> None:
    mc = {"pvcName": "pvc", "modelPathInPvc": "qwen", "pvcMountPath": "/models"}
    out = a2b({"profilingConfig": {"config": {"deployment": {"modelCache": mc}}}})
    assert out["spec"]["modelCache"] == {"pvcName": "pvc", "pvcModelPath": "qwen", "pvcMountPath": "/models"}
    assert spec_payload(out) is None


def test_config_model_cache_empty_strings_stay_in_remainder() -> None:
    out = a2b(
        {"profilingConfig": {"config": {"deployment": {"modelCache": {"pvcName": "", "pvcMountPath": "/m"}}}}}
    )
    assert out["spec"]["modelCache"] == {"pvcMountPath": "/m"}
    remainder = spec_payload(out)["profilingConfig"]["config"]  # type: ignore[index]
    assert remainder == {"deployment": {"modelCache": {"pvcName": ""}}}


def test_model_cache_writes_config_deployment_model_cache() -> None:
    out = b2a({"modelCache": {"pvcName": "pvc", "pvcModelPath": "qwen"}})
    assert out["spec"]["profilingConfig"]["config"] == {
        "deployment": {"modelCache": {"pvcName": "pvc", "modelPathInPvc": "qwen"}}
    }


# --------------------------------------------------------------- config → planner


def test_config_planner_projects_to_features_planner() -> None:
    planner = {"mode": "disagg", "enable_load_scaling": False}
    out = a2b({"profilingConfig": {"config": {"planner": planner}}})
    assert out["spec"]["features"] == {"planner": planner}
    assert spec_payload(out) is None


def test_config_empty_planner_is_remainder() -> None:
    out = a2b({"profilingConfig": {"config": {"planner": {}}}})
    assert "features" not in out["spec"]
    assert spec_payload(out)["profilingConfig"]["config"] == {"planner": {}}  # type: ignore[index]


def test_features_planner_writes_config_planner() -> None:
    out = b2a({"features": {"planner": {"mode": "agg", "n": 2}}})
    assert out["spec"]["profilingConfig"]["config"] == {"planner": {"mode": "agg", "n": 2}}


# ------------------------------------------------------------- config remainder


def test_config_remainder_saved_and_merged_back() -> None:
    cfg = {"sweep": {"useAiConfigurator": True}, "sla": {"ttft": 3, "extra": "x"}}
    out = a2b({"profilingConfig": {"config": cfg}})
    assert out["spec"]["sla"] == {"ttft": 3}
    assert spec_payload(out)["profilingConfig"]["config"] == {  # type: ignore[index]
        "sweep": {"useAiConfigurator": True},
        "sla": {"extra": "x"},
    }
    assert dgdr.from_hub(out)["spec"]["profilingConfig"]["config"] == cfg


def test_explicit_empty_config_saved_as_empty_object() -> None:
    out = a2b({"profilingConfig": {"config": {}}})
    assert spec_payload(out)["profilingConfig"]["config"] == {}  # type: ignore[index]
    assert dgdr.from_hub(out)["spec"]["profilingConfig"]["config"] == {}


def test_stale_remainder_cannot_bring_back_projected_leaves() -> None:
    saved = envelope({"profilingConfig": {"config": {"sla": {"ttft": 1, "note": "n"}}}})
    out = b2a({"sla": {"itl": 9}}, anns={ANN_SPEC: saved})
    assert out["spec"]["profilingConfig"]["config"] == {"sla": {"note": "n", "itl": 9}}


@pytest.mark.parametrize(
    ("config", "kind"), [([1, 2], "array"), ("x", "string"), (3, "number"), (True, "bool")]
)
def test_config_not_an_object_is_an_error(config: object, kind: str) -> None:
    message = f"failed to parse ProfilingConfig.Config: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    with pytest.raises(ConversionError) as direct:
        a2b({"profilingConfig": {"config": config}})
    assert str(direct.value) == message
    with pytest.raises(ConversionError) as routed:
        convert(alpha({"profilingConfig": {"config": config}}), BETA)
    assert str(routed.value) == message


# ---------------------------------------------------------- profilingConfig.resources


def test_resources_project_to_profiler_container() -> None:
    out = a2b({"profilingConfig": {"resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "0.5"}}}})
    assert out["spec"]["overrides"] == {
        "profilingJob": profiler_job({"limits": {"cpu": "2", "nvidia.com/gpu": "500m"}})
    }
    assert spec_payload(out) is None


def test_profiler_container_resources_project_to_alpha() -> None:
    job = {
        "template": {
            "spec": {
                "containers": [
                    {"name": "other"},
                    {"name": "profiler", "resources": {"requests": {"cpu": "1000m"}}},
                ]
            }
        }
    }
    out = b2a({"overrides": {"profilingJob": job}})
    assert out["spec"]["profilingConfig"]["resources"] == {"requests": {"cpu": "1"}}
    saved_job = spec_payload(out)["overrides"]["profilingJob"]  # type: ignore[index]
    names = [c["name"] for c in saved_job["template"]["spec"]["containers"]]
    assert names == ["other", "profiler"]


def test_legacy_unnamed_profiler_is_read_but_not_renamed_live() -> None:
    job = {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "1"}}}]}}}
    src = beta({"overrides": {"profilingJob": job}})
    out = dgdr.from_hub(src)
    assert out["spec"]["profilingConfig"]["resources"] == {"limits": {"cpu": "1"}}
    assert "name" not in src["spec"]["overrides"]["profilingJob"]["template"]["spec"]["containers"][0]


# ------------------------------------------------------------- tolerations/nodeSelector


def test_tolerations_and_node_selector_project_to_job() -> None:
    tol = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    out = a2b({"profilingConfig": {"tolerations": tol, "nodeSelector": {"gpu": "h100"}}})
    # PodSpec.containers is not omitempty: Go writes null when the job has no container
    assert out["spec"]["overrides"] == {
        "profilingJob": {
            "template": {"spec": {"containers": None, "tolerations": tol, "nodeSelector": {"gpu": "h100"}}}
        }
    }


def test_job_tolerations_and_node_selector_project_to_alpha() -> None:
    tol = [{"key": "k", "effect": "NoSchedule"}]
    out = b2a(
        {
            "overrides": {
                "profilingJob": {"template": {"spec": {"tolerations": tol, "nodeSelector": {"a": "b"}}}}
            }
        }
    )
    assert out["spec"]["profilingConfig"]["tolerations"] == tol
    assert out["spec"]["profilingConfig"]["nodeSelector"] == {"a": "b"}
    assert spec_payload(out) is None


# --------------------------------------------------------------- profilingJob hub-only


def test_profiling_job_hub_only_leaves_saved_and_restored() -> None:
    job = {
        "backoffLimit": 2,
        "template": {
            "spec": {
                "containers": [
                    {"name": "output-copier", "image": "busybox"},
                    {"name": "profiler", "resources": {"limits": {"cpu": "1"}}},
                ]
            }
        },
    }
    out = b2a({"overrides": {"profilingJob": job}})
    assert out["spec"]["profilingConfig"]["resources"] == {"limits": {"cpu": "1"}}
    saved = spec_payload(out)["overrides"]["profilingJob"]  # type: ignore[index]
    assert saved["backoffLimit"] == 2
    back = dgdr.to_hub(out)
    assert back["spec"]["overrides"]["profilingJob"] == job


def test_sole_profiler_with_resources_not_saved() -> None:
    out = b2a({"overrides": {"profilingJob": profiler_job({"limits": {"cpu": "1"}})}})
    assert spec_payload(out) is None


def test_explicit_name_only_profiler_is_saved() -> None:
    job = {"template": {"spec": {"containers": [{"name": "profiler"}]}}}
    out = b2a({"overrides": {"profilingJob": job}})
    assert spec_payload(out)["overrides"]["profilingJob"]["template"]["spec"]["containers"] == [  # type: ignore[index]
        {"name": "profiler", "resources": {}}
    ]
    assert dgdr.to_hub(out)["spec"]["overrides"]["profilingJob"] == job


def test_live_alpha_pod_fields_win_over_saved_job() -> None:
    saved_job = {
        "backoffLimit": 1,
        "template": {
            "spec": {"containers": [{"name": "profiler", "image": "x"}], "nodeSelector": {"old": "1"}}
        },
    }
    out = a2b(
        {"profilingConfig": {"resources": {"limits": {"cpu": "3"}}, "nodeSelector": {"new": "2"}}},
        anns={ANN_SPEC: envelope({"overrides": {"profilingJob": saved_job}})},
    )
    assert out["spec"]["overrides"]["profilingJob"] == {
        "backoffLimit": 1,
        "template": {
            "spec": {
                "containers": [{"name": "profiler", "image": "x", "resources": {"limits": {"cpu": "3"}}}],
                "nodeSelector": {"new": "2"},
            }
        },
    }


def test_saved_unnamed_profiler_migrated_on_read() -> None:
    saved_job = {"template": {"spec": {"containers": [{"name": "", "image": "legacy"}]}}}
    out = a2b(
        {"profilingConfig": {"resources": {"limits": {"cpu": "1"}}}},
        anns={ANN_SPEC: envelope({"overrides": {"profilingJob": saved_job}})},
    )
    assert out["spec"]["overrides"]["profilingJob"]["template"]["spec"]["containers"] == [
        {"name": "profiler", "image": "legacy", "resources": {"limits": {"cpu": "1"}}}
    ]


# ------------------------------------------------------------------------ overrides.dgd


def test_overrides_dgd_saved_and_restored() -> None:
    dgd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "spec": {"components": [{"name": "w"}]},
    }
    out = b2a({"overrides": {"dgd": dgd}})
    assert spec_payload(out)["overrides"] == {"dgd": dgd}  # type: ignore[index]
    assert dgdr.to_hub(out)["spec"]["overrides"] == {"dgd": dgd}


# ------------------------------------------------------------------------- hardware


def test_hardware_saved_and_restored() -> None:
    hw = {
        "gpuSku": "h100_sxm",
        "vramMb": 81920,
        "totalGpus": 8,
        "numGpusPerNode": 8,
        "interconnect": "nvlink",
        "rdma": False,
    }
    out = b2a({"hardware": hw})
    assert spec_payload(out)["hardware"] == hw  # type: ignore[index]
    assert dgdr.to_hub(out)["spec"]["hardware"] == hw


# ------------------------------------------------------------- workload hub-only


def test_workload_concurrency_request_rate_saved_and_restored() -> None:
    out = b2a({"workload": {"isl": 10, "concurrency": 16, "requestRate": 2.5}})
    assert spec_payload(out)["workload"] == {"concurrency": 16, "requestRate": 2.5}  # type: ignore[index]
    assert dgdr.to_hub(out)["spec"]["workload"] == {"isl": 10, "concurrency": 16, "requestRate": 2.5}


# --------------------------------------------------------------------- sla.e2eLatency


def test_sla_e2e_latency_saved_and_restored() -> None:
    out = b2a({"sla": {"ttft": 500.5, "e2eLatency": 3000}})
    assert spec_payload(out)["sla"] == {"e2eLatency": 3000}  # type: ignore[index]
    assert out["spec"]["profilingConfig"]["config"] == {"sla": {"ttft": 500.5}}
    assert dgdr.to_hub(out)["spec"]["sla"] == {"ttft": 500.5, "e2eLatency": 3000}


# ---------------------------------------------------------------------- searchStrategy


def test_search_strategy_saved_and_restored() -> None:
    out = b2a({"searchStrategy": "thorough"})
    assert spec_payload(out) == {"model": "", "searchStrategy": "thorough"}
    assert dgdr.to_hub(out)["spec"]["searchStrategy"] == "thorough"
