"""Encoders of the schema vocabulary (:mod:`gocompat.typed`): Go's ``json.Marshal`` of a typed
view or of a Go value, compiled once per schema into plain closures."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from gocompat import view as goview
from gocompat.errors import GoTypeError
from gocompat.jsonvalue import deep_copy, go_float
from gocompat.marshal import marshal
from gocompat.typed import Go, Kind, ListOf, Ptr, Struct, zero_json, zero_test

__all__ = ["encode"]

Encoder = Callable[[Any], Any]


def encode(value: Any, kind: Kind, *, values: bool = False, strip: bool = False, full: bool = False) -> Any:
    """``value`` (a typed view, possibly edited; with ``values=True`` a Go value) as Go's
    ``json.Marshal`` writes it. A typed view leaves out the zero values Go writes for
    non-``omitempty`` fields the view does not hold; ``strip`` drops value-typed structs that
    encode to ``{}`` (Go values only); ``full`` writes every Kubernetes-typed member whole
    (:mod:`gocompat.marshal`; Go values only)."""
    if value is None:
        return None
    enc = _value_encoder(kind, strip, full) if values else _view_encoder(kind)
    return value if enc is None else enc(value)


# --------------------------------------------------------------------------- typed-view encoders


def _sorted_map(value: Any) -> Any:
    """A Go map as ``json.Marshal`` writes it: keys sorted by their bytes (UTF-8 byte order is
    code point order, which Python's string order is)."""
    if type(value) is not dict or len(value) < 2:
        return value
    return {k: value[k] for k in sorted(value)}


def _go_encoder(kind: Go, full: bool = False) -> Encoder:
    """A Kubernetes-typed value decodes and encodes alike: to its typed view, or (``full``, or
    the field's own ``full``) to Go's whole encoding of it."""
    return functools.partial(marshal if full or kind.full else goview.view, kind.type)


@functools.cache
def _view_encoder(kind: Kind) -> Encoder | None:
    """The typed-view encoder of ``kind`` (None: a value is written as it is).

    Member order is Go's: a struct's fields in declaration order, a map's keys sorted. Opaque
    JSON (``"any"``: ``apiextensionsv1.JSON``, ``"object"``, ``"list"``) keeps the order it was
    given, as Go writes such a value's raw bytes unchanged.
    """
    while isinstance(kind, Ptr):
        kind = kind.elem
    if isinstance(kind, Struct):
        return _view_struct_encoder(kind)
    if isinstance(kind, Go):
        return _go_encoder(kind)
    if isinstance(kind, str):
        return _sorted_map if kind == "stringmap" else None
    elem = _view_encoder(kind.elem)
    if isinstance(kind, ListOf):
        if elem is None:
            return None

        def encode_list(value: Any) -> Any:
            if type(value) is not list:
                return value
            return [None if v is None else elem(v) for v in value]

        return encode_list
    if elem is None:
        return _sorted_map

    def encode_map(value: Any) -> Any:
        if type(value) is not dict:
            return value
        return {k: None if (v := value[k]) is None else elem(v) for k in sorted(value)}

    return encode_map


def _view_struct_encoder(schema: Struct) -> Encoder:
    """Go writes a struct's fields in their declaration order, whatever the order of the input;
    keys the schema does not know (none in a typed view) come last, in their own order."""
    # (omitempty applies: the field is not a pointer, a struct or a Kubernetes pointer type,
    #  encoder or None, the field's place in Go's encoding)
    table: dict[str, tuple[bool, Encoder | None, int]] = {}
    for f in schema.fields:
        k = f.kind
        go_pointer = isinstance(k, Go) and k.type.startswith("*")
        omit = f.omitempty and not isinstance(k, (Ptr, Struct)) and not go_pointer
        table[f.name] = (omit, _view_encoder(k), schema.rank[f.name])
    unknown = len(schema.rank)
    go = schema.go

    def place(k: str) -> int:
        e = table.get(k)
        return unknown if e is None else e[2]

    def encode_struct(value: Any) -> Any:
        if type(value) is not dict:
            return value
        out: dict[str, Any] = {}
        last, disorder = -1, False
        for k, v in value.items():
            e = table.get(k)
            if e is None:
                if go is None:
                    out[k] = v
                else:
                    member = goview.member_view(go, k, v)
                    if member is not None:
                        out[member[0]] = member[1]
                last = unknown
                continue
            if v is None:
                continue
            omit, enc, rank = e
            if omit and not v:  # the empty JSON values ("", 0, false, [], {}) are the falsy ones
                continue
            if rank < last:
                disorder = True
            last = rank
            out[k] = v if enc is None else enc(v)
        if not disorder:
            return out
        return {k: out[k] for k in sorted(out, key=place)}

    return encode_struct


# --------------------------------------------------------------------------- Go-value encoders

# Scalar kinds whose Go values are written as they are.
_PLAIN = frozenset(("string", "bool", "int", "int32", "int64", "quantity", "time", "bytes"))


def _same(v: Any) -> Any:
    return v


@functools.cache
def _value_encoder(kind: Kind, strip: bool, full: bool = False) -> Encoder:
    """The Go-value encoder of ``kind``: Go's ``json.Marshal`` of the value."""
    if isinstance(kind, Ptr):
        return _value_encoder(kind.elem, strip, full)
    if isinstance(kind, Struct):
        return _value_struct_encoder(kind, strip, full)
    if isinstance(kind, Go):
        return _go_encoder(kind, full)
    if isinstance(kind, str):
        if kind == "float":
            return go_float
        if kind == "any":
            return deep_copy
        return _sorted_map if kind == "stringmap" else _same
    elem = _value_encoder(kind.elem, strip, full)
    if isinstance(kind, ListOf):
        return lambda v: [elem(x) for x in v]
    # Go writes a map with its keys sorted (by bytes: code point order)
    return lambda v: {k: elem(v[k]) for k in sorted(v)}


def _value_struct_encoder(schema: Struct, strip: bool, full: bool) -> Encoder:
    # (omitempty applies, zero test, written as it is, encoder, a value-typed struct)
    table: dict[str, tuple[bool, Callable[[Any], bool], bool, Encoder, bool]] = {}
    #: fields Go writes even when unset (non-omitempty ones and value-typed structs), with the
    #: JSON written for them (None: encode an empty struct)
    always: list[tuple[str, Any, Encoder | None]] = []
    for f in schema.fields:
        k = f.kind
        value_struct = isinstance(k, Struct)
        plain = isinstance(k, str) and k in _PLAIN
        enc = _value_encoder(k, strip, full)
        omit = f.omitempty and not value_struct and not isinstance(k, Ptr)
        table[f.name] = (omit, zero_test(k), plain, enc, value_struct)
        if value_struct:
            always.append((f.name, None, enc))
        elif not f.omitempty:
            always.append((f.name, zero_json(k) if not isinstance(k, Ptr) else None, None))
    go, rank = schema.go, schema.rank
    last = len(rank)

    def place(k: str) -> int:
        return rank.get(k, last)

    def encode_struct(value: Any) -> Any:
        out: dict[str, Any] = {}
        for k, x in value.items():
            e = table.get(k)
            if e is None:
                member = None
                if go is not None:
                    try:
                        member = goview.member_view(go, k, x)
                    except GoTypeError:
                        member = None
                if member is not None:
                    out[member[0]] = member[1]
                continue
            omit, zero, plain, enc, value_struct = e
            if omit and zero(x):
                continue
            if plain:
                out[k] = x
                continue
            written = enc(x)
            if strip and value_struct and written == {}:
                continue
            out[k] = written
        for name, zero_written, struct_enc in always:
            if name in value:
                continue
            if struct_enc is not None:
                written = struct_enc({})
                if strip and written == {}:
                    continue
                out[name] = written
            else:
                out[name] = zero_written
        if len(out) < 2:
            return out
        # Go writes the fields in declaration order, whatever the order of the input.
        return {k: out[k] for k in sorted(out, key=place)}

    return encode_struct
