"""What a plain YAML scalar is to kubectl: go-yaml v2's ``resolve`` (the YAML 1.1 reading that
``sigs.k8s.io/yaml`` uses to turn manifests into JSON), then the JSON number the API server decodes.

It differs from PyYAML's YAML 1.1 reading in ways real manifests meet: ``y``/``Y``/``n``/``N`` are
booleans, ``1e3`` is a number (a float needs no dot), ``0755`` is octal, ``22:22`` is a string (no
sexagesimal numbers), and a timestamp-like value stays a string. A float that JSON writes as an
integer (``1.0`` → ``1``) reaches the API server as an integer, so it is returned as one.
"""

from __future__ import annotations

import math
import re

_TRUE = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE = frozenset(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_SPECIAL_FLOATS = {
    ".nan": math.nan,
    ".NaN": math.nan,
    ".NAN": math.nan,
    ".inf": math.inf,
    ".Inf": math.inf,
    ".INF": math.inf,
    "+.inf": math.inf,
    "+.Inf": math.inf,
    "+.INF": math.inf,
    "-.inf": -math.inf,
    "-.Inf": -math.inf,
    "-.INF": -math.inf,
}
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+\.?[0-9]*)([eE][-+]?[0-9]+)?\Z")
_DIGITS = {
    2: frozenset("01"),
    8: frozenset("01234567"),
    10: frozenset("0123456789"),
    16: frozenset("0123456789abcdefABCDEF"),
}
_MAX_INT64 = 2**63 - 1
_MAX_UINT64 = 2**64 - 1

#: What a plain scalar can resolve to but a string.
NotString = bool | int | float | None


def _parse_int(text: str, bits_signed: bool) -> int | None:
    """``strconv.ParseInt(text, 0, 64)`` (or ``ParseUint``): a sign (signed only), then a 0x / 0o /
    0b prefix, or a leading 0 for octal, or decimal digits; None when it is no such number or out of range."""
    sign = 1
    body = text
    if bits_signed and body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    lowered = body[:2].lower()
    if lowered in ("0x", "0o", "0b"):
        digits, base = body[2:], {"0x": 16, "0o": 8, "0b": 2}[lowered]
    elif len(body) > 1 and body[0] == "0":
        digits, base = body[1:], 8
    else:
        digits, base = body, 10
    if not digits or not set(digits) <= _DIGITS[base]:
        return None
    value = sign * int(digits, base)
    if bits_signed:
        return value if -_MAX_INT64 - 1 <= value <= _MAX_INT64 else None
    return value if value <= _MAX_UINT64 else None


def _as_json_number(value: float) -> int | float:
    """The number the API server decodes from Go's JSON encoding of ``value``: Go writes a float64
    without exponent below 1e21 (``1.0`` → ``1``), which the API server reads as an integer when
    it has no fraction and fits an int64."""
    if value.is_integer() and abs(value) < 1e21:
        whole = int(value)
        if -_MAX_INT64 - 1 <= whole <= _MAX_INT64:
            return whole
    return value


def resolve(plain: str) -> NotString | str:
    """A plain (unquoted, untagged) scalar as go-yaml v2 resolves it, numbers as the API server reads
    them back from JSON. NaN and infinities are returned as floats (JSON cannot hold them)."""
    if not plain:
        return None
    first = plain[0]
    if first in "yYnNtTfFoO~":
        if plain in _TRUE:
            return True
        if plain in _FALSE:
            return False
        if plain in _NULL:
            return None
        return plain
    if first == ".":
        if plain in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[plain]
        return _as_json_number(float(plain)) if _GO_FLOAT.match(plain) else plain
    if first in "+-" or first.isdigit():
        if plain in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[plain]
        digits = plain.replace("_", "")
        if not digits:
            return plain
        for signed in (True, False):
            number = _parse_int(digits, signed)
            if number is not None:
                return number
        if _YAML_STYLE_FLOAT.match(digits):
            return _as_json_number(float(digits))
        return plain  # go-yaml's own 0b branch parses what ParseInt (base 0) already did, in the same range
    return plain
