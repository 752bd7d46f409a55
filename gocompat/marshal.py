"""Go's ``json.Marshal`` of a value decoded into a Kubernetes type of the tables: the typed view
(:func:`gocompat.view.view`) with what Go writes regardless of the input put back.

The view leaves out what Go writes for fields the input did not set; an answer that must be the
operator's own bytes (its mutation patch, which is the difference between the object it was sent
and its ``json.Marshal`` of the object it decoded) needs them: a field without ``omitempty``
is written at its zero value (``"name": ""``, ``"parameters": null``, ``"containers": null``,
``"weight": null``), a value-typed struct is written with its own such fields. ``omitempty``
leaves out what the operator's encoder leaves out: a nil pointer, a false, 0, "" or an empty list
or map, and, as measured against the pinned operator's answers, a struct that encodes to ``{}``
(``resources`` of a container without resources is not written) or a value that encodes to null
(a zero ``metav1.Time``). ``omitzero`` leaves out a zero value.
"""

from __future__ import annotations

from typing import Any

from gocompat.leaves import _Bytes, _Duration, _IntOrString, _Node, _Number, _Quantity, _Raw, _Scalar, _Time
from gocompat.nodes import _Map, _Ptr, _Slice, _Struct, node
from gocompat.view import view

__all__ = ["marshal", "marshal_view"]

_EMPTY_JSON = (None, "", False)


def marshal(expr: str, value: Any) -> Any:
    """``value`` (not null) decoded into the Go type ``expr`` and encoded again, as Go writes it;
    raises :class:`~gocompat.errors.GoTypeError` when it does not decode."""
    return marshal_view(expr, view(expr, value))


def marshal_view(expr: str, typed: Any) -> Any:
    """The encoding of a typed view of ``expr`` (what :func:`marshal` encodes)."""
    return _fill(node(expr), typed)


def _fill(n: _Node, v: Any) -> Any:
    if v is None:
        return None
    if isinstance(n, _Ptr):
        return _fill(n.elem, v)
    if isinstance(n, _Slice):
        elem = n.elem
        return [_fill(elem, x) for x in v]
    if isinstance(n, _Map):
        elem = n.elem
        return {k: _fill(elem, x) for k, x in v.items()}
    if isinstance(n, _Struct):
        return _fill_struct(n, v)
    return v


def _fill_struct(n: _Struct, v: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, f in n.fields.items():
        fnode = f.node
        if name in v:
            x = v[name]
            if f.drop_zero and fnode.zero(x):
                continue
            x = _fill(fnode, x)
        elif f.drop_zero:
            continue
        else:
            x = _zero(fnode)
        if f.drop_empty and _empty(fnode, x):
            continue
        out[name] = x
    return out


def _empty(n: _Node, x: Any) -> bool:
    if isinstance(n, _Ptr):
        return x is None
    if type(x) is dict or type(x) is list:
        return not x
    return x in _EMPTY_JSON or (type(x) in (int, float) and x == 0)


def _zero(n: _Node) -> Any:
    """What Go writes for a field of type ``n`` left at its zero value."""
    if isinstance(n, _Struct):
        return _fill_struct(n, {})
    if isinstance(n, _Scalar):
        return n.zero_value
    if isinstance(n, _Number | _IntOrString):
        return 0
    if isinstance(n, _Quantity):
        return "0"
    if isinstance(n, _Duration):
        return "0s"
    if isinstance(n, _Ptr | _Slice | _Map | _Bytes | _Raw | _Time):
        return None
    return None
