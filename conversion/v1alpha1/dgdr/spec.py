"""DGDR spec mapping, v1alpha1 ⇄ v1beta1: the α ``profilingConfig.config`` blob ⇄ the β typed
fields it projects to, the α profiling resources, tolerations and node selector ⇄ the β profiling
job, and the fields only one version can represent (saved in, and restored from, the payload of
the other version's type)."""

from __future__ import annotations

from typing import Any, TypeGuard

from conversion.errors import ConversionError
from conversion.v1alpha1.dgdr.types import (
    CONTAINER,
    JOB_SPEC,
    RESOURCES,
    Obj,
)
from gocompat.errors import GoTypeError, unmarshal_text
from gocompat.jsonvalue import deep_copy, go_float, go_float_tree, json_type
from gocompat.typed import is_zero

PROFILER = "profiler"
_OPTIMIZATION_TYPES = ("latency", "throughput")


#: α ``config.deployment.modelCache`` key → β ``modelCache`` key
_MODEL_CACHE_KEYS = (
    ("pvcName", "pvcName"),
    ("modelPathInPvc", "pvcModelPath"),
    ("pvcMountPath", "pvcMountPath"),
)


def _pod_spec(job: Obj) -> Obj:
    tmpl: Obj = job.setdefault("template", {})
    spec: Obj = tmpl.setdefault("spec", {})
    return spec


def job_containers(job: Obj) -> list[Obj]:
    containers: list[Obj] = job.get("template", {}).get("spec", {}).get("containers") or []
    return containers


def _profiler_index(containers: list[Obj]) -> int:
    """Index of the canonical profiler container (strictly by the map-list key ``name``)."""
    for i, c in enumerate(containers):
        if c.get("name") == PROFILER:
            return i
    return -1


def _migrated_profiler_index(containers: list[Obj]) -> int:
    """:func:`_profiler_index` after the legacy migration, without renaming anything."""
    idx = _profiler_index(containers)
    if idx >= 0:
        return idx
    for i, c in enumerate(containers):
        if not c.get("name"):
            return i
    return -1


def migrate_unnamed_profiler(containers: list[Obj]) -> None:
    """Older hub saves used an unnamed (``name: ""``) placeholder for the profiler entry.

    With no container named ``profiler``, the first unnamed one is renamed in place; when a
    ``profiler`` exists, unnamed entries stay distinct containers.
    """
    if _profiler_index(containers) >= 0:
        return
    for c in containers:
        if not c.get("name"):
            c["name"] = PROFILER
            return


def _profiler_resources(job: Obj) -> tuple[Obj, bool]:
    containers = job_containers(job)
    idx = _profiler_index(containers)
    if idx < 0:
        return {}, False
    res: Obj = containers[idx].get("resources", {})
    return res, not is_zero(res, RESOURCES)


def _set_profiler_resources(job: Obj, resources: Obj) -> None:
    spec = _pod_spec(job)
    containers = spec.get("containers")
    if containers is None:
        containers = spec["containers"] = []
    idx = _profiler_index(containers)
    if idx < 0:
        # α resources always land on the container named "profiler" (containers is a map list
        # keyed by name, so the entry is appended rather than encoded as name "")
        containers.append({"name": PROFILER})
        idx = len(containers) - 1
    containers[idx]["resources"] = resources


def _is_number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _go_int32(v: float) -> int:
    """``int32(float64)`` as compiled for amd64 (CVTTSD2SL): truncation; out of range gives -2³¹."""
    t = int(v)
    if -(1 << 31) <= t < (1 << 31):
        return t
    return -(1 << 31)


def spec_to_hub(src: Obj, restored: Obj | None, save: Obj) -> Obj:
    dst: Obj = {}
    if "model" in src:
        dst["model"] = src["model"]
    if "runtimeVersionOverride" in src:
        dst["runtimeVersionOverride"] = src["runtimeVersionOverride"]
    # autoApply is a plain bool in v1alpha1 and a pointer in v1beta1: always written, false too
    dst["autoApply"] = src.get("autoApply", False)
    if "backend" in src:
        dst["backend"] = src["backend"]
    overrides = src.get("deploymentOverrides")
    if overrides is not None and overrides.get("workersImage"):
        dst["image"] = overrides["workersImage"]
    if src.get("useMocker"):
        dst["features"] = {"mocker": {"enabled": True}}

    pc: Obj = src.get("profilingConfig", {})
    if "config" in pc:
        raw = pc["config"]
        if not isinstance(raw, dict):
            raise ConversionError(
                "failed to parse ProfilingConfig.Config: "
                + unmarshal_text(json_type(raw, go=True), "map[string]interface {}")
            )
        try:
            blob = go_float_tree(raw)
        except GoTypeError as e:
            raise ConversionError(f"failed to parse ProfilingConfig.Config: {e}") from e
        _project_sla_from_blob(blob, dst)
        _project_model_cache_from_blob(blob, dst)
        _project_planner_from_blob(blob, dst)
        _save_config_remainder(blob, save)

    # profilerImage wins over deploymentOverrides.workersImage
    if pc.get("profilerImage"):
        dst["image"] = pc["profilerImage"]

    _project_profiling_config_to_job(pc, dst)
    _save_alpha_only_spec(src, save)
    if restored is not None:
        _restore_hub_only_spec(restored, dst)
    return dst


def _project_sla_from_blob(blob: Obj, dst: Obj) -> None:
    sla = blob.get("sla")
    if not isinstance(sla, dict):
        return
    # an object under "sla" always creates β sla, possibly {}
    dsla: Obj = dst.setdefault("sla", {})
    for key in ("ttft", "itl"):
        v = sla.get(key)
        if _is_number(v):
            dsla[key] = float(v)
    ot = sla.get("optimizationType")
    if ot in _OPTIMIZATION_TYPES:
        dsla["optimizationType"] = ot
    for key in ("isl", "osl"):
        v = sla.get(key)
        if _is_number(v):
            # JSON numbers are float64 in the blob; the β field is int32 (truncated). isl/osl live
            # inside the α "sla" object, so a β workload without sla comes back with sla: {}
            dst.setdefault("workload", {})[key] = _go_int32(float(v))


def _project_model_cache_from_blob(blob: Obj, dst: Obj) -> None:
    deployment = blob.get("deployment")
    if not isinstance(deployment, dict):
        return
    mc = deployment.get("modelCache")
    if not isinstance(mc, dict):
        return
    # an object under deployment.modelCache always creates β modelCache, possibly {}
    out: Obj = {}
    for a_key, b_key in _MODEL_CACHE_KEYS:
        v = mc.get(a_key)
        if isinstance(v, str) and v:
            out[b_key] = v
    dst["modelCache"] = out


def _planner_projects(v: Any) -> bool:
    return isinstance(v, dict) and len(v) > 0


def _project_planner_from_blob(blob: Obj, dst: Obj) -> None:
    planner = blob.get("planner")
    if _planner_projects(planner):
        dst.setdefault("features", {})["planner"] = planner


def _strip_sla_keys(sla: Obj) -> bool:
    stripped = False
    for key in ("ttft", "itl", "isl", "osl"):
        if _is_number(sla.get(key)):
            del sla[key]
            stripped = True
    if sla.get("optimizationType") in _OPTIMIZATION_TYPES:
        del sla["optimizationType"]
        stripped = True
    return stripped


def _strip_model_cache_keys(mc: Obj) -> bool:
    stripped = False
    for key, _ in _MODEL_CACHE_KEYS:
        v = mc.get(key)
        # empty strings are not projected, so they stay in the remainder
        if isinstance(v, str) and v:
            del mc[key]
            stripped = True
    return stripped


def _strip_typed(blob: Obj) -> Obj:
    """The blob minus every leaf that projects into a typed v1beta1 field.

    ``sla``/``deployment``/``modelCache`` objects emptied *by stripping* are removed; objects
    that were already empty are kept (an explicit ``sla: {}`` is user data).
    """
    out = dict(blob)
    sla = out.get("sla")
    if isinstance(sla, dict):
        sla = dict(sla)
        if _strip_sla_keys(sla) and not sla:
            del out["sla"]
        else:
            out["sla"] = sla
    deployment = out.get("deployment")
    if isinstance(deployment, dict):
        deployment = dict(deployment)
        stripped = False
        mc = deployment.get("modelCache")
        if isinstance(mc, dict):
            mc = dict(mc)
            stripped = _strip_model_cache_keys(mc)
            if stripped and not mc:
                del deployment["modelCache"]
            else:
                deployment["modelCache"] = mc
        if stripped and not deployment:
            del out["deployment"]
        else:
            out["deployment"] = deployment
    if _planner_projects(out.get("planner")):
        del out["planner"]
    return out


def _save_config_remainder(blob: Obj, save: Obj) -> None:
    if not blob:
        # an explicit {} config is saved as {} so it survives the round trip
        save.setdefault("profilingConfig", {})["config"] = {}
        return
    remainder = _strip_typed(blob)
    if remainder:
        save.setdefault("profilingConfig", {})["config"] = remainder


def _project_profiling_config_to_job(pc: Obj, dst: Obj) -> None:
    resources = pc.get("resources")
    tolerations = pc.get("tolerations")
    node_selector = pc.get("nodeSelector")
    # resources: {} (a non-nil pointer) is enough to create the job and the profiler entry
    if resources is None and not tolerations and not node_selector:
        return
    overrides: Obj = dst.setdefault("overrides", {})
    job: Obj | None = overrides.get("profilingJob")
    if job is None:
        job = overrides["profilingJob"] = {"template": {"spec": {}}}
    if resources is not None:
        _set_profiler_resources(job, resources)
    spec = _pod_spec(job)
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector


def _save_alpha_only_spec(src: Obj, save: Obj) -> None:
    if "enableGpuDiscovery" in src:
        save["enableGpuDiscovery"] = src["enableGpuDiscovery"]
    pc: Obj = src.get("profilingConfig", {})
    if "configMapRef" in pc:
        save.setdefault("profilingConfig", {})["configMapRef"] = pc["configMapRef"]
    if "outputPVC" in pc:
        save.setdefault("profilingConfig", {})["outputPVC"] = pc["outputPVC"]
    overrides = src.get("deploymentOverrides")
    # saved whole (workersImage included) unless every field is empty
    if overrides is not None and any(overrides.values()):
        save["deploymentOverrides"] = overrides


def _restore_hub_only_spec(restored: Obj, dst: Obj) -> None:
    if restored.get("hardware") is not None:
        dst["hardware"] = restored["hardware"]
    workload = restored.get("workload")
    if workload is not None:
        # a saved workload creates β workload even when it carries neither field
        dw: Obj = dst.setdefault("workload", {})
        for key in ("concurrency", "requestRate"):
            if key in workload:
                dw[key] = workload[key]
    sla = restored.get("sla")
    if sla is not None:
        ds: Obj = dst.setdefault("sla", {})
        if "e2eLatency" in sla:
            ds["e2eLatency"] = sla["e2eLatency"]
    overrides = restored.get("overrides")
    if overrides is not None:
        _restore_hub_only_overrides(overrides, dst)
    features = restored.get("features")
    if features is not None and features.get("mocker") is not None and not features["mocker"].get("enabled"):
        df: Obj = dst.setdefault("features", {})
        if df.get("mocker") is None:
            df["mocker"] = {}  # {enabled: false}: the false is omitted, the {} marker stays
    if restored.get("searchStrategy"):
        dst["searchStrategy"] = restored["searchStrategy"]


def _restore_hub_only_overrides(restored: Obj, dst: Obj) -> None:
    overrides: Obj = dst.setdefault("overrides", {})
    if restored.get("dgd") is not None:
        overrides["dgd"] = restored["dgd"]
    saved_job = restored.get("profilingJob")
    if saved_job is not None:
        live_job = overrides.get("profilingJob")
        if live_job is not None:
            _merge_saved_job(live_job, saved_job)
        overrides["profilingJob"] = saved_job
    if not overrides:
        del dst["overrides"]


def _merge_saved_job(live: Obj, saved: Obj) -> None:
    """Lay the live projected profiler resources, tolerations and nodeSelector over ``saved``.

    ``saved`` (a fresh decode of the payload) becomes the result and is modified in place.
    """
    resources, has_resources = _profiler_resources(live)
    live_spec: Obj = live.get("template", {}).get("spec", {})
    tolerations = live_spec.get("tolerations")
    node_selector = live_spec.get("nodeSelector")
    migrate_unnamed_profiler(job_containers(saved))
    if has_resources:
        _set_profiler_resources(saved, resources)
    if tolerations:
        _pod_spec(saved)["tolerations"] = tolerations
    if node_selector:
        _pod_spec(saved)["nodeSelector"] = node_selector


def spec_from_hub(src: Obj, restored: Obj | None, save: Obj) -> Obj:
    dst: Obj = {}
    if "model" in src:
        dst["model"] = src["model"]
    if "runtimeVersionOverride" in src:
        dst["runtimeVersionOverride"] = src["runtimeVersionOverride"]
    # an absent β autoApply means the CRD default, true
    if src.get("autoApply", True):
        dst["autoApply"] = True
    if "backend" in src:
        dst["backend"] = src["backend"]
    features = src.get("features")
    if features is not None and features.get("mocker") is not None and features["mocker"].get("enabled"):
        dst["useMocker"] = True

    # Rebuild the blob from the saved remainder (re-stripped, so a stale payload cannot bring
    # back projected leaves), then write the live typed fields on top of it.
    blob: Obj | None = None
    if restored is not None:
        raw = restored.get("profilingConfig", {}).get("config")
        if isinstance(raw, dict):
            try:
                blob = _strip_typed(go_float_tree(raw))
            except GoTypeError:
                blob = None
    if src.get("sla") is not None or src.get("workload") is not None:
        nxt = blob if blob is not None else {}
        if _project_sla_to_blob(src, nxt):
            blob = nxt
    if src.get("modelCache") is not None:
        nxt = blob if blob is not None else {}
        if _project_model_cache_to_blob(src["modelCache"], nxt):
            blob = nxt
    if features is not None and features.get("planner") is not None:
        nxt = blob if blob is not None else {}
        if _project_planner_to_blob(features["planner"], nxt):
            blob = nxt
    pc: Obj = {}
    dst["profilingConfig"] = pc
    if blob is not None:
        pc["config"] = blob
    # image comes back as profilerImage only, so an α workersImage that was the β image (no
    # profilerImage) returns as profilerImage too: that round trip is lossy upstream
    if src.get("image"):
        pc["profilerImage"] = src["image"]

    if restored is not None:
        _restore_alpha_only_spec(restored, dst)
    _project_job_to_profiling_config(src, pc)
    _save_hub_only_spec(src, save)
    return dst


def _project_sla_to_blob(src: Obj, blob: Obj) -> bool:
    sla_map = blob.get("sla")
    had_sla = isinstance(sla_map, dict)
    if not isinstance(sla_map, dict):
        sla_map = {}
    wrote = False
    sla = src.get("sla")
    if sla is not None:
        for key in ("ttft", "itl"):
            if key in sla:
                sla_map[key] = go_float(sla[key])
                wrote = True
        if "optimizationType" in sla:
            sla_map["optimizationType"] = sla["optimizationType"]
            wrote = True
    workload = src.get("workload")
    if workload is not None:
        for key in ("isl", "osl"):
            if key in workload:
                sla_map[key] = workload[key]
                wrote = True
    # an sla object already in the remainder is kept even when nothing is written into it
    if wrote or had_sla:
        blob["sla"] = sla_map
    return wrote or had_sla


def _project_model_cache_to_blob(mc: Obj, blob: Obj) -> bool:
    deployment = blob.get("deployment")
    if not isinstance(deployment, dict):
        deployment = {}
    out = {a_key: mc[b_key] for a_key, b_key in _MODEL_CACHE_KEYS if mc.get(b_key)}
    if not out:
        return False
    # the live modelCache replaces the whole saved deployment.modelCache object
    deployment["modelCache"] = out
    blob["deployment"] = deployment
    return True


def _project_planner_to_blob(planner: Any, blob: Obj) -> bool:
    if not isinstance(planner, dict) or not planner:
        return False
    try:
        blob["planner"] = go_float_tree(planner)
    except GoTypeError:
        return False
    return True


def _restore_alpha_only_spec(restored: Obj, dst: Obj) -> None:
    if "enableGpuDiscovery" in restored:
        dst["enableGpuDiscovery"] = restored["enableGpuDiscovery"]
    saved_pc: Obj = restored.get("profilingConfig", {})
    pc: Obj = dst["profilingConfig"]
    if "configMapRef" in saved_pc:
        pc["configMapRef"] = saved_pc["configMapRef"]
    if "outputPVC" in saved_pc:
        pc["outputPVC"] = saved_pc["outputPVC"]
    if restored.get("deploymentOverrides") is not None:
        dst["deploymentOverrides"] = restored["deploymentOverrides"]


def _project_job_to_profiling_config(src: Obj, pc: Obj) -> None:
    overrides = src.get("overrides")
    job = overrides.get("profilingJob") if overrides is not None else None
    if job is None:
        return
    spec: Obj = job.get("template", {}).get("spec", {})
    containers: list[Obj] = spec.get("containers") or []
    # the legacy unnamed-profiler migration is applied to a view: live hub data is not renamed
    idx = _migrated_profiler_index(containers)
    if idx >= 0:
        resources = containers[idx].get("resources", {})
        if not is_zero(resources, RESOURCES):
            pc["resources"] = resources
    if spec.get("tolerations"):
        pc["tolerations"] = spec["tolerations"]
    if spec.get("nodeSelector"):
        pc["nodeSelector"] = spec["nodeSelector"]


def _save_hub_only_spec(src: Obj, save: Obj) -> None:
    if src.get("hardware") is not None:
        save["hardware"] = src["hardware"]
    workload = src.get("workload")
    if workload is not None and ("concurrency" in workload or "requestRate" in workload):
        save["workload"] = {k: workload[k] for k in ("concurrency", "requestRate") if k in workload}
    sla = src.get("sla")
    if sla is not None and "e2eLatency" in sla:
        save["sla"] = {"e2eLatency": sla["e2eLatency"]}
    overrides = src.get("overrides")
    if overrides is not None:
        saved: Obj = {}
        if overrides.get("dgd") is not None:
            saved["dgd"] = overrides["dgd"]
        job = _hub_only_job(overrides.get("profilingJob"))
        if job is not None:
            saved["profilingJob"] = job
        if saved:
            save["overrides"] = saved
    features = src.get("features")
    if features is not None and features.get("mocker") is not None and not features["mocker"].get("enabled"):
        save["features"] = {"mocker": {}}
    if src.get("searchStrategy"):
        save["searchStrategy"] = src["searchStrategy"]


def _hub_only_job(job: Obj | None) -> Obj | None:
    """The profiling job minus what v1alpha1 carries (profiler resources, tolerations, nodeSelector)."""
    if job is None:
        return None
    save: Obj = deep_copy(job)
    spec = _pod_spec(save)
    containers: list[Obj] | None = spec.get("containers")
    if containers:
        migrate_unnamed_profiler(containers)
        idx = _profiler_index(containers)
        if idx >= 0:
            profiler = containers[idx]
            had_resources = not is_zero(profiler.get("resources", {}), RESOURCES)
            profiler.pop("resources", None)
            # Drop the entry only when v1alpha1 alone rebuilds the same list: a sole profiler whose
            # only projected field was resources. An explicit name-only profiler stays. The list
            # left behind is empty but not nil, so the payload keeps "containers":[].
            if (
                had_resources
                and len(containers) == 1
                and is_zero({k: v for k, v in profiler.items() if k != "name"}, CONTAINER)
            ):
                del containers[idx]
    spec.pop("tolerations", None)
    spec.pop("nodeSelector", None)
    if is_zero(save, JOB_SPEC):
        return None
    return save
