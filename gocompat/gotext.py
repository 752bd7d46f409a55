"""Go's text: ``strconv.Quote`` (``%q``), ``%v`` of a float64, ``encoding/json``'s floats and
escapes."""

from __future__ import annotations

import math
import re
from typing import Final

__all__ = ["go_format_float", "go_json_float", "go_json_text", "go_quote"]

_GO_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def _go_printable(ch: str) -> bool:
    """Approximates Go's ``strconv.IsPrint`` (letters, marks, numbers, punctuation, symbols, ASCII space)."""
    return ch == " " or ch.isprintable()


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote`` (the ``%q`` verb on strings)."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
            continue
        if _go_printable(ch):
            out.append(ch)
            continue
        cp = ord(ch)
        if 0xD800 <= cp <= 0xDFFF:
            out.append("\\ufffd")  # invalid UTF-8 / lone surrogate → U+FFFD
        elif cp < 0x80:
            out.append(f"\\x{cp:02x}")
        elif cp < 0x10000:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def _shortest(f: float) -> tuple[str, int]:
    """The shortest decimal digits that read back as ``abs(f)`` (not zero, finite), and the
    place of the decimal point: ``0.<digits> * 10**dp``, as Go's ``decimalSlice``."""
    mantissa, _, exp = repr(abs(f)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    dp = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    dp -= len(digits) - len(stripped)
    return stripped.rstrip("0"), dp


def _fmt_e(sign: str, digits: str, dp: int) -> str:
    """``strconv``'s ``%e`` of the shortest digits: d.ddde±XX (two exponent digits at least)."""
    exp = dp - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _fmt_f(sign: str, digits: str, dp: int) -> str:
    """``strconv``'s ``%f`` of the shortest digits: no exponent, as many fraction digits as needed."""
    if dp <= 0:
        return f"{sign}0.{'0' * -dp}{digits}"
    if len(digits) <= dp:
        return f"{sign}{digits}{'0' * (dp - len(digits))}"
    return f"{sign}{digits[:dp]}.{digits[dp:]}"


def go_format_float(f: float) -> str:
    """Go's ``%v`` for float64 (``strconv.FormatFloat(f, 'g', -1, 64)``): the shortest digits,
    in exponent form when the exponent is below -4 or 6 and above (``1e+06``, ``1.5e-05``)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return f"{sign}0"
    digits, dp = _shortest(f)
    if dp - 1 < -4 or dp - 1 >= 6:
        return _fmt_e(sign, digits, dp)
    return _fmt_f(sign, digits, dp)


def go_json_float(f: float) -> str:
    """Go ``encoding/json`` float64 formatting (ES6 style): the shortest digits without an exponent,
    in exponent form below 1e-6 and from 1e21 (one exponent digit at least: ``1e-7``, ``1e+21``)."""
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return f"{sign}0"
    digits, dp = _shortest(f)
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        text = _fmt_e(sign, digits, dp)
        if text[-4:-1] == "e-0":  # e-07 -> e-7, as Go cleans it up
            text = text[:-2] + text[-1]
        return text
    return _fmt_f(sign, digits, dp)


_JSON_ESCAPED = re.compile("[<>&\u2028\u2029]")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json_text(text: str) -> str:
    """Compact JSON text as Go's ``json.Marshal`` writes it: ``<``, ``>``, ``&``, U+2028 and
    U+2029 are escaped (``\\u003c``, ``\\u003e``, ``\\u0026``, ``\\u2028``, ``\\u2029``), raw JSON
    values included. Outside strings JSON text holds none of them, so every one is replaced.
    A number written with an exponent (the encoder's form for a float64 past the integers it
    writes, ``1.8446744073709552e19``) is written as Go writes the float64
    (``18446744073709552000``, :func:`go_json_float`)."""
    if _may_hold_exponent(text):
        text = _STRING_OR_EXPONENT.sub(_go_exponent, text)
    if not _needs_escapes(text):
        return text
    return _JSON_ESCAPED.sub(lambda m: _JSON_ESCAPES[m.group()], text)


# Every payload annotation a conversion writes passes the two screens below, most of them
# neither: they are substring searches in C (a regular expression's scan of a payload took about
# 20 ns a character, more than the rest of its writing).


def _needs_escapes(text: str) -> bool:
    """Whether ``text`` holds a character ``json.Marshal`` escapes (:data:`_JSON_ESCAPED`)."""
    return "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text


#: Every ASCII digit as ``0``, the other bytes kept.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _may_hold_exponent(text: str) -> bool:
    """Whether an ASCII digit is followed by ``e`` or ``E`` in ``text``: where a number of JSON
    text may have an exponent (a character of a string as well, which the rewrite leaves as it
    is). In UTF-8 an ASCII byte is always that character."""
    marked = text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ZERO)
    return b"0e" in marked or b"0E" in marked


_STRING_OR_EXPONENT = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?[eE][+-]?\d+')


def _go_exponent(match: re.Match[str]) -> str:
    token = match.group()
    return token if token[0] == '"' else go_json_float(float(token))
