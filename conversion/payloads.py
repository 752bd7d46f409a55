"""Private payload annotations: typed decoding, envelopes, status payloads, scrubbing.

Payloads are JSON strings kept in ``metadata.annotations``. Spec payloads use the envelope
``{"version":1,"spec":<sparse spec>,"rawJSON":[<records>]}`` (``rawJSON`` omitted when empty);
an object without a ``"spec"`` key is the legacy form (the whole object is the sparse spec).
Status payloads are the plain JSON of a sparse status.

Decoding mirrors Go ``encoding/json`` into the upstream typed structs: unknown keys are ignored,
keys match case-insensitively, JSON ``null`` leaves a field at its zero value, and any type
mismatch fails the whole decode (a spec payload is then absent; a DGD/DCD status payload is an
error). The :class:`Struct` schemas describe those typed structs; :func:`decode` returns the
"typed view" of a value: omitempty zero values dropped, quantities canonical.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

import orjson

from conversion.errors import ConversionError
from conversion.quantity import canonical

__all__ = [
    "Field",
    "GoTypeError",
    "ListOf",
    "MapOf",
    "Ptr",
    "Struct",
    "apply_epp_records",
    "decode",
    "delete_annotation",
    "get_annotation",
    "has_annotation",
    "read_spec_payload",
    "read_status_payload",
    "scrub",
    "set_annotation",
    "write_json_payload",
    "write_spec_payload",
]

# Scalar kinds: "string", "bool", "int", "float", "quantity", "any" (opaque JSON), "object"
# (a Kubernetes object kept opaque but required to be a JSON object), "list" (opaque list),
# "stringmap" (map[string]string).
Kind = Union[str, "Struct", "Ptr", "ListOf", "MapOf"]


class GoTypeError(ValueError):
    """A JSON value does not fit the Go type it is decoded into."""


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})
        object.__setattr__(self, "by_fold", {f.name.casefold(): f for f in self.fields})


@dataclass(frozen=True)
class Ptr:
    elem: Kind


@dataclass(frozen=True)
class ListOf:
    elem: Kind


@dataclass(frozen=True)
class MapOf:
    elem: Kind


def _is_zero_scalar(v: Any) -> bool:
    return v is None or v is False or v == "" or (type(v) in (int, float) and v == 0)


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _mismatch(v: Any, want: str, path: str) -> GoTypeError:
    return GoTypeError(f"json: cannot unmarshal {_type_name(v)} into Go struct field {path} of type {want}")


def decode(value: Any, kind: Kind, path: str = "") -> Any:
    """Decode ``value`` (not null) into the typed view of ``kind``; raise GoTypeError."""
    if isinstance(kind, str):
        if kind == "any":
            return value
        if kind == "string":
            if not isinstance(value, str):
                raise _mismatch(value, "string", path)
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                raise _mismatch(value, "bool", path)
            return value
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise _mismatch(value, "int", path)
            return value
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _mismatch(value, "float64", path)
            return value
        if kind == "quantity":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise _mismatch(value, "resource.Quantity", path)
            try:
                return canonical(value)
            except ValueError as exc:
                raise GoTypeError(f"quantities must match the regular expression: {path}") from exc
        if kind == "object":
            if not isinstance(value, dict):
                raise _mismatch(value, "struct", path)
            return value
        if kind == "list":
            if not isinstance(value, list):
                raise _mismatch(value, "slice", path)
            return value
        if kind == "stringmap":
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
        raise AssertionError(f"unknown kind {kind}")
    if isinstance(kind, Ptr):
        return decode(value, kind.elem, path)
    if isinstance(kind, Struct):
        if not isinstance(value, dict):
            raise _mismatch(value, "struct", path)
        return decode_struct(value, kind, path)
    if isinstance(kind, ListOf):
        if not isinstance(value, list):
            raise _mismatch(value, "slice", path)
        return [None if v is None else decode(v, kind.elem, path) for v in value]
    if not isinstance(value, dict):
        raise _mismatch(value, "map", path)
    return {k: (None if v is None else decode(v, kind.elem, path)) for k, v in value.items()}


def decode_struct(value: Mapping[str, Any], schema: Struct, path: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    by_name = schema.by_name
    for key, raw in value.items():
        f = by_name.get(key)
        if f is None:
            f = schema.by_fold.get(key.casefold())
            if f is None:
                continue
        if raw is None:
            # null leaves the field at its zero value.
            out.pop(f.name, None)
            continue
        # The error names the field only (building full paths costs on the hot path).
        v = decode(raw, f.kind, f.name)
        # Collections keep the nil/empty distinction (an empty list or map is present);
        # omitempty scalars at their zero value are absent.
        if f.omitempty and not isinstance(f.kind, (Ptr, Struct)) and _is_zero_scalar(v):
            out.pop(f.name, None)
        else:
            out[f.name] = v
    return out


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


def write_spec_payload(spec: Mapping[str, Any], records: list[dict[str, Any]] | None = None) -> str:
    """Serialise an envelope ``{"version":1,"spec":…,"rawJSON":[…]}``."""
    env: dict[str, Any] = {"version": 1, "spec": spec}
    if records:
        env["rawJSON"] = records
    return orjson.dumps(env).decode()


def write_json_payload(value: Any) -> str:
    return orjson.dumps(value).decode()


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
