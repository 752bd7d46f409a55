"""β → α: the alpha-only fields a hub object carries in its spoke save (mount origins and
compilation-cache splits, resources and shared memory that do not project, disabled features, the
main container's origins) laid back over the decomposed α spec."""

from __future__ import annotations

from conversion.podtemplate import (
    ENV_FROM_LIST,
    ENV_LIST,
    PROBE,
    RESOURCES,
    container_is_empty,
    find_container,
    has_container,
)
from conversion.v1alpha1.component.resources import (
    extra_pod_metadata_needs_preservation,
    should_restore_preserved_resources,
    should_restore_preserved_shared_memory,
)
from conversion.v1alpha1.component.schemas import J
from conversion.v1alpha1.component.template import (
    append_missing_mounts,
    ensure_main,
    eps_main,
    eps_needs_preservation,
    eps_only_preserves_main_name,
    eps_pod_spec,
    eps_pod_spec_is_zero,
    flat_has,
    frontend_conflict_needs_preservation,
    has_pod_template_content,
    mounts_from_native,
    mounts_round_trip,
    semantic_main,
    set_or_pop,
    shared_main,
)
from domain.constants import FRONTEND_SIDECAR_CONTAINER
from gocompat import view as goview
from gocompat.jsonvalue import deep_copy


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


def restore_preserved_flat_mounts(dst: J, preserved: J | None, src: J) -> None:
    if preserved is None:
        return
    pm = preserved.get("volumeMounts")
    if mounts_round_trip(pm):
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
    main = shared_main(src)
    if main is not None and main.get("volumeMounts"):
        proj = append_missing_mounts(proj, mounts_from_native(main["volumeMounts"]))
    if not _flat_eq(dst.get("volumeMounts"), proj):
        return
    secondary_projected = main is not None or has_pod_template_content(preserved, False)
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
        if not flat_has(out, m.get("name", ""), m.get("mountPoint", "")):
            out.append(deep_copy(m))
    for m in dst.get("volumeMounts") or ():
        if not flat_has(out, m.get("name", ""), m.get("mountPoint", "")):
            out.append(m)
    dst["volumeMounts"] = out


def restore_alpha_simple(dst: J, p: J) -> None:
    if not dst.get("subComponentType") and p.get("subComponentType"):
        dst["subComponentType"] = p["subComponentType"]
    for k in ("dynamoNamespace", "autoscaling", "ingress"):
        if k not in dst and k in p:
            dst[k] = deep_copy(p[k])
    for k in ("annotations", "labels"):
        if not dst.get(k) and p.get(k) is not None:
            dst[k] = dict(p[k])


def restore_alpha_pod_fields(dst: J, p: J, main_present: bool) -> None:
    if should_restore_preserved_shared_memory(dst.get("sharedMemory"), p.get("sharedMemory")):
        dst["sharedMemory"] = deep_copy(p["sharedMemory"])
    if main_present and should_restore_preserved_resources(dst.get("resources"), p.get("resources")):
        dst["resources"] = deep_copy(p["resources"])
    _restore_env_from_secret(dst, p, main_present)
    if "extraPodMetadata" not in dst and extra_pod_metadata_needs_preservation(p.get("extraPodMetadata")):
        dst["extraPodMetadata"] = deep_copy(p["extraPodMetadata"])
    peps = p.get("extraPodSpec")
    if peps is not None and (
        eps_needs_preservation(peps) or frontend_conflict_needs_preservation(p.get("frontendSidecar"), peps)
    ):
        if dst.get("extraPodSpec") is None:
            dst["extraPodSpec"] = deep_copy(peps)
        else:
            _restore_frontend_conflict(dst["extraPodSpec"], peps)
    _restore_main_origins(dst, p, main_present)
    deps = dst.get("extraPodSpec")
    dmain = eps_main(deps)
    pmain = eps_main(peps)
    if dmain is not None and not dmain.get("name") and pmain is not None:
        set_or_pop(dmain, "name", pmain.get("name") or None)


def _restore_frontend_conflict(dst_eps: J, p_eps: J) -> None:
    ps = eps_pod_spec(p_eps)
    if ps is None:
        return
    ctr = find_container(ps.get("containers"), FRONTEND_SIDECAR_CONTAINER)
    if ctr is None:
        return
    containers = dst_eps.get("containers") or []
    if has_container(containers, FRONTEND_SIDECAR_CONTAINER):
        return
    dst_eps["containers"] = [*containers, deep_copy(ctr)]


def restore_alpha_disabled(dst: J, p: J) -> None:
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
    main = eps_main(dst.get("extraPodSpec"))
    if main is None:
        return
    if not goview.equal(ENV_FROM_LIST, main.get("envFrom"), [{"secretRef": {"name": secret}}]):
        return
    dst["envFromSecret"] = secret
    main.pop("envFrom", None)


def _restore_main_origins(dst: J, p: J, main_present: bool) -> None:
    pmain = eps_main(p.get("extraPodSpec"))
    if not main_present or pmain is None:
        return
    # Only the main-container fields the save keeps origins for are projected (each field
    # projects on its own), none when it keeps none.
    keys = _saved_origin_fields(p, pmain)
    if not keys:
        return
    cur = semantic_main(dst, keys)
    psem = semantic_main(p, keys)
    if "env" in keys and goview.equal(ENV_LIST, cur.get("env"), psem.get("env")):
        set_or_pop(dst, "envs", deep_copy(p.get("envs")))
        set_or_pop(ensure_main(dst), "env", deep_copy(pmain.get("env")))
    if "envFrom" in keys and goview.equal(ENV_FROM_LIST, cur.get("envFrom"), psem.get("envFrom")):
        dst["envFromSecret"] = p["envFromSecret"]
    if "resources" in keys and goview.equal(RESOURCES, cur.get("resources"), psem.get("resources")):
        set_or_pop(dst, "resources", deep_copy(p.get("resources")))
        ensure_main(dst)["resources"] = deep_copy(pmain.get("resources") or {})
    if "volumeMounts" in keys:
        cur_mounts = _without_cache_mounts(cur.get("volumeMounts"), dst.get("volumeMounts"))
        p_mounts = _without_cache_mounts(psem.get("volumeMounts"), p.get("volumeMounts"))
        if _origins_match(mounts_from_native(p_mounts), cur_mounts):
            set_or_pop(
                dst,
                "volumeMounts",
                _restore_mount_origins(
                    p.get("volumeMounts") or [], dst.get("volumeMounts") or [], pmain.get("volumeMounts")
                )
                or None,
            )
            set_or_pop(ensure_main(dst), "volumeMounts", deep_copy(pmain.get("volumeMounts")) or None)
    for probe in ("livenessProbe", "readinessProbe"):
        if probe in keys and goview.equal(PROBE, cur.get(probe), psem.get(probe)):
            set_or_pop(dst, probe, deep_copy(p.get(probe)))
            set_or_pop(ensure_main(dst), probe, deep_copy(pmain.get(probe)))


def _saved_origin_fields(p: J, pmain: J) -> tuple[str, ...]:
    """The main-container fields whose origins the spoke save ``p`` holds (in the dedicated α
    fields or in ``extraPodSpec.mainContainer`` ``pmain``)."""
    keys: list[str] = []
    if p.get("envs") or pmain.get("env"):
        keys.append("env")
    if "envFromSecret" in p:
        keys.append("envFrom")
    if p.get("resources") is not None or not goview.is_zero(RESOURCES, pmain.get("resources")):
        keys.append("resources")
    if p.get("volumeMounts") or pmain.get("volumeMounts"):
        keys.append("volumeMounts")
    for probe in ("livenessProbe", "readinessProbe"):
        if p.get(probe) is not None or pmain.get(probe) is not None:
            keys.append(probe)
    return tuple(keys)


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
            ) or flat_has(out, name, path):
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


def prune_empty_eps(dst: J, restored: J | None) -> None:
    eps = dst.get("extraPodSpec")
    if eps is None:
        return
    reps = restored.get("extraPodSpec") if restored is not None else None
    main_empty = container_is_empty(eps_main(eps))
    if main_empty and not eps_only_preserves_main_name(reps):
        eps.pop("mainContainer", None)
    # eps_is_zero(eps): its main container, kept or dropped, is empty exactly when main_empty
    if main_empty and eps_pod_spec_is_zero(eps):
        if restored is not None and eps_needs_preservation(reps):
            return
        del dst["extraPodSpec"]
