"""The typed view of a JSON value of a Go type, and ``apiequality.Semantic.DeepEqual``.

* :func:`view` — what is left of the value after Go decodes it into the type and encodes it
  again, without the artefacts Go writes regardless of the input. Unknown keys are dropped;
  ``omitempty`` fields at their zero value (``readOnly: false``, ``""``, ``0``, empty lists and
  maps) are dropped; ``omitzero`` fields at their zero value are dropped; a non-pointer struct
  that ends up empty is dropped (Go always writes it, as ``{}``); a pointer is kept even when it
  points at a zero value (``affinity: {}``, ``*bool`` ``false``); a map keeps every entry, ``""``
  values included; quantities and times are written as Go writes them. Members are in Go's
  order: a struct's fields in declaration order (an embedded struct's fields where the embedded
  field is), a map's keys sorted, an ``interface{}`` value's objects sorted (Go marshals them as
  maps); ``json.RawMessage``-like values keep the order they had. Fields without ``omitempty``
  keep a zero value when the input had it (Go would write it anyway). JSON ``null`` clears
  pointers, lists and maps and leaves other fields alone.
* :func:`semantic`, :func:`equal`, :func:`is_zero` — ``apiequality.Semantic.DeepEqual``: nil
  and empty lists and maps are equal, value-typed zero fields equal absent ones, pointers to
  zero values are not absent, quantities compare by value.

Types are type expressions of the tables (:mod:`gocompat.nodes`): ``"core/v1.Container"``,
``"*core/v1.Probe"``, ``"[]core/v1.EnvVar"`` …
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gocompat.errors import Abort, GoTypeError, Mismatch
from gocompat.nodes import _Ptr, _Struct, node

__all__ = ["equal", "field_order", "is_zero", "member_is_zero", "member_view", "semantic", "view"]


def view(expr: str, value: Any) -> Any:
    """The typed view of ``value`` (not null) as a Go ``expr``; raises :class:`GoTypeError`."""
    try:
        return node(expr).view(value)
    except Mismatch as exc:
        raise GoTypeError(exc.text()) from None
    except Abort as abort:
        raise GoTypeError(str(abort)) from None


def field_order(struct: str) -> dict[str, int]:
    """The JSON names of the struct ``struct`` mapped to their place in Go's encoding: the
    declaration order, an embedded struct's fields where the embedded field is."""
    n = node(struct)
    assert isinstance(n, _Struct)
    return n.rank


def member_view(struct: str, key: str, value: Any) -> tuple[str, Any] | None:
    """One member ``key: value`` of an object of the struct ``struct``, as :func:`view` would
    keep it: (Go's json name, typed view), or None when the view leaves it out (an unknown
    key, ``null``, an empty ``omitempty`` value, an empty non-pointer struct)."""
    n = node(struct)
    assert isinstance(n, _Struct)
    f = n.field(key)
    if f is None or value is None:
        return None
    try:
        xv = f.node.view(value)
    except Mismatch as exc:
        if exc.struct is None:
            exc.struct = n.name
        exc.path[:0] = [*f.via, f.name]
        raise GoTypeError(exc.text()) from None
    except Abort as abort:
        raise GoTypeError(str(abort)) from None
    if (
        (f.drop_empty and f.node.empty(xv))
        or (f.drop_zero and f.node.zero(xv))
        or (f.drop_zero_struct and not xv)
    ):
        return None
    return f.name, xv


def member_is_zero(struct: str, key: str, value: Any) -> bool:
    """The member ``key`` (a typed view) holds its field's zero value (Semantic.DeepEqual)."""
    n = node(struct)
    assert isinstance(n, _Struct)
    f = n.field(key)
    if f is None or value is None:
        return True
    fn = f.node
    return type(fn) is not _Ptr and fn.is_zero(value)


def semantic(expr: str, value: Any) -> Any:
    """Normal form of a typed view under ``Semantic.DeepEqual``."""
    if value is None:
        return None
    return node(expr).sem(value)


def equal(expr: str, a: Any, b: Any) -> bool:
    """``apiequality.Semantic.DeepEqual`` of two typed views (None: nil / absent)."""
    if a == b:
        return True
    n = node(expr)
    sa = None if a is None else n.sem(a)
    sb = None if b is None else n.sem(b)
    if sa is None or sb is None:
        other = sb if sa is None else sa
        return other is None or (type(n) is not _Ptr and n.sem_zero(other))
    return bool(sa == sb)


def is_zero(expr: str, value: Any, *, skip: str = "") -> bool:
    """The typed view equals the type's zero value (``skip``: a struct field left out)."""
    if value is None:
        return True
    n = node(expr)
    if type(n) is _Ptr:
        return False
    if type(n) is _Struct:
        return n.is_zero(value, skip)
    if skip and isinstance(value, Mapping):
        value = {k: x for k, x in value.items() if k != skip}
    return n.is_zero(value)
