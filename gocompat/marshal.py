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

import copy
from collections.abc import Callable
from typing import Any

from gocompat.leaves import _Duration, _IntOrString, _Node, _Number, _Quantity, _Scalar
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
    filler = _FILLERS.get(n)
    if filler is None:
        filler = _filler(n)
    return v if filler is _AS_IS else filler(v)


Filler = Callable[[Any], Any]
# Per type node: how a typed view of it is filled (``_AS_IS``: it is written as it is).
_FILLERS: dict[_Node, Filler] = {}


def _as_is(v: Any) -> Any:
    return v


_AS_IS: Filler = _as_is


def _filler(n: _Node) -> Filler:
    _FILLERS[n] = _AS_IS  # (a recursive type fills through itself once built)
    filler: Filler = _AS_IS
    if isinstance(n, _Ptr):
        filler = _filler_of(n.elem)
    elif isinstance(n, _Slice):
        elem = _filler_of(n.elem)
        if elem is not _AS_IS:
            filler = lambda v: [None if x is None else elem(x) for x in v]  # noqa: E731
    elif isinstance(n, _Map):
        elem = _filler_of(n.elem)
        if elem is not _AS_IS:
            filler = lambda v: {k: None if x is None else elem(x) for k, x in v.items()}  # noqa: E731
    elif isinstance(n, _Struct):
        filler = _struct_filler(n)
    _FILLERS[n] = filler
    return filler


def _filler_of(n: _Node) -> Filler:
    found = _FILLERS.get(n)
    return (
        _filler(n) if found is None else _Deferred(n) if found is _AS_IS and isinstance(n, _Struct) else found
    )


class _Deferred:
    """A struct's filler looked up when first used (a type that holds itself)."""

    def __init__(self, n: _Node) -> None:
        self.n = n

    def __call__(self, v: Any) -> Any:
        return _FILLERS[self.n](v)


def _struct_filler(n: _Struct) -> Filler:
    # (name, filler of a present value, omitempty, omitzero) per field; the zeros written for
    # absent fields, in declaration order
    present: dict[str, tuple[Filler, bool, bool]] = {}
    absent: list[tuple[str, Any]] = []
    for name, f in n.fields.items():
        present[name] = (_filler_of(f.node), f.drop_empty, f.drop_zero)
        if f.drop_zero:
            continue
        zero = _zero(f.node)
        if not (f.drop_empty and _empty(f.node, zero)):
            absent.append((name, zero))
    rank = n.rank
    nodes = {name: f.node for name, f in n.fields.items()}

    def fill_struct(v: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, x in v.items():
            fill, drop_empty, drop_zero = present[name]
            node = nodes[name]
            if drop_zero and node.zero(x):
                continue
            if x is not None and fill is not _AS_IS:
                x = fill(x)
            if drop_empty and _empty(node, x):
                continue
            out[name] = x
        added = False
        for name, zero in absent:
            if name not in v:
                out[name] = copy.deepcopy(zero) if isinstance(zero, dict | list) else zero
                added = True
        if not added:
            return out
        return {k: out[k] for k in sorted(out, key=rank.__getitem__)}

    return fill_struct


def _empty(n: _Node, x: Any) -> bool:
    if isinstance(n, _Ptr):
        return x is None
    if type(x) is dict or type(x) is list:
        return not x
    return x in _EMPTY_JSON or (type(x) in (int, float) and x == 0)


def _zero(n: _Node) -> Any:
    """What Go writes for a field of type ``n`` left at its zero value."""
    if isinstance(n, _Struct):
        return _fill(n, {})
    if isinstance(n, _Scalar):
        return n.zero_value
    if isinstance(n, _Number | _IntOrString):
        return 0
    if isinstance(n, _Quantity):
        return "0"
    if isinstance(n, _Duration):
        return "0s"
    return None  # pointers, slices, maps, []byte, raw JSON, times: null
