"""Private payload annotations: typed decoding, envelopes, status payloads, scrubbing.

Payloads are JSON strings kept in ``metadata.annotations``. Spec payloads use the envelope
``{"version":1,"spec":<sparse spec>,"rawJSON":[<records>]}`` (``rawJSON`` omitted when empty);
an object without a ``"spec"`` key is the legacy form (the whole object is the sparse spec).
Status payloads are the plain JSON of a sparse status.

Decoding mirrors Go ``encoding/json`` into the upstream typed structs: unknown keys are ignored,
keys match case-insensitively, JSON ``null`` leaves a field at its zero value, and any type
mismatch fails the whole decode (a spec payload is then absent; a DGD/DCD status payload is an
error). The :class:`Struct` schemas describe those typed structs; :func:`decode` returns the
"typed view" of a value: omitempty zero values dropped, quantities canonical. A :class:`Go`
field holds a Kubernetes type of the generated tables and decodes to its
:func:`conversion.gotypes.view`.

:func:`encode` is the way back, as Go's ``json.Marshal`` writes a typed value: an ``omitempty``
field whose value is empty — ``""``, ``0``, ``false``, and also an empty list or map, which the
typed view keeps to tell it from an absent one — is left out, and Kubernetes values are written
through their Go types (``readOnly: false`` and ``resources: {claims: []}`` disappear, a pointer
to an empty struct stays). Converted objects and every payload go through it. Members come out
in Go's order, whatever the order of the input: a struct's fields in declaration order (the order
of :attr:`Struct.fields`), a map's keys sorted by their bytes; opaque JSON keeps its own order,
as Go writes a ``json.RawMessage``/``apiextensionsv1.JSON`` as the bytes it was given. A payload
is an opaque string, so its bytes, member order included, are those of the upstream converter.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

import orjson

from conversion import gotypes
from conversion.errors import ConversionError
from conversion.gotypes import GoTypeError, json_kind
from conversion.quantity import canonical

__all__ = [
    "Field",
    "Go",
    "GoTypeError",
    "ListOf",
    "MapOf",
    "Ptr",
    "Struct",
    "apply_epp_records",
    "decode",
    "delete_annotation",
    "encode",
    "get_annotation",
    "go_json_text",
    "has_annotation",
    "read_spec_payload",
    "read_status_payload",
    "scrub",
    "set_annotation",
    "write_json_payload",
    "write_spec_payload",
]

# Scalar kinds: "string", "bool", "int32", "int64", "int" (Go int: 64 bits), "float", "quantity",
# "any" (opaque JSON), "object"
# (a Kubernetes object kept opaque but required to be a JSON object), "list" (opaque list),
# "stringmap" (map[string]string).
Kind = Union[str, "Struct", "Ptr", "ListOf", "MapOf", "Go"]


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    omitempty: bool = True


@dataclass(frozen=True)
class Struct:
    fields: tuple[Field, ...]
    by_name: dict[str, Field] = field(init=False, repr=False, compare=False)
    by_fold: dict[str, Field] = field(init=False, repr=False, compare=False)

    fields_decoder: Callable[[Mapping[str, Any]], dict[str, Any]] = field(
        init=False, repr=False, compare=False
    )
    decoder: Callable[[Any, str], Any] = field(init=False, repr=False, compare=False)
    encoder: Callable[[Any], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})
        object.__setattr__(self, "by_fold", {f.name.casefold(): f for f in self.fields})
        fields_decoder, decoder = _compile_struct(self)
        object.__setattr__(self, "fields_decoder", fields_decoder)
        object.__setattr__(self, "decoder", decoder)
        object.__setattr__(self, "encoder", _compile_struct_encoder(self))


@dataclass(frozen=True)
class Ptr:
    elem: Kind


@dataclass(frozen=True)
class ListOf:
    elem: Kind


@dataclass(frozen=True)
class MapOf:
    elem: Kind


@dataclass(frozen=True)
class Go:
    """A Go type of the generated tables (``"*core/v1.Probe"``, ``"[]core/v1.EnvVar"`` …)."""

    type: str


def _mismatch(v: Any, want: str, path: str) -> GoTypeError:
    return GoTypeError(f"json: cannot unmarshal {json_kind(v)} into Go struct field {path} of type {want}")


Decoder = Callable[[Any, str], Any]
# A struct field as the compiled decoder sees it: (Go name, decoder, the JSON type that
# decodes as is (None: always call the decoder), whether a zero scalar result is dropped).
_Entry = tuple[str, Decoder, "type | None", bool]


def decode(value: Any, kind: Kind, path: str = "") -> Any:
    """Decode ``value`` (not null) into the typed view of ``kind``; raise GoTypeError."""
    return _decoder(kind)(value, path)


def decode_struct(value: Mapping[str, Any], schema: Struct, path: str = "") -> dict[str, Any]:
    return schema.fields_decoder(value)


def decode_root(value: Any, schema: Struct, what: str) -> dict[str, Any]:
    """Decode a live object's ``spec``/``status`` (``what``) as Go's decoder would: absent or null
    is the zero struct; anything but an object, or a type mismatch inside, is a ConversionError."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConversionError(f"json: cannot unmarshal {what}: expected an object")
    try:
        decoded: dict[str, Any] = decode_struct(value, schema, what)
    except GoTypeError as exc:
        raise ConversionError(str(exc)) from exc
    return decoded


def _decode_any(value: Any, path: str) -> Any:
    return value


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
                raise GoTypeError(
                    f"json: cannot unmarshal number {value!r} into Go struct field {path} of type {go_type}"
                )
            raise _mismatch(value, go_type, path)
        if not lo <= value <= hi:
            raise GoTypeError(f"json: cannot unmarshal number {value} into Go struct field {path} of type {go_type}")
        return value

    return decode_int


def _decode_float(value: Any, path: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _mismatch(value, "float64", path)
    return value


def _decode_quantity(value: Any, path: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _mismatch(value, "resource.Quantity", path)
    try:
        return canonical(value)
    except ValueError as exc:
        raise GoTypeError(f"quantities must match the regular expression: {path}") from exc


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
    for k, v in value.items():
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
    "object": _decode_object,
    "list": _decode_list,
    "stringmap": _decode_stringmap,
}
# JSON types that a scalar kind takes verbatim (the decoder is skipped for them).
_VERBATIM: dict[str, type] = {"string": str, "bool": bool, "object": dict, "list": list}


def _decoder(kind: Kind) -> Decoder:
    if isinstance(kind, str):
        fn = _SCALARS.get(kind)
        if fn is None:
            raise AssertionError(f"unknown kind {kind}")
        return fn
    if isinstance(kind, Ptr):
        return _decoder(kind.elem)
    if isinstance(kind, Struct):
        return kind.decoder
    if isinstance(kind, Go):
        view = _go_view(kind)

        def decode_go(value: Any, path: str) -> Any:
            return view(value)

        return decode_go
    elem = _decoder(kind.elem)
    if isinstance(kind, ListOf):

        def decode_list(value: Any, path: str) -> Any:
            if not isinstance(value, list):
                raise _mismatch(value, "slice", path)
            return [None if v is None else elem(v, path) for v in value]

        return decode_list

    def decode_map(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise _mismatch(value, "map", path)
        return {k: (None if v is None else elem(v, path)) for k, v in value.items()}

    return decode_map


def _entry(f: Field) -> _Entry:
    kind = f.kind
    base = kind.elem if isinstance(kind, Ptr) else kind
    verbatim = _VERBATIM.get(base) if isinstance(base, str) else None
    # Collections keep the nil/empty distinction (an empty list or map is present);
    # omitempty scalars at their zero value are absent (Kubernetes types: see gotypes.view).
    drop_zero = f.omitempty and not isinstance(kind, (Ptr, Struct, Go))
    return f.name, _decoder(kind), verbatim, drop_zero


def _compile_struct(schema: Struct) -> tuple[Callable[[Mapping[str, Any]], dict[str, Any]], Decoder]:
    # Nested schemas exist before the schemas that use them, so their decoders do too.
    table: dict[str, _Entry] = {}
    fold: dict[str, _Entry] = {}
    for f in schema.fields:
        entry = _entry(f)
        table[f.name] = entry
        fold[f.name.casefold()] = entry

    def fields_decoder(value: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, raw in value.items():
            e: _Entry | None = table.get(key)
            if e is None:
                e = fold.get(key.casefold())
                if e is None:
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

    def decoder(value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise _mismatch(value, "struct", path)
        return fields_decoder(value)

    return fields_decoder, decoder


# --- encoding -----------------------------------------------------------------------------------


Encoder = Callable[[Any], Any]


def encode(value: Any, kind: Kind) -> Any:
    """``value`` (a typed view, possibly edited) as Go's ``json.Marshal`` writes it, minus the
    zero values it writes for non-``omitempty`` fields the view does not hold."""
    if value is None:
        return None
    enc = _encoder(kind)
    return value if enc is None else enc(value)


def _go_view(kind: Go) -> Encoder:
    """A Kubernetes-typed value decodes and encodes alike: to its typed view."""
    return functools.partial(gotypes.view, kind.type)


def _sorted_map(value: Any) -> Any:
    """A Go map as ``json.Marshal`` writes it: keys sorted by their bytes (UTF-8 byte order is
    code point order, which Python's string order is)."""
    if type(value) is not dict or len(value) < 2:
        return value
    return {k: value[k] for k in sorted(value)}


def _encoder(kind: Kind) -> Encoder | None:
    """The encoder of ``kind`` (None: a value is written as it is).

    Member order is Go's: a struct's fields in declaration order, a map's keys sorted. Opaque
    JSON (``"any"``: ``apiextensionsv1.JSON``, ``"object"``, ``"list"``) keeps the order it was
    given, as Go writes such a value's raw bytes unchanged.
    """
    while isinstance(kind, Ptr):
        kind = kind.elem
    if isinstance(kind, Struct | Go):
        return kind.encoder if isinstance(kind, Struct) else _go_view(kind)
    if isinstance(kind, str):
        return _sorted_map if kind == "stringmap" else None
    elem = _encoder(kind.elem)
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


def _compile_struct_encoder(schema: Struct) -> Encoder:
    """Go writes a struct's fields in their declaration order (the order of ``schema.fields``),
    whatever the order of the input; keys the schema does not know (none in a typed view) come
    last, in their own order."""
    # (omitempty applies: the field is not a pointer, a struct or a Kubernetes pointer type,
    #  encoder or None, the field's place in Go's encoding)
    table: dict[str, tuple[bool, Encoder | None, int]] = {}
    for i, f in enumerate(schema.fields):
        k = f.kind
        go_pointer = isinstance(k, Go) and k.type.startswith("*")
        table[f.name] = (f.omitempty and not isinstance(k, (Ptr, Struct)) and not go_pointer, _encoder(k), i)
    unknown = len(schema.fields)

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
                out[k] = v
                last = unknown
                continue
            if v is None:
                continue
            omit, enc, rank = e
            if omit and (v is False or v == "" or v == [] or v == {} or (type(v) in (int, float) and v == 0)):
                continue
            if rank < last:
                disorder = True
            last = rank
            out[k] = v if enc is None else enc(v)
        if not disorder:
            return out
        return {k: out[k] for k in sorted(out, key=place)}

    return encode_struct


# --- annotations ------------------------------------------------------------------------------


def get_annotation(meta: Mapping[str, Any] | None, key: str) -> str | None:
    """The annotation value, or None when the key is absent."""
    if not meta:
        return None
    anns = meta.get("annotations")
    if not isinstance(anns, dict):
        return None
    v = anns.get(key)
    if v is None:
        return None
    return v if isinstance(v, str) else str(v)


def has_annotation(meta: Mapping[str, Any] | None, key: str) -> bool:
    if not meta:
        return False
    anns = meta.get("annotations")
    return isinstance(anns, dict) and key in anns


def set_annotation(meta: dict[str, Any], key: str, value: str) -> None:
    anns = meta.get("annotations")
    if not isinstance(anns, dict):
        anns = {}
        meta["annotations"] = anns
    anns[key] = value


def delete_annotation(meta: dict[str, Any], key: str) -> None:
    """Delete ``key``; an emptied annotation map disappears (it is not left as ``{}``)."""
    anns = meta.get("annotations")
    if not isinstance(anns, dict):
        return
    anns.pop(key, None)
    if not anns:
        del meta["annotations"]


def scrub(meta: dict[str, Any], keys: tuple[str, ...] | list[str]) -> None:
    """Delete every key in ``keys`` (``meta`` must own its annotation map)."""
    anns = meta.get("annotations")
    if not isinstance(anns, dict):
        return
    for k in keys:
        anns.pop(k, None)
    if not anns:
        del meta["annotations"]


# --- spec payloads ----------------------------------------------------------------------------


def _loads(raw: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _INVALID


_INVALID = object()


def read_spec_payload(raw: str | None, schema: Struct) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """Decode a spec payload into (typed sparse spec, rawJSON records), or None when absent.

    Absent means: no annotation, empty string, not JSON, not a JSON object, or any type
    mismatch while decoding. The literal ``null`` decodes to an empty, present payload.
    """
    if raw is None or raw == "":
        return None
    obj = _loads(raw)
    if obj is _INVALID:
        return None
    if obj is None:
        return {}, []
    if not isinstance(obj, dict):
        return None
    try:
        if "spec" not in obj:
            return decode_struct(obj, schema), []
        spec: dict[str, Any] = {}
        records: list[dict[str, Any]] = []
        for key, v in obj.items():
            k = key.casefold()
            if k == "version":
                if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                    return None
            elif k == "spec":
                spec = {} if v is None else decode(v, schema, "spec")
            elif k == "rawjson":
                records = [] if v is None else _decode_records(v)
        return spec, records
    except GoTypeError:
        return None


_RECORD = Struct((Field("path", "string"), Field("raw", "string"), Field("nil", "bool")))


def _decode_records(v: Any) -> list[dict[str, Any]]:
    if not isinstance(v, list):
        raise GoTypeError("rawJSON is not an array")
    out: list[dict[str, Any]] = []
    for item in v:
        if item is None:
            out.append({})
            continue
        rec = decode(item, _RECORD, "rawJSON")
        if "raw" in rec:
            try:
                rec["raw"] = base64.b64decode(rec["raw"], validate=True)
            except (binascii.Error, ValueError) as exc:
                raise GoTypeError("illegal base64 data in rawJSON") from exc
        out.append(rec)
    return out


def apply_epp_records(config: Any, prefix: str, records: list[dict[str, Any]]) -> None:
    """Apply ``rawJSON`` records ``<prefix>/plugins/<j>/parameters`` to an EPP config.

    ``nil`` records set the parameters to null; ``raw`` records restore the saved bytes
    (parsed when they are JSON). The pinned writers never emit these records.
    """
    if not isinstance(config, dict) or not records:
        return
    plugins = config.get("plugins")
    if not isinstance(plugins, list):
        return
    by_path = {r.get("path"): r for r in records}
    for j, plugin in enumerate(plugins):
        rec = by_path.get(f"{prefix}/plugins/{j}/parameters")
        if rec is None or not isinstance(plugin, dict):
            continue
        if rec.get("nil"):
            plugin["parameters"] = None
            continue
        raw = rec.get("raw", b"")
        try:
            plugin["parameters"] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            plugin["parameters"] = raw.decode(errors="replace") if isinstance(raw, bytes) else raw


_GO_ESCAPED = re.compile("[<>&\u2028\u2029]")
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json_text(text: str) -> str:
    """Compact JSON text as Go's ``json.Marshal`` writes it: ``<``, ``>``, ``&``, U+2028 and
    U+2029 are escaped (``\\u003c``, ``\\u003e``, ``\\u0026``, ``\\u2028``, ``\\u2029``), raw JSON
    values included. Outside strings JSON text holds none of them, so every one is replaced."""
    if _GO_ESCAPED.search(text) is None:
        return text
    return _GO_ESCAPED.sub(lambda m: _GO_ESCAPES[m.group()], text)


def write_spec_payload(spec: Mapping[str, Any], records: list[dict[str, Any]] | None = None) -> str:
    """Serialise an envelope ``{"version":1,"spec":…,"rawJSON":[…]}``."""
    env: dict[str, Any] = {"version": 1, "spec": spec}
    if records:
        env["rawJSON"] = records
    return go_json_text(orjson.dumps(env).decode())


def write_json_payload(value: Any) -> str:
    return go_json_text(orjson.dumps(value).decode())


def read_status_payload(meta: Mapping[str, Any] | None, key: str, schema: Struct) -> dict[str, Any] | None:
    """Decode a status payload; an undecodable one raises ``unmarshal <key> annotation: …``."""
    raw = get_annotation(meta, key)
    if raw is None or raw == "":
        return None
    obj = _loads(raw)
    if obj is _INVALID:
        raise ConversionError(f"unmarshal {key} annotation: invalid character in JSON payload")
    if obj is None:
        return {}
    try:
        return decode(obj, schema, "")  # type: ignore[no-any-return]
    except GoTypeError as exc:
        raise ConversionError(f"unmarshal {key} annotation: {exc}") from exc
