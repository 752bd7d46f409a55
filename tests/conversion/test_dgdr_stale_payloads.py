"""The stale-payload law of DGDR conversion on generated objects (:mod:`tests.conversion.dgdr_objects`):
convert, mutate the converted object, convert back and forth: the mutation survives and no saved
value overrides a live one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from random import Random
from typing import Any

from hypothesis import given

from conversion.v1alpha1 import dgdr
from tests.conversion.dgdr_objects import (
    ALPHA_STATES,
    BETA_PHASES,
    Obj,
    alpha_objects,
    assert_same,
    beta_objects,
    r_conditions,
    r_float,
    r_image,
    r_int32,
    r_json_obj,
    r_name,
    r_resources,
    r_tolerations,
    randoms,
    without_payloads,
)

# ---------------------------------------------------------------------- stale payload

Mutation = Callable[[Obj], None]


def _setp(obj: Obj, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj.setdefault(key, {})
    obj[path[-1]] = value


def _job_pod(spec: Obj) -> Obj:
    job = spec.setdefault("overrides", {}).setdefault("profilingJob", {})
    pod: Obj = job.setdefault("template", {}).setdefault("spec", {})
    return pod


def r_beta_mutation(r: Random) -> Mutation:
    kind = r.randint(0, 19)
    v_name, v_image, v_float, v_int = r_name(r), r_image(r), r_float(r), r_int32(r)
    v_json, v_tol, v_res = r_json_obj(r), r_tolerations(r), r_resources(r)
    v_phase, v_cond = r.choice(BETA_PHASES), r_conditions(r)

    def mutate(obj: Obj) -> None:
        spec: Obj = obj.setdefault("spec", {})
        status: Obj = obj.setdefault("status", {"phase": "Pending"})
        if kind == 0:
            spec["model"] = v_name + "-new"
        elif kind == 1:
            spec["backend"] = "sglang" if spec.get("backend") != "sglang" else "trtllm"
        elif kind == 2:
            spec["image"] = v_image
        elif kind == 3:
            _setp(spec, ("sla", "ttft"), v_float)
        elif kind == 4:
            _setp(spec, ("workload", "isl"), v_int)
            spec.setdefault("sla", {})  # isl travels in the α config "sla" object
        elif kind == 5:
            _setp(spec, ("modelCache", "pvcName"), v_name)
        elif kind == 6:
            _setp(spec, ("features", "planner"), v_json)
        elif kind == 7:
            features = spec.setdefault("features", {})
            if features.pop("mocker", None) is None:
                features["mocker"] = {"enabled": True}
            if not features:
                del spec["features"]
        elif kind == 8:
            spec["hardware"] = {"gpuSku": "a30", "totalGpus": 2}
            spec["searchStrategy"] = "thorough"
        elif kind == 9:
            _setp(spec, ("sla", "e2eLatency"), v_float)
            _setp(spec, ("workload", "concurrency"), v_float)
        elif kind == 10:
            _setp(spec, ("overrides", "dgd"), v_json)
        elif kind == 11:
            pod = _job_pod(spec)
            pod["tolerations"] = [*pod.get("tolerations", []), *v_tol]
        elif kind == 12:
            pod = _job_pod(spec)
            selector = pod.get("nodeSelector") or {"k": "v"}
            pod["nodeSelector"] = {f"{k}-renamed": v for k, v in selector.items()}
        elif kind == 13:
            pod = _job_pod(spec)
            containers = pod["containers"] = pod.get("containers") or []
            for c in containers:
                if c["name"] == "profiler":
                    c["resources"] = v_res
                    break
            else:
                containers.append({"name": "profiler", "resources": v_res})
        elif kind == 14:
            pod = _job_pod(spec)
            pod["containers"] = [
                {"name": "extra-" + v_name, "image": v_image},
                *(pod.get("containers") or []),
            ]
        elif kind == 15:
            status["phase"] = v_phase
        elif kind == 16:
            status["dgdName"] = v_name
        elif kind == 17:
            status["conditions"] = [*status.get("conditions", []), *v_cond]
            status["observedGeneration"] = status.get("observedGeneration", 0) + 1
        elif kind == 18:
            status.pop("dgdName", None)
        else:
            status["profilingResults"] = {
                **status.get("profilingResults", {}),
                "pareto": [{"config": v_json}],
            }

    return mutate


def r_alpha_mutation(r: Random) -> Mutation:
    kind = r.randint(0, 17)
    v_name, v_image, v_float, v_int = r_name(r), r_image(r), r_float(r), r_int32(r)
    v_tol, v_res, v_state, v_cond = r_tolerations(r), r_resources(r), r.choice(ALPHA_STATES), r_conditions(r)

    def mutate(obj: Obj) -> None:
        spec: Obj = obj["spec"]
        pc: Obj = spec["profilingConfig"]
        status: Obj = obj.setdefault("status", {"state": "Pending"})
        if kind == 0:
            spec["model"] = v_name + "-new"
        elif kind == 1:
            pc["profilerImage"] = v_image
        elif kind == 2:
            _setp(pc, ("config", "sla", "ttft"), v_float)
        elif kind == 3:
            _setp(pc, ("config", "sla", "isl"), v_int)
        elif kind == 4:
            _setp(pc, ("config", "extraKey"), {"v": v_name})
        elif kind == 5:
            config = pc.get("config", {})
            pc["config"] = {
                f"{k}2" if k not in ("sla", "deployment", "planner") else k: v for k, v in config.items()
            }
        elif kind == 6:
            pc.pop("config", None)
        elif kind == 7:
            pc["resources"] = v_res
        elif kind == 8:
            pc.pop("resources", None)
            pc.pop("tolerations", None)
        elif kind == 9:
            pc["tolerations"] = [*pc.get("tolerations", []), *v_tol]
        elif kind == 10:
            pc["nodeSelector"] = {f"{k}-x": v for k, v in (pc.get("nodeSelector") or {"a": "b"}).items()}
        elif kind == 11:
            pc["outputPVC"] = v_name
            spec["enableGpuDiscovery"] = not spec.get("enableGpuDiscovery", True)
        elif kind == 12:
            spec["deploymentOverrides"] = {"name": v_name, "workersImage": v_image}
            pc["profilerImage"] = pc["profilerImage"] or v_image  # workersImage alone is lossy
        elif kind == 13:
            if spec.pop("useMocker", None) is None:
                spec["useMocker"] = True
        elif kind == 14:
            status["state"] = v_state
        elif kind == 15:
            status.setdefault("deployment", {"state": "pending"})["name"] = v_name
        elif kind == 16:
            status["conditions"] = [*status.get("conditions", []), *v_cond]
        else:
            spec["backend"] = "vllm" if spec.get("backend") != "vllm" else "auto"
            spec["runtimeVersionOverride"] = "1.2.3"

    return mutate


def assert_stale_payload_law(
    obj: Obj, mutate: Mutation, there: Callable[[Obj], Obj], back: Callable[[Obj], Obj]
) -> None:
    """Converted ``there``, edited by ``mutate`` (its payloads now stale), then ``back`` and ``there``
    again: the edited object returns, payloads aside."""
    mutated = copy.deepcopy(there(obj))
    mutate(mutated)
    again = there(back(mutated))
    assert_same(without_payloads(again), without_payloads(mutated))


@given(alpha_objects, randoms.map(r_beta_mutation))
def test_stale_payload_law_on_beta(obj: Obj, mutate: Mutation) -> None:
    assert_stale_payload_law(obj, mutate, dgdr.to_hub, dgdr.from_hub)


@given(beta_objects, randoms.map(r_alpha_mutation))
def test_stale_payload_law_on_alpha(obj: Obj, mutate: Mutation) -> None:
    assert_stale_payload_law(obj, mutate, dgdr.from_hub, dgdr.to_hub)
