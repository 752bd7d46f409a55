"""DGDR status mapping, v1alpha1 ⇄ v1beta1: α ``state`` ⇄ β ``phase``, ``deployment.name`` ⇄
``dgdName``, ``generatedDeployment`` ⇄ ``profilingResults.selectedConfig``, and the fields only one
version can represent (saved in, and restored from, the payload of the other version's type)."""

from __future__ import annotations

from conversion.v1alpha1.dgdr.types import (
    Obj,
)


def _state_to_phase(state: str, deployment: Obj | None) -> str:
    # "" maps to Pending and is not saved, so an empty α state comes back as Pending
    if state in ("", "Pending"):
        return "Pending"
    if state == "Profiling":
        return "Profiling"
    if state == "Ready":
        # a created deployment means the request is in fact Deployed
        return "Deployed" if deployment is not None and deployment.get("created") else "Ready"
    if state == "Deploying":
        return "Deploying"
    if state == "DeploymentDeleted":
        return "Ready"
    if state == "Failed":
        return "Failed"
    # Initializing and unknown states
    return "Pending"


def _phase_to_state(phase: str) -> str:
    if phase in ("Pending", "Profiling", "Ready", "Deploying", "Failed"):
        return phase
    if phase == "Deployed":
        return "Ready"  # lossy: Deployed is saved in the hub status payload when needed
    return "Pending"


def _state_has_hub_phase(state: str) -> bool:
    return state in ("", "Pending", "Profiling", "Ready", "Deploying", "Failed")


def _state_matches_phase(state: str, deployment: Obj | None, phase: str) -> bool:
    return _state_to_phase(state, deployment) == phase or (phase == "Deployed" and state == "Ready")


def _deployment_needs_save(state: str, deployment: Obj | None) -> bool:
    if deployment is None:
        return False
    if not deployment:
        return True
    if deployment.get("namespace") or deployment.get("state") or deployment.get("created"):
        return True
    return not _state_has_hub_phase(state)


def status_to_hub(src: Obj, restored: Obj | None, save: Obj) -> Obj:
    state: str = src.get("state", "")
    deployment: Obj | None = src.get("deployment")
    dst: Obj = {"phase": _state_to_phase(state, deployment)}
    if "observedGeneration" in src:
        dst["observedGeneration"] = src["observedGeneration"]
    if "conditions" in src:
        dst["conditions"] = src["conditions"]
    if src.get("generatedDeployment") is not None:
        dst["profilingResults"] = {"selectedConfig": src["generatedDeployment"]}
    if deployment is not None and deployment.get("name"):
        dst["dgdName"] = deployment["name"]

    # alpha-only status
    for key in ("backend", "profilingResults"):
        if key in src:
            save[key] = src[key]
    if state and not _state_has_hub_phase(state):
        save["state"] = state
    if _deployment_needs_save(state, deployment):
        if state:
            save["state"] = state
        save["deployment"] = deployment

    if restored is not None:
        _restore_hub_only_status(restored, dst, src)
    return dst


def _restore_hub_only_status(restored: Obj, dst: Obj, src: Obj) -> None:
    if (
        restored.get("phase") == "Deployed"
        and dst["phase"] == "Ready"
        and _state_matches_phase(src.get("state", ""), src.get("deployment"), "Deployed")
        and restored.get("dgdName", "") == dst.get("dgdName", "")
    ):
        dst["phase"] = "Deployed"
    if dst["phase"] == "Profiling":
        for key in ("profilingPhase", "profilingJobName"):
            if key in restored:
                dst[key] = restored[key]
    results = restored.get("profilingResults")
    if results is not None and results.get("pareto"):
        dst.setdefault("profilingResults", {})["pareto"] = results["pareto"]
    if restored.get("deploymentInfo") is not None and restored.get("dgdName", "") == dst.get("dgdName", ""):
        dst["deploymentInfo"] = restored["deploymentInfo"]


def status_from_hub(src: Obj, restored: Obj | None, save: Obj) -> Obj:
    phase: str = src.get("phase", "")
    dgd_name: str = src.get("dgdName", "")
    dst: Obj = {"state": _phase_to_state(phase)}
    if "observedGeneration" in src:
        dst["observedGeneration"] = src["observedGeneration"]
    if "conditions" in src:
        dst["conditions"] = src["conditions"]
    results = src.get("profilingResults")
    if results is not None and results.get("selectedConfig") is not None:
        dst["generatedDeployment"] = results["selectedConfig"]
    if dgd_name:
        # created stays false so a v1alpha1 controller does not skip re-creating the DGD
        dst["deployment"] = {"name": dgd_name}

    if restored is not None:
        for key in ("backend", "profilingResults"):
            if key in restored:
                dst[key] = restored[key]
        saved_state: str = restored.get("state", "")
        saved_deployment: Obj | None = restored.get("deployment")
        if (
            saved_state
            and _state_matches_phase(saved_state, saved_deployment, phase)
            and _saved_state_matches_live_dgd(saved_state, saved_deployment, dgd_name)
        ):
            dst["state"] = saved_state
        if (
            saved_deployment is not None
            and saved_deployment.get("name", "") == dgd_name
            and (not saved_state or _state_matches_phase(saved_state, saved_deployment, phase))
        ):
            dst["deployment"] = saved_deployment

    # hub-only status
    if phase == "Deployed" and _state_to_phase(dst["state"], dst.get("deployment")) != phase:
        save["phase"] = phase
        if dgd_name:
            save["dgdName"] = dgd_name
    if phase == "Profiling":
        for key in ("profilingPhase", "profilingJobName"):
            if key in src:
                save[key] = src[key]
    if results is not None and results.get("pareto"):
        save["profilingResults"] = {"pareto": results["pareto"]}
    if src.get("deploymentInfo") is not None:
        if dgd_name:
            save["dgdName"] = dgd_name
        save["deploymentInfo"] = src["deploymentInfo"]
    return dst


def _saved_state_matches_live_dgd(state: str, deployment: Obj | None, dgd_name: str) -> bool:
    """``DeploymentDeleted`` belongs to the DGD recorded with it; another live DGD makes it stale."""
    if state != "DeploymentDeleted":
        return True
    if deployment is None:
        return dgd_name == ""
    return bool(deployment.get("name", "") == dgd_name)
