"""Kubernetes pod-template helpers used by the component conversion.

Containers, probes and pod specs stay plain JSON dicts. This module provides what the typed
upstream code gets from Go for free: semantic equality (``apiequality.Semantic.DeepEqual``:
empty and nil collections are equal, zero values are absent), the ``mergo.Merge(…,
WithOverride)`` overlay used to merge ``extraPodSpec.mainContainer`` into the generated main
container, and canonical quantities inside containers and pod specs.
"""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from conversion.quantity import canonical

__all__ = [
    "MAIN",
    "SIDECAR_FRONTEND",
    "canon_container",
    "canon_pod_spec",
    "canon_pod_template",
    "canon_resource_requirements",
    "clean_kube",
    "container_has_only_name",
    "container_is_empty",
    "deep_copy",
    "find_container",
    "has_container",
    "merge_envs",
    "merge_override",
    "pod_spec_is_zero",
    "pod_template_is_zero",
    "sem",
    "sem_absent",
    "sem_absent_except",
    "sem_eq",
]

MAIN = "main"
SIDECAR_FRONTEND = "sidecar-frontend"


def deep_copy(v: Any) -> Any:
    """Copy a JSON value (dicts and lists are rebuilt, scalars shared)."""
    if isinstance(v, (dict, list)):
        if not v:
            return {} if isinstance(v, dict) else []
        try:
            return orjson.loads(orjson.dumps(v))
        except (TypeError, orjson.JSONEncodeError):
            return _deep_copy_py(v)
    return v


def _deep_copy_py(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _deep_copy_py(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_deep_copy_py(x) for x in v]
    return v


# Kubernetes fields that are Go maps (string or quantity values): every entry is a value.
_MAP_FIELDS = frozenset(
    (
        "limits",
        "requests",
        "nodeSelector",
        "labels",
        "annotations",
        "overhead",
        "matchLabels",
        "volumeAttributes",
        "options",
    )
)


def _absent(v: Any) -> bool:
    # Kubernetes booleans and integers are mostly pointers: false and 0 are values.
    return v is None or v == "" or v == [] or v == {}


def _zero(v: Any) -> bool:
    return v is None or v is False or v == "" or (v == 0 and type(v) in (int, float)) or v == [] or v == {}


def sem(v: Any) -> Any:
    """Semantic normal form of a Kubernetes value: zero values and empty collections vanish.

    Two values are ``Semantic.DeepEqual`` (approximately: pointer-to-zero and absent are not
    distinguished) when their normal forms are equal.
    """
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k in _MAP_FIELDS and type(x) is dict:
                # A map is zero only when it has no entries; an entry with an empty value counts.
                if x:
                    out[k] = x
                continue
            n = sem(x)
            if not _absent(n):
                out[k] = n
        return out
    if isinstance(v, list):
        return [sem(x) for x in v]
    return v


def sem_absent(v: Any) -> bool:
    """``_absent(sem(v))`` without building the normal form."""
    if isinstance(v, dict):
        for k, x in v.items():  # noqa: SIM110 - a plain loop is cheaper than all() on this hot path
            if not _field_absent(k, x):
                return False
        return True
    if isinstance(v, list):
        return not v
    return v is None or v == ""


def sem_absent_except(d: dict[str, Any], skip: str) -> bool:
    """Every field of ``d`` but ``skip`` is semantically absent."""
    for k, v in d.items():  # noqa: SIM110 - a plain loop is cheaper than all() on this hot path
        if k != skip and not _field_absent(k, v):
            return False
    return True


def _field_absent(k: str, v: Any) -> bool:
    if k in _MAP_FIELDS and type(v) is dict:
        # A map is zero only when it has no entries; an entry with an empty value counts.
        return not v
    return sem_absent(v)


def sem_eq(a: Any, b: Any) -> bool:
    if a == b:
        return True
    return bool(sem(a) == sem(b))


def container_is_empty(c: dict[str, Any] | None) -> bool:
    """``containerIsEmpty``: nothing but (possibly) a name."""
    if c is None:
        return True
    for k, v in c.items():
        if k == "name":
            continue
        if not sem_absent(v):
            return False
    return True


def container_has_only_name(c: dict[str, Any]) -> bool:
    return container_is_empty(c)


def pod_spec_is_zero(p: dict[str, Any] | None) -> bool:
    return p is None or sem_absent(p)


def pod_template_is_zero(t: dict[str, Any] | None) -> bool:
    """``podTemplateIsZero``: a present template equal to the zero PodTemplateSpec."""
    return t is not None and sem_absent(t)


def find_container(containers: list[dict[str, Any]] | None, name: str) -> dict[str, Any] | None:
    for c in containers or ():
        if c.get("name", "") == name:
            return c
    return None


def has_container(containers: list[dict[str, Any]] | None, name: str) -> bool:
    return find_container(containers, name) is not None


def merge_envs(common: list[Any] | None, specific: list[Any] | None) -> list[Any] | None:
    """Common entries first; a specific entry with a known name replaces it in place."""
    out: list[Any] = []
    seen: dict[str, int] = {}
    for e in common or ():
        seen[e.get("name", "")] = len(out)
        out.append(e)
    for e in specific or ():
        name = e.get("name", "")
        idx = seen.get(name)
        if idx is not None:
            out[idx] = e
            continue
        seen[name] = len(out)
        out.append(e)
    return out or None


_MAP_KEYS = frozenset(("limits", "requests"))


def merge_override(dst: dict[str, Any], src: dict[str, Any], copy: bool = True) -> None:
    """Overlay ``src`` onto ``dst`` like ``mergo.Merge(dst, src, mergo.WithOverride)``.

    Struct fields: a non-zero source value wins; nested objects merge field by field (a
    source pointer to an empty struct is only taken when the destination has none);
    non-empty lists replace. Resource maps (``limits``/``requests``) merge key by key with
    every source key winning, zero quantities included.

    With ``copy=False`` source values are taken as they are and nested destination objects
    are replaced by merged copies instead of being edited in place: neither input changes
    below the top level of ``dst``.
    """
    cp = deep_copy if copy else _same
    for k, sv in src.items():
        if dst.get(k) is None:
            # A nil destination takes the source value as a whole (pointer assignment).
            if sv is not None and not (_zero(sv) and not isinstance(sv, dict)):
                dst[k] = cp(sv)
            continue
        if isinstance(sv, dict):
            dv = dst.get(k)
            if k in _MAP_KEYS:
                if not sv:
                    continue
                if not isinstance(dv, dict):
                    dv = {}
                    dst[k] = dv
                elif not copy:
                    dv = dict(dv)
                    dst[k] = dv
                for kk, vv in sv.items():
                    dv[kk] = cp(vv)
                continue
            if isinstance(dv, dict):
                if copy:
                    merge_override(dv, sv)
                else:
                    merged = dict(dv)
                    merge_override(merged, sv, False)
                    dst[k] = merged
            else:
                nv: dict[str, Any] = {}
                merge_override(nv, sv, copy)
                dst[k] = nv
            continue
        if _zero(sv):
            continue
        dst[k] = cp(sv)


def _same(v: Any) -> Any:
    return v


# Kubernetes string fields without ``omitempty`` (kept when ""); every other empty string,
# every empty list and the empty maps below are dropped on serialisation.
_REQUIRED_STRINGS = frozenset(
    (
        "name",
        "mountPath",
        "key",
        "path",
        "fieldPath",
        "resource",
        "devicePath",
        "topologyKey",
        "whenUnsatisfiable",
        "operator",
        "type",
        "claimName",
        "ip",
        "service",
        "storageClassName",
    )
)
_VALUE_REQUIRED_IN = frozenset(("httpHeaders", "sysctls"))


def clean_kube(v: Any, parent: str | None = None) -> Any:
    """Drop what Go's omitempty drops when it re-serialises a Kubernetes value."""
    tv = type(v)
    if tv is list:
        return [clean_kube(x, parent) if type(x) in (dict, list) else x for x in v]
    if tv is not dict:
        return v
    out: dict[str, Any] = {}
    for k, x in v.items():
        tx = type(x)
        if tx is str:
            if not x and k not in _REQUIRED_STRINGS and not (k == "value" and parent in _VALUE_REQUIRED_IN):
                continue
            out[k] = x
        elif tx is dict:
            if k in _MAP_FIELDS:
                # A map keeps every entry, empty strings included; only an empty map is omitted.
                if x:
                    out[k] = dict(x)
                continue
            out[k] = clean_kube(x, k)
        elif tx is list:
            if not x:
                continue
            out[k] = [clean_kube(i, k) if type(i) in (dict, list) else i for i in x]
        elif x is not None:
            out[k] = x
    return out


def _canon_list(rl: Any) -> Any:
    if not isinstance(rl, dict):
        return rl
    out: dict[str, Any] = {}
    for k, v in rl.items():
        if v is None:
            continue
        try:
            out[k] = canonical(v)
        except ValueError:
            out[k] = v
    return out


def canon_resource_requirements(r: Any) -> Any:
    if not isinstance(r, dict):
        return r
    out = dict(r)
    for key in ("limits", "requests"):
        if key in out:
            out[key] = _canon_list(out[key])
    return out


def canon_container(c: Any) -> Any:
    """A copy of container ``c`` with canonical resource quantities."""
    if not isinstance(c, dict):
        return c
    out = clean_kube(c)
    if "resources" in out:
        out["resources"] = canon_resource_requirements(out["resources"])
    return out


def _canon_containers(v: Any) -> Any:
    # The pod spec was cleaned already: only the resource quantities remain to do.
    if isinstance(v, list):
        for c in v:
            if isinstance(c, dict) and "resources" in c:
                c["resources"] = canon_resource_requirements(c["resources"])
    return v


def canon_pod_spec(spec: Any) -> Any:
    """A copy of a PodSpec with canonical quantities (containers, overhead, volumes)."""
    if not isinstance(spec, dict):
        return spec
    out = clean_kube(spec)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        if key in out:
            out[key] = _canon_containers(out[key])
    if "resources" in out:
        out["resources"] = canon_resource_requirements(out["resources"])
    if "overhead" in out:
        out["overhead"] = _canon_list(out["overhead"])
    vols = out.get("volumes")
    if isinstance(vols, list):
        for vol in vols:
            if not isinstance(vol, dict):
                continue
            ed = vol.get("emptyDir")
            if isinstance(ed, dict) and ed.get("sizeLimit") is not None:
                with contextlib.suppress(ValueError):
                    ed["sizeLimit"] = canonical(ed["sizeLimit"])
            eph = vol.get("ephemeral")
            if isinstance(eph, dict):
                vct = eph.get("volumeClaimTemplate")
                if isinstance(vct, dict) and isinstance(vct.get("spec"), dict):
                    s = vct["spec"]
                    if "resources" in s:
                        s["resources"] = canon_resource_requirements(s["resources"])
    return out


def canon_pod_template(t: Any) -> Any:
    if not isinstance(t, dict):
        return t
    out = dict(t)
    if "metadata" in out:
        out["metadata"] = clean_kube(out["metadata"])
    if "spec" in out:
        out["spec"] = canon_pod_spec(out["spec"])
    return out
