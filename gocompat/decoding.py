"""Decoders of the schema vocabulary (:mod:`gocompat.typed`): typed views and Go values, compiled
once per schema and decoding into plain closures."""

from __future__ import annotations

import base64
import binascii
import functools
import math
from collections.abc import Callable
from typing import Any

from gocompat import view as goview
from gocompat.errors import GoTypeError, unmarshal_text
from gocompat.gotime import go_time
from gocompat.jsonvalue import deep_copy, json_type
from gocompat.marshal import marshal
from gocompat.quantity import ERR_FORMAT, canonical
from gocompat.typed import (
    VIEW,
    Decoding,
    Go,
    Kind,
    ListOf,
    MapOf,
    Ptr,
    Struct,
    nullable,
    zero_json,
    zero_test,
)

__all__ = ["decode", "decode_struct"]

Decoder = Callable[[Any, str], Any]


def decode(value: Any, kind: Kind, path: str = "", decoding: Decoding = VIEW) -> Any:
    """Decode ``value`` (not null) into ``kind``; raise :class:`GoTypeError` (``path`` names
    the value in a top-level mismatch)."""
    return _decoder(kind, decoding)(value, path)


def decode_struct(value: dict[str, Any], schema: Struct, decoding: Decoding = VIEW) -> dict[str, Any]:
    """Decode the members of an object into ``schema`` (``value`` is known to be an object)."""
    return _struct_decoders(schema, decoding)[0](value)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- leaf decoders


def _mismatch(v: Any, want: str, path: str) -> GoTypeError:
    return GoTypeError(unmarshal_text(json_type(v, go=True), want, path))


def _decode_any(value: Any, path: str) -> Any:
    return value


def _decode_copy(value: Any, path: str) -> Any:
    return deep_copy(value)


def _decode_string(value: Any, path: str) -> Any:
    if not isinstance(value, str):
        raise _mismatch(value, "string", path)
    return value


def _decode_bool(value: Any, path: str) -> Any:
    if not isinstance(value, bool):
        raise _mismatch(value, "bool", path)
    return value


def _int_decoder(go_type: str, bits: int) -> Decoder:
    """A Go integer of ``bits`` bits: only an integer literal in range decodes (Go reports
    the literal: ``json: cannot unmarshal number 2147483648 into … of type int32``)."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def decode_int(value: Any, path: str) -> Any:
        if type(value) is not int:
            if type(value) is float:
                raise GoTypeError(unmarshal_text(f"number {value!r}", go_type, path))
            raise _mismatch(value, go_type, path)
        if not lo <= value <= hi:
            raise GoTypeError(unmarshal_text(f"number {value}", go_type, path))
        return value

    return decode_int


def _decode_float(value: Any, path: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _mismatch(value, "float64", path)
    return value


def _decode_float64(value: Any, path: str) -> Any:
    """A Go ``float64`` value: any finite JSON number, as a float."""
    _decode_float(value, path)
    try:
        f = float(value)
    except OverflowError as exc:
        raise GoTypeError(unmarshal_text("number", "float64", path)) from exc
    if not math.isfinite(f):
        raise GoTypeError(unmarshal_text("number", "float64", path))
    return f


def _decode_quantity(value: Any, path: str) -> Any:
    """``Quantity.UnmarshalJSON``: it is given the raw JSON of any value (an object, a list and a
    boolean are no quantity) and its error is the decode error, without the field's path."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise GoTypeError(ERR_FORMAT)
    try:
        return canonical(value)
    except ValueError as exc:
        raise GoTypeError(str(exc)) from exc


def _decode_time(value: Any, path: str) -> Any:
    if not isinstance(value, str):
        raise _mismatch(value, "v1.Time", path)
    try:
        return go_time(value)
    except ValueError as exc:
        raise GoTypeError(str(exc)) from exc


def _decode_bytes(value: Any, path: str) -> Any:
    """``[]byte``: a base64 (standard encoding) JSON string, kept as the string."""
    if not isinstance(value, str):
        raise _mismatch(value, "[]uint8", path)
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise GoTypeError(f"illegal base64 data: {path}") from exc
    return value


def _decode_object(value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise _mismatch(value, "struct", path)
    return value


def _decode_list(value: Any, path: str) -> Any:
    if not isinstance(value, list):
        raise _mismatch(value, "slice", path)
    return value


def _decode_stringmap(value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise _mismatch(value, "map[string]string", path)
    out: dict[str, Any] = {}
    members: dict[str, Any] = value  # (typed: the compiled build iterates it directly)
    for k, v in members.items():
        if v is None:
            out[k] = ""
        elif not isinstance(v, str):
            raise _mismatch(v, "string", path)
        else:
            out[k] = v
    return out


_SCALARS: dict[str, Decoder] = {
    "any": _decode_any,
    "string": _decode_string,
    "bool": _decode_bool,
    "int": _int_decoder("int", 64),
    "int32": _int_decoder("int32", 32),
    "int64": _int_decoder("int64", 64),
    "float": _decode_float,
    "quantity": _decode_quantity,
    "time": _decode_time,
    "bytes": _decode_bytes,
    "object": _decode_object,
    "list": _decode_list,
    "stringmap": _decode_stringmap,
}
# Go values: opaque JSON is copied, numbers of a float64 become floats.
_VALUE_SCALARS: dict[str, Decoder] = {**_SCALARS, "any": _decode_copy, "float": _decode_float64}
# JSON types that a scalar kind takes verbatim (the decoder is skipped for them).
_VERBATIM: dict[str, type] = {"string": str, "bool": bool, "object": dict, "list": list}


# --------------------------------------------------------------------------- decoders


@functools.cache
def _decoder(kind: Kind, decoding: Decoding) -> Decoder:
    if isinstance(kind, str):
        fn = (_VALUE_SCALARS if decoding.values else _SCALARS).get(kind)
        if fn is None:
            raise AssertionError(f"unknown kind {kind}")
        return fn
    if isinstance(kind, Ptr):
        return _decoder(kind.elem, decoding)
    if isinstance(kind, Struct):
        return _struct_decoders(kind, decoding)[1]
    if isinstance(kind, Go):
        expr = kind.type
        # a ``full`` field's typed view is Go's whole encoding of it (so that it decodes to itself)
        read = marshal if kind.full else goview.view

        def decode_go(value: Any, path: str) -> Any:
            return read(expr, value)

        return decode_go
    if decoding.values:
        return _value_collection_decoder(kind, decoding)
    elem = _decoder(kind.elem, decoding)
    if isinstance(kind, ListOf):

        def decode_list(value: Any, path: str) -> Any:
            if not isinstance(value, list):
                raise _mismatch(value, "slice", path)
            items: list[Any] = value
            return [None if v is None else elem(v, path) for v in items]

        return decode_list

    def decode_map(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise _mismatch(value, "map", path)
        members: dict[str, Any] = value
        return {k: (None if v is None else elem(v, path)) for k, v in members.items()}

    return decode_map


def _value_collection_decoder(kind: ListOf | MapOf, decoding: Decoding) -> Decoder:
    """A list or map of Go values: a null element is the element's zero value; a mismatched one
    fails the decode (``strict``), else it is zeroed (list) or dropped (map)."""
    elem = _decoder(kind.elem, decoding)
    strict = decoding.strict
    if isinstance(kind, ListOf):
        struct_elem = isinstance(kind.elem, Struct)
        zero = zero_json(kind.elem)

        def decode_list(value: Any, path: str) -> Any:
            if not isinstance(value, list):
                raise _mismatch(value, "slice", path)
            out: list[Any] = []
            items: list[Any] = value
            for x in items:
                if x is not None:
                    try:
                        out.append(elem(x, path))
                        continue
                    except GoTypeError:
                        if strict:
                            raise
                out.append({} if struct_elem else zero)
            return out

        return decode_list
    map_zero = zero_json(kind.elem)

    def decode_map(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise _mismatch(value, "map", path)
        out: dict[str, Any] = {}
        members: dict[str, Any] = value
        for k, x in members.items():
            if x is None:
                out[k] = map_zero
                continue
            try:
                out[k] = elem(x, path)
            except GoTypeError:
                if strict:
                    raise
        return out

    return decode_map


# A struct field as the typed-view decoder sees it: (Go name, decoder, the JSON type that decodes
# as is (None: always call the decoder), whether a zero scalar result is dropped).
_ViewEntry = tuple[str, Decoder, "type | None", bool]
# As the Go-value decoder sees it: (Go name, decoder, verbatim JSON type, null clears it, a zero
# result is kept, the zero test).
_ValueEntry = tuple[str, Decoder, "type | None", bool, bool, Callable[[Any], bool]]


def _verbatim(kind: Kind) -> type | None:
    base = kind.elem if isinstance(kind, Ptr) else kind
    return _VERBATIM.get(base) if isinstance(base, str) else None


@functools.cache
def _struct_decoders(schema: Struct, decoding: Decoding) -> tuple[Callable[[dict[str, Any]], Any], Decoder]:
    """(the decoder of an object's members, the decoder of a value)."""
    fields = _value_fields_decoder(schema, decoding) if decoding.values else _view_fields_decoder(schema)

    def decoder(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise _mismatch(value, "struct", path)
        return fields(value)

    return fields, decoder


def _view_fields_decoder(schema: Struct) -> Callable[[dict[str, Any]], dict[str, Any]]:
    table: dict[str, _ViewEntry] = {}
    fold: dict[str, _ViewEntry] = {}
    for f in schema.fields:
        kind = f.kind
        # Collections keep the nil/empty distinction (an empty list or map is present);
        # omitempty scalars at their zero value are absent (Kubernetes types: see view.view).
        drop_zero = f.omitempty and not isinstance(kind, (Ptr, Struct, Go))
        entry = (f.name, _decoder(kind, VIEW), _verbatim(kind), drop_zero)
        table[f.name] = entry
        fold[f.name.casefold()] = entry
    go = schema.go

    def fields_decoder(value: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, raw in value.items():
            e: _ViewEntry | None = table.get(key)
            if e is None:
                e = fold.get(key.casefold())
                if e is None:
                    if go is not None:
                        member = goview.member_view(go, key, raw)
                        if member is not None:
                            out[member[0]] = member[1]
                    continue
            name, fn, verbatim, drop_zero = e
            if raw is None:
                # null leaves the field at its zero value.
                out.pop(name, None)
                continue
            # The error names the field only (building full paths costs on the hot path).
            v = raw if type(raw) is verbatim else fn(raw, name)
            if drop_zero and (v is None or v is False or v == "" or (type(v) in (int, float) and v == 0)):
                out.pop(name, None)
            else:
                out[name] = v
        return out

    return fields_decoder


def _value_fields_decoder(schema: Struct, decoding: Decoding) -> Callable[[dict[str, Any]], dict[str, Any]]:
    table: dict[str, _ValueEntry] = {}
    for f in schema.fields:
        kind = f.kind
        clears = nullable(kind)
        keep = clears or isinstance(kind, Struct)
        table[f.name] = (f.name, _decoder(kind, decoding), _verbatim(kind), clears, keep, zero_test(kind))
    fold = {k.lower(): e for k, e in table.items()} if decoding.fold else {}
    strict, go = decoding.strict, schema.go

    def fields_decoder(value: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, raw in value.items():
            e = table.get(key)
            if e is None and fold:
                e = fold.get(key.lower())
            if e is None:
                if go is not None:
                    try:
                        member = goview.member_view(go, key, raw)
                    except GoTypeError:
                        if strict:
                            raise
                        member = None
                    if member is not None:
                        out[member[0]] = member[1]
                continue
            name, fn, verbatim, nullable, keep, zero = e
            if raw is None:
                # null clears pointers, collections and opaque JSON and leaves other fields alone
                if nullable:
                    out.pop(name, None)
                continue
            if type(raw) is verbatim:
                v = raw
            else:
                try:
                    v = fn(raw, name)
                except GoTypeError:
                    if strict:
                        raise
                    continue
            if keep or not zero(v):
                out[name] = v
            else:
                out.pop(name, None)
        return out

    return fields_decoder
