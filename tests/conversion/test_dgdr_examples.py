"""Worked examples (§10.4, §1.3 payload examples) and the vendored DGDR manifests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from app.review.compare import diff_paths, normalize
from conversion.v1alpha1 import dgdr
from kinds import convert
from tests.conversion.test_dgdr_builders import ALPHA, BETA, a2b, anns, b2a, spec_payload, status_payload

MANIFESTS = sorted(
    (Path(__file__).parent.parent / "fixtures" / "conversion" / "dgdr-manifests").glob("*.yaml")
)


def assert_same(actual: Any, expected: Any) -> None:
    a, e = normalize(actual), normalize(expected)
    assert a == e, diff_paths(a, e)


# ------------------------------------------------------------------------------ §10.4


def test_worked_example_projection_and_remainder() -> None:
    spec = {
        "model": "m",
        "backend": "vllm",
        "autoApply": True,
        "profilingConfig": {
            "profilerImage": "img",
            "outputPVC": "out",
            "config": {"sla": {"ttft": 500, "isl": 2048}, "extra": 1},
        },
    }
    out = a2b(spec)
    assert out["spec"] == {
        "model": "m",
        "backend": "vllm",
        "image": "img",
        "autoApply": True,
        "sla": {"ttft": 500},
        "workload": {"isl": 2048},
    }
    assert out["status"] == {"phase": "Pending"}
    assert spec_payload(out) == {
        "model": "",
        "backend": "",
        "profilingConfig": {"config": {"extra": 1}, "profilerImage": "", "outputPVC": "out"},
    }
    assert status_payload(out) is None

    back = dgdr.from_hub(out)
    assert back["apiVersion"] == ALPHA
    assert back["metadata"] == {"name": "r", "namespace": "ns"}
    assert back["spec"]["profilingConfig"]["config"] == {"extra": 1, "sla": {"isl": 2048, "ttft": 500}}
    assert_same(
        back,
        {
            "apiVersion": ALPHA,
            "kind": out["kind"],
            "metadata": back["metadata"],
            "spec": spec,
            "status": {"state": "Pending"},
        },
    )


def test_worked_example_resources_alone_need_no_payload() -> None:
    out = a2b({"profilingConfig": {"resources": {"limits": {"cpu": "2"}}}})
    assert out["spec"]["overrides"]["profilingJob"]["template"]["spec"]["containers"] == [
        {"name": "profiler", "resources": {"limits": {"cpu": "2"}}}
    ]
    assert "annotations" not in out["metadata"]
    back = dgdr.from_hub(out)
    assert back["spec"]["profilingConfig"]["resources"] == {"limits": {"cpu": "2"}}
    assert "annotations" not in back["metadata"]


# --------------------------------------------------------------------- §1.3 payloads


def test_example_beta_spec_payload() -> None:
    out = a2b(
        {
            "profilingConfig": {
                "config": {"extra_key": "preserved"},
                "configMapRef": {"name": "base-config", "key": "disagg.yaml"},
                "outputPVC": "output-pvc",
            },
            "deploymentOverrides": {"name": "my-dgd", "namespace": "prod", "labels": {"team": "ml"}},
            "enableGpuDiscovery": True,
        }
    )
    assert spec_payload(out) == {
        "model": "",
        "backend": "",
        "profilingConfig": {
            "config": {"extra_key": "preserved"},
            "configMapRef": {"name": "base-config", "key": "disagg.yaml"},
            "profilerImage": "",
            "outputPVC": "output-pvc",
        },
        "deploymentOverrides": {"name": "my-dgd", "namespace": "prod", "labels": {"team": "ml"}},
        "enableGpuDiscovery": True,
    }


def test_example_beta_status_payload() -> None:
    dep = {"name": "my-dgd", "namespace": "prod", "state": "initializing", "created": True}
    out = a2b(
        {"model": "m"},
        {
            "state": "Profiling",
            "backend": "vllm",
            "profilingResults": "configmap/profiling-cm",
            "deployment": dep,
        },
    )
    assert status_payload(out) == {
        "state": "Profiling",
        "backend": "vllm",
        "profilingResults": "configmap/profiling-cm",
        "deployment": dep,
    }
    assert out["status"] == {"phase": "Profiling", "dgdName": "my-dgd"}


def test_example_alpha_spec_payload_keeps_other_containers_and_order() -> None:
    job = {
        "template": {
            "spec": {
                "containers": [
                    {"name": "output-copier", "resources": {"limits": {"cpu": "250m"}}},
                    {"name": "profiler", "resources": {"limits": {"cpu": "1"}}},
                ]
            }
        }
    }
    out = b2a({"model": "m", "overrides": {"profilingJob": job}})
    assert spec_payload(out) == {
        "model": "",
        "overrides": {
            "profilingJob": {
                "template": {
                    "metadata": {},
                    "spec": {
                        "containers": [
                            {"name": "output-copier", "resources": {"limits": {"cpu": "250m"}}},
                            {"name": "profiler", "resources": {}},
                        ]
                    },
                }
            }
        },
    }
    back = dgdr.to_hub(out)
    assert back["spec"]["overrides"]["profilingJob"] == job


def test_example_alpha_status_payload() -> None:
    out = b2a(
        {"model": "m"},
        {"phase": "Profiling", "profilingPhase": "SweepingDecode", "profilingJobName": "profiling-job-1"},
    )
    assert status_payload(out) == {"profilingPhase": "SweepingDecode", "profilingJobName": "profiling-job-1"}
    assert set(anns(out)) == {"nvidia.com/dgdr-status"}


# ------------------------------------------------------------------------- manifests


def test_manifests_vendored() -> None:
    assert [p.name.split("__")[0] for p in MANIFESTS] == ["v1alpha1", "v1beta1"]


@pytest.mark.parametrize("path", MANIFESTS, ids=[p.name for p in MANIFESTS])
def test_manifest_converts_and_round_trips(path: Path) -> None:
    src = yaml.safe_load(path.read_text())
    other = BETA if src["apiVersion"] == ALPHA else ALPHA
    out = convert(src, other)
    assert out["apiVersion"] == other
    assert out["kind"] == "DynamoGraphDeploymentRequest"
    assert out["spec"]["model"] == src["spec"]["model"]
    back = convert(out, src["apiVersion"])
    # the status a conversion synthesises (phase Pending / state Pending) is the only addition
    expected = dict(src)
    expected["status"] = back["status"]
    assert back["status"] in ({"state": "Pending"}, {"phase": "Pending"})
    assert_same(back, expected)


def test_alpha_manifest_projection() -> None:
    src = yaml.safe_load((MANIFESTS[0]).read_text())
    out = convert(src, BETA)
    assert out["spec"]["sla"] == {"ttft": 200, "itl": 20}
    assert out["spec"]["workload"] == {"isl": 3000, "osl": 150}
    assert out["spec"]["image"] == "nvcr.io/nvidia/ai-dynamo/vllm-runtime:my-tag"
    assert spec_payload(out)["profilingConfig"]["config"] == {"searchStrategy": "thorough"}  # type: ignore[index]


def test_beta_manifest_projection() -> None:
    src = yaml.safe_load((MANIFESTS[1]).read_text())
    out = convert(src, ALPHA)
    assert out["spec"]["profilingConfig"]["config"]["planner"] == src["spec"]["features"]["planner"]
    assert spec_payload(out) == {"model": "", "workload": {"requestRate": 10}, "searchStrategy": "rapid"}
