"""Go's ``time`` package as Kubernetes types print it: ``time.Parse(time.RFC3339, …)`` printed as
``metav1.Time``/``metav1.MicroTime`` (UTC, whole seconds or microseconds), ``time.ParseDuration``
and ``time.Duration.String``."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["format_duration", "go_time", "parse_duration"]

# The layouts metav1.Time and metav1.MicroTime parse and print with (time.RFC3339, RFC3339Micro).
_RFC3339: Final = b"2006-01-02T15:04:05Z07:00"
_RFC3339_MICRO: Final = b"2006-01-02T15:04:05.000000Z07:00"
# A time as metav1.Time prints it (UTC, whole seconds): read back as itself when its values exist.
_PRINTED: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def _quote(b: bytes) -> str:
    """The time package's ``quote``: a byte outside printable ASCII as ``\\xhh``, ``"`` and ``\\``
    escaped."""
    out = ['"']
    for c in b:
        if c >= 0x80 or c < 0x20:
            out.append(f"\\x{c:02x}")
        elif c == 0x22 or c == 0x5C:
            out.append("\\" + chr(c))
        else:
            out.append(chr(c))
    out.append('"')
    return "".join(out)


def _cannot(value: bytes, layout: bytes, value_elem: bytes, layout_elem: bytes) -> ValueError:
    """``time.ParseError`` naming the element of the layout the rest of the value is not."""
    return ValueError(
        f"parsing time {_quote(value)} as {_quote(layout)}: cannot parse {_quote(value_elem)} as {_quote(layout_elem)}"
    )


def _parse_error(value: bytes, message: str) -> ValueError:
    """``time.ParseError`` with a message (a value out of range, extra text)."""
    return ValueError(f"parsing time {_quote(value)}{message}")


def _digit(b: bytes, i: int) -> bool:
    return i < len(b) and 0x30 <= b[i] <= 0x39


def _getnum(b: bytes, fixed: bool) -> int:
    """``getnum``: one or two leading digits (two when ``fixed``); -1 when there are none."""
    if not _digit(b, 0):
        return -1
    if not _digit(b, 1):
        return -1 if fixed else b[0] - 0x30
    return (b[0] - 0x30) * 10 + b[1] - 0x30


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


_SCALE: Final[tuple[int, ...]] = tuple(
    int(10 ** (10 - n)) for n in range(11)
)  # by bytes read, the separator included


def _nanoseconds(b: bytes, n: int) -> int:
    """``parseNanoseconds``: the nanoseconds of ``b[:n]`` (a separator, then digits; more than
    nine are dropped); -1 when they are not digits (a sign is read, as Go's ``atoi`` does),
    -2 when negative."""
    if b[0] not in b".,":
        return -1
    digits = b[1 : min(n, 10)]
    neg = False
    if digits[:1] in (b"-", b"+"):
        neg = digits[:1] == b"-"
        digits = digits[1:]
    if any(not 0x30 <= c <= 0x39 for c in digits):
        return -1
    ns = int(digits) if digits else 0
    if neg and ns:
        return -2
    return ns * _SCALE[min(n, 10)]


def go_time(s: str, micro: bool = False) -> str:
    """``time.Parse(time.RFC3339, s)`` printed as ``metav1.Time`` does (UTC, whole seconds), or
    with ``micro`` ``time.Parse(RFC3339Micro, s)`` printed as ``metav1.MicroTime`` does; raises
    ValueError with Go's message.

    Go's general parser, element by element: four digits of year, ``-``, two of month, ``-``, two
    of day, ``T``, one or two of hour, ``:``, two of minute, ``:``, two of second, a fraction after
    ``.`` or ``,`` (any number of digits; exactly six for MicroTime), then ``Z`` or ``±hh:mm``
    (hours up to 24, minutes up to 60, as Go allows), and nothing after. The day is checked
    against its month last."""
    if not micro and len(s) == 20 and _PRINTED.fullmatch(s):
        year, month, day = int(s[:4]), int(s[5:7]), int(s[8:10])
        clock_ok = s[11:13] < "24" and s[14:16] < "60" and s[17:19] < "60"
        if clock_ok and 1 <= month <= 12 and 1 <= day <= _days_in(month, year):
            return s
    whole = s.encode("utf-8", "surrogatepass")
    layout = _RFC3339_MICRO if micro else _RFC3339
    v = whole

    def cannot(elem: bytes, at: bytes) -> ValueError:
        return _cannot(whole, layout, at, elem)

    def out_of_range(what: str) -> ValueError:
        return _parse_error(whole, f": {what} out of range")

    def literal(c: bytes, at: bytes) -> bytes:
        if at[:1] != c:
            raise cannot(c, at)
        return at[1:]

    def number(
        elem: bytes, at: bytes, fixed: bool, what: str = "", lo: int = 0, hi: int = 0
    ) -> tuple[int, bytes]:
        """The element's number (``what`` and its bounds: checked at once), and the rest."""
        n = _getnum(at, fixed)
        if n < 0:
            raise cannot(elem, at)
        if what and not lo <= n <= hi:
            raise out_of_range(what)
        return n, at[2 if _digit(at, 1) else 1 :]

    if len(v) < 4 or any(not 0x30 <= c <= 0x39 for c in v[:4]):
        raise cannot(b"2006", v)
    year = int(v[:4])
    month, v = number(b"01", literal(b"-", v[4:]), True, "month", 1, 12)
    day, v = number(b"02", literal(b"-", v), True)  # checked against the month at the end
    hour, v = number(b"15", literal(b"T", v), False, "hour", 0, 23)
    minute, v = number(b"04", literal(b":", v), True, "minute", 0, 59)
    second, v = number(b"05", literal(b":", v), True, "second", 0, 59)
    nsec = 0
    if micro:
        if len(v) < 7:
            raise cannot(b".000000", v)
        nsec = _nanoseconds(v, 7)
        if nsec == -2:
            raise out_of_range("fractional second")
        if nsec < 0:
            raise cannot(b".000000", v)
        v = v[7:]
    elif len(v) >= 2 and v[0] in b".," and _digit(v, 1):
        n = 2
        while _digit(v, n):
            n += 1
        nsec = _nanoseconds(v, n)
        v = v[n:]
    offset = 0
    if v[:1] == b"Z":
        v = v[1:]
    else:
        if len(v) < 6 or v[3] != 0x3A:
            raise cannot(b"Z07:00", v)
        hh = _getnum(v[1:3], True)
        mm = _getnum(v[4:6], True) if hh >= 0 else 0
        bad = hh < 0 or mm < 0 or v[0] not in b"+-"
        hh, mm = max(hh, 0), max(mm, 0)
        # Go allows offsets of 24 hours or 60 minutes; past them the minute is named before the hour.
        if mm > 60:
            raise out_of_range("time zone offset minute")
        if hh > 24:
            raise out_of_range("time zone offset hour")
        if bad:
            raise cannot(b"Z07:00", v)
        offset = (hh * 60 + mm) * 60 * (1 if v[0] == 0x2B else -1)
        v = v[6:]
    if v:
        raise _parse_error(whole, f": extra text: {_quote(v)}")
    if day < 1 or day > _days_in(month, year):
        raise out_of_range("day")
    secs = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    days, rem = divmod(secs, 86400)
    y, m, d = _civil_from_days(days)
    year_text = f"-{-y:04d}" if y < 0 else f"{y:04d}"
    out = f"{year_text}-{m:02d}-{d:02d}T{rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}"
    if micro:
        out += f".{nsec // 1000:06d}"
    return out + "Z"


_UNITS: Final[dict[bytes, int]] = {
    b"ns": 1,
    b"us": 1000,
    "µs".encode(): 1000,  # U+00B5 micro sign
    "μs".encode(): 1000,  # U+03BC Greek mu
    b"ms": 1000_000,
    b"s": 1000_000_000,
    b"m": 60 * 1000_000_000,
    b"h": 3600 * 1000_000_000,
}
_OVERFLOW: Final = 1 << 63


def _leading_int(b: bytes) -> tuple[int, bytes] | None:
    """``leadingInt``: the leading digits' value and the rest; None past 1<<63."""
    x = 0
    i = 0
    while i < len(b) and 0x30 <= b[i] <= 0x39:
        if x > _OVERFLOW // 10:
            return None
        x = x * 10 + b[i] - 0x30
        if x > _OVERFLOW:
            return None
        i += 1
    return x, b[i:]


def _leading_fraction(b: bytes) -> tuple[int, float, bytes]:
    """``leadingFraction``: the digits' value and scale (precision stops short of overflow)."""
    x, scale, i, overflow = 0, 1.0, 0, False
    while i < len(b) and 0x30 <= b[i] <= 0x39:
        if not overflow:
            y = x * 10 + b[i] - 0x30
            if x > (_OVERFLOW - 1) // 10 or y > _OVERFLOW:
                overflow = True
            else:
                x, scale = y, scale * 10
        i += 1
    return x, scale, b[i:]


def parse_duration(s: str) -> int:
    """``time.ParseDuration``: nanoseconds, or ValueError with Go's message (the text quoted as
    Go quotes it, a byte outside printable ASCII as ``\\xhh``)."""
    orig = s.encode("utf-8", "surrogatepass")

    def error(message: str) -> ValueError:
        return ValueError(f"time: {message} {_quote(orig)}")

    b = orig
    neg = False
    if b[:1] in (b"-", b"+"):
        neg = b[:1] == b"-"
        b = b[1:]
    if b == b"0":
        return 0
    if not b:
        raise error("invalid duration")
    d = 0
    while b:
        if not (b[0] == 0x2E or 0x30 <= b[0] <= 0x39):
            raise error("invalid duration")
        lead = _leading_int(b)
        if lead is None:
            raise error("invalid duration")
        v, rest = lead
        pre = len(rest) != len(b)
        b = rest
        f, scale, post = 0, 1.0, False
        if b[:1] == b".":
            b = b[1:]
            f, scale, rest = _leading_fraction(b)
            post = len(rest) != len(b)
            b = rest
        if not pre and not post:
            raise error("invalid duration")
        i = 0
        while i < len(b) and not (b[i] == 0x2E or 0x30 <= b[i] <= 0x39):
            i += 1
        if i == 0:
            raise error("missing unit in duration")
        unit_text, b = b[:i], b[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise error(f"unknown unit {_quote(unit_text)} in duration")
        if v > _OVERFLOW // unit:
            raise error("invalid duration")
        v *= unit
        if f > 0:
            # Go adds the fraction in float64 (nanosecond-accurate up to an hour's fraction).
            v += int(float(f) * (float(unit) / scale))
            if v > _OVERFLOW:
                raise error("invalid duration")
        d += v
        if d > _OVERFLOW:
            raise error("invalid duration")
    if neg:
        return -d
    if d > _OVERFLOW - 1:
        raise error("invalid duration")
    return d


def format_duration(ns: int) -> str:
    """``time.Duration.String``."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 1000_000_000:
        for unit, size in (("ns", 1), ("µs", 1000), ("ms", 1000_000)):
            if u < size * 1000:
                return sign + _fraction(u, size) + unit
    secs, rem = divmod(u, 1000_000_000)
    h, secs = divmod(secs, 3600)
    m, secs = divmod(secs, 60)
    out = f"{secs}"
    if rem:
        out += "." + f"{rem:09d}".rstrip("0")
    out += "s"
    if h or m:
        out = f"{m}m" + out
    if h:
        out = f"{h}h" + out
    return sign + out


def _fraction(u: int, size: int) -> str:
    whole, rem = divmod(u, size)
    if not rem:
        return str(whole)
    width = len(str(size)) - 1
    return f"{whole}." + f"{rem:0{width}d}".rstrip("0")
