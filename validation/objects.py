"""Read-only helpers over plain-dict Kubernetes objects (Go pointer/zero-value semantics).

A JSON ``null`` and an absent key both mean "nil pointer" / zero value, as with Go's
``encoding/json`` decoding into the upstream types.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from domain.constants import (
    GMS_INTER_POD,
    GMS_INTRA_POD,
    GPU_NVIDIA,
    MAIN_CONTAINER,
)
from gocompat.gotext import go_quote
from gocompat.quantity import canonical, parse_quantity

JSON = dict[str, Any]


def name_of(o: JSON | None) -> str:
    """``metadata.name`` ("" when absent or not a string)."""
    return string(sub(o, "metadata"), "name")


def sub(parent: JSON | None, key: str) -> JSON | None:
    if parent is None:
        return None
    v = parent.get(key)
    return v if isinstance(v, dict) else None


def lst(parent: JSON | None, key: str) -> list[Any]:
    if parent is None:
        return []
    v = parent.get(key)
    return v if isinstance(v, list) else []


def string(parent: JSON | None, key: str) -> str:
    """A string field's Go value ("" when absent or null)."""
    if parent is None:
        return ""
    v = parent.get(key)
    return v if isinstance(v, str) else ""


def present(parent: JSON | None, key: str) -> bool:
    """Go ``ptr != nil`` for an optional pointer field."""
    return parent is not None and parent.get(key) is not None


def integer(parent: JSON | None, key: str, default: int = 0) -> int:
    if parent is None:
        return default
    v = parent.get(key)
    if isinstance(v, bool) or v is None:
        return default
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return default


def boolean(parent: JSON | None, key: str) -> bool:
    return parent is not None and parent.get(key) is True


def string_map(parent: JSON | None, key: str) -> dict[str, Any]:
    m = sub(parent, key)
    return m if m is not None else {}


def annotations_of(o: JSON | None) -> dict[str, Any]:
    return string_map(sub(o, "metadata"), "annotations")


def containers(pod_template: JSON | None) -> list[JSON]:
    return [c if isinstance(c, dict) else {} for c in lst(sub(pod_template, "spec"), "containers")]


def container_index(conts: list[JSON], name: str) -> int:
    for i, c in enumerate(conts):
        if string(c, "name") == name:
            return i
    return -1


def main_container(component: JSON) -> JSON | None:
    conts = containers(sub(component, "podTemplate"))
    i = container_index(conts, MAIN_CONTAINER)
    return conts[i] if i >= 0 else None


def main_resources(component: JSON) -> JSON:
    m = main_container(component)
    r = sub(m, "resources")
    return r if r is not None else {}


# --- component shape predicates (hub) ------------------------------------------------------


def node_count(component: JSON) -> int:
    mn = sub(component, "multinode")
    return integer(mn, "nodeCount") if mn is not None else 1


def is_multinode(component: JSON) -> bool:
    return node_count(component) > 1


def experimental(component: JSON) -> JSON | None:
    return sub(component, "experimental")


def gms_of(component: JSON) -> JSON | None:
    return sub(experimental(component), "gpuMemoryService")


def failover_of(component: JSON) -> JSON | None:
    return sub(experimental(component), "failover")


def effective_mode(mode: str) -> str:
    """Empty GMS / failover mode means IntraPod."""
    return mode or GMS_INTRA_POD


def is_inter_pod(spec: JSON | None) -> bool:
    return spec is not None and effective_mode(string(spec, "mode")) == GMS_INTER_POD


def force_scaling_group(exp: JSON | None) -> bool:
    return boolean(sub(exp, "grove"), "forceScalingGroup")


def is_inter_pod_gms_literal(component: JSON) -> bool:
    # UsesPCSG / IsInterPodGMSEnabled compare the mode literally (no IntraPod default).
    return string(gms_of(component), "mode") == GMS_INTER_POD


def uses_pcsg(component: JSON) -> bool:
    return (
        node_count(component) > 1
        or is_inter_pod_gms_literal(component)
        or force_scaling_group(experimental(component))
    )


# --- quantities ------------------------------------------------------------------------------


def quantity_text(value: Any) -> str | None:
    """The canonical string of a quantity value, None when it does not parse."""
    try:
        return canonical(value)
    except (ValueError, TypeError):
        return None


def quantity_fraction(value: Any) -> Fraction | None:
    text = quantity_text(value)
    if text is None:
        return None
    q = parse_quantity(text)
    return Fraction(q.unscaled) * (Fraction(10) ** q.exp10)


def _is_gpu_resource_name(name: str) -> bool:
    n = name.lower()
    return n == GPU_NVIDIA or n == "gpu" or n.endswith("/gpu") or "/mig-" in n or n.startswith("gpu.")


def gpu_count(resources: JSON) -> tuple[int, str | None]:
    """``dra.ExtractGPUCountFromResourceRequirements``: (count, error text or None)."""
    for key in ("limits", "requests"):
        rl = sub(resources, key)
        if not rl:
            continue
        names = sorted(n for n in rl if _is_gpu_resource_name(n))
        if not names:
            continue
        name = names[0]
        frac = quantity_fraction(rl[name])
        text = quantity_text(rl[name]) or str(rl[name])
        if frac is None:
            return 0, f"GPU resource {go_quote(name)} quantity {go_quote(text)} must be a whole number"
        if frac.denominator != 1:
            return 0, f"GPU resource {go_quote(name)} quantity {go_quote(text)} must be a whole number"
        return int(frac), None
    return 0, None
