"""Go types compiled from the generated tables (:mod:`gocompat.tables_core`, and any table added
with :func:`register` or struct added with :func:`define`): how a JSON value decodes into each type
and what Go writes back (:mod:`gocompat.view`), what Go's ``json.Unmarshal`` reports
(:mod:`gocompat.decode`) and what ``mergo`` does (:mod:`gocompat.mergo`).

Field names match case-insensitively (``encoding/json``; the apiserver has pruned every other
spelling from a live object before a webhook sees it); a ``null`` list element or map value
decodes to the element's zero value; a struct's JSON fields include those of its embedded
structs, promoted by Go's rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gocompat import tables_core
from gocompat.errors import Mismatch
from gocompat.leaves import (
    REMOVE,
    SCALARS,
    SPECIAL_NODES,
    _Bytes,
    _Duration,
    _Float,
    _Int,
    _Node,
    _Raw,
    _Scalar,
    _Time,
)

__all__ = ["define", "node", "register"]

_STRUCTS: dict[str, tuple[tuple[str, str, str, str], ...]] = {}
_NAMED: dict[str, str] = {}
_SPECIAL: dict[str, str] = {}
_PACKAGES: dict[str, str] = {}


def register(table: Any) -> None:
    """Add a generated table module (``STRUCTS``, ``NAMED``, ``SPECIAL``, ``PACKAGES``)."""
    _STRUCTS.update(table.STRUCTS)
    _NAMED.update(table.NAMED)
    _SPECIAL.update(table.SPECIAL)
    _PACKAGES.update(table.PACKAGES)


def define(key: str, package: str, fields: tuple[tuple[str, str, str, str], ...]) -> str:
    """Add one struct written by hand in the table format (a Dynamo type holding Kubernetes
    types); ``package`` is its Go package name. Returns ``key``."""
    _STRUCTS[key] = fields
    _PACKAGES.setdefault(key.rpartition(".")[0], package)
    return key


register(tables_core)


class _Of(_Node):
    """A type built on an element type (pointer, slice): ``null`` sets it to nil."""

    null = REMOVE
    prefix = ""

    def __init__(self, elem: _Node) -> None:
        self.elem = elem
        self.display = self.prefix + elem.display


class _Ptr(_Of):
    # (a mismatch is reported by the pointed-to type, which decodes the value)
    prefix = "*"

    def view(self, v: Any) -> Any:
        return self.elem.view(v)

    def sem(self, v: Any) -> Any:
        return self.elem.sem(v)


class _Slice(_Of):
    prefix = "[]"

    def view(self, v: Any) -> Any:
        if type(v) is not list:
            raise self.mismatch(v)
        elem = self.elem
        items: list[Any] = v  # (typed names let the compiled build use list and dict operations)
        if type(elem) is _Scalar:
            json_type = elem.json_type
            for x in items:  # (a loop: cheaper than all() over a generator for these short lists)
                if type(x) is not json_type:
                    break
            else:
                return list(items)
        return [elem.null_view() if x is None else elem.view(x) for x in items]

    def empty(self, v: Any) -> bool:
        return not v

    def sem(self, v: Any) -> Any:
        elem = self.elem
        return [None if x is None else elem.sem(x) for x in v]

    def sem_zero(self, n: Any) -> bool:
        return not n

    def is_zero(self, v: Any) -> bool:
        return not v


class _Map(_Node):
    null = REMOVE

    def __init__(self, key: _Node, elem: _Node, display: str) -> None:
        self.key = key
        self.elem = elem
        self.display = display

    def view(self, v: Any) -> Any:
        if type(v) is not dict:
            raise self.mismatch(v)
        elem = self.elem
        members: dict[str, Any] = v
        keys = sorted(members)  # Go writes a map with its keys sorted (by bytes: code point order)
        if type(elem) is _Scalar:
            json_type = elem.json_type
            for x in members.values():
                if type(x) is not json_type:
                    break
            else:
                return {k: members[k] for k in keys}
        return {k: elem.null_view() if (x := members[k]) is None else elem.view(x) for k in keys}

    def empty(self, v: Any) -> bool:
        return not v

    def sem(self, v: Any) -> Any:
        elem = self.elem
        return {k: None if x is None else elem.sem(x) for k, x in v.items()}

    def sem_zero(self, n: Any) -> bool:
        return not n

    def is_zero(self, v: Any) -> bool:
        return not v


# How a field's typed view is tested for omission (_Field.drop): never omitted, omitted when
# falsy (the zero value of these types is exactly their falsy value), or by the type's tests.
_KEEP, _FALSY, _TEST = 0, 1, 2
# Types whose omitempty/omitzero test of a typed view is ``not value`` ("", False, 0, [], {}).
_FALSY_EMPTY: tuple[type, ...] = (_Scalar, _Int, _Float, _Bytes)


class _Field:
    __slots__ = (
        "drop",
        "drop_empty",
        "drop_zero",
        "drop_zero_struct",
        "may_drop",
        "name",
        "node",
        "null",
        "rank",
        "verbatim",
        "via",
        "view",
    )

    def __init__(self, name: str, node: _Node, options: str, via: tuple[str, ...]) -> None:
        self.name = name
        self.node = node
        opts = options.split(",")
        self.drop_empty = "omitempty" in opts
        self.drop_zero = "omitzero" in opts
        self.drop_zero_struct = isinstance(node, _Struct)
        self.may_drop = self.drop_empty or self.drop_zero or self.drop_zero_struct
        self.null = node.null
        self.via = via  # Go names of the embedded structs a promoted field is reached through
        self.rank = 0  # its place in Go's encoding (set by the struct)
        # the JSON type a value of this field is its own typed view in (no call needed)
        base = node.elem if isinstance(node, _Ptr) else node
        self.verbatim: type | None = base.json_type if isinstance(base, _Scalar) else None
        # a pointer's view is its element's (called directly: no _Ptr.view frame)
        self.view = base.view if type(node) is _Ptr else node.view
        self.drop = self._drop_kind()

    def _drop_kind(self) -> int:
        node = self.node
        if not self.may_drop or type(node) is _Ptr:
            return _KEEP  # a present pointer is never empty nor zero
        if type(node) is _Struct:
            return _FALSY  # an empty struct is dropped (and is its zero value)
        if type(node) in _FALSY_EMPTY or type(node) in (_Slice, _Map):
            return _FALSY
        return _TEST


class _Struct(_Node):
    def __init__(self, key: str) -> None:
        self.key = key
        pkg, _, name = key.rpartition(".")
        self.name = name
        self.display = f"{_PACKAGES.get(pkg, pkg)}.{name}"
        self.fields: dict[str, _Field] = {}
        self.folded: dict[str, _Field] = {}
        self.rank: dict[str, int] = {}

    def build(self) -> None:
        for f in _promoted(self.key):
            self.fields[f.name] = f
        self.folded = {k.lower(): f for k, f in self.fields.items()}
        self.rank = {k: i for i, k in enumerate(self.fields)}
        for k, f in self.fields.items():
            f.rank = self.rank[k]

    def field(self, key: str) -> _Field | None:
        f = self.fields.get(key)
        if f is None:
            f = self.folded.get(key.lower())
        return f

    def view(self, v: Any) -> Any:
        if type(v) is not dict:
            raise self.mismatch(v)
        out: dict[str, Any] = {}
        fields = self.fields
        last, disorder = -1, False
        members: dict[str, Any] = v
        for k, x in members.items():
            f = fields.get(k)
            if f is None:
                f = self.folded.get(k.lower())
                if f is None:
                    continue
            name = f.name
            if x is None:
                if f.null is REMOVE:
                    out.pop(name, None)
                elif type(f.node) is _Duration:
                    f.node.null_view()  # raises: a non-pointer Duration cannot be null
                continue
            if type(x) is f.verbatim:
                xv = x
            else:
                try:
                    xv = f.view(x)
                except Mismatch as exc:
                    if exc.struct is None:
                        exc.struct = self.name
                    exc.path[:0] = [*f.via, name]
                    raise
            drop = f.drop
            if drop and (
                not xv
                if drop == _FALSY
                else (f.drop_empty and f.node.empty(xv)) or (f.drop_zero and f.node.zero(xv))
            ):
                out.pop(name, None)
            else:
                if f.rank < last:
                    disorder = True
                last = f.rank
                out[name] = xv
        if not disorder:
            return out
        # Go writes the fields in declaration order (embedded structs' fields where the
        # embedded field is), whatever the order of the input.
        return {k: out[k] for k in sorted(out, key=self.rank.__getitem__)}

    def null_view(self) -> Any:
        return {}

    def zero(self, v: Any) -> bool:
        return not v

    def _members(self, v: dict[str, Any]) -> Iterator[tuple[str, Any, _Node]]:
        """The known, non-null members of a typed view with their types."""
        fields = self.fields
        for k, x in v.items():
            f = fields.get(k)
            if f is not None and x is not None:
                yield k, x, f.node

    def sem(self, v: Any) -> Any:
        out: dict[str, Any] = {}
        for k, x, node in self._members(v):
            n = node.sem(x)
            if type(node) is _Ptr or not node.sem_zero(n):
                out[k] = n
        return out

    def sem_zero(self, n: Any) -> bool:
        return not n

    def is_zero(self, v: Any, skip: str = "") -> bool:
        """``skip``: a member left out of the test."""
        fields = self.fields
        members: dict[str, Any] = v
        for k, x in members.items():
            if x is None or k == skip:
                continue
            f = fields.get(k)
            if f is not None and (type(f.node) is _Ptr or not f.node.is_zero(x)):
                return False
        return True


def _promoted(key: str) -> list[_Field]:
    """The JSON fields of a struct with embedded structs' fields promoted (Go's rules: the
    shallowest name wins; among equally deep ones a tagged field wins, else none does)."""
    found: dict[str, list[tuple[int, bool, _Field]]] = {}
    order: list[str] = []

    def walk(k: str, depth: int, via: tuple[str, ...]) -> None:
        for json_name, type_expr, options, go_name in _STRUCTS[k]:
            if options == "inline":
                walk(type_expr.lstrip("*"), depth + 1, (*via, go_name))
                continue
            f = _Field(json_name, node(type_expr), options, via)
            if json_name not in found:
                order.append(json_name)
            found.setdefault(json_name, []).append((depth, json_name != go_name, f))

    walk(key, 0, ())
    out: list[_Field] = []
    for name in order:
        cands = found[name]
        depth = min(c[0] for c in cands)
        best = [c for c in cands if c[0] == depth]
        if len(best) > 1:
            best = [c for c in best if c[1]]
        if len(best) == 1:
            out.append(best[0][2])
    return out


_NODES: dict[str, _Node] = {}


def _display(key: str) -> str:
    pkg, _, name = key.rpartition(".")
    return f"{_PACKAGES.get(pkg, pkg)}.{name}"


def node(expr: str) -> _Node:
    """The compiled Go type of a table type expression."""
    n = _NODES.get(expr)
    if n is not None:
        return n
    if expr.startswith("*"):
        n = _Ptr(node(expr[1:]))
    elif expr.startswith("[]"):
        n = _Slice(node(expr[2:]))
    elif expr.startswith("map["):
        depth, i = 0, 3
        while True:
            depth += expr[i] == "["
            depth -= expr[i] == "]"
            if depth == 0:
                break
            i += 1
        key, elem = node(expr[4:i]), node(expr[i + 1 :])
        n = _Map(key, elem, f"map[{key.display}]{elem.display}")
    elif expr in SCALARS:
        n = SCALARS[expr]
    elif expr in _SPECIAL:
        kind = _SPECIAL[expr]
        if kind in ("time", "microtime"):
            n = _Time(kind == "microtime")
        elif kind == "raw":
            n = _Raw(_display(expr))
        else:
            n = SPECIAL_NODES[kind]()
    elif expr in _NAMED:
        base = node(_NAMED[expr])
        n = _named(base, _display(expr))
    elif expr in _STRUCTS:
        s = _Struct(expr)
        _NODES[expr] = s  # before its fields: types may refer to themselves
        s.build()
        return s
    else:
        raise KeyError(f"unknown Go type {expr!r}")
    _NODES[expr] = n
    return n


def _named(base: _Node, display: str) -> _Node:
    """A defined type: the underlying type's behaviour under another name."""
    if isinstance(base, _Scalar):
        return _Scalar(display, base.json_type, base.zero_value)
    if isinstance(base, _Int):
        out = _Int(display, 64, True)
        out.lo, out.hi = base.lo, base.hi
        return out
    if isinstance(base, _Float):
        f = _Float(display, 64)
        f.limit = base.limit
        return f
    if isinstance(base, _Map):
        return _Map(base.key, base.elem, display)
    if isinstance(base, _Slice):
        s = _Slice(base.elem)
        s.display = display
        return s
    return base
