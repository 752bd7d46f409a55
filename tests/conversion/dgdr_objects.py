"""Generated DGDR objects of both versions, for the conversion laws, and their comparison.

Objects are generated from the CRD schemas of both versions (``nvidia.com_dynamographdeploymentrequests``)
in their Go-normal form (what the upstream typed decode keeps: no empty ``omitempty`` strings,
lists or maps, canonical quantities and timestamps), avoiding only the documented lossy shapes
(α ``state: ""``, an empty α ``profilingConfig.resources``, α ``workersImage`` without
``profilerImage``, β ``sla: {}``/``workload: {}``/
``features: {}`` alone, β workload isl/osl without ``sla`` (it comes back with ``sla: {}``),
β ``autoApply`` absent, profiling phase outside ``Profiling`` …).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from random import Random
from typing import Any

from hypothesis import strategies as st

from app.review.compare import diff_paths, normalize

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
KIND = "DynamoGraphDeploymentRequest"
PAYLOAD_KEYS = ("nvidia.com/dgdr-spec", "nvidia.com/dgdr-status")

Obj = dict[str, Any]


# ------------------------------------------------------------------------- primitives
# Objects are built from a ``random.Random`` seeded by hypothesis (``st.randoms``): composing
# dozens of optional-key strategies per object made generation, not conversion, dominate the
# runtime. Hypothesis still chooses (and replays) the seed and reports the failing object;
# shrinking works on the seed only.

_LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"
_TEXT = "aZ09 _-./:é€😀"
_QUANTITIES = ("1", "2", "16", "500m", "250m", "100Mi", "1Gi", "16Gi", "1536Mi", "1e3")
_RESOURCE_NAMES = ("cpu", "memory", "nvidia.com/gpu", "ephemeral-storage")
ALPHA_STATES = ("Initializing", "Pending", "Profiling", "Deploying", "Ready", "DeploymentDeleted", "Failed")
BETA_PHASES = ("Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed")


def _p(r: Random, p: float = 0.5) -> bool:
    return r.random() < p


def r_name(r: Random) -> str:
    return "".join(r.choice(_LOWER) for _ in range(r.randint(1, 6)))


def r_text(r: Random) -> str:
    return "".join(r.choice(_TEXT) for _ in range(r.randint(1, 8)))


def r_image(r: Random) -> str:
    return f"nvcr.io/{r_name(r)}:{r_name(r)}"


def r_float(r: Random) -> float | int:
    return r.randint(0, 10**6) if _p(r) else round(r.uniform(0, 1e6), r.randint(0, 4))


def r_int32(r: Random) -> int:
    return r.randint(-(2**31), 2**31 - 1) if _p(r, 0.2) else r.randint(0, 10000)


def r_labels(r: Random) -> dict[str, str]:
    # Map values include "": Go keeps every entry of a map[string]string, a marker included.
    return {r_name(r): "" if _p(r, 0.3) else r_name(r) for _ in range(r.randint(1, 2))}


def r_scalar(r: Random) -> Any:
    k = r.randint(0, 4)
    if k == 0:
        return None
    if k == 1:
        return _p(r)
    if k == 2:
        return r.randint(-(2**40), 2**40)
    if k == 3:
        return r.uniform(-1e9, 1e9)
    return r_text(r)


def r_json(r: Random, depth: int = 0) -> Any:
    k = r.randint(0, 3) if depth < 2 else 0
    if k <= 1:
        return r_scalar(r)
    if k == 2:
        return [r_json(r, depth + 1) for _ in range(r.randint(0, 2))]
    return {r_name(r): r_json(r, depth + 1) for _ in range(r.randint(0, 2))}


def r_json_obj(r: Random) -> Obj:
    return {r_name(r): r_json(r) for _ in range(r.randint(1, 3))}


def _some(r: Random, fields: dict[str, Callable[[Random], Any]]) -> Obj:
    """A non-empty dict: each field present with probability ½, at least one present."""
    out = {k: f(r) for k, f in fields.items() if _p(r)}
    if not out:
        k = r.choice(list(fields))
        out[k] = fields[k](r)
    return out


def r_resources(r: Random) -> Obj:
    def res_list(r: Random) -> dict[str, str]:
        return {r.choice(_RESOURCE_NAMES): r.choice(_QUANTITIES) for _ in range(r.randint(1, 2))}

    return _some(r, {"limits": res_list, "requests": res_list})


def r_tolerations(r: Random) -> list[Obj]:
    out = []
    for _ in range(r.randint(1, 2)):
        t: Obj = {"key": r_name(r)}
        if _p(r):
            t["operator"] = r.choice(("Exists", "Equal"))
        if _p(r):
            t["value"] = r_name(r)
        if _p(r):
            t["effect"] = r.choice(("NoSchedule", "NoExecute"))
        if _p(r, 0.3):
            t["tolerationSeconds"] = r.randint(0, 3600)
        out.append(t)
    return out


def r_conditions(r: Random) -> list[Obj]:
    out = []
    for _ in range(r.randint(1, 2)):
        c: Obj = {
            "type": r.choice(("Ready", "Available", "Progressing")),
            "status": r.choice(("True", "False", "Unknown")),
            "reason": r.choice(("AllReady", "Pending", "Reconciling")),
            "message": r.choice(("", r_name(r))),
            "lastTransitionTime": f"2026-01-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:00:00Z",
        }
        if _p(r, 0.3):
            c["observedGeneration"] = r.randint(1, 9)
        out.append(c)
    return out


def r_metadata(r: Random) -> Obj:
    meta: Obj = {"name": r_name(r), "namespace": r_name(r)}
    if _p(r, 0.3):
        meta["labels"] = r_labels(r)
    if _p(r, 0.3):
        meta["annotations"] = {r.choice(("team", "nvidia.com/dgd-other", "x/y")): r_name(r)}
    if _p(r, 0.3):
        meta["uid"] = r_name(r)
        meta["generation"] = r.randint(1, 9)
    return meta


# ------------------------------------------------------------------------- v1alpha1


def r_config_blob(r: Random) -> Obj:
    blob: Obj = {}
    if _p(r, 0.7):
        if _p(r, 0.9):
            sla: Obj = {}
            for key in ("ttft", "itl"):
                if _p(r):
                    sla[key] = r_float(r)
            for key in ("isl", "osl"):
                if _p(r):
                    sla[key] = r_int32(r)
            if _p(r, 0.3):
                sla["optimizationType"] = r.choice(("latency", "throughput", "balanced"))
            if _p(r, 0.2):
                sla["note"] = r_json(r)
            blob["sla"] = sla
        else:
            blob["sla"] = r_scalar(r)
    if _p(r, 0.3):
        deployment: Obj = {}
        if _p(r, 0.8):
            # live β modelCache values replace the whole saved modelCache object (upstream), so a
            # blob mixing projected strings with other keys or empty strings is lossy: either
            # kind alone is not
            if _p(r, 0.8):
                deployment["modelCache"] = {
                    k: r_name(r) for k in ("pvcName", "modelPathInPvc", "pvcMountPath") if _p(r)
                }
            else:
                deployment["modelCache"] = {
                    "x": r_json(r),
                    **{k: "" for k in ("pvcName", "modelPathInPvc") if _p(r)},
                }
        if _p(r, 0.3):
            deployment["other"] = r_json(r)
        blob["deployment"] = deployment
    if _p(r, 0.3):
        blob["planner"] = {r_name(r): r_json(r) for _ in range(r.randint(0, 3))}
    if _p(r, 0.3):
        blob["sweep"] = r_json_obj(r)
    if _p(r, 0.2):
        blob["searchStrategy"] = r.choice(("rapid", "thorough"))
    return blob


def r_alpha_spec(r: Random) -> Obj:
    pc: Obj = {"profilerImage": r_image(r) if _p(r) else ""}
    if _p(r, 0.6):
        pc["config"] = r_config_blob(r)
    if _p(r, 0.2):
        pc["configMapRef"] = {"name": r_name(r), **({"key": r_name(r)} if _p(r) else {})}
    if _p(r, 0.2):
        pc["outputPVC"] = r_name(r)
    if _p(r, 0.3):
        pc["resources"] = r_resources(r)
    if _p(r, 0.3):
        pc["tolerations"] = r_tolerations(r)
    if _p(r, 0.3):
        pc["nodeSelector"] = r_labels(r)
    spec: Obj = {
        "model": r_name(r),
        "backend": r.choice(("auto", "vllm", "sglang", "trtllm")),
        "profilingConfig": pc,
    }
    if _p(r, 0.3):
        spec["useMocker"] = True
    if _p(r):
        spec["autoApply"] = True
    if _p(r, 0.2):
        spec["runtimeVersionOverride"] = f"{r.randint(0, 9999)}.{r.randint(0, 9999)}.{r.randint(0, 9999)}"
    if _p(r, 0.4):
        spec["enableGpuDiscovery"] = _p(r)
    if _p(r, 0.3):
        spec["deploymentOverrides"] = _some(
            r,
            {
                "name": r_name,
                "namespace": r_name,
                "labels": r_labels,
                "annotations": r_labels,
                "workersImage": r_image,
            },
        )
        if "workersImage" in spec["deploymentOverrides"] and not pc["profilerImage"]:
            # workersImage alone becomes β image and comes back as profilerImage (lossy upstream)
            pc["profilerImage"] = r_image(r)
    return spec


def r_alpha_status(r: Random) -> Obj:
    status: Obj = {"state": r.choice(ALPHA_STATES)}
    if _p(r, 0.3):
        status["backend"] = r.choice(("vllm", "sglang"))
    if _p(r, 0.3):
        status["observedGeneration"] = r.randint(1, 9)
    if _p(r, 0.3):
        status["conditions"] = r_conditions(r)
    if _p(r, 0.2):
        status["profilingResults"] = r_name(r)
    if _p(r, 0.2):
        status["generatedDeployment"] = r_json_obj(r)
    if _p(r, 0.5):
        dep: Obj = {"state": r.choice(("initializing", "pending", "successful", "failed"))}
        if _p(r, 0.8):
            dep["name"] = r_name(r)
        if _p(r, 0.3):
            dep["namespace"] = r_name(r)
        if _p(r, 0.4):
            dep["created"] = True
        status["deployment"] = dep
    return status


def r_object(
    r: Random, api_version: str, spec: Callable[[Random], Obj], status: Callable[[Random], Obj]
) -> Obj:
    """A DGDR of ``api_version``: random metadata, then ``spec`` and ``status`` drawn in that order."""
    return {
        "apiVersion": api_version,
        "kind": KIND,
        "metadata": r_metadata(r),
        "spec": spec(r),
        "status": status(r),
    }


def r_alpha(r: Random) -> Obj:
    # status is always present: a missing α state reads as "" and comes back as Pending
    return r_object(r, ALPHA, r_alpha_spec, r_alpha_status)


# -------------------------------------------------------------------------- v1beta1


def r_job(r: Random) -> Obj:
    pod: Obj = {}
    names = r.sample(("profiler", "output-copier", "aux", "sidecar"), r.randint(0, 3))
    containers = []
    for name in names:
        c: Obj = {"name": name}
        if _p(r):
            c["image"] = r_image(r)
        if _p(r):
            c["resources"] = r_resources(r)
        containers.append(c)
    if containers:
        pod["containers"] = containers
    if _p(r, 0.3):
        pod["tolerations"] = r_tolerations(r)
    if _p(r, 0.3):
        pod["nodeSelector"] = r_labels(r)
    if _p(r, 0.2):
        pod["volumes"] = [{"name": "out", "emptyDir": {}}]
    template: Obj = {"spec": pod}
    if _p(r, 0.2):
        template["metadata"] = {"labels": r_labels(r)}
    job: Obj = {"template": template}
    if _p(r, 0.3) or (not pod and "metadata" not in template):
        job["backoffLimit"] = r.randint(0, 5)
    return job


def r_beta_spec(r: Random) -> Obj:
    spec: Obj = {"model": r_name(r), "autoApply": _p(r)}
    if _p(r, 0.7):
        spec["backend"] = r.choice(("auto", "vllm", "sglang", "trtllm"))
    if _p(r):
        spec["image"] = r_image(r)
    if _p(r, 0.2):
        spec["runtimeVersionOverride"] = f"{r.randint(0, 9999)}.{r.randint(0, 9999)}.{r.randint(0, 9999)}"
    if _p(r, 0.3):
        spec["modelCache"] = _some(r, {"pvcName": r_name, "pvcModelPath": r_name, "pvcMountPath": r_name})
    if _p(r, 0.3):
        hw: Obj = {}
        if _p(r):
            hw["gpuSku"] = r.choice(("h100_sxm", "a30", "gb200_sxm"))
        if _p(r):
            hw["vramMb"] = r_float(r)
        if _p(r):
            hw["totalGpus"] = r.randint(1, 64)
        if _p(r):
            hw["numGpusPerNode"] = r.randint(1, 8)
        if _p(r):
            hw["interconnect"] = r_name(r)
        if _p(r):
            hw["rdma"] = _p(r)
        spec["hardware"] = hw
    if _p(r):
        spec["workload"] = _some(
            r, {"isl": r_int32, "osl": r_int32, "concurrency": r_float, "requestRate": r_float}
        )
    if _p(r):
        spec["sla"] = _some(
            r,
            {
                "ttft": r_float,
                "itl": r_float,
                "e2eLatency": r_float,
                "optimizationType": lambda r: r.choice(("latency", "throughput")),
            },
        )
    workload = spec.get("workload", {})
    if ("isl" in workload or "osl" in workload) and "sla" not in spec:
        # isl/osl travel in the α config "sla" object, which always creates β sla (upstream)
        spec["sla"] = {"itl": 5}
    if _p(r, 0.4):
        spec["overrides"] = _some(r, {"profilingJob": r_job, "dgd": r_json_obj})
    if _p(r, 0.4):
        spec["features"] = _some(
            r, {"planner": r_json_obj, "mocker": lambda r: {"enabled": True} if _p(r) else {}}
        )
    if _p(r, 0.4):
        spec["searchStrategy"] = r.choice(("rapid", "thorough"))
    return spec


def r_beta_status(r: Random) -> Obj:
    status: Obj = {"phase": r.choice(BETA_PHASES)}
    if _p(r):
        status["dgdName"] = r_name(r)
    if _p(r, 0.3):
        status["conditions"] = r_conditions(r)
    if _p(r, 0.3):
        status["observedGeneration"] = r.randint(1, 9)
    if _p(r, 0.3):
        status["deploymentInfo"] = {k: r.randint(0, 9) for k in ("replicas", "availableReplicas") if _p(r)}
    if _p(r, 0.3):
        status["profilingResults"] = _some(
            r,
            {
                "pareto": lambda r: [{"config": r_json_obj(r)} for _ in range(r.randint(1, 2))],
                "selectedConfig": r_json_obj,
            },
        )
    if status["phase"] == "Profiling":
        # profiling phase and job name are kept only while the phase is Profiling
        if _p(r):
            status["profilingPhase"] = r.choice(("Initializing", "SweepingPrefill", "Done"))
        if _p(r):
            status["profilingJobName"] = r_name(r)
    return status


def r_beta(r: Random) -> Obj:
    # status is always present: a missing β phase comes back as Pending
    return r_object(r, BETA, r_beta_spec, r_beta_status)


randoms = st.randoms(use_true_random=True)
alpha_objects = randoms.map(r_alpha)
beta_objects = randoms.map(r_beta)


# ----------------------------------------------------------------------- comparison


def n(obj: Obj) -> Any:
    return normalize(obj)


def without_payloads(obj: Obj) -> Any:
    obj = copy.deepcopy(obj)
    anns = obj.get("metadata", {}).get("annotations")
    if anns is not None:
        for key in PAYLOAD_KEYS:
            anns.pop(key, None)
        if not anns:
            del obj["metadata"]["annotations"]
    return normalize(obj)


def assert_same(a: Any, b: Any) -> None:
    assert a == b, diff_paths(a, b)
