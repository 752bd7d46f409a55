"""One focused test per DGDR status mapping row (spec tables §6.1/§6.2, checklist §11.4), both directions."""

from __future__ import annotations

import pytest

from conversion.v1alpha1 import dgdr
from tests.conversion.test_dgdr_builders import ANN_STATUS, a2b, anns, b2a, status_payload

# ============================================================================== status


@pytest.mark.parametrize(
    ("state", "deployment", "phase"),
    [
        ("", None, "Pending"),
        ("Pending", None, "Pending"),
        ("Profiling", None, "Profiling"),
        ("Ready", None, "Ready"),
        ("Ready", {"name": "d", "created": True}, "Deployed"),
        ("Deploying", None, "Deploying"),
        ("DeploymentDeleted", None, "Ready"),
        ("Failed", None, "Failed"),
        ("Initializing", None, "Pending"),
        ("Weird", None, "Pending"),
    ],
)
def test_state_to_phase(state: str, deployment: dict[str, object] | None, phase: str) -> None:
    status: dict[str, object] = {"state": state}
    if deployment is not None:
        status["deployment"] = deployment
    assert a2b({"model": "m"}, status)["status"]["phase"] == phase


@pytest.mark.parametrize(
    ("phase", "state"),
    [
        ("Pending", "Pending"),
        ("Profiling", "Profiling"),
        ("Ready", "Ready"),
        ("Deploying", "Deploying"),
        ("Deployed", "Ready"),
        ("Failed", "Failed"),
        ("", "Pending"),
        ("Other", "Pending"),
    ],
)
def test_phase_to_state(phase: str, state: str) -> None:
    assert b2a({"model": "m"}, {"phase": phase})["status"]["state"] == state


def test_states_without_hub_phase_saved_and_restored() -> None:
    out = a2b({"model": "m"}, {"state": "Initializing"})
    assert status_payload(out) == {"state": "Initializing"}
    assert dgdr.from_hub(out)["status"]["state"] == "Initializing"


def test_deployed_phase_saved_and_restored() -> None:
    out = b2a({"model": "m"}, {"phase": "Deployed", "dgdName": "d"})
    assert out["status"]["state"] == "Ready"
    assert out["status"]["deployment"] == {"name": "d", "state": ""}
    assert status_payload(out) == {"phase": "Deployed", "dgdName": "d"}
    assert dgdr.to_hub(out)["status"]["phase"] == "Deployed"


def test_deployed_phase_not_restored_for_another_dgd() -> None:
    saved = '{"phase":"Deployed","dgdName":"old"}'
    out = a2b({"model": "m"}, {"state": "Ready", "deployment": {"name": "new"}}, anns={ANN_STATUS: saved})
    assert out["status"]["phase"] == "Ready"


def test_observed_generation_and_conditions_native() -> None:
    cond = [
        {
            "type": "Ready",
            "status": "True",
            "reason": "R",
            "message": "ok",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
    out = a2b({"model": "m"}, {"observedGeneration": 3, "conditions": cond})
    assert out["status"]["observedGeneration"] == 3
    assert out["status"]["conditions"] == cond
    back = b2a({"model": "m"}, {"observedGeneration": 4, "conditions": cond})
    assert back["status"]["observedGeneration"] == 4
    assert back["status"]["conditions"] == cond


def test_generated_deployment_to_selected_config_and_back() -> None:
    gen = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "spec": {"n": None}}
    out = a2b({"model": "m"}, {"generatedDeployment": gen})
    assert out["status"]["profilingResults"] == {"selectedConfig": gen}
    back = b2a({"model": "m"}, {"profilingResults": {"selectedConfig": gen}})
    assert back["status"]["generatedDeployment"] == gen


def test_deployment_name_to_dgd_name_and_back_created_false() -> None:
    out = a2b({"model": "m"}, {"state": "Deploying", "deployment": {"name": "d"}})
    assert out["status"]["dgdName"] == "d"
    assert status_payload(out) is None
    back = b2a({"model": "m"}, {"phase": "Deploying", "dgdName": "d"})
    assert back["status"]["deployment"] == {"name": "d", "state": ""}


def test_deployment_details_saved_and_restored_while_name_matches() -> None:
    dep = {"name": "d", "namespace": "prod", "state": "initializing", "created": True}
    out = a2b({"model": "m"}, {"state": "Deploying", "deployment": dep})
    assert status_payload(out) == {"state": "Deploying", "deployment": dep}
    assert dgdr.from_hub(out)["status"]["deployment"] == dep
    out["status"]["dgdName"] = "other"
    assert dgdr.from_hub(out)["status"]["deployment"] == {"name": "other", "state": ""}


def test_deployment_deleted_state_restored_only_for_its_dgd() -> None:
    out = a2b({"model": "m"}, {"state": "DeploymentDeleted", "deployment": {"name": "d"}})
    assert out["status"]["phase"] == "Ready"
    assert dgdr.from_hub(out)["status"]["state"] == "DeploymentDeleted"
    out["status"]["dgdName"] = "e"
    assert dgdr.from_hub(out)["status"]["state"] == "Ready"


def test_status_backend_and_profiling_results_saved_and_restored() -> None:
    out = a2b({"model": "m"}, {"backend": "vllm", "profilingResults": "configmap/x"})
    assert status_payload(out) == {"state": "", "backend": "vllm", "profilingResults": "configmap/x"}
    back = dgdr.from_hub(out)
    assert back["status"]["backend"] == "vllm"
    assert back["status"]["profilingResults"] == "configmap/x"


def test_profiling_phase_and_job_name_saved_while_profiling() -> None:
    out = b2a(
        {"model": "m"}, {"phase": "Profiling", "profilingPhase": "SweepingDecode", "profilingJobName": "j"}
    )
    assert status_payload(out) == {"profilingPhase": "SweepingDecode", "profilingJobName": "j"}
    assert "nvidia.com/dgdr-status" not in anns(
        b2a({"model": "m"}, {"phase": "Ready", "profilingPhase": "Done"})
    )
    back = dgdr.to_hub(out)
    assert back["status"]["profilingPhase"] == "SweepingDecode"
    assert back["status"]["profilingJobName"] == "j"
    out["status"]["state"] = "Failed"
    assert "profilingPhase" not in dgdr.to_hub(out)["status"]


def test_pareto_saved_and_restored() -> None:
    pareto = [{"config": {"a": 1}}, {"config": None}]
    out = b2a({"model": "m"}, {"profilingResults": {"pareto": pareto}})
    assert "generatedDeployment" not in out["status"]
    assert status_payload(out) == {"profilingResults": {"pareto": pareto}}
    assert dgdr.to_hub(out)["status"]["profilingResults"] == {"pareto": pareto}


def test_deployment_info_saved_and_restored_while_dgd_name_matches() -> None:
    info = {"replicas": 2, "availableReplicas": 1}
    out = b2a({"model": "m"}, {"phase": "Ready", "dgdName": "d", "deploymentInfo": info})
    assert status_payload(out) == {"dgdName": "d", "deploymentInfo": info}
    assert dgdr.to_hub(out)["status"]["deploymentInfo"] == info
    out["status"]["deployment"]["name"] = "e"
    assert "deploymentInfo" not in dgdr.to_hub(out)["status"]
