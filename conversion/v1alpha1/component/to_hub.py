"""α → β of a component spec (``ConvertFromDynamoComponentDeploymentSharedSpec``) and the
alpha-only save that lets β → α give the α spec back."""

from __future__ import annotations

from conversion.podtemplate import (
    RESOURCES,
)
from conversion.v1alpha1.component.fields import (
    checkpoint_conv,
    copy_same_shape_fields,
    failover_conv,
    gms_conv,
    promotes,
    provider,
    type_to_hub,
)
from conversion.v1alpha1.component.hub_restore import restore_hub_only_fields
from conversion.v1alpha1.component.resources import (
    extra_pod_metadata_needs_preservation,
    qty_is_zero,
    resources_need_preservation,
    shared_memory_needs_preservation,
)
from conversion.v1alpha1.component.schemas import J
from conversion.v1alpha1.component.template import (
    build_pod_template,
    ensure_main,
    eps_main,
    eps_needs_preservation,
    frontend_conflict_needs_preservation,
    mounts_round_trip,
    set_or_pop,
)
from domain.constants import FRONTEND_SIDECAR_CONTAINER
from gocompat import view as goview
from gocompat.jsonvalue import deep_copy


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
        dst["providerOverride"] = provider(src["providerOverride"])
    t = type_to_hub(src)
    if t:
        dst["type"] = t
    dst["name"] = src.get("serviceName", "")
    if src.get("runtimeVersionOverride"):
        dst["runtimeVersionOverride"] = src["runtimeVersionOverride"]
    copy_same_shape_fields(src, dst)
    sm = src.get("sharedMemory")
    if sm is not None and (sm.get("disabled") or not qty_is_zero(sm.get("size"))):
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
    # The template is copied out of ``src`` only when the hub save is laid over it (which edits
    # it in place); otherwise it is only read, and the encoding writes a fresh typed view of it.
    tpl = build_pod_template(src, pod_template_origin, copy_values=restored is not None)
    if tpl is not None:
        if src.get("frontendSidecar") is not None:
            dst["frontendSidecar"] = FRONTEND_SIDECAR_CONTAINER
        dst["podTemplate"] = tpl
    restore_hub_only_fields(dst, restored, src)
    if save is not None:
        _save_alpha_only(src, save, include_origin_splits)
    return dst


def _experimental_to_hub(src: J, dst: J) -> None:
    exp: J = {}
    gms = src.get("gpuMemoryService")
    if gms is not None and gms.get("enabled"):
        exp["gpuMemoryService"] = gms_conv(gms, True)
    fo = src.get("failover")
    if fo is not None and fo.get("enabled"):
        exp["failover"] = failover_conv(fo, True)
    if "checkpoint" in src:
        exp["checkpoint"] = checkpoint_conv(src["checkpoint"], True)
    if exp:
        dst["experimental"] = exp


def _save_alpha_only(src: J, save: J, include_origin_splits: bool) -> None:
    """Fill the alpha-only save. The save is serialised right away and never edited below its
    top level (but for a copied ``extraPodSpec``), so it shares values with ``src``."""
    has = False
    if src.get("subComponentType") and not promotes(src):
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
    if resources_need_preservation(src.get("resources")):
        save["resources"] = src["resources"]
        has = True
    mounts = src.get("volumeMounts")
    if mounts and not mounts_round_trip(mounts):
        save["volumeMounts"] = mounts
        has = True
    if shared_memory_needs_preservation(src.get("sharedMemory")):
        save["sharedMemory"] = src["sharedMemory"]
        has = True
    if extra_pod_metadata_needs_preservation(src.get("extraPodMetadata")):
        save["extraPodMetadata"] = src["extraPodMetadata"]
        has = True
    if eps_needs_preservation(src.get("extraPodSpec")) or frontend_conflict_needs_preservation(
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
    main = eps_main(src.get("extraPodSpec"))
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
    main = eps_main(src.get("extraPodSpec"))
    if main is None:
        return
    if main.get("name"):
        ensure_main(save)["name"] = main["name"]
    if src.get("envs") or main.get("env"):
        set_or_pop(save, "envs", src.get("envs"))
        set_or_pop(ensure_main(save), "env", main.get("env"))
    if "envFromSecret" in src or main.get("envFrom"):
        if "envFromSecret" in src:
            save["envFromSecret"] = src["envFromSecret"]
        set_or_pop(ensure_main(save), "envFrom", main.get("envFrom"))
    if src.get("resources") is not None or not goview.is_zero(RESOURCES, main.get("resources")):
        set_or_pop(save, "resources", src.get("resources"))
        ensure_main(save)["resources"] = main.get("resources") or {}
    if src.get("volumeMounts") or main.get("volumeMounts"):
        set_or_pop(save, "volumeMounts", src.get("volumeMounts"))
        set_or_pop(ensure_main(save), "volumeMounts", main.get("volumeMounts") or None)
    for probe in ("livenessProbe", "readinessProbe"):
        if src.get(probe) is not None or main.get(probe) is not None:
            set_or_pop(save, probe, src.get(probe))
            set_or_pop(ensure_main(save), probe, main.get(probe))
