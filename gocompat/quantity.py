"""Kubernetes ``resource.Quantity`` parsing and canonical serialisation.

Reproduces k8s.io/apimachinery ``ParseQuantity`` + ``MarshalJSON`` exactly, including the two
behaviours that surprise readers:

* A string that the fast int64 path already considers canonical is *kept verbatim*
  (apimachinery caches the input string): ``"+1"`` stays ``"+1"``, ``"05"`` stays ``"05"``,
  ``"1.500k"`` stays ``"1.500k"``, ``"5."`` stays ``"5."``.
* A DecimalSI value whose canonical exponent has no SI suffix (above ``E``) is written without
  one: ``"1000E"`` -> ``"1"`` (apimachinery's suffix lookup fails and its error is ignored).

An invalid quantity raises ValueError with apimachinery's own error text: :data:`ERR_FORMAT`
(the text does not have the form of a quantity), :data:`ERR_SUFFIX` (an unknown suffix) or
:data:`ERR_NUMERIC` (no number before the suffix). ``Quantity.UnmarshalJSON`` returns that error
as it is, so it is also the decode error of a quantity field.

Values are kept as an exact ``(unscaled, exp10)`` pair so that huge exponents never expand.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = ["ERR_FORMAT", "ERR_NUMERIC", "ERR_SUFFIX", "Quantity", "canonical", "parse_quantity"]

ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_SUFFIX = "unable to parse quantity's suffix"
ERR_NUMERIC = "unable to parse numeric part of quantity"

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

_DEC_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DEC_BY_EXP: dict[int, str] = {v: k for k, v in _DEC_SUFFIXES.items()}
_BIN_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BIN_BY_EXP: dict[int, str] = {v: k for k, v in _BIN_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_MAX_INT64 = (1 << 63) - 1
_MAX_INT64_FACTORS = 18
_NANO = -9


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact quantity: ``unscaled * 10**exp10`` plus its format and cached string."""

    unscaled: int
    exp10: int
    format: Format
    cached: str | None = None

    def is_zero(self) -> bool:
        return self.unscaled == 0

    def __str__(self) -> str:
        return self.cached if self.cached is not None else _canonical_string(self)


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """Split ``s`` into (positive, value, num, denom, suffix) like apimachinery's scanner."""
    positive = True
    pos = 0
    end = len(s)
    if pos < end and s[0] in "+-":
        positive = s[0] != "-"
        pos += 1
    # strip leading zeros
    while True:
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] != "0":
            break
        pos += 1
    start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    num = s[start:pos]
    if pos >= end:
        return positive, s, num or "0", "", ""
    if not num:
        num = "0"
    denom = ""
    if s[pos] == ".":
        pos += 1
        dstart = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[dstart:pos]
        if pos >= end:
            return positive, s, num, denom, ""
    value = s[:pos]
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, s[suffix_start:]
    if s[pos] in "+-":
        pos += 1
    while pos < end:
        if s[pos] not in _DIGITS:
            raise ValueError(ERR_FORMAT)
        pos += 1
    return positive, value, num, denom, s[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        body = suffix[1:]
        digits = body[1:] if body[0] in "+-" else body
        if not digits or any(c not in _DIGITS for c in digits):
            raise ValueError(ERR_SUFFIX)
        parsed = int(body)
        if parsed > _MAX_INT64 or parsed < -_MAX_INT64 - 1:
            raise ValueError(ERR_SUFFIX)
        # Go converts the parsed int64 exponent to int32 (wrapping).
        exp = ((parsed + (1 << 31)) % (1 << 32)) - (1 << 31)
        return 10, exp, "DecimalExponent"
    raise ValueError(ERR_SUFFIX)


def _parse_decimal(value: str) -> tuple[int, int]:
    """Parse ``[+-]digits[.digits]`` into (unscaled, exp10) like inf.Dec.SetString."""
    sign = 1
    body = value
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    whole, _, frac = body.partition(".")
    digits = whole + frac
    if not digits or any(c not in _DIGITS for c in digits):
        raise ValueError(ERR_NUMERIC)
    return sign * int(digits), -len(frac)


def _round_up_to_nano(unscaled: int, exp10: int) -> tuple[int, int]:
    """Round away from zero to a multiple of 1e-9 (inf.RoundUp at scale 9)."""
    if unscaled == 0 or exp10 >= _NANO:
        return unscaled, exp10
    shift = _NANO - exp10
    mag = abs(unscaled)
    sign = -1 if unscaled < 0 else 1
    if shift > len(str(mag)) + 1:
        return sign, _NANO
    q, r = divmod(mag, 10**shift)
    if r:
        q += 1
    return sign * q, _NANO


def parse_quantity(s: str) -> Quantity:
    """Parse ``s`` exactly like ``resource.ParseQuantity``; raise ValueError when invalid."""
    if not isinstance(s, str):
        raise ValueError(f"quantity must be a string, got {type(s).__name__}")
    if not s:
        raise ValueError(ERR_FORMAT)
    if s == "0":
        return Quantity(0, 0, "DecimalSI", "0")
    positive, value, num, denom, suf = _scan(s)
    base, exponent, fmt = _interpret(suf)

    if fmt == "BinarySI":
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - (exponent * 3) // 10 - 1
        else:
            mantissa = 1
            precision = -1
        scale = 0
    else:
        mantissa = 1
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))

    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            ivalue = int(shifted)
            result = ivalue * mantissa
            if result <= _MAX_INT64:
                if not positive:
                    result = -result
                # The fast path keeps the input string when it is already "canonical".
                if fmt == "BinarySI":
                    if exponent % 10 == 0 and (ivalue & 0x07) != 0:
                        return Quantity(result, scale, fmt, s)
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    return Quantity(result, scale, fmt, s)
                return Quantity(result, scale, fmt)

    unscaled, exp10 = _parse_decimal(value)
    if base == 10:
        exp10 += exponent
    else:
        unscaled *= 1 << exponent
    negative = unscaled < 0
    mag = -unscaled if negative else unscaled
    mag, exp10 = _round_up_to_nano(mag, exp10)
    if fmt == "BinarySI":
        if _as_fraction_gt(mag, exp10, _MAX_INT64):
            mag, exp10 = _MAX_INT64, 0
        if mag > 0 and _lt_one(mag, exp10):
            fmt = "DecimalSI"
    return Quantity(-mag if negative else mag, exp10, fmt)


def _pow10(n: int) -> int:
    """``10**n`` for ``n >= 0`` as an int."""
    return int(10**n)


def _as_fraction_gt(mag: int, exp10: int, bound: int) -> bool:
    """``mag * 10**exp10 > bound`` for non-negative ``mag``."""
    if exp10 >= 0:
        return mag * _pow10(exp10) > bound
    return mag > bound * _pow10(-exp10)


def _lt_one(mag: int, exp10: int) -> bool:
    if exp10 >= 0:
        return mag < 1
    return mag < _pow10(-exp10)


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    neg = value < 0
    mag = -value if neg else value
    while mag >= base and mag % base == 0:
        mag //= base
        times += 1
    return (-mag if neg else mag), times


def _canonical_string(q: Quantity) -> str:
    if q.unscaled == 0:
        return "0"
    fmt: Format = q.format
    if fmt == "BinarySI":
        # BinarySI is only used for integral values with magnitude >= 1024.
        if q.exp10 >= 0:
            integral: int | None = q.unscaled * 10**q.exp10
        else:
            div = 10 ** (-q.exp10)
            integral = q.unscaled // div if q.unscaled % div == 0 else None
        if integral is None or -1024 < integral < 1024:
            fmt = "DecimalSI"
        else:
            amount, times = _remove_factors(integral, 1024)
            return f"{amount}{_BIN_BY_EXP.get(times * 10, '')}"
    amount, times = _remove_factors(q.unscaled, 10)
    exponent = q.exp10 + times
    rem = exponent % 3
    if rem:
        amount *= 10**rem
        exponent -= rem
    if fmt == "DecimalExponent":
        return f"{amount}" if exponent == 0 else f"{amount}e{exponent}"
    # DecimalSI: an exponent without an SI suffix is written without one (see the module's notes).
    return f"{amount}{_DEC_BY_EXP.get(exponent, '')}"


@lru_cache(maxsize=4096)
def _canonical_text(text: str) -> str:
    return str(parse_quantity(text))


def canonical(s: str | int | float) -> str:
    """The string apimachinery writes for a quantity given as ``s`` (JSON string or number).

    Mirrors ``Quantity.UnmarshalJSON`` followed by ``MarshalJSON``: surrounding whitespace is
    trimmed, numbers are read from their JSON text. Raises ValueError for invalid quantities.
    """
    if isinstance(s, bool):
        raise ValueError("quantity must be a string or a number")
    if isinstance(s, int):
        text = str(s)
    elif isinstance(s, float):
        text = repr(s)
        if text in ("inf", "-inf", "nan"):
            raise ValueError(f"invalid quantity {text}")
    elif isinstance(s, str):
        text = s.strip(" \t\n\r\v\f")
    else:
        raise ValueError(f"quantity must be a string or a number, got {type(s).__name__}")
    return _canonical_text(text)
