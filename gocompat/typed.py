"""Go-typed JSON for the types the generated tables do not hold (Dynamo's own types): one schema
vocabulary, and its decoders and encoders (:mod:`gocompat.decoding`, :mod:`gocompat.encoding`).

A schema is a :class:`Struct` of :class:`Field` s; a field's kind is a :class:`Struct`, a
:class:`Ptr`, a :class:`ListOf`, a :class:`MapOf`, a :class:`Go` (a type of the generated tables:
``Go("*core/v1.Probe")``) or a scalar kind: ``"string"``, ``"bool"``, ``"int"`` (Go's ``int``:
64 bits), ``"int32"``, ``"int64"``, ``"float"`` (``float64``), ``"quantity"``
(``resource.Quantity``), ``"time"`` (``metav1.Time``), ``"bytes"`` (``[]byte``: base64),
``"any"`` (opaque JSON: ``apiextensionsv1.JSON``, ``runtime.RawExtension``), ``"object"`` (a
Kubernetes object kept opaque but required to be a JSON object), ``"list"`` (an opaque list) and
``"stringmap"`` (``map[string]string``). ``Struct(fields, go=…)`` models a Kubernetes type only
as far as the fields listed: its other members take their types from the tables.

Two codecs read and write JSON through the same schemas:

* **Typed views** (:data:`VIEW`, and :func:`encode` by default): what is left of a value after Go
  decodes and encodes it, kept sparse. Decoding mirrors ``encoding/json``: unknown keys are
  ignored, keys match case-insensitively, JSON ``null`` leaves a field at its zero value (absent),
  an ``omitempty`` scalar at its zero value is absent, collections keep the nil/empty distinction
  (an empty list or map is present), and any type mismatch fails the whole decode with Go's text
  naming the field. A ``Go`` field decodes to its :func:`gocompat.view.view`. Encoding is Go's
  ``json.Marshal`` of the view: an ``omitempty`` field whose value is empty (``""``, ``0``,
  ``false``, an empty list or map) is left out, Kubernetes values are written through their Go
  types, and members come out in Go's order (a struct's fields in declaration order, a map's keys
  sorted by their bytes); opaque JSON keeps its own order, as Go writes a ``json.RawMessage`` as
  the bytes it was given. Decoded opaque values are the input's own (callers copy them).
* **Go values** (``Decoding(values=True, …)``, ``encode(…, values=True)``): the value a Go
  struct holds. A value-typed field at its Go zero value is absent whether or not it is
  ``omitempty`` (pointer, collection and struct fields are kept: ``*bool`` false is set); JSON
  ``null`` clears pointers, collections and opaque JSON and leaves other fields alone; a ``null``
  list element or map value is the element's zero value; ``fold`` chooses case-insensitive names
  and ``strict`` whether a mismatch anywhere fails the decode (else the mismatched member is
  dropped, a list element zeroed); numbers of a ``"float"`` field become ``float64``, times are
  re-printed as ``metav1.Time`` prints them, and decoded values never alias the input. Encoding
  writes what Go writes: ``omitempty`` fields at their zero value (by
  ``apiequality.Semantic.DeepEqual``) are left out, non-``omitempty`` fields the value lacks are
  written with their zero value (``"model":""``, ``"containers":null``), value-typed structs are
  always written (``strip=True``: the v1beta1 root normaliser, which removes one that encodes to
  ``{}``), floats are printed as Go prints a ``float64`` (``3``, not ``3.0``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Union

from gocompat import view as goview

__all__ = [
    "GO_LIVE",
    "GO_PAYLOAD",
    "VIEW",
    "Decoding",
    "Field",
    "Go",
    "Kind",
    "ListOf",
    "MapOf",
    "Ptr",
    "Struct",
    "is_zero",
    "nullable",
    "zero_json",
    "zero_test",
]

Kind = Union[str, "Struct", "Ptr", "ListOf", "MapOf", "Go"]


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    omitempty: bool = True


class Struct:
    """A Go struct: its JSON fields in declaration order. ``go`` names the Kubernetes type of the
    tables whose other fields an object may hold besides the listed ones (declared in it)."""

    __slots__ = ("by_name", "fields", "go", "rank")

    def __init__(self, fields: tuple[Field, ...] | list[Field], go: str | None = None) -> None:
        self.fields = tuple(fields)
        self.go = go
        self.by_name = {f.name: f for f in self.fields}
        #: each field's place in Go's encoding (of the whole Kubernetes type when ``go`` names one)
        self.rank = (
            goview.field_order(go) if go is not None else {f.name: i for i, f in enumerate(self.fields)}
        )

    def __repr__(self) -> str:
        return f"Struct({[f.name for f in self.fields]!r})"


@dataclass(frozen=True)
class Ptr:
    elem: Kind


@dataclass(frozen=True)
class ListOf:
    elem: Kind


@dataclass(frozen=True)
class MapOf:
    elem: Kind


@dataclass(frozen=True)
class Go:
    """A Go type of the generated tables (``"*core/v1.Probe"``, ``"[]core/v1.EnvVar"`` …).
    ``full``: encoded with what Go writes regardless of the input (:mod:`gocompat.marshal`), for
    the fields whose every byte the operator's answers are compared on; else as the typed view."""

    type: str
    full: bool = False


class Decoding(NamedTuple):
    """How JSON is read into a schema."""

    #: Go values (see the module docstring) instead of typed views
    values: bool = False
    #: field names match case-insensitively (``encoding/json``)
    fold: bool = True
    #: any mismatch fails the decode (else the mismatched member is dropped)
    strict: bool = True


#: typed views (payload vocabulary of the DGD and DCD converters)
VIEW = Decoding()
#: Go values from a payload annotation: ``encoding/json`` (names fold, a mismatch fails)
GO_PAYLOAD = Decoding(values=True)
#: Go values from a live object as the apiserver's serializer reads it (exact names, a mismatched
#: member dropped)
GO_LIVE = Decoding(values=True, fold=False, strict=False)


# --------------------------------------------------------------------------- Go values of kinds

# Zero values of scalar kinds, as Go writes them.
_SCALAR_ZERO: dict[str, Any] = {
    "string": "",
    "bool": False,
    "int": 0,
    "int32": 0,
    "int64": 0,
    "float": 0,
    "quantity": "0",
    "bytes": "",
}
_OPAQUE = frozenset(("any", "object", "list", "stringmap"))


def zero_json(kind: Kind) -> Any:
    """The JSON Go writes for the zero value of a non-pointer ``kind`` (Go values)."""
    if isinstance(kind, str) and kind != "bytes":
        return _SCALAR_ZERO.get(kind)
    return None


def nullable(kind: Kind) -> bool:
    """JSON null clears a field of this kind (Go values): pointers, collections, opaque JSON."""
    if isinstance(kind, str):
        return kind in _OPAQUE
    if isinstance(kind, Go):
        return kind.type.startswith(("*", "[]", "map["))
    return isinstance(kind, Ptr | ListOf | MapOf)


@functools.cache
def zero_test(kind: Kind) -> Callable[[Any], bool]:
    """``Semantic.DeepEqual`` with the zero value of ``kind`` (a present pointer is not zero)."""
    if isinstance(kind, str):
        if kind in ("time", "any"):
            return _is_none
        if kind in _OPAQUE:
            return _is_empty
        zero = _SCALAR_ZERO[kind]
        if zero is False:
            return _is_false
        return lambda v: bool(v == zero)
    if isinstance(kind, Ptr):
        return _is_none
    if isinstance(kind, ListOf | MapOf):
        return _is_empty
    if isinstance(kind, Go):
        expr = kind.type
        return lambda v: goview.is_zero(expr, v)
    return _struct_zero(kind)


def _is_none(v: Any) -> bool:
    return v is None


def _is_empty(v: Any) -> bool:
    return not v


def _is_false(v: Any) -> bool:
    return v is False


def _struct_zero(schema: Struct) -> Callable[[Any], bool]:
    fields, go = schema.by_name, schema.go

    def struct_zero(v: Any) -> bool:
        for k, x in v.items():
            f = fields.get(k)
            if f is None:
                if go is not None and not goview.member_is_zero(go, k, x):
                    return False
            elif isinstance(f.kind, Ptr) or not zero_test(f.kind)(x):
                return False
        return True

    return struct_zero


def is_zero(value: Any, kind: Kind) -> bool:
    """``apiequality.Semantic.DeepEqual(value, zero)`` of a Go value (None: nil): nil and empty
    collections are equal, a present pointer is never zero."""
    return value is None or zero_test(kind)(value)
