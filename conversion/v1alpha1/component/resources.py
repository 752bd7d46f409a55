"""Resources and shared memory: α ``Resources`` (strings per resource) ⇄ corev1
``ResourceRequirements``, and the α values that do not survive the projection and travel in the
spoke save."""

from __future__ import annotations

from functools import lru_cache

from conversion.podtemplate import (
    RESOURCES,
)
from conversion.v1alpha1.component.schemas import J
from domain.constants import GPU_NVIDIA
from gocompat import view as goview
from gocompat.jsonvalue import deep_copy
from gocompat.quantity import parse_quantity


@lru_cache(maxsize=1024)
def qty_is_zero(q: str | None) -> bool:
    if q is None:
        return True
    try:
        return parse_quantity(q).is_zero()
    except ValueError:
        return False


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
        key = item.get("gpuType") or GPU_NVIDIA
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
        elif name == GPU_NVIDIA:
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


def resources_need_preservation(r: J | None) -> bool:
    # reflect.DeepEqual (not Semantic): nil and empty collections differ.
    return r is not None and r != resources_from_native(resources_to_native(r))


def should_restore_preserved_resources(dst: J | None, preserved: J | None) -> bool:
    if not resources_need_preservation(preserved):
        return False
    assert preserved is not None
    cur = resources_to_native(dst) if dst is not None else {}
    return goview.equal(RESOURCES, cur, resources_to_native(preserved))


def shared_memory_needs_preservation(sm: J | None) -> bool:
    if sm is None:
        return False
    if sm.get("disabled"):
        return not qty_is_zero(sm.get("size"))
    return qty_is_zero(sm.get("size"))


def should_restore_preserved_shared_memory(dst: J | None, preserved: J | None) -> bool:
    if not shared_memory_needs_preservation(preserved):
        return False
    assert preserved is not None
    if dst is None:
        return True
    if preserved.get("disabled"):
        return bool(dst.get("disabled")) and qty_is_zero(dst.get("size"))
    return False


def extra_pod_metadata_needs_preservation(m: J | None) -> bool:
    return m is not None and not m.get("annotations") and not m.get("labels")
