"""Go's ``time`` package as Kubernetes types print it: ``time.Parse(time.RFC3339, …)`` printed as
``metav1.Time``/``metav1.MicroTime`` (UTC, whole seconds or microseconds), ``time.ParseDuration``
and ``time.Duration.String``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

__all__ = ["format_duration", "go_time", "parse_duration"]

_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)")


def go_time(s: str, micro: bool = False) -> str:
    """``time.Parse(time.RFC3339, s)`` printed as ``metav1.Time`` (or ``MicroTime``) does."""
    if not _RFC3339.fullmatch(s):
        raise ValueError(f'parsing time "{s}" as "2006-01-02T15:04:05Z07:00": cannot parse "{s}" as "2006"')
    if not micro and _CANONICAL_TIME.fullmatch(s):
        try:  # already printed as Go prints it; the date and time must still exist (Go checks ranges)
            datetime.fromisoformat(s[:-1])
        except ValueError as exc:
            raise ValueError(f'parsing time "{s}": {exc}') from exc
        return s
    frac = ""
    m = re.match(r"(.{19})(\.\d+)?(.*)", s)
    assert m is not None
    head, tail = m.group(1), m.group(3)
    if m.group(2):
        frac = m.group(2)[1:]
    tz = "+00:00" if tail in ("Z", "z") else tail
    try:
        t = datetime.fromisoformat(head.replace("t", "T") + tz)
    except ValueError as exc:
        raise ValueError(f'parsing time "{s}": {exc}') from exc
    out = t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if micro:
        out += "." + (frac + "000000")[:6]
    return out + "Z"


_UNITS: Final[dict[str, int]] = {
    "ns": 1,
    "us": 1000,
    "µs": 1000,
    "μs": 1000,
    "ms": 1000_000,
    "s": 1000_000_000,
    "m": 60 * 1000_000_000,
    "h": 3600 * 1000_000_000,
}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")
_MAX_DURATION = (1 << 63) - 1


def parse_duration(s: str) -> int:
    """``time.ParseDuration``: nanoseconds, or ValueError with Go's message."""
    orig = s
    bad = ValueError(f'time: invalid duration "{orig}"')
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise bad
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None or not m.group(1) or m.group(1) == ".":
            raise bad
        num, unit = m.group(1), m.group(2)
        if not unit:
            raise ValueError(f'time: missing unit in duration "{orig}"')
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{orig}"')
        whole, _, frac = num.partition(".")
        scale = _UNITS[unit]
        value = int(whole or "0") * scale
        if frac:
            value += int(frac) * scale // 10 ** len(frac)
        total += value
        if total > _MAX_DURATION + (1 if neg else 0):
            raise bad
        pos = m.end()
    return -total if neg else total


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
