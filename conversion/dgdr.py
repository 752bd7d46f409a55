"""DynamoGraphDeploymentRequest (DGDR) conversion, v1alpha1 ⇄ v1beta1 (hub = v1beta1).

Public functions: :func:`alpha_to_beta` and :func:`beta_to_alpha` (whole object in, new object
out; the input is never mutated).

Projections between the versions:

* α ``profilingConfig.config`` (an opaque JSON object) ⇄ β ``sla``, ``workload.{isl,osl}``,
  ``modelCache`` and ``features.planner``; the unprojectable remainder of the α blob is saved
  in the β ``nvidia.com/dgdr-spec`` payload and merged back under the live β values;
* α ``profilingConfig.{resources,tolerations,nodeSelector}`` ⇄ β
  ``overrides.profilingJob.template.spec`` (resources on the container named ``profiler``);
* α ``profilerImage`` / ``deploymentOverrides.workersImage`` → β ``image`` → α ``profilerImage``;
* α ``useMocker`` ⇄ β ``features.mocker``; α ``autoApply`` ⇄ β ``autoApply``;
* α ``status.state`` ⇄ β ``status.phase``, ``deployment.name`` ⇄ ``dgdName``,
  ``generatedDeployment`` ⇄ ``profilingResults.selectedConfig``.

Fields only one version can represent travel in sparse payload annotations (§1 of the
conversion rules): ``nvidia.com/dgdr-spec`` (envelope ``{"version":1,"spec":…}``) and
``nvidia.com/dgdr-status`` (plain status JSON). A payload holds the *other* version's type:
on a v1beta1 object an α sparse spec/status, on a v1alpha1 object a β sparse spec/status.
Live source fields always win; a payload only fills target-only fields. Undecodable payloads
are ignored (never an error). The retired per-field ``nvidia.com/dgdr-*`` keys are scrubbed.
"""

from __future__ import annotations

import json
from typing import Any, TypeGuard

import orjson

from conversion.dgdr_types import (
    ALPHA_SPEC,
    ALPHA_STATUS,
    BETA_SPEC,
    BETA_STATUS,
    CONTAINER,
    JOB_SPEC,
    RESOURCES,
    Obj,
)
from conversion.errors import ConversionError
from conversion.payloads import read_value_spec_payload, read_value_status_payload, scrub, set_annotation
from gocompat.decoding import decode_struct
from gocompat.encoding import encode
from gocompat.errors import GoTypeError, unmarshal_text
from gocompat.gotext import go_json_text
from gocompat.jsonvalue import deep_copy, go_float, go_float_tree, json_type
from gocompat.typed import GO_LIVE, Struct, is_zero

__all__ = ["alpha_to_beta", "beta_to_alpha"]

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
KIND = "DynamoGraphDeploymentRequest"
ANN_SPEC = "nvidia.com/dgdr-spec"
ANN_STATUS = "nvidia.com/dgdr-status"
#: per-field keys of older releases: scrubbed, never read
RETIRED_KEYS = (
    "nvidia.com/dgdr-config-map-ref",
    "nvidia.com/dgdr-output-pvc",
    "nvidia.com/dgdr-enable-gpu-discovery",
    "nvidia.com/dgdr-deployment-overrides",
    "nvidia.com/dgdr-profiling-config",
    "nvidia.com/dgdr-status-backend",
    "nvidia.com/dgdr-profiling-results",
    "nvidia.com/dgdr-deployment-status",
    "nvidia.com/dgdr-profiling-job-name",
)
_SCRUBBED_KEYS = (ANN_SPEC, ANN_STATUS, *RETIRED_KEYS)
PROFILER = "profiler"
_OPTIMIZATION_TYPES = ("latency", "throughput")
#: α ``config.deployment.modelCache`` key → β ``modelCache`` key
_MODEL_CACHE_KEYS = (
    ("pvcName", "pvcName"),
    ("modelPathInPvc", "pvcModelPath"),
    ("pvcMountPath", "pvcMountPath"),
)



# ============================================================================ entry points


def alpha_to_beta(obj: Obj) -> Obj:
    """Convert a v1alpha1 DGDR to v1beta1."""
    meta, spec_raw, status_raw = _take_payloads(obj)
    restored_spec = read_value_spec_payload(spec_raw, BETA_SPEC) if spec_raw else None
    if restored_spec is not None:
        overrides = restored_spec.get("overrides")
        if overrides is not None and overrides.get("profilingJob") is not None:
            _migrate_unnamed_profiler(_containers(overrides["profilingJob"]))
    restored_status = read_value_status_payload(status_raw, BETA_STATUS) if status_raw else None

    spec_save: Obj = {}
    spec = _spec_to_beta(_root_part(obj, "spec", ALPHA_SPEC), restored_spec, spec_save)
    status_save: Obj = {}
    status = _status_to_beta(_root_part(obj, "status", ALPHA_STATUS), restored_status, status_save)

    if "config" in spec_save.get("profilingConfig", {}) or not is_zero(spec_save, ALPHA_SPEC):
        set_annotation(meta, ANN_SPEC, _dumps({"version": 1, "spec": encode(spec_save, ALPHA_SPEC, values=True)}))
    if not is_zero(status_save, ALPHA_STATUS):
        set_annotation(meta, ANN_STATUS, _dumps(encode(status_save, ALPHA_STATUS, values=True)))

    out: Obj = {"apiVersion": BETA, "kind": KIND, "metadata": meta}
    # v1beta1 root normaliser: a value-typed struct that encodes to {} is dropped
    enc_spec = encode(spec, BETA_SPEC, values=True, strip=True)
    if enc_spec:
        out["spec"] = enc_spec
    enc_status = encode(status, BETA_STATUS, values=True, strip=True)
    if enc_status:
        out["status"] = enc_status
    return out


def beta_to_alpha(obj: Obj) -> Obj:
    """Convert a v1beta1 DGDR to v1alpha1."""
    meta, spec_raw, status_raw = _take_payloads(obj)
    restored_spec = read_value_spec_payload(spec_raw, ALPHA_SPEC) if spec_raw else None
    restored_status = read_value_status_payload(status_raw, ALPHA_STATUS) if status_raw else None

    spec_save: Obj = {}
    spec = _spec_to_alpha(_root_part(obj, "spec", BETA_SPEC), restored_spec, spec_save)
    status_save: Obj = {}
    status = _status_to_alpha(_root_part(obj, "status", BETA_STATUS), restored_status, status_save)

    if not is_zero(spec_save, BETA_SPEC):
        set_annotation(meta, ANN_SPEC, _dumps({"version": 1, "spec": encode(spec_save, BETA_SPEC, values=True)}))
    if not is_zero(status_save, BETA_STATUS):
        set_annotation(meta, ANN_STATUS, _dumps(encode(status_save, BETA_STATUS, values=True)))

    # v1alpha1 has no normaliser: spec and status are always written
    return {
        "apiVersion": ALPHA,
        "kind": KIND,
        "metadata": meta,
        "spec": encode(spec, ALPHA_SPEC, values=True),
        "status": encode(status, ALPHA_STATUS, values=True),
    }


# ================================================================== metadata and payloads


def _take_payloads(obj: Obj) -> tuple[Obj, str | None, str | None]:
    """Copy metadata, take the two payload annotations out of it and scrub the retired keys.

    An annotation map left empty disappears (Go sets a nil map), even one that arrived empty.
    Empty payload strings count as absent.
    """
    src = obj.get("metadata")
    meta: Obj = deep_copy(src) if isinstance(src, dict) else {}
    anns = meta.get("annotations")
    spec_raw = status_raw = None
    if isinstance(anns, dict):
        spec_raw = anns.get(ANN_SPEC)
        status_raw = anns.get(ANN_STATUS)
        scrub(meta, _SCRUBBED_KEYS)
        if "annotations" in meta and not meta["annotations"]:
            del meta["annotations"]
    elif "annotations" in meta:
        del meta["annotations"]
    return (
        meta,
        spec_raw if isinstance(spec_raw, str) and spec_raw else None,
        status_raw if isinstance(status_raw, str) and status_raw else None,
    )


def _dumps(v: Any) -> str:
    try:
        return go_json_text(orjson.dumps(v).decode())
    except TypeError:  # an integer beyond 64 bits inside opaque JSON
        return go_json_text(json.dumps(v, separators=(",", ":"), ensure_ascii=False))


def _root_part(obj: Obj, key: str, t: Struct) -> Obj:
    """Decode ``spec``/``status`` of the root object (exact names; a mismatched field is dropped)."""
    v = obj.get(key)
    if not isinstance(v, dict):
        return {}
    decoded: Obj = decode_struct(v, t, GO_LIVE)
    return decoded


# ============================================================= profiling job containers


def _pod_spec(job: Obj) -> Obj:
    tmpl: Obj = job.setdefault("template", {})
    spec: Obj = tmpl.setdefault("spec", {})
    return spec


def _containers(job: Obj) -> list[Obj]:
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


def _migrate_unnamed_profiler(containers: list[Obj]) -> None:
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
    containers = _containers(job)
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


# ============================================================================ spec α → β


def _is_number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _go_int32(v: float) -> int:
    """``int32(float64)`` as compiled for amd64 (CVTTSD2SL): truncation; out of range gives -2³¹."""
    t = int(v)
    if -(1 << 31) <= t < (1 << 31):
        return t
    return -(1 << 31)


def _spec_to_beta(src: Obj, restored: Obj | None, save: Obj) -> Obj:
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
    _migrate_unnamed_profiler(_containers(saved))
    if has_resources:
        _set_profiler_resources(saved, resources)
    if tolerations:
        _pod_spec(saved)["tolerations"] = tolerations
    if node_selector:
        _pod_spec(saved)["nodeSelector"] = node_selector


# ============================================================================ spec β → α


def _spec_to_alpha(src: Obj, restored: Obj | None, save: Obj) -> Obj:
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
        _migrate_unnamed_profiler(containers)
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


# ========================================================================= status mapping


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


# ========================================================================== status α → β


def _status_to_beta(src: Obj, restored: Obj | None, save: Obj) -> Obj:
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


# ========================================================================== status β → α


def _status_to_alpha(src: Obj, restored: Obj | None, save: Obj) -> Obj:
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
