"""The α ``extraPodSpec`` and the β pod template: projecting the dedicated α fields and
``extraPodSpec.mainContainer`` into the main container of a pod template, and the container and
mount helpers both directions share."""

from __future__ import annotations

from typing import Any

from conversion.podtemplate import (
    container_is_empty,
    find_container,
    has_container,
    merge_envs,
    merge_override,
)
from conversion.v1alpha1.component.resources import resources_to_native
from conversion.v1alpha1.component.schemas import EXTRA_POD_SPEC, J
from domain.constants import FRONTEND_SIDECAR_CONTAINER, MAIN_CONTAINER
from gocompat import view as goview
from gocompat.jsonvalue import deep_copy


def eps_pod_spec(eps: J | None) -> J | None:
    """The inline PodSpec part of an α extraPodSpec (None when Go would leave it nil)."""
    if eps is None:
        return None
    spec = {k: v for k, v in eps.items() if k != "mainContainer"}
    return spec or None


def eps_main(eps: J | None) -> J | None:
    if eps is None:
        return None
    mc = eps.get("mainContainer")
    return mc if isinstance(mc, dict) else None


def eps_pod_spec_is_zero(eps: J) -> bool:
    """The inline PodSpec part of an α extraPodSpec is zero (every field but mainContainer)."""
    return goview.is_zero(EXTRA_POD_SPEC, eps, skip="mainContainer")


def eps_is_zero(eps: J | None) -> bool:
    if eps is None:
        return True
    return eps_pod_spec_is_zero(eps) and container_is_empty(eps_main(eps))


def eps_only_preserves_main_name(eps: J | None) -> bool:
    main = eps_main(eps)
    if eps is None or main is None or not main.get("name") or not eps_pod_spec_is_zero(eps):
        return False
    return container_is_empty(main)


def eps_needs_preservation(eps: J | None) -> bool:
    return eps is not None and (eps_is_zero(eps) or eps_only_preserves_main_name(eps))


def _eps_has_container(eps: J | None, name: str) -> bool:
    ps = eps_pod_spec(eps)
    return ps is not None and has_container(ps.get("containers"), name)


def frontend_conflict_needs_preservation(fs: J | None, eps: J | None) -> bool:
    return fs is not None and _eps_has_container(eps, FRONTEND_SIDECAR_CONTAINER)


def ensure_main(spec: J) -> J:
    eps = spec.get("extraPodSpec")
    if eps is None:
        eps = {}
        spec["extraPodSpec"] = eps
    mc = eps.get("mainContainer")
    if not isinstance(mc, dict):
        mc = {}
        eps["mainContainer"] = mc
    return mc


def _has_pod_template_volume_mounts(mounts: list[J] | None) -> bool:
    return any(not m.get("useAsCompilationCache") for m in mounts or ())


def has_pod_template_content(src: J, origin: bool) -> bool:
    return (
        "resources" in src
        or bool(src.get("envs"))
        or "envFromSecret" in src
        or _has_pod_template_volume_mounts(src.get("volumeMounts"))
        or "livenessProbe" in src
        or "readinessProbe" in src
        or not eps_is_zero(src.get("extraPodSpec"))
        or "extraPodMetadata" in src
        or "frontendSidecar" in src
        or origin
    )


# The main-container fields that have dedicated α fields (the ones origins are kept for).
_DEDICATED_MAIN_FIELDS = ("env", "envFrom", "resources", "volumeMounts", "livenessProbe", "readinessProbe")


def _main_from_dedicated(
    src: J, copy_values: bool = True, keys: tuple[str, ...] = _DEDICATED_MAIN_FIELDS
) -> J:
    """The main container the dedicated α fields project to; with ``keys``, only those of its
    fields (each comes from its own dedicated field)."""
    cp = deep_copy if copy_values else _same
    ctr: J = {"name": MAIN_CONTAINER}
    if "resources" in keys and src.get("resources") is not None:
        ctr["resources"] = resources_to_native(src["resources"])
    if "env" in keys and src.get("envs"):
        ctr["env"] = cp(src["envs"])
    efs = src.get("envFromSecret")
    if efs and "envFrom" in keys:
        ctr["envFrom"] = [{"secretRef": {"name": efs}}]
    for probe in ("livenessProbe", "readinessProbe"):
        if probe in keys and src.get(probe) is not None:
            # Merging mainContainer probes never edits them in place (see _merge_main).
            ctr[probe] = cp(src[probe])
    mounts = src.get("volumeMounts")
    if mounts and "volumeMounts" in keys:
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
    mc = eps_main(src.get("extraPodSpec"))
    if mc is None:
        return
    # ``main`` is private (or read-only use): its values are taken without further copies,
    # and nested objects of ``base`` are replaced rather than edited.
    if keys is not None:
        main = {k: mc[k] for k in keys if k in mc}
    else:
        main = deep_copy(mc) if copy_values else dict(mc)
    if not main:
        # Nothing to overlay: merging the name alone would leave ``base`` as it is.
        return
    base_envs = base.get("env")
    dedicated_mounts = list(base.get("volumeMounts") or [])
    main["name"] = MAIN_CONTAINER
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
    if has_container(containers, FRONTEND_SIDECAR_CONTAINER):
        return
    ctr: J = {"name": FRONTEND_SIDECAR_CONTAINER, "image": fs.get("image", "")}
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
    if src is None or not (has_pod_template_content(src, origin) or has_ref):
        return None
    tpl: J = {"metadata": {}, "spec": {}}
    epm = src.get("extraPodMetadata")
    if epm is not None:
        if epm.get("annotations"):
            tpl["metadata"]["annotations"] = dict(epm["annotations"])
        if epm.get("labels"):
            tpl["metadata"]["labels"] = dict(epm["labels"])
    ps = eps_pod_spec(src.get("extraPodSpec"))
    if ps is not None:
        tpl["spec"] = deep_copy(ps) if copy_values else dict(ps)
    main = _main_from_dedicated(src, copy_values)
    _merge_main(src, main, copy_values)
    main["name"] = MAIN_CONTAINER
    containers = [main]
    containers.extend(c for c in tpl["spec"].get("containers") or [] if c.get("name", "") != MAIN_CONTAINER)
    tpl["spec"]["containers"] = containers
    if src.get("frontendSidecar") is not None:
        _append_frontend_sidecar(tpl, src["frontendSidecar"])
    return tpl


def semantic_main(src: J | None, keys: tuple[str, ...] = _DEDICATED_MAIN_FIELDS) -> J:
    """Read-only: the projected main container, exact on ``keys`` (a subset of
    ``_DEDICATED_MAIN_FIELDS``) only."""
    if src is None:
        return {"name": MAIN_CONTAINER}
    main = _main_from_dedicated(src, copy_values=False, keys=keys)
    _merge_main(src, main, copy_values=False, keys=keys)
    main["name"] = MAIN_CONTAINER
    return main


def set_or_pop(d: J, k: str, v: Any) -> None:
    if v is None:
        d.pop(k, None)
    else:
        d[k] = v


def mounts_round_trip(mounts: list[J] | None) -> bool:
    return sum(1 for m in mounts or () if m.get("useAsCompilationCache")) <= 1


def tpl_containers(tpl: J | None) -> list[J]:
    if not tpl:
        return []
    spec = tpl.get("spec")
    if not isinstance(spec, dict):
        return []
    return spec.get("containers") or []


def tpl_has_container(tpl: J | None, name: str) -> bool:
    return tpl is not None and has_container(tpl_containers(tpl), name)


def set_containers(tpl: J, containers: list[J] | None) -> None:
    spec = tpl.setdefault("spec", {})
    if containers:
        spec["containers"] = containers
    else:
        spec.pop("containers", None)


def eps_main_mount_matches(eps: J | None, name: str, path: str) -> bool:
    main = eps_main(eps)
    if main is None:
        return False
    return any(
        m.get("name", "") == name and m.get("mountPath", "") == path for m in main.get("volumeMounts") or ()
    )


def find_preserved_mount(mounts: list[J] | None, mount: J) -> J | None:
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


def shared_main(src: J) -> J | None:
    tpl = src.get("podTemplate")
    if tpl is None:
        return None
    return find_container(tpl_containers(tpl), MAIN_CONTAINER)


def shared_has_main(src: J) -> bool:
    return shared_main(src) is not None


def mounts_from_native(mounts: list[J] | None) -> list[J]:
    return [{"name": m.get("name", ""), "mountPoint": m.get("mountPath", "")} for m in mounts or ()]


def flat_has(mounts: list[J], name: str, path: str) -> bool:
    return any(m.get("name", "") == name and m.get("mountPoint", "") == path for m in mounts)


def append_missing_mounts(dst: list[J], mounts: list[J]) -> list[J]:
    out = list(dst)
    for m in mounts:
        if not flat_has(out, m.get("name", ""), m.get("mountPoint", "")):
            out.append(m)
    return out
