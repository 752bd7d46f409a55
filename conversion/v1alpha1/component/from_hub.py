"""β → α of a component spec (``ConvertToDynamoComponentDeploymentSharedSpec``): the pod
template decomposed into the dedicated α fields and ``extraPodSpec``, and the hub-only save that
lets α → β give the β spec back."""

from __future__ import annotations

from conversion.podtemplate import (
    CONTAINER,
    CONTAINERS,
    ENV_FROM_LIST,
    MOUNT,
    OBJECT_META,
    container_has_only_name,
    container_is_empty,
    find_container,
    has_container,
    pod_spec_is_zero,
    pod_template_is_zero,
)
from conversion.v1alpha1.component.fields import (
    checkpoint_conv,
    copy_same_shape_fields,
    experimental_is_hub_only_shape,
    failover_conv,
    gms_conv,
    provider,
    type_from_hub,
)
from conversion.v1alpha1.component.resources import qty_is_zero, resources_from_native
from conversion.v1alpha1.component.schemas import J
from conversion.v1alpha1.component.spoke_restore import (
    prune_empty_eps,
    restore_alpha_disabled,
    restore_alpha_pod_fields,
    restore_alpha_simple,
    restore_preserved_flat_mounts,
)
from conversion.v1alpha1.component.template import (
    append_missing_mounts,
    build_pod_template,
    find_preserved_mount,
    mounts_from_native,
    set_or_pop,
    shared_has_main,
    tpl_containers,
)
from domain.constants import FRONTEND_SIDECAR_CONTAINER, MAIN_CONTAINER
from gocompat import view as goview
from gocompat.jsonvalue import deep_copy


def from_hub(src: J, restored: J | None, save: J | None) -> J:
    """``ConvertToDynamoComponentDeploymentSharedSpec`` (β → α) on typed views."""
    dst: J = {}
    if "providerOverride" in src:
        dst["providerOverride"] = provider(src["providerOverride"])
    ct, sub = type_from_hub(src.get("type", ""))
    if ct:
        dst["componentType"] = ct
    if sub:
        dst["subComponentType"] = sub
    copy_same_shape_fields(src, dst)
    if src.get("runtimeVersionOverride"):
        dst["runtimeVersionOverride"] = src["runtimeVersionOverride"]
    if src.get("name"):
        dst["serviceName"] = src["name"]
    if "sharedMemorySize" in src:
        q = src["sharedMemorySize"]
        dst["sharedMemory"] = {"disabled": True, "size": q} if qty_is_zero(q) else {"size": q}
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
            dst["gpuMemoryService"] = gms_conv(exp["gpuMemoryService"], False)
        if "failover" in exp:
            dst["failover"] = failover_conv(exp["failover"], False)
        if "checkpoint" in exp:
            dst["checkpoint"] = checkpoint_conv(exp["checkpoint"], False)
    if "scalingAdapter" in src:
        dst["scalingAdapter"] = {"enabled": True}
    _decompose_pod_template(src, dst, restored)
    restore_preserved_flat_mounts(dst, restored, src)
    if restored is not None:
        main_present = shared_has_main(src)
        restore_alpha_simple(dst, restored)
        restore_alpha_pod_fields(dst, restored, main_present)
        restore_alpha_disabled(dst, restored)
    prune_empty_eps(dst, restored)
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


def _restored_default_frontend_sidecar(src: J, restored: J | None) -> J | None:
    if src.get("frontendSidecar") != FRONTEND_SIDECAR_CONTAINER or restored is None:
        return None
    fs = restored.get("frontendSidecar")
    return fs if fs is not None else None


def _frontend_from_container(ctr: J, origin: J | None) -> J:
    out: J = deep_copy(origin) if origin is not None else {}
    out["image"] = ctr.get("image", "")
    set_or_pop(out, "args", list(ctr["args"]) if ctr.get("args") else None)
    set_or_pop(out, "envs", deep_copy(ctr["env"]) if ctr.get("env") else None)
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
    # ``tpl`` is only read: the main container is copied before its dedicated fields leave it,
    # and the rest is shared with ``src`` (this conversion's own typed view, which the hub-only
    # save reads; nothing edits the α spec below its top level before that save is written).
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
    for c in tpl_containers(tpl):
        if c.get("name", "") == MAIN_CONTAINER and main is None:
            main = dict(c)
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
        dst["volumeMounts"] = append_missing_mounts(
            dst.get("volumeMounts") or [], mounts_from_native(main["volumeMounts"])
        )
        main.pop("volumeMounts", None)
    if main.get("env"):
        dst["envs"] = main.pop("env")
    for probe in ("livenessProbe", "readinessProbe"):
        if main.get(probe) is not None:
            dst[probe] = main.pop(probe)


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
    if experimental_is_hub_only_shape(exp):
        save["experimental"] = exp
    elif exp is not None and "grove" in exp:
        save["experimental"] = {"grove": exp["grove"]}


def _names(tpl: J | None) -> list[str]:
    return [c.get("name", "") for c in tpl_containers(tpl)]


def _sparse_pod_template(src: J, projected: J | None, frontend: str) -> J | None:
    src_meta = src.get("metadata") or {}
    other_meta = {k: v for k, v in src_meta.items() if k not in ("labels", "annotations")}
    needs_meta = not goview.is_zero(OBJECT_META, other_meta)
    src_containers = tpl_containers(src)
    proj_containers = tpl_containers(projected)
    src_has_main = has_container(src_containers, MAIN_CONTAINER)
    needs_generated_main = (
        projected is not None and not src_has_main and has_container(proj_containers, MAIN_CONTAINER)
    )
    needs_empty_marker = projected is None and pod_template_is_zero(src)
    needs_order = False
    if projected is not None:
        pnames = _names(projected)
        if not src_has_main:
            pnames = [n for n in pnames if n != MAIN_CONTAINER]
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
    if c.get("name", "") != MAIN_CONTAINER:
        return False
    if pc is None:
        return container_has_only_name(c)
    if container_has_only_name(c):
        return True
    return any(find_preserved_mount(c.get("volumeMounts"), pm) is None for pm in pc.get("volumeMounts") or ())


def _save_container_fields(saved: J, c: J, pc: J) -> None:
    if c.get("name", "") != MAIN_CONTAINER:
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
        pm = find_preserved_mount(pc.get("volumeMounts"), m)
        if pm is None or not goview.equal(MOUNT, m, pm):
            sm = m
        out.append(sm)
    saved["volumeMounts"] = out


def hub_save_is_zero(save: J | None) -> bool:
    """``sharedHubSpecSaveIsZero``: nothing but the name."""
    if save is None:
        return True
    return all(k == "name" for k in save)
