"""Go ``encoding/json`` driven by the generated Go type tables (:mod:`conversion.gotypes_core`,
and any table registered with :func:`register`).

This module owns four things for a JSON value of a known Go type:

* :func:`view` — the *typed view*: what is left of the value after Go decodes it into the type
  and encodes it again, without the artefacts Go writes regardless of the input. Unknown keys
  are dropped; ``omitempty`` fields at their zero value (``readOnly: false``, ``""``, ``0``,
  empty lists and maps) are dropped; ``omitzero`` fields at their zero value are dropped; a
  non-pointer struct that ends up empty is dropped (Go always writes it, as ``{}``); a pointer
  is kept even when it points at a zero value (``affinity: {}``, ``*bool`` ``false``); a map
  keeps every entry, ``""`` values included; quantities and times are written as Go writes them.
  Members are in Go's order: a struct's fields in declaration order (an embedded struct's
  fields where the embedded field is), a map's keys sorted, an ``interface{}`` value's objects
  sorted (Go marshals them as maps); ``json.RawMessage``-like values keep the order they had.
  Fields without ``omitempty`` keep a zero value when the input had it (Go would write it
  anyway). JSON ``null`` clears pointers, lists and maps and leaves other fields alone.
* :func:`semantic`, :func:`equal`, :func:`is_zero` — ``apiequality.Semantic.DeepEqual``: nil
  and empty lists and maps are equal, value-typed zero fields equal absent ones, pointers to
  zero values are not absent, quantities compare by value.
* :func:`decode_error` — the exact text of the error Go's ``json.Unmarshal`` returns for the
  value (or None): the first type mismatch in document order (``json: cannot unmarshal string
  into Go struct field PodCliqueSetSpec.spec.replicas of type int32``), unless a type with its
  own decoder (quantity, time, duration, int-or-string) fails, which stops decoding at once and
  wins. Field paths name JSON keys from the root and, for promoted fields of an embedded struct,
  the embedded field's Go name (``VolumeSource.csi``), as Go does.
* :func:`merge_override` — ``mergo.Merge(dst, src, mergo.WithOverride)`` (mergo v0.3.16) of two
  typed views: a nil destination pointer takes the source pointer even when it points at a zero
  value (``terminationGracePeriodSeconds: 0``), no zero source value wins anywhere else, and
  ``intstr.IntOrString`` merges field by field, so an integer never replaces a string
  (``port: "http"`` stays) while ``""`` turns a number into ``""``.

Go behaviours reproduced here (all from ``encoding/json`` and apimachinery at the pinned
versions): integers are range-checked against their Go width and a fraction or exponent never
decodes into one — except that an integral float is taken as the integer it is, as the
apiserver re-serialises one before a webhook sees it (:func:`decode_error` refuses it, like
Go); field names match case-insensitively (``encoding/json``; the apiserver has pruned every
other spelling from a live object before a webhook sees it); a ``null`` list element or map
value decodes to the element's zero value; a ``null`` ``resource.Quantity`` is zero (``"0"``)
and a ``null`` ``intstr.IntOrString`` the integer 0; a non-pointer ``metav1.Duration`` rejects
``null`` (``time: invalid duration ""``); ``metav1.Time`` is written in UTC with whole seconds
and its zero value as ``null``; ``metav1.Duration`` is written as ``time.Duration.String``
(``"1m0s"``).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from conversion import gotypes_core
from conversion.quantity import canonical, parse_quantity

__all__ = [
    "GoTypeError",
    "decode_error",
    "define",
    "equal",
    "field_order",
    "is_zero",
    "json_kind",
    "member_is_zero",
    "member_view",
    "merge_override",
    "node",
    "register",
    "semantic",
    "view",
]


class GoTypeError(ValueError):
    """A JSON value does not decode into its Go type (the message is Go's, or close to it)."""


# --------------------------------------------------------------------------- the table registry

_STRUCTS: dict[str, tuple[tuple[str, str, str, str], ...]] = {}
_NAMED: dict[str, str] = {}
_SPECIAL: dict[str, str] = {}
_PACKAGES: dict[str, str] = {}


def register(table: Any) -> None:
    """Add a generated table module (``STRUCTS``, ``NAMED``, ``SPECIAL``, ``PACKAGES``)."""
    _STRUCTS.update(table.STRUCTS)
    _NAMED.update(table.NAMED)
    _SPECIAL.update(table.SPECIAL)
    _PACKAGES.update(table.PACKAGES)


def define(key: str, package: str, fields: tuple[tuple[str, str, str, str], ...]) -> str:
    """Add one struct written by hand in the table format (a Dynamo type holding Kubernetes
    types); ``package`` is its Go package name. Returns ``key``."""
    _STRUCTS[key] = fields
    _PACKAGES.setdefault(key.rpartition(".")[0], package)
    return key


register(gotypes_core)


# --------------------------------------------------------------------------- compiled nodes


class _Mismatch(Exception):
    """A Go ``UnmarshalTypeError``; ``struct``/``path`` are filled in on the way out."""

    def __init__(self, value: str, type_name: str, aborts: bool = False) -> None:
        super().__init__(value)
        self.value = value
        self.type_name = type_name
        self.aborts = aborts
        self.struct: str | None = None
        self.path: list[str] = []

    def text(self) -> str:
        if self.struct is not None or self.path:
            where = f"Go struct field {self.struct or ''}.{'.'.join(self.path)}"
        else:
            where = "Go value"
        return f"json: cannot unmarshal {self.value} into {where} of type {self.type_name}"


class _Abort(Exception):
    """An error from a type's own decoder that is not a type mismatch: decoding stops."""


_REMOVE: Final = object()  # JSON null clears the field
_KEEP: Final = object()  # JSON null leaves the field alone


def json_kind(v: Any) -> str:
    """The JSON type of a decoded value as Go's messages name it (``number``, ``array``…)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _number_text(v: int | float) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return f"{v:.1f}"
    return str(v) if isinstance(v, int) else repr(v)


class _Node:
    """A Go type: how a JSON value decodes into it and what Go writes back."""

    display = ""
    #: what JSON null does to a field of this type
    null: object = _KEEP

    def view(self, v: Any) -> Any:
        raise NotImplementedError

    def null_view(self) -> Any:
        """The typed view of the value ``null`` decodes to (a list element or map value)."""
        return None

    def empty(self, v: Any) -> bool:
        """Go's ``isEmptyValue`` of a decoded value (what ``omitempty`` omits)."""
        return False

    def zero(self, v: Any) -> bool:
        """Go's zero test of a decoded value (what ``omitzero`` omits)."""
        return self.empty(v)

    def sem(self, v: Any) -> Any:
        """Semantic normal form (``Semantic.DeepEqual`` classes)."""
        return v

    def sem_zero(self, n: Any) -> bool:
        """A normal form equal to the type's zero value."""
        return False

    def is_zero(self, v: Any) -> bool:
        """``sem_zero(sem(v))`` without building the normal form."""
        return self.sem_zero(self.sem(v))

    def mismatch(self, v: Any) -> _Mismatch:
        return _Mismatch(json_kind(v), self.display)


class _Scalar(_Node):
    """A string or bool (or a defined type over one): a JSON value of exactly that type."""

    def __init__(self, display: str, json_type: type, zero: Any) -> None:
        self.display = display
        self.json_type = json_type
        self.zero_value = zero

    def view(self, v: Any) -> Any:
        if type(v) is not self.json_type:
            raise self.mismatch(v)
        return v

    def null_view(self) -> Any:
        return self.zero_value

    def empty(self, v: Any) -> bool:
        return bool(v == self.zero_value)

    def sem_zero(self, n: Any) -> bool:
        return bool(n == self.zero_value)


class _Number(_Node):
    """An integer or floating-point type: zero is 0."""

    def null_view(self) -> Any:
        return 0

    def empty(self, v: Any) -> bool:
        return bool(v == 0)

    def sem_zero(self, n: Any) -> bool:
        return bool(n == 0)


class _Int(_Number):
    def __init__(self, display: str, bits: int, signed: bool) -> None:
        self.display = display
        self.lo = -(1 << (bits - 1)) if signed else 0
        self.hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1

    def view(self, v: Any) -> Any:
        t = type(v)
        if t is int:
            if not self.lo <= v <= self.hi:
                raise _Mismatch(f"number {v}", self.display)
            return v
        if t is float:
            if not (v.is_integer() and self.lo <= v <= self.hi):
                raise _Mismatch(f"number {_number_text(v)}", self.display)
            return int(v)
        raise self.mismatch(v)

    def check(self, v: Any) -> None:
        """Go's own test: only an integer literal in range decodes."""
        if type(v) is float:
            raise _Mismatch(f"number {_number_text(v)}", self.display)
        self.view(v)


_FLOAT32_MAX = 3.4028234663852886e38


class _Float(_Number):
    def __init__(self, display: str, bits: int) -> None:
        self.display = display
        self.limit = _FLOAT32_MAX if bits == 32 else math.inf

    def view(self, v: Any) -> Any:
        if type(v) is int or type(v) is float:
            try:
                f = float(v)
            except OverflowError:
                f = math.inf
            if not (math.isfinite(f) and abs(f) <= self.limit):
                raise _Mismatch(f"number {_number_text(v)}", self.display)
            return v
        raise self.mismatch(v)


class _Bytes(_Node):
    display = "[]uint8"
    null = _REMOVE

    def view(self, v: Any) -> Any:
        if type(v) is not str:
            raise self.mismatch(v)
        try:
            base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _Abort("illegal base64 data at input byte 0") from exc
        return v

    def empty(self, v: Any) -> bool:
        return bool(v == "")

    def sem_zero(self, n: Any) -> bool:
        return bool(n == "")


def _copy(v: Any) -> Any:
    if type(v) is dict:
        return {k: _copy(x) for k, x in v.items()}
    if type(v) is list:
        return [_copy(x) for x in v]
    return v


def _sorted_copy(v: Any) -> Any:
    if type(v) is dict:
        return {k: _sorted_copy(v[k]) for k in sorted(v)}
    if type(v) is list:
        return [_sorted_copy(x) for x in v]
    return v


class _Raw(_Node):
    """Opaque JSON (``interface{}``, ``runtime.RawExtension``, ``metav1.FieldsV1``): kept.

    Go writes the raw bytes of a ``json.RawMessage``-like type as they were given (member
    order included), but re-marshals an ``interface{}``, whose objects are maps: their keys
    come out sorted."""

    null = _REMOVE

    def __init__(self, display: str, sort: bool = False) -> None:
        self.display = display
        self.copy = _sorted_copy if sort else _copy

    def view(self, v: Any) -> Any:
        return self.copy(v)

    def sem_zero(self, n: Any) -> bool:
        return n is None


class _Quantity(_Node):
    display = "resource.Quantity"

    def view(self, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            # UnmarshalJSON parses the raw JSON text, which no quantity looks like.
            raise _Abort(_QUANTITY_FORMAT)
        try:
            return canonical(v)
        except ValueError as exc:
            raise _Abort(_QUANTITY_FORMAT) from exc

    def null_view(self) -> Any:
        return "0"

    def sem(self, v: Any) -> Any:
        q = parse_quantity(v)
        u, e = q.unscaled, q.exp10
        if u == 0:
            return ("q", 0, 0)
        while u % 10 == 0:
            u //= 10
            e += 1
        return ("q", u, e)

    def sem_zero(self, n: Any) -> bool:
        return bool(n == ("q", 0, 0))


_QUANTITY_FORMAT: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class _IntOrString(_Node):
    display = "intstr.IntOrString"

    def view(self, v: Any) -> Any:
        if type(v) is str:
            return v
        if type(v) is int or type(v) is float:
            return _INT32.view(v)
        raise _Mismatch(json_kind(v), "int32", aborts=True)

    def check(self, v: Any) -> None:
        if type(v) is float:
            raise _Mismatch(f"number {_number_text(v)}", "int32", aborts=True)
        try:
            self.view(v)
        except _Mismatch as exc:
            exc.aborts = True
            raise

    def null_view(self) -> Any:
        return 0

    def sem_zero(self, n: Any) -> bool:
        return bool(n == 0)


_TIME_ZERO: Final = "0001-01-01T00:00:00Z"
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


class _Time(_Node):
    def __init__(self, micro: bool) -> None:
        self.micro = micro
        self.display = "v1.MicroTime" if micro else "v1.Time"

    def view(self, v: Any) -> Any:
        if type(v) is not str:
            raise _Mismatch(json_kind(v), "string", aborts=True)
        try:
            return go_time(v, self.micro)
        except ValueError as exc:
            raise _Abort(str(exc)) from exc

    def zero(self, v: Any) -> bool:
        return v is None or v.startswith("0001-01-01T00:00:00")

    def sem_zero(self, n: Any) -> bool:
        return n is None


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


class _Duration(_Node):
    display = "v1.Duration"

    def view(self, v: Any) -> Any:
        if type(v) is not str:
            raise _Mismatch(json_kind(v), "string", aborts=True)
        try:
            return format_duration(parse_duration(v))
        except ValueError as exc:
            raise _Abort(str(exc)) from exc

    def null_view(self) -> Any:
        raise _Abort('time: invalid duration ""')

    def sem_zero(self, n: Any) -> bool:
        return bool(n == "0s")


class _Of(_Node):
    """A type built on an element type (pointer, slice): ``null`` sets it to nil."""

    null = _REMOVE
    prefix = ""

    def __init__(self, elem: _Node) -> None:
        self.elem = elem
        self.display = self.prefix + elem.display


class _Ptr(_Of):
    # (a mismatch is reported by the pointed-to type, which decodes the value)
    prefix = "*"

    def view(self, v: Any) -> Any:
        return self.elem.view(v)

    def sem(self, v: Any) -> Any:
        return self.elem.sem(v)


class _Slice(_Of):
    prefix = "[]"

    def view(self, v: Any) -> Any:
        if type(v) is not list:
            raise self.mismatch(v)
        elem = self.elem
        if type(elem) is _Scalar and all(type(x) is elem.json_type for x in v):
            return list(v)
        return [elem.null_view() if x is None else elem.view(x) for x in v]

    def empty(self, v: Any) -> bool:
        return not v

    def sem(self, v: Any) -> Any:
        elem = self.elem
        return [None if x is None else elem.sem(x) for x in v]

    def sem_zero(self, n: Any) -> bool:
        return not n

    def is_zero(self, v: Any) -> bool:
        return not v


class _Map(_Node):
    null = _REMOVE

    def __init__(self, key: _Node, elem: _Node, display: str) -> None:
        self.key = key
        self.elem = elem
        self.display = display

    def view(self, v: Any) -> Any:
        if type(v) is not dict:
            raise self.mismatch(v)
        elem = self.elem
        keys = sorted(v)  # Go writes a map with its keys sorted (by bytes: code point order)
        if type(elem) is _Scalar and all(type(x) is elem.json_type for x in v.values()):
            return {k: v[k] for k in keys}
        return {k: elem.null_view() if (x := v[k]) is None else elem.view(x) for k in keys}

    def empty(self, v: Any) -> bool:
        return not v

    def sem(self, v: Any) -> Any:
        elem = self.elem
        return {k: None if x is None else elem.sem(x) for k, x in v.items()}

    def sem_zero(self, n: Any) -> bool:
        return not n

    def is_zero(self, v: Any) -> bool:
        return not v


class _Field:
    __slots__ = (
        "drop_empty",
        "drop_zero",
        "drop_zero_struct",
        "may_drop",
        "name",
        "node",
        "null",
        "rank",
        "verbatim",
        "via",
    )

    def __init__(self, name: str, node: _Node, options: str, via: tuple[str, ...]) -> None:
        self.name = name
        self.node = node
        opts = options.split(",")
        self.drop_empty = "omitempty" in opts
        self.drop_zero = "omitzero" in opts
        self.drop_zero_struct = isinstance(node, _Struct)
        self.may_drop = self.drop_empty or self.drop_zero or self.drop_zero_struct
        self.null = node.null
        self.via = via  # Go names of the embedded structs a promoted field is reached through
        self.rank = 0  # its place in Go's encoding (set by the struct)
        # the JSON type a value of this field is its own typed view in (no call needed)
        base = node.elem if isinstance(node, _Ptr) else node
        self.verbatim: type | None = base.json_type if isinstance(base, _Scalar) else None


class _Struct(_Node):
    def __init__(self, key: str) -> None:
        self.key = key
        pkg, _, name = key.rpartition(".")
        self.name = name
        self.display = f"{_PACKAGES.get(pkg, pkg)}.{name}"
        self.fields: dict[str, _Field] = {}
        self.folded: dict[str, _Field] = {}
        self.rank: dict[str, int] = {}

    def build(self) -> None:
        for f in _promoted(self.key):
            self.fields[f.name] = f
        self.folded = {k.lower(): f for k, f in self.fields.items()}
        self.rank = {k: i for i, k in enumerate(self.fields)}
        for k, f in self.fields.items():
            f.rank = self.rank[k]

    def field(self, key: str) -> _Field | None:
        f = self.fields.get(key)
        if f is None:
            f = self.folded.get(key.lower())
        return f

    def view(self, v: Any) -> Any:
        if type(v) is not dict:
            raise self.mismatch(v)
        out: dict[str, Any] = {}
        fields = self.fields
        last, disorder = -1, False
        for k, x in v.items():
            f = fields.get(k)
            if f is None:
                f = self.folded.get(k.lower())
                if f is None:
                    continue
            name = f.name
            if x is None:
                if f.null is _REMOVE:
                    out.pop(name, None)
                elif type(f.node) is _Duration:
                    f.node.null_view()  # raises: a non-pointer Duration cannot be null
                continue
            if type(x) is f.verbatim:
                xv = x
            else:
                try:
                    xv = f.node.view(x)
                except _Mismatch as exc:
                    if exc.struct is None:
                        exc.struct = self.name
                    exc.path[:0] = [*f.via, name]
                    raise
            if f.may_drop and (
                (f.drop_empty and f.node.empty(xv))
                or (f.drop_zero and f.node.zero(xv))
                or (f.drop_zero_struct and not xv)
            ):
                out.pop(name, None)
            else:
                if f.rank < last:
                    disorder = True
                last = f.rank
                out[name] = xv
        if not disorder:
            return out
        # Go writes the fields in declaration order (embedded structs' fields where the
        # embedded field is), whatever the order of the input.
        return {k: out[k] for k in sorted(out, key=self.rank.__getitem__)}

    def null_view(self) -> Any:
        return {}

    def zero(self, v: Any) -> bool:
        return not v

    def _members(self, v: dict[str, Any]) -> Iterator[tuple[str, Any, _Node]]:
        """The known, non-null members of a typed view with their types."""
        fields = self.fields
        for k, x in v.items():
            f = fields.get(k)
            if f is not None and x is not None:
                yield k, x, f.node

    def sem(self, v: Any) -> Any:
        out: dict[str, Any] = {}
        for k, x, node in self._members(v):
            n = node.sem(x)
            if type(node) is _Ptr or not node.sem_zero(n):
                out[k] = n
        return out

    def sem_zero(self, n: Any) -> bool:
        return not n

    def is_zero(self, v: Any) -> bool:
        return all(type(node) is not _Ptr and node.is_zero(x) for _, x, node in self._members(v))


def _promoted(key: str) -> list[_Field]:
    """The JSON fields of a struct with embedded structs' fields promoted (Go's rules: the
    shallowest name wins; among equally deep ones a tagged field wins, else none does)."""
    found: dict[str, list[tuple[int, bool, _Field]]] = {}
    order: list[str] = []

    def walk(k: str, depth: int, via: tuple[str, ...]) -> None:
        for json_name, type_expr, options, go_name in _STRUCTS[k]:
            if options == "inline":
                walk(type_expr.lstrip("*"), depth + 1, (*via, go_name))
                continue
            f = _Field(json_name, node(type_expr), options, via)
            if json_name not in found:
                order.append(json_name)
            found.setdefault(json_name, []).append((depth, json_name != go_name, f))

    walk(key, 0, ())
    out: list[_Field] = []
    for name in order:
        cands = found[name]
        depth = min(c[0] for c in cands)
        best = [c for c in cands if c[0] == depth]
        if len(best) > 1:
            best = [c for c in best if c[1]]
        if len(best) == 1:
            out.append(best[0][2])
    return out


_INT32 = _Int("int32", 32, True)
_SCALARS: Final[dict[str, _Node]] = {
    "string": _Scalar("string", str, ""),
    "bool": _Scalar("bool", bool, False),
    "int8": _Int("int8", 8, True),
    "int16": _Int("int16", 16, True),
    "int32": _INT32,
    "int64": _Int("int64", 64, True),
    "int": _Int("int", 64, True),
    "uint8": _Int("uint8", 8, False),
    "uint16": _Int("uint16", 16, False),
    "uint32": _Int("uint32", 32, False),
    "uint64": _Int("uint64", 64, False),
    "uint": _Int("uint", 64, False),
    "uintptr": _Int("uintptr", 64, False),
    "float32": _Float("float32", 32),
    "float64": _Float("float64", 64),
    "bytes": _Bytes(),
    "any": _Raw("interface {}", sort=True),
}
_SPECIAL_NODES: Final = {
    "quantity": _Quantity,
    "intorstring": _IntOrString,
    "duration": _Duration,
}

_NODES: dict[str, _Node] = {}


def _display(key: str) -> str:
    pkg, _, name = key.rpartition(".")
    return f"{_PACKAGES.get(pkg, pkg)}.{name}"


def node(expr: str) -> _Node:
    """The compiled Go type of a table type expression."""
    n = _NODES.get(expr)
    if n is not None:
        return n
    if expr.startswith("*"):
        n = _Ptr(node(expr[1:]))
    elif expr.startswith("[]"):
        n = _Slice(node(expr[2:]))
    elif expr.startswith("map["):
        depth, i = 0, 3
        while True:
            depth += expr[i] == "["
            depth -= expr[i] == "]"
            if depth == 0:
                break
            i += 1
        key, elem = node(expr[4:i]), node(expr[i + 1 :])
        n = _Map(key, elem, f"map[{key.display}]{elem.display}")
    elif expr in _SCALARS:
        n = _SCALARS[expr]
    elif expr in _SPECIAL:
        kind = _SPECIAL[expr]
        if kind in ("time", "microtime"):
            n = _Time(kind == "microtime")
        elif kind == "raw":
            n = _Raw(_display(expr))
        else:
            n = _SPECIAL_NODES[kind]()
    elif expr in _NAMED:
        base = node(_NAMED[expr])
        n = _named(base, _display(expr))
    elif expr in _STRUCTS:
        s = _Struct(expr)
        _NODES[expr] = s  # before its fields: types may refer to themselves
        s.build()
        return s
    else:
        raise KeyError(f"unknown Go type {expr!r}")
    _NODES[expr] = n
    return n


def _named(base: _Node, display: str) -> _Node:
    """A defined type: the underlying type's behaviour under another name."""
    if isinstance(base, _Scalar):
        return _Scalar(display, base.json_type, base.zero_value)
    if isinstance(base, _Int):
        out = _Int(display, 64, True)
        out.lo, out.hi = base.lo, base.hi
        return out
    if isinstance(base, _Float):
        f = _Float(display, 64)
        f.limit = base.limit
        return f
    if isinstance(base, _Map):
        return _Map(base.key, base.elem, display)
    if isinstance(base, _Slice):
        s = _Slice(base.elem)
        s.display = display
        return s
    return base


# --------------------------------------------------------------------------- public functions


def view(expr: str, value: Any) -> Any:
    """The typed view of ``value`` (not null) as a Go ``expr``; raises :class:`GoTypeError`."""
    try:
        return node(expr).view(value)
    except _Mismatch as exc:
        raise GoTypeError(exc.text()) from None
    except _Abort as exc:
        raise GoTypeError(str(exc)) from None


def field_order(struct: str) -> dict[str, int]:
    """The JSON names of the struct ``struct`` mapped to their place in Go's encoding: the
    declaration order, an embedded struct's fields where the embedded field is."""
    n = node(struct)
    assert isinstance(n, _Struct)
    return n.rank


def member_view(struct: str, key: str, value: Any) -> tuple[str, Any] | None:
    """One member ``key: value`` of an object of the struct ``struct``, as :func:`view` would
    keep it: (Go's json name, typed view), or None when the view leaves it out (an unknown
    key, ``null``, an empty ``omitempty`` value, an empty non-pointer struct)."""
    n = node(struct)
    assert isinstance(n, _Struct)
    f = n.field(key)
    if f is None or value is None:
        return None
    try:
        xv = f.node.view(value)
    except _Mismatch as exc:
        if exc.struct is None:
            exc.struct = n.name
        exc.path[:0] = [*f.via, f.name]
        raise GoTypeError(exc.text()) from None
    except _Abort as exc:
        raise GoTypeError(str(exc)) from None
    if (
        (f.drop_empty and f.node.empty(xv))
        or (f.drop_zero and f.node.zero(xv))
        or (f.drop_zero_struct and not xv)
    ):
        return None
    return f.name, xv


def member_is_zero(struct: str, key: str, value: Any) -> bool:
    """The member ``key`` (a typed view) holds its field's zero value (Semantic.DeepEqual)."""
    n = node(struct)
    assert isinstance(n, _Struct)
    f = n.field(key)
    if f is None or value is None:
        return True
    fn = f.node
    return type(fn) is not _Ptr and fn.is_zero(value)


def semantic(expr: str, value: Any) -> Any:
    """Normal form of a typed view under ``Semantic.DeepEqual``."""
    if value is None:
        return None
    return node(expr).sem(value)


def equal(expr: str, a: Any, b: Any) -> bool:
    """``apiequality.Semantic.DeepEqual`` of two typed views (None: nil / absent)."""
    if a == b:
        return True
    n = node(expr)
    sa = None if a is None else n.sem(a)
    sb = None if b is None else n.sem(b)
    if sa is None or sb is None:
        other = sb if sa is None else sa
        return other is None or (type(n) is not _Ptr and n.sem_zero(other))
    return bool(sa == sb)


def is_zero(expr: str, value: Any, *, skip: str = "") -> bool:
    """The typed view equals the type's zero value (``skip``: a struct field left out)."""
    if value is None:
        return True
    n = node(expr)
    if skip and isinstance(value, Mapping):
        value = {k: x for k, x in value.items() if k != skip}
    if type(n) is _Ptr:
        return False
    return n.is_zero(value)


# --------------------------------------------------------------------------- mergo


def _zero_value(v: Any) -> bool:
    return v is None or v is False or v == "" or (type(v) in (int, float) and v == 0) or v == [] or v == {}


def _same(v: Any) -> Any:
    return v


def _intstr_parts(v: Any) -> tuple[int, int, str]:
    return (1, 0, v) if type(v) is str else (0, int(v or 0), "")


def _merge_intstr(dst: Any, src: Any) -> Any:
    """mergo on ``intstr.IntOrString`` merges its three fields one by one: a zero source field
    never wins, so an integer (type 0) cannot replace a string, and ``""`` turns a number into
    the string it had before."""
    dt, di, ds = _intstr_parts(dst)
    st, si, ss = _intstr_parts(src)
    t = st or dt
    return (ss or ds) if t else (si or di)


def merge_override(expr: str, dst: dict[str, Any], src: dict[str, Any], copy: bool = True) -> None:
    """``mergo.Merge(&dst, src, mergo.WithOverride)`` of two typed views of the struct ``expr``.

    A nil destination pointer takes the source pointer whatever it points at (``*int64`` 0,
    an empty struct); otherwise a zero source value never wins, structs and pointed-to structs
    merge field by field, non-empty lists replace, and maps merge key by key with every source
    key winning. Nested destination objects are replaced by merged copies, never edited in
    place; ``copy=False`` also takes source values without copying them.
    """
    n = node(expr)
    assert isinstance(n, _Struct)
    _merge(n, dst, src, _copy if copy else _same)


def _merge(n: _Struct | None, dst: dict[str, Any], src: dict[str, Any], cp: Any) -> None:
    for k, sv in src.items():
        if sv is None:
            continue
        f = n.field(k) if n is not None else None
        dv = dst.get(k)
        fn = f.node if f is not None else None
        if fn is None:
            _merge_untyped(k, dst, dv, sv, cp)
            continue
        if type(fn) is _Ptr:
            if dv is None:
                dst[k] = cp(sv)
                continue
            fn = fn.elem
        if type(fn) is _Struct:
            if type(sv) is dict:
                merged = dict(dv) if type(dv) is dict else {}
                _merge(fn, merged, sv, cp)
                dst[k] = merged
        elif type(fn) is _IntOrString:
            dst[k] = _merge_intstr(dv, sv)
        elif type(fn) is _Map:
            if sv:
                merged = dict(dv) if type(dv) is dict else {}
                for kk, vv in sv.items():
                    merged[kk] = cp(vv)
                dst[k] = merged
        elif type(fn) is _Quantity or type(fn) is _Time:
            dst[k] = cp(sv)  # structs without mergeable fields: the source always wins
        elif not _zero_value(sv):
            dst[k] = cp(sv)


def _merge_untyped(k: str, dst: dict[str, Any], dv: Any, sv: Any, cp: Any) -> None:
    """A key no type describes: nested objects merge, any other non-zero source value wins."""
    if dv is None:
        if not (_zero_value(sv) and type(sv) is not dict):
            dst[k] = cp(sv)
    elif type(sv) is dict:
        merged = dict(dv) if type(dv) is dict else {}
        _merge(None, merged, sv, cp)
        dst[k] = merged
    elif not _zero_value(sv):
        dst[k] = cp(sv)


# --------------------------------------------------------------------------- exact decode errors


class _Check:
    """One ``json.Unmarshal`` run: the first type mismatch, or the first decoder failure."""

    def __init__(self) -> None:
        self.saved: str | None = None
        self.struct: str | None = None
        self.path: list[str] = []

    def fail(self, exc: _Mismatch) -> None:
        exc.struct = self.struct
        exc.path = list(self.path)
        if exc.aborts:
            raise _Abort(exc.text())
        if self.saved is None:
            self.saved = exc.text()

    def value(self, n: _Node, v: Any) -> None:
        if v is None:
            if isinstance(n, _Duration):
                raise _Abort('time: invalid duration ""')
            return
        if isinstance(n, _Ptr):
            self.value(n.elem, v)
        elif isinstance(n, _Struct):
            if type(v) is not dict:
                self.fail(n.mismatch(v))
                return
            outer, depth = self.struct, len(self.path)
            for k, x in v.items():
                f = n.field(k)
                if f is None:
                    continue
                self.struct = n.name
                self.path[depth:] = [*f.via, f.name]
                self.value(f.node, x)
            self.struct = outer
            del self.path[depth:]
        elif isinstance(n, _Slice):
            if type(v) is not list:
                self.fail(n.mismatch(v))
                return
            for x in v:
                if x is None and isinstance(n.elem, _Duration):
                    raise _Abort('time: invalid duration ""')
                self.value(n.elem, x)
        elif isinstance(n, _Map):
            if type(v) is not dict:
                self.fail(n.mismatch(v))
                return
            for x in v.values():
                if x is None and isinstance(n.elem, _Duration):
                    raise _Abort('time: invalid duration ""')
                self.value(n.elem, x)
        else:
            try:
                if isinstance(n, _Int | _IntOrString):
                    n.check(v)
                else:
                    n.view(v)
            except _Mismatch as exc:
                self.fail(exc)
            except _Abort as exc:
                if not isinstance(n, _Bytes):
                    raise
                # a bad base64 string is remembered like a type mismatch, not fatal
                if self.saved is None:
                    self.saved = str(exc)


def decode_error(expr: str, value: Any) -> str | None:
    """Go's ``json.Unmarshal`` error for decoding ``value`` into ``expr`` (``encoding/json``:
    field names match case-insensitively, unknown fields are ignored), or None."""
    check = _Check()
    try:
        check.value(node(expr), value)
    except _Abort as exc:
        return str(exc)
    return check.saved
