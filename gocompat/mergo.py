"""``mergo.Merge(dst, src, mergo.WithOverride)`` (mergo v0.3.16) of two typed views
(:mod:`gocompat.view`): a nil destination pointer takes the source pointer even when it points at
a zero value (``terminationGracePeriodSeconds: 0``), no zero source value wins anywhere else, and
``intstr.IntOrString`` merges field by field, so an integer never replaces a string
(``port: "http"`` stays) while ``""`` turns a number into ``""``.
"""

from __future__ import annotations

import functools
from typing import Any

from gocompat.jsonvalue import deep_copy
from gocompat.leaves import _IntOrString, _Node, _Quantity, _Time
from gocompat.nodes import _Map, _Ptr, _Struct, node

__all__ = ["merge_override"]


def _same(v: Any) -> Any:
    return v


def _intstr_parts(v: Any) -> tuple[int, int, str]:
    return (1, 0, v) if type(v) is str else (0, int(v or 0), "")


def _merge_intstr(dst: Any, src: Any) -> Any:
    """mergo on ``intstr.IntOrString`` merges its three fields one by one: a zero source field
    never wins, so an integer (type 0) cannot replace a string, and ``""`` turns a number into
    the string it had before."""
    dt, di, ds = _intstr_parts(dst)
    st, si, ss = _intstr_parts(src)
    t = st or dt
    return (ss or ds) if t else (si or di)


def merge_override(expr: str, dst: dict[str, Any], src: dict[str, Any], copy: bool = True) -> None:
    """``mergo.Merge(&dst, src, mergo.WithOverride)`` of two typed views of the struct ``expr``.

    A nil destination pointer takes the source pointer whatever it points at (``*int64`` 0,
    an empty struct); otherwise a zero source value never wins, structs and pointed-to structs
    merge field by field, non-empty lists replace, and maps merge key by key with every source
    key winning. Nested destination objects are replaced by merged copies, never edited in
    place; ``copy=False`` also takes source values without copying them.
    """
    n = node(expr)
    assert isinstance(n, _Struct)
    _merge(n, dst, src, deep_copy if copy else _same)


# How a field merges (after a nil destination pointer took the source pointer): field by field,
# field by field as intstr, key by key, the source always wins, a non-zero source wins.
_STRUCT, _INTSTR, _MAP, _SOURCE, _NONZERO = range(5)
# A field's merge: (a pointer, how its (pointed-to) value merges, the type of that value).
_Plan = tuple[bool, int, _Node]


def _plan_of(fn: _Node) -> _Plan:
    pointer = type(fn) is _Ptr
    if pointer:
        assert isinstance(fn, _Ptr)
        fn = fn.elem
    t = type(fn)
    if t is _Struct:
        how = _STRUCT
    elif t is _IntOrString:
        how = _INTSTR
    elif t is _Map:
        how = _MAP
    elif t is _Quantity or t is _Time:
        how = _SOURCE  # structs without mergeable fields
    else:
        how = _NONZERO
    return pointer, how, fn


@functools.cache
def _plans(n: _Struct) -> dict[str, _Plan]:
    """The merge of each field of ``n`` by its JSON name, worked out once per struct."""
    return {name: _plan_of(f.node) for name, f in n.fields.items()}


def _merge(n: _Struct | None, dst: dict[str, Any], src: dict[str, Any], cp: Any) -> None:
    plans = _plans(n) if n is not None else None
    for k, sv in src.items():
        if sv is None:
            continue
        plan = plans.get(k) if plans is not None else None
        if plan is None:
            f = n.field(k) if n is not None else None  # a name spelt in another case
            if f is None:
                _merge_untyped(k, dst, dst.get(k), sv, cp)
                continue
            plan = _plan_of(f.node)
        pointer, how, fn = plan
        dv = dst.get(k)
        if pointer and dv is None:
            dst[k] = cp(sv)
        elif how == _NONZERO:
            # the zero JSON values (None, False, 0, "", [], {}) are exactly the falsy ones
            if sv:
                dst[k] = cp(sv)
        elif how == _STRUCT:
            if type(sv) is dict:
                merged = dict(dv) if type(dv) is dict else {}
                assert isinstance(fn, _Struct)
                _merge(fn, merged, sv, cp)
                dst[k] = merged
        elif how == _INTSTR:
            dst[k] = _merge_intstr(dv, sv)
        elif how == _MAP:
            if sv:
                merged = dict(dv) if type(dv) is dict else {}
                for kk, vv in sv.items():
                    merged[kk] = cp(vv)
                dst[k] = merged
        else:
            dst[k] = cp(sv)


def _merge_untyped(k: str, dst: dict[str, Any], dv: Any, sv: Any, cp: Any) -> None:
    """A key no type describes: nested objects merge, any other non-zero source value wins."""
    if dv is None:
        if sv or type(sv) is dict:
            dst[k] = cp(sv)
    elif type(sv) is dict:
        merged = dict(dv) if type(dv) is dict else {}
        _merge(None, merged, sv, cp)
        dst[k] = merged
    elif sv:
        dst[k] = cp(sv)
