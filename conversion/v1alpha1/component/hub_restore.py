"""α → β: the hub-only fields a spoke object carries in its hub save (the β pod template's
own containers, their order and metadata, the generated main container and cache mount, the
frontend sidecar, ``experimental``) laid back over the projected β spec."""

from __future__ import annotations

from conversion.podtemplate import (
    container_has_only_name,
    container_is_empty,
    find_container,
    has_container,
    merge_override,
    pod_template_is_zero,
)
from conversion.v1alpha1.component.fields import experimental_is_hub_only_shape
from conversion.v1alpha1.component.resources import resources_need_preservation
from conversion.v1alpha1.component.schemas import J
from conversion.v1alpha1.component.template import (
    eps_main_mount_matches,
    find_preserved_mount,
    set_containers,
    tpl_containers,
    tpl_has_container,
)
from domain.constants import FRONTEND_SIDECAR_CONTAINER, MAIN_CONTAINER
from gocompat.jsonvalue import deep_copy


def restore_hub_only_fields(dst: J, preserved: J | None, src: J) -> None:
    if preserved is None:
        return
    tpl = _restore_pod_template_hub_only(preserved, dst.get("podTemplate"), dst.get("compilationCache"), src)
    if tpl is None:
        dst.pop("podTemplate", None)
    else:
        dst["podTemplate"] = tpl
    _restore_hub_only_frontend_sidecar(dst, preserved)
    pexp = preserved.get("experimental")
    if "experimental" not in dst and experimental_is_hub_only_shape(pexp):
        dst["experimental"] = deep_copy(pexp)
    elif (
        "experimental" in dst and pexp is not None and "grove" not in dst["experimental"] and "grove" in pexp
    ):
        dst["experimental"]["grove"] = deep_copy(pexp["grove"])


def _restore_hub_only_frontend_sidecar(dst: J, preserved: J) -> None:
    if "frontendSidecar" in dst or "frontendSidecar" not in preserved:
        return
    ref = preserved["frontendSidecar"]
    if (
        preserved.get("podTemplate") is not None
        and tpl_has_container(preserved["podTemplate"], ref)
        and not tpl_has_container(dst.get("podTemplate"), ref)
    ):
        return
    dst["frontendSidecar"] = ref


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
    pmain = find_container(tpl_containers(ptpl), MAIN_CONTAINER)
    if pmain is not None and any(
        m.get("name", "") == name and m.get("mountPath", "") == path for m in pmain.get("volumeMounts") or ()
    ):
        return
    if eps_main_mount_matches(src.get("extraPodSpec"), name, path):
        return
    for c in tpl_containers(dst):
        if c.get("name", "") != MAIN_CONTAINER:
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
    if has_container(tpl_containers(ptpl), MAIN_CONTAINER):
        return
    if resources_need_preservation(src.get("resources")):
        return
    containers = tpl_containers(dst)
    for i, c in enumerate(containers):
        if c.get("name", "") != MAIN_CONTAINER:
            continue
        if _main_has_only_generated_fields(c, cc):
            set_containers(dst, containers[:i] + containers[i + 1 :])
        return


def _restore_missing_hub_only_containers(dst: J, ptpl: J, src: J) -> None:
    for saved in tpl_containers(ptpl):
        if container_has_only_name(saved) or tpl_has_container(dst, saved.get("name", "")):
            continue
        if saved.get("name", "") == FRONTEND_SIDECAR_CONTAINER and src.get("frontendSidecar") is None:
            continue
        containers = list(tpl_containers(dst))
        containers.append(deep_copy(saved))
        set_containers(dst, containers)


def _restore_existing_hub_only_containers(dst: J, ptpl: J, src: J) -> None:
    fs = src.get("frontendSidecar")
    if fs is None:
        return
    saved = find_container(tpl_containers(ptpl), FRONTEND_SIDECAR_CONTAINER)
    if saved is None or container_has_only_name(saved):
        return
    for c in tpl_containers(dst):
        if c.get("name", "") != FRONTEND_SIDECAR_CONTAINER:
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
    saved = tpl_containers(ptpl)
    cur = tpl_containers(dst)
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
    set_containers(dst, out)


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


def _restore_flat_mount_fields(dst: J, ptpl: J, src: J) -> None:
    flat = src.get("volumeMounts")
    if not flat:
        return
    pmain = find_container(tpl_containers(ptpl), MAIN_CONTAINER)
    if pmain is None or not pmain.get("volumeMounts"):
        return
    for c in tpl_containers(dst):
        if c.get("name", "") != MAIN_CONTAINER:
            continue
        mounts = c.get("volumeMounts") or []
        for j, mount in enumerate(mounts):
            name, path = mount.get("name", ""), mount.get("mountPath", "")
            if not any(f.get("name", "") == name and f.get("mountPoint", "") == path for f in flat):
                continue
            if eps_main_mount_matches(src.get("extraPodSpec"), name, path):
                continue
            pm = find_preserved_mount(pmain["volumeMounts"], mount)
            if pm is not None:
                nm = deep_copy(pm)
                nm["name"] = name
                nm["mountPath"] = path
                mounts[j] = nm
        return
