"""The leaf Go types of the tables: strings, booleans, numbers, ``[]byte``, opaque JSON, and the
types with their own JSON decoding (``resource.Quantity``, ``intstr.IntOrString``, ``metav1.Time``,
``metav1.MicroTime``, ``metav1.Duration``). :mod:`gocompat.nodes` builds the other types on them.

Go behaviours reproduced here: integers are range-checked against their Go width and a fraction
or exponent never decodes into one — except that an integral float is taken as the integer it
is, as the apiserver re-serialises one before a webhook sees it (:func:`gocompat.decode.decode_error`
refuses it, like Go); a ``null`` ``resource.Quantity`` is zero (``"0"``) and a ``null``
``intstr.IntOrString`` the integer 0; a non-pointer ``metav1.Duration`` rejects ``null`` (``time:
invalid duration ""``); ``metav1.Time`` is written in UTC with whole seconds and its zero value as
``null``; ``metav1.Duration`` is written as ``time.Duration.String`` (``"1m0s"``).
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any, Final

from gocompat.errors import Abort, Mismatch, number_text
from gocompat.gotime import format_duration, go_time, parse_duration
from gocompat.jsonvalue import deep_copy, json_type, sorted_copy
from gocompat.quantity import ERR_FORMAT, canonical, parse_quantity

REMOVE: Final = object()  # JSON null clears the field
KEEP: Final = object()  # JSON null leaves the field alone


class _Node:
    """A Go type: how a JSON value decodes into it and what Go writes back."""

    display = ""
    #: what JSON null does to a field of this type
    null: object = KEEP

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

    def mismatch(self, v: Any) -> Mismatch:
        return Mismatch(json_type(v, go=True), self.display)


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
                raise Mismatch(f"number {v}", self.display)
            return v
        if t is float:
            if not (v.is_integer() and self.lo <= v <= self.hi):
                raise Mismatch(f"number {number_text(v)}", self.display)
            return int(v)
        raise self.mismatch(v)

    def check(self, v: Any) -> None:
        """Go's own test: only an integer literal in range decodes."""
        if type(v) is float:
            raise Mismatch(f"number {number_text(v)}", self.display)
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
                raise Mismatch(f"number {number_text(v)}", self.display)
            return v
        raise self.mismatch(v)


class _Bytes(_Node):
    display = "[]uint8"
    null = REMOVE

    def view(self, v: Any) -> Any:
        if type(v) is not str:
            raise self.mismatch(v)
        try:
            base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise Abort("illegal base64 data at input byte 0") from exc
        return v

    def empty(self, v: Any) -> bool:
        return bool(v == "")

    def sem_zero(self, n: Any) -> bool:
        return bool(n == "")


class _Raw(_Node):
    """Opaque JSON (``interface{}``, ``runtime.RawExtension``, ``metav1.FieldsV1``): kept.

    Go writes the raw bytes of a ``json.RawMessage``-like type as they were given (member
    order included), but re-marshals an ``interface{}``, whose objects are maps: their keys
    come out sorted."""

    null = REMOVE

    def __init__(self, display: str, sort: bool = False) -> None:
        self.display = display
        self.copy = sorted_copy if sort else deep_copy

    def view(self, v: Any) -> Any:
        return self.copy(v)

    def sem_zero(self, n: Any) -> bool:
        return n is None


class _Quantity(_Node):
    display = "resource.Quantity"

    def view(self, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            # UnmarshalJSON parses the raw JSON text, which no quantity looks like.
            raise Abort(ERR_FORMAT)
        try:
            return canonical(v)
        except ValueError as exc:
            raise Abort(str(exc)) from exc

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


class _IntOrString(_Node):
    display = "intstr.IntOrString"

    def view(self, v: Any) -> Any:
        if type(v) is str:
            return v
        if type(v) is int or type(v) is float:
            return _INT32.view(v)
        raise Mismatch(json_type(v, go=True), "int32", aborts=True)

    def check(self, v: Any) -> None:
        if type(v) is float:
            raise Mismatch(f"number {number_text(v)}", "int32", aborts=True)
        try:
            self.view(v)
        except Mismatch as exc:
            exc.aborts = True
            raise

    def null_view(self) -> Any:
        return 0

    def sem_zero(self, n: Any) -> bool:
        return bool(n == 0)


class _Time(_Node):
    def __init__(self, micro: bool) -> None:
        self.micro = micro
        self.display = "v1.MicroTime" if micro else "v1.Time"

    def view(self, v: Any) -> Any:
        if type(v) is not str:
            raise Mismatch(json_type(v, go=True), "string", aborts=True)
        try:
            return go_time(v, self.micro)
        except ValueError as exc:
            raise Abort(str(exc)) from exc

    def zero(self, v: Any) -> bool:
        return v is None or v.startswith("0001-01-01T00:00:00")

    def sem_zero(self, n: Any) -> bool:
        return n is None


class _Duration(_Node):
    display = "v1.Duration"

    def view(self, v: Any) -> Any:
        if type(v) is not str:
            raise Mismatch(json_type(v, go=True), "string", aborts=True)
        try:
            return format_duration(parse_duration(v))
        except ValueError as exc:
            raise Abort(str(exc)) from exc

    def null_view(self) -> Any:
        raise Abort('time: invalid duration ""')

    def sem_zero(self, n: Any) -> bool:
        return bool(n == "0s")


_INT32 = _Int("int32", 32, True)
SCALARS: Final[dict[str, _Node]] = {
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
SPECIAL_NODES: Final = {
    "quantity": _Quantity,
    "intorstring": _IntOrString,
    "duration": _Duration,
}
#: The leaves that parse their JSON value themselves (``UnmarshalJSON``), by the name the type
#: check's skeletons give them (``k``; ``scripts/gen_schemas.py``).
PARSED_NODES: Final[dict[str, _Node]] = {
    "quantity": _Quantity(),
    "time": _Time(False),
    "microtime": _Time(True),
    "duration": _Duration(),
    "bytes": SCALARS["bytes"],
}
