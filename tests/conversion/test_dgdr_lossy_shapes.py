"""The DGDR conversion's lossy shapes, as upstream converts them, and the config remainder's exact leaves."""

from __future__ import annotations

import pytest

from conversion import ConversionError
from conversion.v1alpha1 import dgdr
from tests.conversion.test_dgdr_builders import a2b, b2a, spec_payload

# ================================================================ lossy shapes (upstream)


def test_workload_without_sla_comes_back_with_empty_sla() -> None:
    alpha = b2a({"model": "m", "workload": {"isl": 100}})
    assert alpha["spec"]["profilingConfig"]["config"] == {"sla": {"isl": 100}}
    assert dgdr.to_hub(alpha)["spec"]["sla"] == {}


def test_workers_image_alone_comes_back_as_profiler_image() -> None:
    beta = a2b({"model": "m", "deploymentOverrides": {"workersImage": "w:1"}})
    back = dgdr.from_hub(beta)
    assert back["spec"]["profilingConfig"]["profilerImage"] == "w:1"


def test_live_model_cache_replaces_saved_model_cache_object() -> None:
    beta = a2b({"profilingConfig": {"config": {"deployment": {"modelCache": {"pvcName": "p", "x": 1}}}}})
    assert spec_payload(beta)["profilingConfig"]["config"] == {"deployment": {"modelCache": {"x": 1}}}  # type: ignore[index]
    back = dgdr.from_hub(beta)
    assert back["spec"]["profilingConfig"]["config"] == {"deployment": {"modelCache": {"pvcName": "p"}}}


def test_empty_alpha_state_comes_back_pending() -> None:
    beta = a2b({"model": "m"}, {"state": ""})
    assert beta["status"]["phase"] == "Pending"
    assert dgdr.from_hub(beta)["status"]["state"] == "Pending"


def test_empty_alpha_resources_create_a_name_only_profiler() -> None:
    beta = a2b({"profilingConfig": {"resources": {}}})
    assert beta["spec"]["overrides"]["profilingJob"]["template"]["spec"]["containers"] == [
        {"name": "profiler"}
    ]
    back = dgdr.from_hub(beta)
    assert "resources" not in back["spec"]["profilingConfig"]
    assert spec_payload(back)["overrides"]["profilingJob"]["template"]["spec"]["containers"] == [  # type: ignore[index]
        {"name": "profiler", "resources": {}}
    ]


@pytest.mark.parametrize(
    ("value", "expected"), [(2**31 - 1, 2**31 - 1), (2**31, -(2**31)), (-1.9, -1), (1e12, -(2**31))]
)
def test_isl_out_of_int32_range_converts_like_amd64(value: float, expected: int) -> None:
    beta = a2b({"profilingConfig": {"config": {"sla": {"isl": value}}}})
    assert beta["spec"]["workload"]["isl"] == expected


def test_sole_profiler_dropped_from_saved_job_leaves_empty_container_list() -> None:
    job = {
        "backoffLimit": 3,
        "template": {"spec": {"containers": [{"name": "profiler", "resources": {"limits": {"cpu": "1"}}}]}},
    }
    alpha = b2a({"overrides": {"profilingJob": job}})
    saved = spec_payload(alpha)["overrides"]["profilingJob"]  # type: ignore[index]
    assert saved["backoffLimit"] == 3
    assert saved["template"]["spec"]["containers"] == []
    assert dgdr.to_hub(alpha)["spec"]["overrides"]["profilingJob"] == job


def test_unnamed_live_container_saved_as_profiler() -> None:
    job = {"template": {"spec": {"containers": [{"image": "legacy"}, {"name": "aux"}]}}}
    alpha = b2a({"overrides": {"profilingJob": job}})
    saved = spec_payload(alpha)["overrides"]["profilingJob"]["template"]["spec"]["containers"]  # type: ignore[index]
    assert [c["name"] for c in saved] == ["profiler", "aux"]


@pytest.mark.parametrize(
    ("config", "remainder"),
    [
        (
            {
                "sla": {
                    "ttft": 10,
                    "itl": 20,
                    "optimizationType": "latency",
                    "isl": 30,
                    "osl": 40,
                    "custom": "k",
                },
                "deployment": {
                    "modelCache": {
                        "pvcName": "c",
                        "modelPathInPvc": "/m",
                        "pvcMountPath": "/c",
                        "custom": "k",
                    },
                    "unrelated": "k",
                },
                "planner": {"enabled": True},
                "top": "k",
            },
            {
                "sla": {"custom": "k"},
                "deployment": {"modelCache": {"custom": "k"}, "unrelated": "k"},
                "top": "k",
            },
        ),
        (
            {
                "sla": {
                    "ttft": "not-a-number",
                    "itl": False,
                    "optimizationType": "priority",
                    "isl": "1024",
                    "osl": None,
                },
                "deployment": {"modelCache": {"pvcName": 123, "modelPathInPvc": "", "pvcMountPath": False}},
                "planner": [],
            },
            {
                "sla": {
                    "ttft": "not-a-number",
                    "itl": False,
                    "optimizationType": "priority",
                    "isl": "1024",
                    "osl": None,
                },
                "deployment": {"modelCache": {"pvcName": 123, "modelPathInPvc": "", "pvcMountPath": False}},
                "planner": [],
            },
        ),
        (
            {
                "sla": {"ttft": 10},
                "deployment": {"modelCache": {"pvcName": "c"}},
                "planner": {"enabled": True},
            },
            None,
        ),
    ],
    ids=["projected-leaves-stripped", "typed-looking-values-kept", "emptied-containers-removed"],
)
def test_config_remainder_strips_exactly_the_projected_leaves(
    config: dict[str, object], remainder: object
) -> None:
    beta = a2b({"profilingConfig": {"config": config}})
    payload = spec_payload(beta)
    assert (payload["profilingConfig"]["config"] if payload else None) == remainder
    back = dgdr.from_hub(beta)["spec"]["profilingConfig"]["config"]
    mc = config.get("deployment", {}).get("modelCache", {})  # type: ignore[attr-defined]
    if isinstance(mc.get("pvcName"), str) and mc.get("pvcName"):
        # the live modelCache replaces the whole object: its unprojectable keys do not come back
        mc = {k: v for k, v in mc.items() if k in ("pvcName", "modelPathInPvc", "pvcMountPath")}
        config = {**config, "deployment": {**config["deployment"], "modelCache": mc}}  # type: ignore[dict-item]
    assert back == config


def test_config_numbers_travel_as_float64() -> None:
    # the blob is decoded into map[string]any: every number becomes a float64
    beta = a2b({"profilingConfig": {"config": {"big": 12345678901234567891, "f": 2.50}}})
    remainder = spec_payload(beta)["profilingConfig"]["config"]  # type: ignore[index]
    # written with the float64's shortest digits, as the operator writes them
    assert remainder == {"big": 12345678901234567000, "f": 2.5}
    back = dgdr.from_hub(beta)["spec"]["profilingConfig"]["config"]
    assert back == {"big": 12345678901234567000, "f": 2.5}
    # past uint64 the value stays a float64, written by Go (and in the payload) as its digits
    beta = a2b({"profilingConfig": {"config": {"big": 2**64 + 1}}})
    assert '"big":18446744073709552000' in beta["metadata"]["annotations"]["nvidia.com/dgdr-spec"]


def test_config_number_beyond_float64_is_a_parse_error() -> None:
    with pytest.raises(
        ConversionError, match=r"^failed to parse ProfilingConfig\.Config: json: cannot unmarshal number"
    ):
        a2b({"profilingConfig": {"config": {"sla": {"ttft": 10**400}}}})
