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


def go_format_float(f: float) -> str:
    """Go's ``%v`` for float64: shortest repr, exponent form when exp < -4 or exp >= 21."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    r = repr(f)
    mantissa, _, exp_s = r.partition("e")
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    int_part, _, frac = mantissa.partition(".")
    exp = int(exp_s) if exp_s else 0
    digits = (int_part + frac).lstrip("0")
    # decimal exponent of the leading digit
    if int_part.strip("0"):
        lead = len(int_part.lstrip("0")) - 1 + exp
    else:
        lead = -(len(frac) - len(frac.lstrip("0"))) - 1 + exp
    digits = digits.rstrip("0") or "0"
    if lead < -4 or lead >= 21:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        e_sign = "-" if lead < 0 else "+"
        return f"{sign}{m}e{e_sign}{abs(lead):02d}"
    if lead < 0:
        return f"{sign}0.{'0' * (-lead - 1)}{digits}"
    if len(digits) <= lead + 1:
        return f"{sign}{digits}{'0' * (lead + 1 - len(digits))}"
    return f"{sign}{digits[: lead + 1]}.{digits[lead + 1 :]}"


def go_json_float(f: float) -> str:
    """Go ``encoding/json`` float64 formatting (ES6 style)."""
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        r = repr(f)
        mant, _, exp = r.partition("e")
        if not exp:
            return go_format_float(f)
        e = int(exp)
        return f"{mant}e{'-' if e < 0 else '+'}{abs(e)}"
    return go_format_float(f)


_JSON_ESCAPED = re.compile("[<>&\u2028\u2029]")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json_text(text: str) -> str:
    """Compact JSON text as Go's ``json.Marshal`` writes it: ``<``, ``>``, ``&``, U+2028 and
    U+2029 are escaped (``\\u003c``, ``\\u003e``, ``\\u0026``, ``\\u2028``, ``\\u2029``), raw JSON
    values included. Outside strings JSON text holds none of them, so every one is replaced."""
    if _JSON_ESCAPED.search(text) is None:
        return text
    return _JSON_ESCAPED.sub(lambda m: _JSON_ESCAPES[m.group()], text)
