"""Private payload annotations: envelopes, status payloads, scrubbing.

Payloads are JSON strings kept in ``metadata.annotations``. Spec payloads use the envelope
``{"version":1,"spec":<sparse spec>,"rawJSON":[<records>]}`` (``rawJSON`` omitted when empty);
an object without a ``"spec"`` key is the legacy form (the whole object is the sparse spec).
Status payloads are the plain JSON of a sparse status.

Payloads hold values of the upstream Go types, described with the schema vocabulary of
:mod:`gocompat.typed`. The DGD and DCD converters read them as typed views
(:data:`gocompat.typed.VIEW`): any type mismatch fails the whole decode (a spec payload is then
absent; a status payload is an error). The DGDR converter reads them as Go values (:func:`read_value_spec_payload`,
:func:`read_value_status_payload`): anything undecodable is absent. Converted objects and every
payload are written through :func:`gocompat.encoding.encode`, so a payload's bytes, member order
included, are those of the upstream converter.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping
from typing import Any

import orjson

from conversion.errors import ConversionError
from gocompat.decoding import decode, decode_struct
from gocompat.errors import GoTypeError
from gocompat.gotext import go_json_text
from gocompat.jsonvalue import load_go_json
from gocompat.typed import GO_PAYLOAD, Field, ListOf, Struct

__all__ = [
    "apply_epp_records",
    "decode_root",
    "delete_annotation",
    "get_annotation",
    "has_annotation",
    "read_spec_payload",
    "read_status_payload",
    "read_value_spec_payload",
    "read_value_status_payload",
    "scrub",
    "set_annotation",
    "write_json_payload",
    "write_spec_payload",
]


def decode_root(value: Any, schema: Struct, what: str) -> dict[str, Any]:
    """Decode a live object's ``spec``/``status`` (``what``) as Go's decoder would: absent or null
    is the zero struct; anything but an object, or a type mismatch inside, is a ConversionError."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConversionError(f"json: cannot unmarshal {what}: expected an object")
    try:
        return decode_struct(value, schema)
    except GoTypeError as exc:
        raise ConversionError(str(exc)) from exc


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


#: a ``rawJSON`` record: ``raw`` holds saved bytes (base64), ``nil`` marks a saved null
RECORD = Struct((Field("path", "string"), Field("raw", "bytes"), Field("nil", "bool")))


def _decode_records(v: Any) -> list[dict[str, Any]]:
    if not isinstance(v, list):
        raise GoTypeError("rawJSON is not an array")
    out: list[dict[str, Any]] = []
    for item in v:
        if item is None:
            out.append({})
            continue
        rec = decode(item, RECORD, "rawJSON")
        if "raw" in rec:
            rec["raw"] = base64.b64decode(rec["raw"])
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


# --- payloads of Go values (DGDR) ------------------------------------------------------------


@functools.cache
def _envelope(schema: Struct) -> Struct:
    return Struct(
        (
            Field("version", "int64", omitempty=False),
            Field("spec", schema, omitempty=False),
            Field("rawJSON", ListOf(RECORD)),
        )
    )


def _load_go_json(raw: str) -> Any:
    try:
        return load_go_json(raw)
    except ValueError:
        return _INVALID


def read_value_spec_payload(raw: str, schema: Struct) -> dict[str, Any] | None:
    """Decode a spec payload of Go values (``{"version":1,"spec":…}`` or the legacy bare spec).

    Invalid JSON, a JSON value that is not an object (``null`` aside) and any type mismatch make
    the payload absent (``None``). The literal ``null`` is an empty, present payload.
    """
    doc = _load_go_json(raw)
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        return None
    try:
        if "spec" not in doc:  # the presence test is an exact map-key lookup
            return decode_struct(doc, schema, GO_PAYLOAD)
        decoded = decode_struct(doc, _envelope(schema), GO_PAYLOAD)
    except GoTypeError:
        return None
    spec: dict[str, Any] = decoded.get("spec", {})
    return spec


def read_value_status_payload(raw: str, schema: Struct) -> dict[str, Any] | None:
    """Decode a plain status payload of Go values; anything undecodable is absent (``None``)."""
    doc = _load_go_json(raw)
    if doc is None:
        return {}
    if doc is _INVALID:
        return None
    try:
        decoded: dict[str, Any] = decode(doc, schema, "", GO_PAYLOAD)
    except GoTypeError:
        return None
    return decoded
