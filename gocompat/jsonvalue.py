"""Decoded JSON values: their type names, copies, and Go's ``float64`` round trip."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import orjson

from gocompat.errors import GoTypeError, unmarshal_text

__all__ = ["deep_copy", "go_float", "go_float_tree", "json_type", "load_go_json", "sorted_copy"]


def json_type(value: Any, *, go: bool = False) -> str:
    """The JSON type of a decoded value: JSON Schema's name (``integer`` and ``number`` told
    apart, ``boolean``), or with ``go=True`` the name Go's decoder messages print (``bool``;
    every number is ``number``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool" if go else "boolean"
    if isinstance(value, int):
        return "number" if go else "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def deep_copy(v: Any) -> Any:
    """Copy a JSON value (dicts and lists are rebuilt, scalars shared)."""
    if isinstance(v, (dict, list)):
        if not v:
            return {} if isinstance(v, dict) else []
        try:
            return orjson.loads(orjson.dumps(v))
        except (TypeError, orjson.JSONEncodeError):
            return _deep_copy_py(v)
    return v


def _deep_copy_py(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _deep_copy_py(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_deep_copy_py(x) for x in v]
    return v


def sorted_copy(v: Any) -> Any:
    """Copy a JSON value with every object's keys sorted, as Go marshals a map (by bytes: code
    point order)."""
    if type(v) is dict:
        return {k: sorted_copy(v[k]) for k in sorted(v)}
    if type(v) is list:
        return [sorted_copy(x) for x in v]
    return v


def go_float(v: float) -> int | float:
    """A float64 as Go prints it: integral values below 1e21 have no fractional part, and are
    written with the shortest digits that read back as the same float64, padded with zeros
    (2**63 is written ``9223372036854776000``, not ``9223372036854775808``). Such an integer
    outside int64/uint64 (which the JSON encoder cannot write as one) stays a float: the same
    number in exponent form."""
    if v.is_integer() and abs(v) < 1e21:
        # Quirk: opaque JSON decoded into map[string]any turns every number into a float64, so an
        # integer past 2**53 comes out with the float's shortest digits, not the ones written.
        if abs(v) <= _EXACT:
            return int(v)
        n = int(Decimal(repr(v)))
        return n if -(2**63) <= n < 2**64 else v
    return v


_EXACT = float(2**53)  # every integer up to here is its own shortest representation


def go_float_tree(v: Any) -> Any:
    """Copy a JSON value as ``map[string]any`` round trips it: every number becomes a float64,
    and every object's keys come out sorted, as Go marshals a map (by bytes: code point order).

    Raises :class:`GoTypeError` for a number no float64 can hold (Go's decoder rejects it).
    """
    if isinstance(v, dict):
        return {k: go_float_tree(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [go_float_tree(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float):
        try:
            f = float(v)
        except OverflowError as e:
            raise GoTypeError(unmarshal_text(f"number {v}", "float64")) from e
        if not math.isfinite(f):
            raise GoTypeError(unmarshal_text(f"number {v}", "float64"))
        return go_float(f)
    return v


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name!r} looking for beginning of value")


def load_go_json(raw: str) -> Any:
    """``json.loads`` restricted to what Go accepts (no NaN/Infinity), integers kept exact;
    ValueError otherwise."""
    return json.loads(raw, parse_constant=_reject_constant)
