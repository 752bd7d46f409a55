"""DynamoGraphDeploymentScalingAdapter (DGDSA) conversion, v1alpha1 ⇄ v1beta1 (hub = v1beta1).

Public functions: :func:`to_hub` and :func:`from_hub` (whole object in, new object
out; the input is never mutated).

The two versions differ only in the DGD reference: α ``spec.dgdRef.serviceName`` ⇄ β
``spec.dgdRef.componentName``. ``spec.replicas``, ``spec.dgdRef.name`` and the status
(``replicas``, ``selector``, ``lastScaleTime``) are copied; metadata is copied verbatim and no
annotation is read or written (the conversion is lossless, there is no payload).

Output shapes follow the Go types (no v1beta1 normaliser runs for this kind):
``spec.replicas``, ``dgdRef.name`` and ``dgdRef.serviceName``/``componentName`` are always
written; β ``status.replicas`` is not ``omitempty`` (a β object always has
``status: {replicas: 0}`` at least) while α omits a zero; ``status`` itself is always written.
"""

from __future__ import annotations

import contextlib
from typing import Any

from domain.constants import ALPHA_API_VERSION, HUB_API_VERSION, KIND_DGDSA
from gocompat.gotime import go_time
from gocompat.jsonvalue import deep_copy

__all__ = ["from_hub", "to_hub"]


Obj = dict[str, Any]


def to_hub(obj: Obj) -> Obj:
    """Convert a v1alpha1 DGDSA to v1beta1 (``serviceName`` → ``componentName``)."""
    return _convert(obj, HUB_API_VERSION, "serviceName", "componentName", omit_zero_replicas=False)


def from_hub(obj: Obj) -> Obj:
    """Convert a v1beta1 DGDSA to v1alpha1 (``componentName`` → ``serviceName``)."""
    return _convert(obj, ALPHA_API_VERSION, "componentName", "serviceName", omit_zero_replicas=True)


def _part(obj: Obj, key: str) -> Obj:
    v = obj.get(key)
    return v if isinstance(v, dict) else {}


def _int32(v: Any) -> int:
    """A Go int32 field: anything that is not an in-range integer decodes to 0."""
    if isinstance(v, int) and not isinstance(v, bool) and -(1 << 31) <= v < (1 << 31):
        return v
    return 0


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _convert(obj: Obj, api_version: str, ref_from: str, ref_to: str, omit_zero_replicas: bool) -> Obj:
    meta = obj.get("metadata")
    spec = _part(obj, "spec")
    ref = spec.get("dgdRef")
    if not isinstance(ref, dict):
        ref = {}
    status = _part(obj, "status")

    out_status: Obj = {}
    replicas = _int32(status.get("replicas"))
    if replicas or not omit_zero_replicas:
        out_status["replicas"] = replicas
    selector = _str(status.get("selector"))
    if selector:
        out_status["selector"] = selector
    last = status.get("lastScaleTime")
    if isinstance(last, str):
        # metav1.Time re-serialises as RFC 3339 in UTC, whole seconds
        with contextlib.suppress(ValueError):
            out_status["lastScaleTime"] = go_time(last)

    return {
        "apiVersion": api_version,
        "kind": KIND_DGDSA,
        "metadata": deep_copy(meta) if isinstance(meta, dict) else {},
        "spec": {
            "replicas": _int32(spec.get("replicas")),
            "dgdRef": {"name": _str(ref.get("name")), ref_to: _str(ref.get(ref_from))},
        },
        "status": out_status,
    }
