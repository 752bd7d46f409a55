"""Whether a value is already as the operator's encoder writes it, told without writing it.

The operator's mutation answer is the difference between the object it was sent and its
``json.Marshal`` of the object it decoded and defaulted (:func:`defaulting.common.as_go_writes`:
decode into the Go values of a schema, encode again, :mod:`gocompat.decoding`,
:mod:`gocompat.encoding`, Kubernetes-typed members written whole by :mod:`gocompat.marshal`). Most
objects a cluster holds were written by such an encoder already: their decode and encode give them
back equal, and the patch compares by equality, so that work changes nothing in the answer.
:func:`encodes_as_is` tells so in one walk that builds nothing.

It answers True only when the re-encoding is certain to equal the value (Python's equality, which
is the patch's): every member named exactly as its field (no folded spelling, no unknown member),
no ``null`` anywhere, every field Go writes regardless of the input present (no ``omitempty``), no
member Go would leave out (an ``omitempty`` zero, a value-typed struct that writes ``{}``), every
number an integer of its Go type or a float where Go wants one (an integer past 2**53 in a float
field is not vouched for), and every value Go parses itself (quantities, times, durations, base64)
spelled as Go writes it back (``"1536Mi"``, not ``"1.5Gi"``). Anything else is False, and the
caller re-encodes (``tests/gocompat/test_written.py`` holds the answer equal to the re-encoding's on
generated values, canonical and just off it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gocompat.decoding import decode
from gocompat.encoding import encode
from gocompat.errors import Abort, GoTypeError, Mismatch
from gocompat.leaves import _Int, _Node, _Scalar
from gocompat.marshal import _empty, _zero
from gocompat.nodes import _KEEP, _TEST, _Map, _Ptr, _Slice, _Struct, node
from gocompat.typed import GO_PAYLOAD, Go, Kind, ListOf, Ptr, Struct, nullable, zero_json, zero_test

__all__ = ["encodes_as_is"]

#: The largest integer a float64 holds exactly (a greater one may come back another integer).
_EXACT_FLOAT_INT = 2**53

#: Leaf values seen to be written as they are, with their leaf: a leaf's answer depends on
#: nothing else, and an object's quantities are the same few strings from one review to the next.
_AS_IS: set[tuple[Any, type, Any]] = set()
_AS_IS_SIZE = 4096


def encodes_as_is(value: Any, kind: Kind) -> bool:
    """Whether ``value`` (a JSON value) decoded into the Go values of ``kind`` (names exact, any
    mismatch failing) and encoded again (``strip`` and ``full``, as the defaulters' answer is
    written) is certain to equal ``value``; False when not certain (see the module's notes)."""
    return value is not None and _kind_check(kind)(value)


def _remember(key: tuple[Any, type, Any]) -> None:
    if len(_AS_IS) >= _AS_IS_SIZE:
        _AS_IS.clear()
    _AS_IS.add(key)


# A check of one value (not null), compiled once per kind or type into a plain closure.
Check = Callable[[Any], bool]


def _any(value: Any) -> bool:
    return True


def _type_check(json_type: type) -> Check:
    def check(value: Any) -> bool:
        return type(value) is json_type

    return check


def _list_check(elem: Check) -> Check:
    def check(value: Any) -> bool:
        if type(value) is not list:
            return False
        items: list[Any] = value
        for x in items:  # noqa: SIM110 (a loop: cheaper than all() over a generator)
            if x is None or not elem(x):
                return False
        return True

    return check


def _map_check(elem: Check) -> Check:
    def check(value: Any) -> bool:
        if type(value) is not dict:
            return False
        members: dict[str, Any] = value
        for x in members.values():  # noqa: SIM110 (as above)
            if x is None or not elem(x):
                return False
        return True

    return check


class _Later:
    """The check of a type that holds itself, looked up when first used."""

    def __init__(self, checks: dict[Any, Check], key: Any) -> None:
        self.checks = checks
        self.key = key

    def __call__(self, value: Any) -> bool:
        return self.checks[self.key](value)


# --------------------------------------------------------------------------- schema kinds

_KIND_CHECKS: dict[Any, Check] = {}


def _kind_check(kind: Kind) -> Check:
    found = _KIND_CHECKS.get(kind)
    if found is not None:
        return found
    while isinstance(kind, Ptr):
        kind = kind.elem
    check: Check
    if isinstance(kind, str):
        check = _scalar_check(kind)
    elif isinstance(kind, Struct):
        _KIND_CHECKS[kind] = _Later(_KIND_CHECKS, kind)
        check = _struct_check(kind)
    elif isinstance(kind, Go):
        check = _node_check(node(kind.type))
    elif isinstance(kind, ListOf):
        check = _list_check(_kind_check(kind.elem))
    else:
        check = _map_check(_kind_check(kind.elem))
    _KIND_CHECKS[kind] = check
    return check


# Per member name: (the check of its value, what tells a member its writing leaves out or writes
# otherwise, None when none is).
_Members = dict[str, tuple[Check, Check | None]]


def _members_check(fields: _Members, required: tuple[str, ...]) -> Check:
    """The check of an object: only members named by ``fields``, none null, none left out, each
    as it is written, and every ``required`` one present."""

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return False
        members: dict[str, Any] = value
        for key, x in members.items():
            entry = fields.get(key)
            if entry is None or x is None:
                return False
            sub, left_out = entry
            if left_out is not None and left_out(x):
                return False
            if not sub(x):
                return False
        return all(name in members for name in required)

    return check


def _falsy(value: Any) -> bool:
    return not value


def _struct_check(schema: Struct) -> Check:
    fields: _Members = {}
    required: list[str] = []
    for f in schema.fields:
        k = f.kind
        value_struct = isinstance(k, Struct)
        # The decoder drops a zero member unless it is kept (pointers, collections, opaque JSON,
        # value structs); the encoder drops an ``omitempty`` one unless it is a pointer or struct.
        # A zero the decoder drops from a field without ``omitempty`` is written back as the
        # field's zero, which equals it (a scalar's zero test is equality with its zero).
        keep = nullable(k) or value_struct
        omit = f.omitempty and not value_struct and not isinstance(k, Ptr)
        written_zero = not omit and not keep and zero_json(k) is not None
        zero = zero_test(k) if (omit or not keep) and not written_zero else None
        # a value struct written as {} is left out (``strip``)
        fields[f.name] = (_kind_check(k), _falsy if value_struct else zero)
        if value_struct:
            # absent, it is written unless it writes ``{}`` (which ``strip`` leaves out)
            if encode({}, k, values=True, strip=True, full=True) != {}:
                required.append(f.name)
        elif not f.omitempty:
            required.append(f.name)
    return _members_check(fields, tuple(required))


_INT_BITS = {"int": 64, "int64": 64, "int32": 32}


def _int_check(bits: int) -> Check:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def check(value: Any) -> bool:
        return type(value) is int and lo <= value <= hi

    return check


def _float(value: Any) -> bool:
    t = type(value)
    return t is float or (t is int and -_EXACT_FLOAT_INT <= value <= _EXACT_FLOAT_INT)


def _stringmap(value: Any) -> bool:
    if type(value) is not dict:
        return False
    members: dict[str, Any] = value
    return all(type(x) is str for x in members.values())


def _scalar_check(kind: str) -> Check:
    if kind in _INT_BITS:
        return _int_check(_INT_BITS[kind])
    plain = {"string": str, "bool": bool, "object": dict, "list": list}.get(kind)
    if plain is not None:
        return _type_check(plain)
    if kind == "float":
        return _float
    if kind == "any":
        return _any  # opaque JSON, written as it was given
    if kind == "stringmap":
        return _stringmap

    def parsed(value: Any) -> bool:
        """A quantity, time or base64 string Go writes back as it is."""
        if type(value) is not str:
            return False  # they are written as strings
        key = (kind, str, value)
        if key in _AS_IS:
            return True
        try:
            same = bool(decode(value, kind, "", GO_PAYLOAD) == value)
        except GoTypeError:
            return False
        if same:
            _remember(key)
        return same

    return parsed


# --------------------------------------------------------------------------- Kubernetes types

_NODE_CHECKS: dict[Any, Check] = {}


def _node_check(n: _Node) -> Check:
    """The check that the typed view of a value as ``n``, written whole, is the value."""
    found = _NODE_CHECKS.get(n)
    if found is not None:
        return found
    while type(n) is _Ptr:
        n = n.elem
    check: Check
    if type(n) is _Struct:
        _NODE_CHECKS[n] = _Later(_NODE_CHECKS, n)
        check = _node_struct_check(n)
    elif type(n) is _Slice:
        check = _list_check(_node_check(n.elem))
    elif type(n) is _Map:
        check = _map_check(_node_check(n.elem))
    elif type(n) is _Scalar:
        check = _type_check(n.json_type)
    elif type(n) is _Int:
        lo, hi = n.lo, n.hi

        def check(value: Any) -> bool:
            return type(value) is int and lo <= value <= hi

    else:
        check = _leaf_check(n)
    _NODE_CHECKS[n] = check
    return check


def _node_struct_check(n: _Struct) -> Check:
    fields: _Members = {}
    for name, f in n.fields.items():
        left_out = functools.partial(_left_out, f) if f.drop != _KEEP or f.drop_empty else None
        fields[name] = (_node_check(f.node), left_out)
    # the names its whole encoding writes even when its typed view lacks them
    required = tuple(
        name
        for name, f in n.fields.items()
        if not f.drop_zero and not (f.drop_empty and _empty(f.node, _zero(f.node)))
    )

    return _members_check(fields, required)


def _left_out(f: Any, x: Any) -> bool:
    """Whether the typed view (``drop``) or the whole encoding (``omitempty``) leaves member ``x``
    of field ``f`` out."""
    drop = f.drop
    if drop != _KEEP and (
        not x if drop != _TEST else (f.drop_empty and f.node.empty(x)) or (f.drop_zero and f.node.zero(x))
    ):
        return True
    return bool(f.drop_empty and _empty(f.node, x))


def _leaf_check(n: _Node) -> Check:
    """Any other leaf: its typed view (what Go parses and writes back) is the value itself."""

    def check(value: Any) -> bool:
        hashable = type(value) in (str, int, float, bool)
        key = (n, type(value), value)
        if hashable and key in _AS_IS:
            return True
        try:
            written = n.view(value)
        except (Mismatch, Abort, GoTypeError, ValueError):
            return False
        same = type(written) is type(value) and bool(written == value)
        if same and hashable:
            _remember(key)
        return same

    return check
