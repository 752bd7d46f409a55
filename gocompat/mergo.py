"""``mergo.Merge(dst, src, mergo.WithOverride)`` (mergo v0.3.16) of two typed views
(:mod:`gocompat.view`): a nil destination pointer takes the source pointer even when it points at
a zero value (``terminationGracePeriodSeconds: 0``), no zero source value wins anywhere else, and
``intstr.IntOrString`` merges field by field, so an integer never replaces a string
(``port: "http"`` stays) while ``""`` turns a number into ``""``.
"""

from __future__ import annotations

from typing import Any

from gocompat.jsonvalue import deep_copy
from gocompat.leaves import _IntOrString, _Quantity, _Time
from gocompat.nodes import _Map, _Ptr, _Struct, node

__all__ = ["merge_override"]


def _zero_value(v: Any) -> bool:
    return v is None or v is False or v == "" or (type(v) in (int, float) and v == 0) or v == [] or v == {}


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


def _merge(n: _Struct | None, dst: dict[str, Any], src: dict[str, Any], cp: Any) -> None:
    for k, sv in src.items():
        if sv is None:
            continue
        f = n.field(k) if n is not None else None
        dv = dst.get(k)
        fn = f.node if f is not None else None
        if fn is None:
            _merge_untyped(k, dst, dv, sv, cp)
            continue
        if type(fn) is _Ptr:
            if dv is None:
                dst[k] = cp(sv)
                continue
            fn = fn.elem
        if type(fn) is _Struct:
            if type(sv) is dict:
                merged = dict(dv) if type(dv) is dict else {}
                _merge(fn, merged, sv, cp)
                dst[k] = merged
        elif type(fn) is _IntOrString:
            dst[k] = _merge_intstr(dv, sv)
        elif type(fn) is _Map:
            if sv:
                merged = dict(dv) if type(dv) is dict else {}
                for kk, vv in sv.items():
                    merged[kk] = cp(vv)
                dst[k] = merged
        elif type(fn) is _Quantity or type(fn) is _Time:
            dst[k] = cp(sv)  # structs without mergeable fields: the source always wins
        elif not _zero_value(sv):
            dst[k] = cp(sv)


def _merge_untyped(k: str, dst: dict[str, Any], dv: Any, sv: Any, cp: Any) -> None:
    """A key no type describes: nested objects merge, any other non-zero source value wins."""
    if dv is None:
        if not (_zero_value(sv) and type(sv) is not dict):
            dst[k] = cp(sv)
    elif type(sv) is dict:
        merged = dict(dv) if type(dv) is dict else {}
        _merge(None, merged, sv, cp)
        dst[k] = merged
    elif not _zero_value(sv):
        dst[k] = cp(sv)
