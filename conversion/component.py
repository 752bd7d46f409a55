"""Shared component spec conversion: DGD ``services.<n>`` / ``components[i]`` and DCD ``spec``.

Both directions work on the *typed view* of a spec (see :mod:`gocompat.typed`): a nil Go
pointer is an absent key, an omitempty scalar at its zero value is absent, and collections keep
the nil/empty distinction. ``to_hub`` converts v1alpha1 → v1beta1 and fills the alpha-only save;
``from_hub`` converts v1beta1 → v1alpha1 and fills the hub-only save.
"""

# Upstream quirks reproduced here (each follows from the pinned Go code, not from a design):
# * A single compilation-cache mount does not keep its position among the α volumeMounts:
#   β→α projects it first, and restored origin splits (restorePreservedVolumeMountOrigins)
#   put it after the plain mounts; nor does it keep its position in the β main container.
# * ``extraPodSpec.mainContainer: {}`` (no fields) is pruned on the way back.
# * A mainContainer ``envFrom`` equal to ``[{secretRef: envFromSecret}]`` is folded into
#   ``envFromSecret`` and does not come back on mainContainer.
# * A mount declared both in ``volumeMounts`` and in mainContainer collapses into one.
# * An α extraPodSpec container named ``sidecar-frontend`` next to ``frontendSidecar`` is
#   used as the sidecar; the frontendSidecar image/args are then rebuilt from it.

from __future__ import annotations

from functools import lru_cache
from typing import Any

from conversion.podtemplate import (
    CONTAINER,
    CONTAINERS,
    ENV_FROM_LIST,
    ENV_LIST,
    EXTRA_POD_SPEC,
    MAIN,
    MOUNT,
    OBJECT_META,
    POD_TEMPLATE,
    PROBE,
    RESOURCES,
    SIDECAR_FRONTEND,
    container_has_only_name,
    container_is_empty,
    find_container,
    has_container,
    merge_envs,
    merge_override,
    pod_spec_is_zero,
    pod_template_is_zero,
)
from gocompat import view as goview
from gocompat.decoding import decode_struct
from gocompat.jsonvalue import deep_copy
from gocompat.quantity import parse_quantity
from gocompat.typed import Field, Go, ListOf, MapOf, Ptr, Struct

__all__ = [
    "ALPHA_SHARED",
    "BETA_SHARED",
    "PROVIDER_OVERRIDE",
    "canon_alpha_shared",
    "canon_beta_shared",
    "from_hub",
    "hub_save_is_zero",
    "resources_from_native",
    "resources_to_native",
    "to_hub",
]

J = dict[str, Any]

# --- typed schemas (json tags of the pinned Go types) ------------------------------------------

PROVIDER_OVERRIDE = Struct(
    (Field("apiVersion", "string", False), Field("target", "string"), Field("value", "any", False))
)
_ROLE = Struct((Field("providerOverride", Ptr(PROVIDER_OVERRIDE)),))
_MULTINODE = Struct(
    (Field("nodeCount", "int32", False), Field("leader", Ptr(_ROLE)), Field("worker", Ptr(_ROLE)))
)
_MODEL_REF = Struct((Field("name", "string", False), Field("revision", "string")))
_TOPOLOGY = Struct((Field("packDomain", "string", False),))
_EPP = Struct(
    (
        Field("configMapRef", Go("*core/v1.ConfigMapKeySelector")),
        Field("config", Go("*gie/apix/config/v1alpha1.EndpointPickerConfig")),
    )
)
_IDENTITY = Struct(
    (
        Field("model", "string", False),
        Field("backendFramework", "string", False),
        Field("dynamoVersion", "string"),
        Field("tensorParallelSize", "int32"),
        Field("pipelineParallelSize", "int32"),
        Field("dtype", "string"),
        Field("maxModelLen", "int32"),
        Field("extraParameters", "stringmap"),
    )
)
_CKPT_JOB = Struct((Field("gmsClientContainers", ListOf("string")), Field("podTemplate", Go("*" + POD_TEMPLATE))))


def _checkpoint(enabled_omitempty: bool) -> Struct:
    return Struct(
        (
            Field("enabled", "bool", enabled_omitempty),
            Field("mode", "string"),
            Field("startupPolicy", "string"),
            Field("deletionPolicy", "string"),
            Field("checkpointRef", Ptr("string")),
            Field("identity", Ptr(_IDENTITY)),
            Field("targetContainerName", "string"),
            Field("job", Ptr(_CKPT_JOB)),
        )
    )


_GMS_POD = Struct((Field("name", "string", False), Field("podTemplate", Go(POD_TEMPLATE), False)))


def _gms(alpha: bool) -> Struct:
    fields = [
        Field("mode", "string"),
        Field("deviceClassName", "string"),
        Field("extraClientContainers", ListOf("string")),
        Field("extraClientPods", ListOf(_GMS_POD)),
    ]
    if alpha:
        fields.insert(0, Field("enabled", "bool", False))
    return Struct(tuple(fields))


def _failover(alpha: bool) -> Struct:
    fields = [Field("mode", "string"), Field("numShadows", "int32")]
    if alpha:
        fields.insert(0, Field("enabled", "bool", False))
    return Struct(tuple(fields))


_RESOURCE_ITEM = Struct(
    (
        Field("cpu", "string"),
        Field("memory", "string"),
        Field("gpu", "string"),
        Field("gpuType", "string"),
        Field("custom", "stringmap"),
    )
)
_RESOURCES = Struct(
    (
        Field("requests", Ptr(_RESOURCE_ITEM)),
        Field("limits", Ptr(_RESOURCE_ITEM)),
        Field("claims", Go("[]core/v1.ResourceClaim")),
    )
)
_AUTOSCALING = Struct(
    (
        Field("enabled", "bool"),
        Field("minReplicas", "int"),
        Field("maxReplicas", "int"),
        Field("behavior", Go("*autoscaling/v2.HorizontalPodAutoscalerBehavior")),
        Field("metrics", Go("[]autoscaling/v2.MetricSpec")),
    )
)
_INGRESS = Struct(
    (
        Field("enabled", "bool"),
        Field("host", "string"),
        Field("useVirtualService", "bool"),
        Field("virtualServiceGateway", Ptr("string")),
        Field("hostPrefix", Ptr("string")),
        Field("annotations", "stringmap"),
        Field("labels", "stringmap"),
        Field("tls", Ptr(Struct((Field("secretName", "string"),)))),
        Field("hostSuffix", Ptr("string")),
        Field("ingressControllerClassName", Ptr("string")),
    )
)
_VOLUME_MOUNT = Struct(
    (Field("name", "string"), Field("mountPoint", "string"), Field("useAsCompilationCache", "bool"))
)
_SHARED_MEMORY = Struct((Field("disabled", "bool"), Field("size", "quantity")))
_EXTRA_POD_METADATA = Struct((Field("annotations", "stringmap"), Field("labels", "stringmap")))
_FRONTEND_SIDECAR = Struct(
    (
        Field("image", "string", False),
        Field("args", ListOf("string")),
        Field("envFromSecret", Ptr("string")),
        Field("envs", Go(ENV_LIST)),
    )
)

ALPHA_SHARED = Struct(
    (
        Field("providerOverride", Ptr(PROVIDER_OVERRIDE)),
        Field("annotations", "stringmap"),
        Field("labels", "stringmap"),
        Field("serviceName", "string"),
        Field("componentType", "string"),
        Field("subComponentType", "string"),
        Field("runtimeVersionOverride", "string"),
        Field("dynamoNamespace", Ptr("string")),
        Field("globalDynamoNamespace", "bool"),
        Field("resources", Ptr(_RESOURCES)),
        Field("autoscaling", Ptr(_AUTOSCALING)),
        Field("envs", Go(ENV_LIST)),
        Field("envFromSecret", Ptr("string")),
        Field("volumeMounts", ListOf(_VOLUME_MOUNT)),
        Field("ingress", Ptr(_INGRESS)),
        Field("modelRef", Ptr(_MODEL_REF)),
        Field("sharedMemory", Ptr(_SHARED_MEMORY)),
        Field("extraPodMetadata", Ptr(_EXTRA_POD_METADATA)),
        Field("extraPodSpec", Go("*" + EXTRA_POD_SPEC)),
        Field("livenessProbe", Go(PROBE)),
        Field("readinessProbe", Go(PROBE)),
        Field("replicas", Ptr("int32")),
        Field("minAvailable", Ptr("int32")),
        Field("multinode", Ptr(_MULTINODE)),
        Field("scalingAdapter", Ptr(Struct((Field("enabled", "bool"),)))),
        Field("eppConfig", Ptr(_EPP)),
        Field("frontendSidecar", Ptr(_FRONTEND_SIDECAR)),
        Field("checkpoint", Ptr(_checkpoint(True))),
        Field("topologyConstraint", Ptr(_TOPOLOGY)),
        Field("gpuMemoryService", Ptr(_gms(True))),
        Field("failover", Ptr(_failover(True))),
    )
)

# v1alpha1 ServiceReplicaStatus: DGD status.services values and the DCD status.service.
REPLICA_STATUS_ALPHA = Struct(
    (
        Field("componentKind", "string", False),
        Field("componentName", "string", False),
        Field("componentNames", ListOf("string")),
        Field("runtimeNamespace", "string"),
        Field("replicas", "int32", False),
        Field("updatedReplicas", "int32", False),
        Field("readyReplicas", Ptr("int32")),
        Field("availableReplicas", Ptr("int32")),
        Field("scheduledReplicas", Ptr("int32")),
    )
)

_EXPERIMENTAL = Struct(
    (
        Field("gpuMemoryService", Ptr(_gms(False))),
        Field("failover", Ptr(_failover(False))),
        Field("grove", Ptr(Struct((Field("forceScalingGroup", "bool"),)))),
        Field("checkpoint", Ptr(_checkpoint(False))),
    )
)

BETA_SHARED = Struct(
    (
        Field("providerOverride", Ptr(PROVIDER_OVERRIDE)),
        Field("name", "string", False),
        Field("type", "string"),
        Field("runtimeVersionOverride", "string"),
        Field("globalDynamoNamespace", "bool"),
        Field("podTemplate", Go("*" + POD_TEMPLATE)),
        Field("replicas", Ptr("int32")),
        Field("minAvailable", Ptr("int32")),
        Field("multinode", Ptr(_MULTINODE)),
        Field("sharedMemorySize", Ptr("quantity")),
        Field("modelRef", Ptr(_MODEL_REF)),
        Field("scalingAdapter", Ptr(Struct(()))),
        Field("eppConfig", Ptr(_EPP)),
        Field("frontendSidecar", Ptr("string")),
        Field(
            "compilationCache",
            Ptr(Struct((Field("pvcName", "string", False), Field("mountPath", "string")))),
        ),
        Field("topologyConstraint", Ptr(_TOPOLOGY)),
        Field("experimental", Ptr(_EXPERIMENTAL)),
    )
)

__all__ += ["MapOf"]


def canon_alpha_shared(spec: J) -> J:
    """Typed view of an α shared spec."""
    return decode_struct(spec, ALPHA_SHARED)


def canon_beta_shared(spec: J) -> J:
    """Typed view of a β shared spec."""
    return decode_struct(spec, BETA_SHARED)


# --- small conversions --------------------------------------------------------------------------

_GMS_TO_HUB = {"intraPod": "IntraPod", "interPod": "InterPod"}
_GMS_FROM_HUB = {"IntraPod": "intraPod", "InterPod": "interPod"}
_PROMOTED = ("prefill", "decode")


def _provider(src: J) -> J:
    out: J = {"apiVersion": src.get("apiVersion", "")}
    if src.get("target"):
        out["target"] = src["target"]
    out["value"] = deep_copy(src.get("value"))
    return out


def _multinode(src: J) -> J:
    out: J = {"nodeCount": src.get("nodeCount", 0)}
    for role in ("leader", "worker"):
        r = src.get(role)
        if r is not None:
            out[role] = (
                {"providerOverride": _provider(r["providerOverride"])} if "providerOverride" in r else {}
            )
    return out


def _model_ref(src: J) -> J:
    out: J = {"name": src.get("name", "")}
    if src.get("revision"):
        out["revision"] = src["revision"]
    return out


def _epp(src: J) -> J:
    return {k: deep_copy(src[k]) for k in ("configMapRef", "config") if k in src}


def _identity(src: J) -> J:
    out: J = {"model": src.get("model", ""), "backendFramework": src.get("backendFramework", "")}
    for k in ("dynamoVersion", "tensorParallelSize", "pipelineParallelSize", "dtype", "maxModelLen"):
        if src.get(k):
            out[k] = src[k]
    if src.get("extraParameters"):
        out["extraParameters"] = dict(src["extraParameters"])
    return out


def _checkpoint_conv(src: J, enabled_always: bool) -> J:
    out: J = {}
    if enabled_always or src.get("enabled"):
        out["enabled"] = bool(src.get("enabled", False))
    for k in ("mode", "startupPolicy", "deletionPolicy"):
        if src.get(k):
            out[k] = src[k]
    if "checkpointRef" in src:
        out["checkpointRef"] = src["checkpointRef"]
    if "identity" in src:
        out["identity"] = _identity(src["identity"])
    if src.get("targetContainerName"):
        out["targetContainerName"] = src["targetContainerName"]
    if "job" in src:
        job: J = {}
        if src["job"].get("gmsClientContainers"):
            job["gmsClientContainers"] = list(src["job"]["gmsClientContainers"])
        if "podTemplate" in src["job"]:
            job["podTemplate"] = deep_copy(src["job"]["podTemplate"])
        out["job"] = job
    return out


def _gms_conv(src: J, to_hub_dir: bool) -> J:
    out: J = {} if to_hub_dir else {"enabled": True}
    mode = src.get("mode", "")
    if mode:
        out["mode"] = (_GMS_TO_HUB if to_hub_dir else _GMS_FROM_HUB).get(mode, mode)
    if src.get("deviceClassName"):
        out["deviceClassName"] = src["deviceClassName"]
    if src.get("extraClientContainers"):
        out["extraClientContainers"] = list(src["extraClientContainers"])
    pods = src.get("extraClientPods")
    if pods:
        out["extraClientPods"] = [
            {"name": (p or {}).get("name", ""), "podTemplate": deep_copy((p or {}).get("podTemplate", {}))}
            for p in pods
        ]
    return out


def _failover_conv(src: J, to_hub_dir: bool) -> J:
    out: J = {} if to_hub_dir else {"enabled": True}
    mode = src.get("mode", "")
    if mode:
        out["mode"] = (_GMS_TO_HUB if to_hub_dir else _GMS_FROM_HUB).get(mode, mode)
    if src.get("numShadows"):
        out["numShadows"] = src["numShadows"]
    return out


@lru_cache(maxsize=1024)
def _qty_is_zero(q: str | None) -> bool:
    if q is None:
        return True
    try:
        return parse_quantity(q).is_zero()
    except ValueError:
        return False


# --- resources ----------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _alpha_qty(s: str) -> str | None:
    # α resource strings are parsed with ParseQuantity directly (no whitespace trimming);
    # values that fail to parse are silently dropped.
    try:
        return str(parse_quantity(s))
    except ValueError:
        return None


def _item_to_list(item: J | None) -> J | None:
    if item is None:
        return None
    out: J = {}
    if item.get("cpu"):
        q = _alpha_qty(item["cpu"])
        if q is not None:
            out["cpu"] = q
    if item.get("memory"):
        q = _alpha_qty(item["memory"])
        if q is not None:
            out["memory"] = q
    if item.get("gpu"):
        key = item.get("gpuType") or "nvidia.com/gpu"
        q = _alpha_qty(item["gpu"])
        if q is not None:
            out[key] = q
    for k, v in (item.get("custom") or {}).items():
        q = _alpha_qty(v)
        if q is not None:
            out[k] = q
    return out or None


def resources_to_native(r: J) -> J:
    """α ``Resources`` → corev1 ``ResourceRequirements``."""
    out: J = {}
    if r.get("claims") is not None:
        out["claims"] = deep_copy(r["claims"])
    if r.get("requests") is not None:
        lst = _item_to_list(r["requests"])
        if lst is not None:
            out["requests"] = lst
    if r.get("limits") is not None:
        lst = _item_to_list(r["limits"])
        if lst is not None:
            out["limits"] = lst
    return out


def _item_from_list(lst: J | None) -> J | None:
    if not lst:
        return None
    out: J = {}
    for name, q in lst.items():
        if name == "cpu":
            out["cpu"] = q
        elif name == "memory":
            out["memory"] = q
        elif name == "nvidia.com/gpu":
            out["gpu"] = q
        else:
            out.setdefault("custom", {})[name] = q
    # An empty quantity string never occurs (canonical strings are non-empty).
    return out


def resources_from_native(rr: J) -> J | None:
    """corev1 ``ResourceRequirements`` → α ``Resources`` (None when empty)."""
    req = _item_from_list(rr.get("requests"))
    lim = _item_from_list(rr.get("limits"))
    claims = rr.get("claims")
    if req is None and lim is None and not claims:
        return None
    out: J = {}
    if req is not None:
        out["requests"] = req
    if lim is not None:
        out["limits"] = lim
    if claims is not None:
        out["claims"] = deep_copy(claims)
    return out


def _resources_need_preservation(r: J | None) -> bool:
    # reflect.DeepEqual (not Semantic): nil and empty collections differ.
    return r is not None and r != resources_from_native(resources_to_native(r))


def _should_restore_preserved_resources(dst: J | None, preserved: J | None) -> bool:
    if not _resources_need_preservation(preserved):
        return False
    assert preserved is not None
    cur = resources_to_native(dst) if dst is not None else {}
    return goview.equal(RESOURCES, cur, resources_to_native(preserved))


# --- shared memory ------------------------------------------------------------------------------


def _shared_memory_needs_preservation(sm: J | None) -> bool:
    if sm is None:
        return False
    if sm.get("disabled"):
        return not _qty_is_zero(sm.get("size"))
    return _qty_is_zero(sm.get("size"))


def _should_restore_preserved_shared_memory(dst: J | None, preserved: J | None) -> bool:
    if not _shared_memory_needs_preservation(preserved):
        return False
    assert preserved is not None
    if dst is None:
        return True
    if preserved.get("disabled"):
        return bool(dst.get("disabled")) and _qty_is_zero(dst.get("size"))
    return False


def _extra_pod_metadata_needs_preservation(m: J | None) -> bool:
    return m is not None and not m.get("annotations") and not m.get("labels")


# --- extraPodSpec helpers -------------------------------------------------------------------------


def _eps_pod_spec(eps: J | None) -> J | None:
    """The inline PodSpec part of an α extraPodSpec (None when Go would leave it nil)."""
    if eps is None:
        return None
    spec = {k: v for k, v in eps.items() if k != "mainContainer"}
    return spec or None


def _eps_main(eps: J | None) -> J | None:
    if eps is None:
        return None
    mc = eps.get("mainContainer")
    return mc if isinstance(mc, dict) else None


def _eps_is_zero(eps: J | None) -> bool:
    if eps is None:
        return True
    # The inline PodSpec part is zero when every field but mainContainer is absent.
    return goview.is_zero(EXTRA_POD_SPEC, eps, skip="mainContainer") and container_is_empty(_eps_main(eps))


def _eps_only_preserves_main_name(eps: J | None) -> bool:
    main = _eps_main(eps)
    if (
        eps is None
        or main is None
        or not main.get("name")
        or not goview.is_zero(EXTRA_POD_SPEC, eps, skip="mainContainer")
    ):
        return False
    return container_is_empty(main)


def _eps_needs_preservation(eps: J | None) -> bool:
    return eps is not None and (_eps_is_zero(eps) or _eps_only_preserves_main_name(eps))


def _eps_has_container(eps: J | None, name: str) -> bool:
    ps = _eps_pod_spec(eps)
    return ps is not None and has_container(ps.get("containers"), name)


def _frontend_conflict_needs_preservation(fs: J | None, eps: J | None) -> bool:
    return fs is not None and _eps_has_container(eps, SIDECAR_FRONTEND)


def _ensure_main(spec: J) -> J:
    eps = spec.get("extraPodSpec")
    if eps is None:
        eps = {}
        spec["extraPodSpec"] = eps
    mc = eps.get("mainContainer")
    if not isinstance(mc, dict):
        mc = {}
        eps["mainContainer"] = mc
    return mc


# --- component type -----------------------------------------------------------------------------


def _promotes(src: J) -> bool:
    return src.get("componentType") == "worker" and src.get("subComponentType") in _PROMOTED


def _copy_same_shape_fields(src: J, dst: J) -> None:
    """The component fields with the same name and shape in both versions (order kept)."""
    if src.get("globalDynamoNamespace"):
        dst["globalDynamoNamespace"] = True
    for k in ("replicas", "minAvailable"):
        if k in src:
            dst[k] = src[k]
    if "multinode" in src:
        dst["multinode"] = _multinode(src["multinode"])
    if "modelRef" in src:
        dst["modelRef"] = _model_ref(src["modelRef"])
    if "topologyConstraint" in src:
        dst["topologyConstraint"] = {"packDomain": src["topologyConstraint"].get("packDomain", "")}
    if "eppConfig" in src:
        dst["eppConfig"] = _epp(src["eppConfig"])


def _type_to_hub(src: J) -> str:
    if _promotes(src):
        return str(src["subComponentType"])
    return str(src.get("componentType", ""))


def _type_from_hub(t: str) -> tuple[str, str]:
    if t in _PROMOTED:
        return "worker", t
    return t, ""


# --- pod template composition (α → β) -------------------------------------------------------------


def _has_pod_template_volume_mounts(mounts: list[J] | None) -> bool:
    return any(not m.get("useAsCompilationCache") for m in mounts or ())


def _has_pod_template_content(src: J, origin: bool) -> bool:
    return (
        "resources" in src
        or bool(src.get("envs"))
        or "envFromSecret" in src
        or _has_pod_template_volume_mounts(src.get("volumeMounts"))
        or "livenessProbe" in src
        or "readinessProbe" in src
        or not _eps_is_zero(src.get("extraPodSpec"))
        or "extraPodMetadata" in src
        or "frontendSidecar" in src
        or origin
    )


def _main_from_dedicated(src: J, copy_values: bool = True) -> J:
    cp = deep_copy if copy_values else _same
    ctr: J = {"name": MAIN}
    if src.get("resources") is not None:
        ctr["resources"] = resources_to_native(src["resources"])
    if src.get("envs"):
        ctr["env"] = cp(src["envs"])
    efs = src.get("envFromSecret")
    if efs:
        ctr["envFrom"] = [{"secretRef": {"name": efs}}]
    for probe in ("livenessProbe", "readinessProbe"):
        if src.get(probe) is not None:
            # Merging mainContainer probes never edits them in place (see _merge_main).
            ctr[probe] = cp(src[probe])
    mounts = src.get("volumeMounts")
    if mounts:
        ctr["volumeMounts"] = [
            {"name": m.get("name", ""), "mountPath": m.get("mountPoint", "")} for m in mounts
        ]
    return ctr


def _same(v: Any) -> Any:
    return v


def _merge_main(src: J, base: J, copy_values: bool = True, keys: tuple[str, ...] | None = None) -> None:
    """Overlay ``extraPodSpec.mainContainer`` onto the dedicated-field main container.

    With ``copy_values=False`` the result shares values with ``src`` (read-only use). With
    ``keys`` only those mainContainer fields are overlaid (each field merges independently,
    so the result agrees with the full merge on them).
    """
    mc = _eps_main(src.get("extraPodSpec"))
    if mc is None:
        return
    # ``main`` is private (or read-only use): its values are taken without further copies,
    # and nested objects of ``base`` are replaced rather than edited.
    if keys is not None:
        main = {k: mc[k] for k in keys if k in mc}
    else:
        main = deep_copy(mc) if copy_values else dict(mc)
    base_envs = base.get("env")
    dedicated_mounts = list(base.get("volumeMounts") or [])
    main["name"] = MAIN
    merge_override(base, main, copy=False)
    envs = merge_envs(base_envs, main.get("env"))
    if envs is None:
        base.pop("env", None)
    else:
        base["env"] = envs
    mounts = list(main.get("volumeMounts") or []) + dedicated_mounts
    if mounts:
        base["volumeMounts"] = mounts
    else:
        base.pop("volumeMounts", None)
    if main.get("startupProbe") is not None:
        base["startupProbe"] = main["startupProbe"]


def _append_frontend_sidecar(tpl: J, fs: J) -> None:
    spec = tpl.setdefault("spec", {})
    containers = spec.setdefault("containers", [])
    if has_container(containers, SIDECAR_FRONTEND):
        return
    ctr: J = {"name": SIDECAR_FRONTEND, "image": fs.get("image", "")}
    if fs.get("args"):
        ctr["args"] = list(fs["args"])
    if fs.get("envs"):
        ctr["env"] = deep_copy(fs["envs"])
    efs = fs.get("envFromSecret")
    if efs:
        ctr["envFrom"] = [{"secretRef": {"name": efs}}]
    containers.append(ctr)


def build_pod_template(
    src: J | None, origin: bool, has_ref: bool = False, copy_values: bool = True
) -> J | None:
    """``buildSharedPodTemplateFromAlpha``: the β pod template an α spec projects to.

    With ``copy_values=False`` the template shares values with ``src`` (read-only use).
    """
    if src is None or not (_has_pod_template_content(src, origin) or has_ref):
        return None
    tpl: J = {"metadata": {}, "spec": {}}
    epm = src.get("extraPodMetadata")
    if epm is not None:
        if epm.get("annotations"):
            tpl["metadata"]["annotations"] = dict(epm["annotations"])
        if epm.get("labels"):
            tpl["metadata"]["labels"] = dict(epm["labels"])
    ps = _eps_pod_spec(src.get("extraPodSpec"))
    if ps is not None:
        tpl["spec"] = deep_copy(ps) if copy_values else dict(ps)
    main = _main_from_dedicated(src, copy_values)
    _merge_main(src, main, copy_values)
    main["name"] = MAIN
    containers = [main]
    containers.extend(c for c in tpl["spec"].get("containers") or [] if c.get("name", "") != MAIN)
    tpl["spec"]["containers"] = containers
    if src.get("frontendSidecar") is not None:
        _append_frontend_sidecar(tpl, src["frontendSidecar"])
    return tpl


# The main-container fields that have dedicated α fields (the ones origins are kept for).
_DEDICATED_MAIN_FIELDS = ("env", "envFrom", "resources", "volumeMounts", "livenessProbe", "readinessProbe")


def _semantic_main(src: J | None) -> J:
    """Read-only: the projected main container, exact on ``_DEDICATED_MAIN_FIELDS`` only."""
    if src is None:
        return {"name": MAIN}
    main = _main_from_dedicated(src, copy_values=False)
    _merge_main(src, main, copy_values=False, keys=_DEDICATED_MAIN_FIELDS)
    main["name"] = MAIN
    return main


# --- α → β ------------------------------------------------------------------------------------------


def to_hub(
    src: J,
    restored: J | None,
    save: J | None,
    include_origin_splits: bool,
    pod_template_origin: bool,
) -> J:
    """``ConvertFromDynamoComponentDeploymentSharedSpec`` (α → β) on typed views."""
    dst: J = {}
    if "providerOverride" in src:
        dst["providerOverride"] = _provider(src["providerOverride"])
    t = _type_to_hub(src)
    if t:
        dst["type"] = t
    dst["name"] = src.get("serviceName", "")
    if src.get("runtimeVersionOverride"):
        dst["runtimeVersionOverride"] = src["runtimeVersionOverride"]
    _copy_same_shape_fields(src, dst)
    sm = src.get("sharedMemory")
    if sm is not None and (sm.get("disabled") or not _qty_is_zero(sm.get("size"))):
        dst["sharedMemorySize"] = "0" if sm.get("disabled") else sm["size"]
    for vm in src.get("volumeMounts") or ():
        if vm.get("useAsCompilationCache"):
            cc: J = {"pvcName": vm.get("name", "")}
            if vm.get("mountPoint"):
                cc["mountPath"] = vm["mountPoint"]
            dst["compilationCache"] = cc
            break
    sa = src.get("scalingAdapter")
    if sa is not None and sa.get("enabled"):
        dst["scalingAdapter"] = {}
    _experimental_to_hub(src, dst)
    tpl = build_pod_template(src, pod_template_origin)
    if tpl is not None:
        if src.get("frontendSidecar") is not None:
            dst["frontendSidecar"] = SIDECAR_FRONTEND
        dst["podTemplate"] = tpl
    _restore_hub_only_fields(dst, restored, src)
    if save is not None:
        _save_alpha_only(src, save, include_origin_splits)
    return dst


def _experimental_to_hub(src: J, dst: J) -> None:
    exp: J = {}
    gms = src.get("gpuMemoryService")
    if gms is not None and gms.get("enabled"):
        exp["gpuMemoryService"] = _gms_conv(gms, True)
    fo = src.get("failover")
    if fo is not None and fo.get("enabled"):
        exp["failover"] = _failover_conv(fo, True)
    if "checkpoint" in src:
        exp["checkpoint"] = _checkpoint_conv(src["checkpoint"], True)
    if exp:
        dst["experimental"] = exp


def _save_alpha_only(src: J, save: J, include_origin_splits: bool) -> None:
    """Fill the alpha-only save. The save is serialised right away and never edited below its
    top level (but for a copied ``extraPodSpec``), so it shares values with ``src``."""
    has = False
    if src.get("subComponentType") and not _promotes(src):
        save["subComponentType"] = src["subComponentType"]
        has = True
    for k in ("dynamoNamespace", "autoscaling", "ingress"):
        if k in src:
            save[k] = src[k]
            has = True
    for k in ("annotations", "labels"):
        if src.get(k):
            save[k] = dict(src[k])
            has = True
    if "envFromSecret" in src:
        save["envFromSecret"] = src["envFromSecret"]
        has = True
    if _resources_need_preservation(src.get("resources")):
        save["resources"] = src["resources"]
        has = True
    mounts = src.get("volumeMounts")
    if mounts and not _mounts_round_trip(mounts):
        save["volumeMounts"] = mounts
        has = True
    if _shared_memory_needs_preservation(src.get("sharedMemory")):
        save["sharedMemory"] = src["sharedMemory"]
        has = True
    if _extra_pod_metadata_needs_preservation(src.get("extraPodMetadata")):
        save["extraPodMetadata"] = src["extraPodMetadata"]
        has = True
    if _eps_needs_preservation(src.get("extraPodSpec")) or _frontend_conflict_needs_preservation(
        src.get("frontendSidecar"), src.get("extraPodSpec")
    ):
        # Copied: the main-origin save below edits its mainContainer.
        save["extraPodSpec"] = deep_copy(src["extraPodSpec"])
        has = True
    sa = src.get("scalingAdapter")
    if sa is not None and not sa.get("enabled"):
        save["scalingAdapter"] = sa
        has = True
    if "frontendSidecar" in src:
        save["frontendSidecar"] = src["frontendSidecar"]
        has = True
    for k in ("gpuMemoryService", "failover"):
        v = src.get(k)
        if v is not None and not v.get("enabled"):
            save[k] = v
            has = True
    if include_origin_splits or has or _main_origins_need_save(src):
        _save_main_origins(src, save)


def _main_origins_need_save(src: J) -> bool:
    main = _eps_main(src.get("extraPodSpec"))
    if main is None:
        return False
    return bool(
        main.get("name")
        or main.get("env")
        or not goview.is_zero(RESOURCES, main.get("resources"))
        or main.get("volumeMounts")
        or main.get("livenessProbe") is not None
        or main.get("readinessProbe") is not None
    )


def _save_main_origins(src: J, save: J) -> None:
    main = _eps_main(src.get("extraPodSpec"))
    if main is None:
        return
    if main.get("name"):
        _ensure_main(save)["name"] = main["name"]
    if src.get("envs") or main.get("env"):
        _set_or_pop(save, "envs", src.get("envs"))
        _set_or_pop(_ensure_main(save), "env", main.get("env"))
    if "envFromSecret" in src or main.get("envFrom"):
        if "envFromSecret" in src:
            save["envFromSecret"] = src["envFromSecret"]
        _set_or_pop(_ensure_main(save), "envFrom", main.get("envFrom"))
    if src.get("resources") is not None or not goview.is_zero(RESOURCES, main.get("resources")):
        _set_or_pop(save, "resources", src.get("resources"))
        _ensure_main(save)["resources"] = main.get("resources") or {}
    if src.get("volumeMounts") or main.get("volumeMounts"):
        _set_or_pop(save, "volumeMounts", src.get("volumeMounts"))
        _set_or_pop(_ensure_main(save), "volumeMounts", main.get("volumeMounts") or None)
    for probe in ("livenessProbe", "readinessProbe"):
        if src.get(probe) is not None or main.get(probe) is not None:
            _set_or_pop(save, probe, src.get(probe))
            _set_or_pop(_ensure_main(save), probe, main.get(probe))


def _set_or_pop(d: J, k: str, v: Any) -> None:
    if v is None:
        d.pop(k, None)
    else:
        d[k] = v


def _mounts_round_trip(mounts: list[J] | None) -> bool:
    return sum(1 for m in mounts or () if m.get("useAsCompilationCache")) <= 1


# --- hub-only restore (α → β) ---------------------------------------------------------------------


def _restore_hub_only_fields(dst: J, preserved: J | None, src: J) -> None:
    if preserved is None:
        return
    tpl = _restore_pod_template_hub_only(preserved, dst.get("podTemplate"), dst.get("compilationCache"), src)
    if tpl is None:
        dst.pop("podTemplate", None)
    else:
        dst["podTemplate"] = tpl
    _restore_hub_only_frontend_sidecar(dst, preserved)
    pexp = preserved.get("experimental")
    if "experimental" not in dst and _experimental_is_hub_only_shape(pexp):
        dst["experimental"] = deep_copy(pexp)
    elif (
        "experimental" in dst and pexp is not None and "grove" not in dst["experimental"] and "grove" in pexp
    ):
        dst["experimental"]["grove"] = deep_copy(pexp["grove"])


def _experimental_is_hub_only_shape(exp: J | None) -> bool:
    return exp is not None and not any(k in exp for k in ("gpuMemoryService", "failover", "checkpoint"))


def _tpl_containers(tpl: J | None) -> list[J]:
    if not tpl:
        return []
    spec = tpl.get("spec")
    if not isinstance(spec, dict):
        return []
    return spec.get("containers") or []


def _tpl_has_container(tpl: J | None, name: str) -> bool:
    return tpl is not None and has_container(_tpl_containers(tpl), name)


def _restore_hub_only_frontend_sidecar(dst: J, preserved: J) -> None:
    if "frontendSidecar" in dst or "frontendSidecar" not in preserved:
        return
    ref = preserved["frontendSidecar"]
    if (
        preserved.get("podTemplate") is not None
        and _tpl_has_container(preserved["podTemplate"], ref)
        and not _tpl_has_container(dst.get("podTemplate"), ref)
    ):
        return
    dst["frontendSidecar"] = ref


def _set_containers(tpl: J, containers: list[J] | None) -> None:
    spec = tpl.setdefault("spec", {})
    if containers:
        spec["containers"] = containers
    else:
        spec.pop("containers", None)


def _restore_pod_template_hub_only(preserved: J, semantic: J | None, cc: J | None, src: J) -> J | None:
    ptpl = preserved.get("podTemplate")
    if ptpl is None:
        return None if semantic is None else semantic
    out: J = semantic if semantic is not None else {}
    _drop_generated_cache_mount(out, ptpl, cc, src)
    _drop_generated_main(out, ptpl, cc, src)
    _restore_missing_hub_only_containers(out, ptpl, src)
    _restore_existing_hub_only_containers(out, ptpl, src)
    _restore_container_order(out, ptpl)
    _restore_template_metadata(out, ptpl)
    _restore_flat_mount_fields(out, ptpl, src)
    if pod_template_is_zero(ptpl) and pod_template_is_zero(out):
        return out
    if pod_template_is_zero(out):
        return None
    return out


def _drop_generated_cache_mount(dst: J, ptpl: J, cc: J | None, src: J) -> None:
    if cc is None:
        return
    name, path = cc.get("pvcName", ""), cc.get("mountPath", "")
    pmain = find_container(_tpl_containers(ptpl), MAIN)
    if pmain is not None and any(
        m.get("name", "") == name and m.get("mountPath", "") == path for m in pmain.get("volumeMounts") or ()
    ):
        return
    if _eps_main_mount_matches(src.get("extraPodSpec"), name, path):
        return
    for c in _tpl_containers(dst):
        if c.get("name", "") != MAIN:
            continue
        mounts = [
            m
            for m in c.get("volumeMounts") or ()
            if not (m.get("name", "") == name and m.get("mountPath", "") == path)
        ]
        if mounts:
            c["volumeMounts"] = mounts
        else:
            c.pop("volumeMounts", None)
        return


def _eps_main_mount_matches(eps: J | None, name: str, path: str) -> bool:
    main = _eps_main(eps)
    if main is None:
        return False
    return any(
        m.get("name", "") == name and m.get("mountPath", "") == path for m in main.get("volumeMounts") or ()
    )


def _main_has_only_generated_fields(c: J, cc: J | None) -> bool:
    cp = dict(c)
    cp.pop("name", None)
    if cc is not None:
        name, path = cc.get("pvcName", ""), cc.get("mountPath", "")
        cp["volumeMounts"] = [
            m
            for m in cp.get("volumeMounts") or ()
            if not (m.get("name", "") == name and m.get("mountPath", "") == path)
        ]
    return container_is_empty(cp)


def _drop_generated_main(dst: J, ptpl: J, cc: J | None, src: J) -> None:
    if has_container(_tpl_containers(ptpl), MAIN):
        return
    if _resources_need_preservation(src.get("resources")):
        return
    containers = _tpl_containers(dst)
    for i, c in enumerate(containers):
        if c.get("name", "") != MAIN:
            continue
        if _main_has_only_generated_fields(c, cc):
            _set_containers(dst, containers[:i] + containers[i + 1 :])
        return


def _restore_missing_hub_only_containers(dst: J, ptpl: J, src: J) -> None:
    for saved in _tpl_containers(ptpl):
        if container_has_only_name(saved) or _tpl_has_container(dst, saved.get("name", "")):
            continue
        if saved.get("name", "") == SIDECAR_FRONTEND and src.get("frontendSidecar") is None:
            continue
        containers = list(_tpl_containers(dst))
        containers.append(deep_copy(saved))
        _set_containers(dst, containers)


def _restore_existing_hub_only_containers(dst: J, ptpl: J, src: J) -> None:
    fs = src.get("frontendSidecar")
    if fs is None:
        return
    saved = find_container(_tpl_containers(ptpl), SIDECAR_FRONTEND)
    if saved is None or container_has_only_name(saved):
        return
    for c in _tpl_containers(dst):
        if c.get("name", "") != SIDECAR_FRONTEND:
            continue
        s = deep_copy(saved)
        for k in ("name", "image", "args", "env"):
            s.pop(k, None)
        if s.get("envFrom"):
            env_from = _restore_sidecar_env_from(c.get("envFrom"), s["envFrom"], fs)
            if env_from is None:
                s.pop("envFrom")
            else:
                s["envFrom"] = env_from
        merge_override(c, s)
        return


def _restore_sidecar_env_from(dst: list[J] | None, preserved: list[J], fs: J) -> list[J] | None:
    secret = fs.get("envFromSecret")
    if not secret:
        return deep_copy(preserved) or None
    if (
        not dst
        or len(dst) != 1
        or len(preserved) != 1
        or not isinstance(dst[0].get("secretRef"), dict)
        or not isinstance(preserved[0].get("secretRef"), dict)
        or dst[0]["secretRef"].get("name", "") != secret
        or preserved[0]["secretRef"].get("name", "") != secret
    ):
        return None
    out = deep_copy(preserved)
    out[0]["secretRef"]["name"] = dst[0]["secretRef"].get("name", "")
    return out  # type: ignore[no-any-return]


def _restore_container_order(dst: J, ptpl: J) -> None:
    saved = _tpl_containers(ptpl)
    cur = _tpl_containers(dst)
    if len(saved) < 2 or len(saved) != len(cur):
        return
    for c in cur:
        if not has_container(saved, c.get("name", "")):
            return
    remaining = list(cur)
    out: list[J] = []
    for s in saved:
        for i, c in enumerate(remaining):
            if c.get("name", "") == s.get("name", ""):
                out.append(c)
                del remaining[i]
                break
    out.extend(remaining)
    _set_containers(dst, out)


def _restore_template_metadata(dst: J, ptpl: J) -> None:
    cur = dst.get("metadata") or {}
    meta = deep_copy(ptpl.get("metadata") or {})
    meta.pop("labels", None)
    meta.pop("annotations", None)
    if cur.get("labels"):
        meta["labels"] = cur["labels"]
    if cur.get("annotations"):
        meta["annotations"] = cur["annotations"]
    dst["metadata"] = meta


def _find_preserved_mount(mounts: list[J] | None, mount: J) -> J | None:
    name, path = mount.get("name", ""), mount.get("mountPath", "")
    for m in mounts or ():
        if m.get("name", "") == name and m.get("mountPath", "") == path:
            return m
    match = None
    for m in mounts or ():
        if m.get("name", "") != name:
            continue
        if match is not None:
            return None
        match = m
    return match


def _restore_flat_mount_fields(dst: J, ptpl: J, src: J) -> None:
    flat = src.get("volumeMounts")
    if not flat:
        return
    pmain = find_container(_tpl_containers(ptpl), MAIN)
    if pmain is None or not pmain.get("volumeMounts"):
        return
    for c in _tpl_containers(dst):
        if c.get("name", "") != MAIN:
            continue
        mounts = c.get("volumeMounts") or []
        for j, mount in enumerate(mounts):
            name, path = mount.get("name", ""), mount.get("mountPath", "")
            if not any(f.get("name", "") == name and f.get("mountPoint", "") == path for f in flat):
                continue
            if _eps_main_mount_matches(src.get("extraPodSpec"), name, path):
                continue
            pm = _find_preserved_mount(pmain["volumeMounts"], mount)
            if pm is not None:
                nm = deep_copy(pm)
                nm["name"] = name
                nm["mountPath"] = path
                mounts[j] = nm
        return


# --- β → α ------------------------------------------------------------------------------------------


def from_hub(src: J, restored: J | None, save: J | None) -> J:
    """``ConvertToDynamoComponentDeploymentSharedSpec`` (β → α) on typed views."""
    dst: J = {}
    if "providerOverride" in src:
        dst["providerOverride"] = _provider(src["providerOverride"])
    ct, sub = _type_from_hub(src.get("type", ""))
    if ct:
        dst["componentType"] = ct
    if sub:
        dst["subComponentType"] = sub
    _copy_same_shape_fields(src, dst)
    if src.get("runtimeVersionOverride"):
        dst["runtimeVersionOverride"] = src["runtimeVersionOverride"]
    if src.get("name"):
        dst["serviceName"] = src["name"]
    if "sharedMemorySize" in src:
        q = src["sharedMemorySize"]
        dst["sharedMemory"] = {"disabled": True, "size": q} if _qty_is_zero(q) else {"size": q}
    cc = src.get("compilationCache")
    if cc is not None:
        vm: J = {"useAsCompilationCache": True}
        if cc.get("pvcName"):
            vm["name"] = cc["pvcName"]
        if cc.get("mountPath"):
            vm["mountPoint"] = cc["mountPath"]
        dst["volumeMounts"] = [{"name": cc.get("pvcName", ""), "mountPoint": cc.get("mountPath", ""), **vm}]
    exp = src.get("experimental")
    if exp is not None:
        if "gpuMemoryService" in exp:
            dst["gpuMemoryService"] = _gms_conv(exp["gpuMemoryService"], False)
        if "failover" in exp:
            dst["failover"] = _failover_conv(exp["failover"], False)
        if "checkpoint" in exp:
            dst["checkpoint"] = _checkpoint_conv(exp["checkpoint"], False)
    if "scalingAdapter" in src:
        dst["scalingAdapter"] = {"enabled": True}
    _decompose_pod_template(src, dst, restored)
    _restore_preserved_flat_mounts(dst, restored, src)
    if restored is not None:
        main_present = _shared_has_main(src)
        _restore_alpha_simple(dst, restored)
        _restore_alpha_pod_fields(dst, restored, main_present)
        _restore_alpha_disabled(dst, restored)
    _prune_empty_eps(dst, restored)
    if save is not None:
        _save_hub_only(src, dst, save)
    _tidy_alpha_mounts(dst)
    return dst


def _tidy_alpha_mounts(dst: J) -> None:
    # α VolumeMount fields are all omitempty.
    mounts = dst.get("volumeMounts")
    if not mounts:
        return
    out = []
    for m in mounts:
        out.append({k: v for k, v in m.items() if v})
    dst["volumeMounts"] = out


def _shared_main(src: J) -> J | None:
    tpl = src.get("podTemplate")
    if tpl is None:
        return None
    return find_container(_tpl_containers(tpl), MAIN)


def _shared_has_main(src: J) -> bool:
    return _shared_main(src) is not None


def _restored_default_frontend_sidecar(src: J, restored: J | None) -> J | None:
    if src.get("frontendSidecar") != SIDECAR_FRONTEND or restored is None:
        return None
    fs = restored.get("frontendSidecar")
    return fs if fs is not None else None


def _frontend_from_container(ctr: J, origin: J | None) -> J:
    out: J = deep_copy(origin) if origin is not None else {}
    out["image"] = ctr.get("image", "")
    _set_or_pop(out, "args", list(ctr["args"]) if ctr.get("args") else None)
    _set_or_pop(out, "envs", deep_copy(ctr["env"]) if ctr.get("env") else None)
    env_from = ctr.get("envFrom") or []
    secret = None
    if len(env_from) == 1:
        ef = env_from[0]
        if not ef.get("prefix") and ef.get("configMapRef") is None and isinstance(ef.get("secretRef"), dict):
            secret = ef["secretRef"].get("name", "")
    if secret is not None:
        out["envFromSecret"] = secret
    elif origin is not None and origin.get("envFromSecret") == "":
        out["envFromSecret"] = ""
    else:
        out.pop("envFromSecret", None)
    return out


def _decompose_pod_template(src: J, dst: J, restored: J | None) -> None:
    tpl = src.get("podTemplate")
    if tpl is None:
        fs = _restored_default_frontend_sidecar(src, restored)
        if fs is not None:
            dst["frontendSidecar"] = deep_copy(fs)
        return
    tpl = deep_copy(tpl)
    meta = tpl.get("metadata") or {}
    if meta.get("annotations") or meta.get("labels"):
        epm: J = {}
        if meta.get("annotations") is not None:
            epm["annotations"] = dict(meta["annotations"])
        if meta.get("labels") is not None:
            epm["labels"] = dict(meta["labels"])
        dst["extraPodMetadata"] = epm
    main: J | None = None
    other: list[J] = []
    for c in _tpl_containers(tpl):
        if c.get("name", "") == MAIN and main is None:
            main = c  # ``tpl`` is a private copy and this container leaves it
            continue
        other.append(c)
    if src.get("frontendSidecar") is not None:
        name = src["frontendSidecar"]
        fs = _restored_default_frontend_sidecar(src, restored)
        if fs is not None:
            ctr = find_container(other, name)
            if ctr is not None:
                dst["frontendSidecar"] = _frontend_from_container(ctr, fs)
                other = [c for c in other if c.get("name", "") != name]
            else:
                dst["frontendSidecar"] = deep_copy(fs)
    if main is not None:
        _dedicated_from_main(main, dst)
    spec = dict(tpl.get("spec") or {})
    if other:
        spec["containers"] = other
    else:
        spec.pop("containers", None)
    main_copy = None
    if main is not None:
        main.pop("name", None)
        if not container_is_empty(main):
            main_copy = main
    spec_zero = pod_spec_is_zero(spec)
    if not spec_zero or main_copy is not None:
        eps: J = {}
        if not spec_zero:
            eps.update(spec)
        if main_copy is not None:
            eps["mainContainer"] = main_copy
        dst["extraPodSpec"] = eps


def _dedicated_from_main(main: J, dst: J) -> None:
    res = resources_from_native(main.get("resources") or {})
    if res is not None:
        dst["resources"] = res
        main.pop("resources", None)
    if main.get("volumeMounts"):
        dst["volumeMounts"] = _append_missing_mounts(
            dst.get("volumeMounts") or [], _mounts_from_native(main["volumeMounts"])
        )
        main.pop("volumeMounts", None)
    if main.get("env"):
        dst["envs"] = main.pop("env")
    for probe in ("livenessProbe", "readinessProbe"):
        if main.get(probe) is not None:
            dst[probe] = main.pop(probe)


def _mounts_from_native(mounts: list[J] | None) -> list[J]:
    return [{"name": m.get("name", ""), "mountPoint": m.get("mountPath", "")} for m in mounts or ()]


def _flat_has(mounts: list[J], name: str, path: str) -> bool:
    return any(m.get("name", "") == name and m.get("mountPoint", "") == path for m in mounts)


def _append_missing_mounts(dst: list[J], mounts: list[J]) -> list[J]:
    out = list(dst)
    for m in mounts:
        if not _flat_has(out, m.get("name", ""), m.get("mountPoint", "")):
            out.append(m)
    return out


def _flat_eq(a: list[J] | None, b: list[J] | None) -> bool:
    a = a or []
    b = b or []
    if len(a) != len(b):
        return False
    return all(
        x.get("name", "") == y.get("name", "")
        and x.get("mountPoint", "") == y.get("mountPoint", "")
        and bool(x.get("useAsCompilationCache")) == bool(y.get("useAsCompilationCache"))
        for x, y in zip(a, b, strict=True)
    )


def _cc_matches(cc: J | None, mount: J) -> bool:
    return (
        cc is not None
        and cc.get("pvcName", "") == mount.get("name", "")
        and cc.get("mountPath", "") == mount.get("mountPoint", "")
    )


def _restore_preserved_flat_mounts(dst: J, preserved: J | None, src: J) -> None:
    if preserved is None:
        return
    pm = preserved.get("volumeMounts")
    if _mounts_round_trip(pm):
        return
    assert pm is not None
    cc = src.get("compilationCache")
    first = next((m for m in pm if m.get("useAsCompilationCache")), None)
    if first is None:
        if cc is not None:
            return
    elif not _cc_matches(cc, first):
        return
    # visible projection
    proj: list[J] = [first] if first is not None else []
    main = _shared_main(src)
    if main is not None and main.get("volumeMounts"):
        proj = _append_missing_mounts(proj, _mounts_from_native(main["volumeMounts"]))
    if not _flat_eq(dst.get("volumeMounts"), proj):
        return
    secondary_projected = main is not None or _has_pod_template_content(preserved, False)
    live: list[J] = []
    seen_first = False
    for m in pm:
        if not m.get("useAsCompilationCache"):
            continue
        if not seen_first:
            seen_first = True
            if _cc_matches(cc, m):
                live.append(m)
            continue
        if not secondary_projected or (
            main is not None
            and any(
                x.get("name", "") == m.get("name", "") and x.get("mountPath", "") == m.get("mountPoint", "")
                for x in main.get("volumeMounts") or ()
            )
        ):
            live.append(m)
    out: list[J] = []
    for m in live:
        if not _flat_has(out, m.get("name", ""), m.get("mountPoint", "")):
            out.append(deep_copy(m))
    for m in dst.get("volumeMounts") or ():
        if not _flat_has(out, m.get("name", ""), m.get("mountPoint", "")):
            out.append(m)
    dst["volumeMounts"] = out


def _restore_alpha_simple(dst: J, p: J) -> None:
    if not dst.get("subComponentType") and p.get("subComponentType"):
        dst["subComponentType"] = p["subComponentType"]
    for k in ("dynamoNamespace", "autoscaling", "ingress"):
        if k not in dst and k in p:
            dst[k] = deep_copy(p[k])
    for k in ("annotations", "labels"):
        if not dst.get(k) and p.get(k) is not None:
            dst[k] = dict(p[k])


def _restore_alpha_pod_fields(dst: J, p: J, main_present: bool) -> None:
    if _should_restore_preserved_shared_memory(dst.get("sharedMemory"), p.get("sharedMemory")):
        dst["sharedMemory"] = deep_copy(p["sharedMemory"])
    if main_present and _should_restore_preserved_resources(dst.get("resources"), p.get("resources")):
        dst["resources"] = deep_copy(p["resources"])
    _restore_env_from_secret(dst, p, main_present)
    if "extraPodMetadata" not in dst and _extra_pod_metadata_needs_preservation(p.get("extraPodMetadata")):
        dst["extraPodMetadata"] = deep_copy(p["extraPodMetadata"])
    peps = p.get("extraPodSpec")
    if peps is not None and (
        _eps_needs_preservation(peps) or _frontend_conflict_needs_preservation(p.get("frontendSidecar"), peps)
    ):
        if dst.get("extraPodSpec") is None:
            dst["extraPodSpec"] = deep_copy(peps)
        else:
            _restore_frontend_conflict(dst["extraPodSpec"], peps)
    _restore_main_origins(dst, p, main_present)
    deps = dst.get("extraPodSpec")
    dmain = _eps_main(deps)
    pmain = _eps_main(peps)
    if dmain is not None and not dmain.get("name") and pmain is not None:
        _set_or_pop(dmain, "name", pmain.get("name") or None)


def _restore_frontend_conflict(dst_eps: J, p_eps: J) -> None:
    ps = _eps_pod_spec(p_eps)
    if ps is None:
        return
    ctr = find_container(ps.get("containers"), SIDECAR_FRONTEND)
    if ctr is None:
        return
    containers = dst_eps.get("containers") or []
    if has_container(containers, SIDECAR_FRONTEND):
        return
    dst_eps["containers"] = [*containers, deep_copy(ctr)]


def _restore_alpha_disabled(dst: J, p: J) -> None:
    sa = p.get("scalingAdapter")
    if "scalingAdapter" not in dst and sa is not None and not sa.get("enabled"):
        dst["scalingAdapter"] = deep_copy(sa)
    for k in ("gpuMemoryService", "failover", "checkpoint"):
        v = p.get(k)
        if k not in dst and v is not None and not v.get("enabled"):
            dst[k] = deep_copy(v)


def _restore_env_from_secret(dst: J, p: J, main_present: bool) -> None:
    if "envFromSecret" in dst or "envFromSecret" not in p:
        return
    secret = p["envFromSecret"]
    if secret == "":
        dst["envFromSecret"] = ""
        return
    if not main_present:
        return
    main = _eps_main(dst.get("extraPodSpec"))
    if main is None:
        return
    if not goview.equal(ENV_FROM_LIST, main.get("envFrom"), [{"secretRef": {"name": secret}}]):
        return
    dst["envFromSecret"] = secret
    main.pop("envFrom", None)


def _restore_main_origins(dst: J, p: J, main_present: bool) -> None:
    pmain = _eps_main(p.get("extraPodSpec"))
    if not main_present or pmain is None:
        return
    cur = _semantic_main(dst)
    psem = _semantic_main(p)
    if goview.equal(ENV_LIST, cur.get("env"), psem.get("env")) and (p.get("envs") or pmain.get("env")):
        _set_or_pop(dst, "envs", deep_copy(p.get("envs")))
        _set_or_pop(_ensure_main(dst), "env", deep_copy(pmain.get("env")))
    if goview.equal(ENV_FROM_LIST, cur.get("envFrom"), psem.get("envFrom")) and "envFromSecret" in p:
        dst["envFromSecret"] = p["envFromSecret"]
    if goview.equal(RESOURCES, cur.get("resources"), psem.get("resources")) and (
        p.get("resources") is not None or not goview.is_zero(RESOURCES, pmain.get("resources"))
    ):
        _set_or_pop(dst, "resources", deep_copy(p.get("resources")))
        _ensure_main(dst)["resources"] = deep_copy(pmain.get("resources") or {})
    cur_mounts = _without_cache_mounts(cur.get("volumeMounts"), dst.get("volumeMounts"))
    p_mounts = _without_cache_mounts(psem.get("volumeMounts"), p.get("volumeMounts"))
    if _origins_match(_mounts_from_native(p_mounts), cur_mounts) and (
        p.get("volumeMounts") or pmain.get("volumeMounts")
    ):
        _set_or_pop(
            dst,
            "volumeMounts",
            _restore_mount_origins(
                p.get("volumeMounts") or [], dst.get("volumeMounts") or [], pmain.get("volumeMounts")
            )
            or None,
        )
        _set_or_pop(_ensure_main(dst), "volumeMounts", deep_copy(pmain.get("volumeMounts")) or None)
    for probe in ("livenessProbe", "readinessProbe"):
        if goview.equal(PROBE, cur.get(probe), psem.get(probe)) and (
            p.get(probe) is not None or pmain.get(probe) is not None
        ):
            _set_or_pop(dst, probe, deep_copy(p.get(probe)))
            _set_or_pop(_ensure_main(dst), probe, deep_copy(pmain.get(probe)))


def _origins_match(origin: list[J], native: list[J]) -> bool:
    if len(origin) != len(native):
        return False
    return all(
        o.get("name", "") == n.get("name", "") and o.get("mountPoint", "") == n.get("mountPath", "")
        for o, n in zip(origin, native, strict=True)
    )


def _without_cache_mounts(mounts: list[J] | None, flat: list[J] | None) -> list[J]:
    mounts = mounts or []
    if not mounts or not flat:
        return mounts
    return [
        m
        for m in mounts
        if not any(
            f.get("useAsCompilationCache")
            and f.get("name", "") == m.get("name", "")
            and f.get("mountPoint", "") == m.get("mountPath", "")
            for f in flat
        )
    ]


def _restore_mount_origins(preserved: list[J], current: list[J], pmain: list[J] | None) -> list[J]:
    out = [deep_copy(m) for m in preserved if not m.get("useAsCompilationCache")]
    for m in current:
        name, path = m.get("name", ""), m.get("mountPoint", "")
        if not m.get("useAsCompilationCache"):
            if any(
                x.get("name", "") == name and x.get("mountPath", "") == path for x in pmain or ()
            ) or _flat_has(out, name, path):
                continue
            out.append(m)
            continue
        replaced = False
        for o in out:
            if o.get("name", "") == name and o.get("mountPoint", "") == path:
                o["useAsCompilationCache"] = True
                replaced = True
                break
        if not replaced:
            out.append(m)
    return out


def _prune_empty_eps(dst: J, restored: J | None) -> None:
    eps = dst.get("extraPodSpec")
    if eps is None:
        return
    reps = restored.get("extraPodSpec") if restored is not None else None
    if container_is_empty(_eps_main(eps)) and not _eps_only_preserves_main_name(reps):
        eps.pop("mainContainer", None)
    if _eps_is_zero(eps):
        if restored is not None and _eps_needs_preservation(reps):
            return
        del dst["extraPodSpec"]


# --- hub-only save (β → α) --------------------------------------------------------------------------


def _save_hub_only(src: J, converted: J, save: J) -> None:
    """Fill the hub-only save. The save is serialised right away and only edited at its top
    level, so it shares values with ``src``."""
    if src.get("frontendSidecar") is not None and converted.get("frontendSidecar") is None:
        save["frontendSidecar"] = src["frontendSidecar"]
    if src.get("podTemplate") is not None:
        projected = build_pod_template(converted, False, copy_values=False)
        sparse = _sparse_pod_template(src["podTemplate"], projected, save.get("frontendSidecar", ""))
        if sparse is not None:
            save["podTemplate"] = sparse
    exp = src.get("experimental")
    if _experimental_is_hub_only_shape(exp):
        save["experimental"] = exp
    elif exp is not None and "grove" in exp:
        save["experimental"] = {"grove": exp["grove"]}


def _names(tpl: J | None) -> list[str]:
    return [c.get("name", "") for c in _tpl_containers(tpl)]


def _sparse_pod_template(src: J, projected: J | None, frontend: str) -> J | None:
    src_meta = src.get("metadata") or {}
    other_meta = {k: v for k, v in src_meta.items() if k not in ("labels", "annotations")}
    needs_meta = not goview.is_zero(OBJECT_META, other_meta)
    src_containers = _tpl_containers(src)
    proj_containers = _tpl_containers(projected)
    src_has_main = has_container(src_containers, MAIN)
    needs_generated_main = projected is not None and not src_has_main and has_container(proj_containers, MAIN)
    needs_empty_marker = projected is None and pod_template_is_zero(src)
    needs_order = False
    if projected is not None:
        pnames = _names(projected)
        if not src_has_main:
            pnames = [n for n in pnames if n != MAIN]
        needs_order = _names(src) != pnames
    needs_frontend_key = frontend != "" and has_container(src_containers, frontend)
    if projected is None:
        fields_differ = len(src_containers) > 0
    else:
        fields_differ = not goview.equal(CONTAINERS, src_containers, proj_containers)
    if not (
        needs_meta
        or needs_generated_main
        or needs_empty_marker
        or needs_order
        or needs_frontend_key
        or fields_differ
    ):
        return None
    out: J = {}
    if needs_meta:
        meta = dict(src_meta)
        meta.pop("labels", None)
        meta.pop("annotations", None)
        out["metadata"] = meta
    saved_containers = _save_containers(src_containers, proj_containers, needs_order, frontend)
    if not needs_meta and not saved_containers and not needs_generated_main and not needs_empty_marker:
        return None
    if saved_containers:
        out["spec"] = {"containers": saved_containers}
    return out


def _save_containers(src: list[J], projected: list[J], preserve_order: bool, frontend: str) -> list[J]:
    out: list[J] = []
    for c in src:
        name = c.get("name", "")
        saved: J = {"name": name}
        pc = find_container(projected, name)
        if pc is not None:
            _save_container_fields(saved, c, pc)
        elif not container_has_only_name(c):
            saved = c
        if (
            preserve_order
            or name == frontend
            or _generated_main_key_needs_save(c, pc)
            or not container_has_only_name(saved)
        ):
            out.append(saved)
    return out


def _generated_main_key_needs_save(c: J, pc: J | None) -> bool:
    if c.get("name", "") != MAIN:
        return False
    if pc is None:
        return container_has_only_name(c)
    if container_has_only_name(c):
        return True
    return any(
        _find_preserved_mount(c.get("volumeMounts"), pm) is None for pm in pc.get("volumeMounts") or ()
    )


def _save_container_fields(saved: J, c: J, pc: J) -> None:
    if c.get("name", "") != MAIN:
        if not goview.equal(CONTAINER, c, pc):
            saved.clear()
            saved.update(c)
            for k in ("image", "args", "env"):
                saved.pop(k, None)
            if goview.equal(ENV_FROM_LIST, c.get("envFrom"), pc.get("envFrom")):
                saved.pop("envFrom", None)
        return
    mounts = c.get("volumeMounts")
    if not mounts:
        return
    out = []
    for m in mounts:
        sm: J = {"name": m.get("name", ""), "mountPath": m.get("mountPath", "")}
        pm = _find_preserved_mount(pc.get("volumeMounts"), m)
        if pm is None or not goview.equal(MOUNT, m, pm):
            sm = m
        out.append(sm)
    saved["volumeMounts"] = out


def hub_save_is_zero(save: J | None) -> bool:
    """``sharedHubSpecSaveIsZero``: nothing but the name."""
    if save is None:
        return True
    return all(k == "name" for k in save)
