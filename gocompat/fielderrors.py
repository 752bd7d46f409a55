"""Field paths, field errors and their aggregation, rendered exactly as Kubernetes does.

The rendering follows k8s.io/apimachinery (``util/validation/field`` and
``api/errors.NewInvalid``) byte for byte, because clients and tests match on the texts:

* a path renders as ``spec.components[0].podTemplate.metadata.annotations[key]``;
* an error renders as ``<path>: <body>`` where the body depends on the error type;
* bad values render as Go would print them: strings ``%q``-quoted, numbers and booleans
  bare, ``nil`` as ``null``, anything else as compact JSON (Go ``encoding/json``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from domain.admission import Decision, JSONObject
from gocompat.gotext import go_format_float, go_json_float, go_json_text, go_quote

__all__ = [
    "OMIT",
    "ErrorType",
    "FieldError",
    "GoJSON",
    "Path",
    "aggregate_message",
    "duplicate",
    "forbidden",
    "invalid",
    "invalid_decision",
    "not_supported",
    "render_value",
    "required",
    "to_decision",
]


# How a path's part is joined to its parent's text.
_CHILD: Final = 0  # ".name" (no dot after an empty path)
_INDEX: Final = 1  # "[i]"
_KEY: Final = 2  # "[k]"


class Path:
    """An immutable field path (Go ``field.Path``).

    A path is built for every value a rule looks at, and printed only for the few in an error:
    a child keeps its parent and its own part, and its text is joined on first use."""

    __slots__ = ("_parent", "_part", "_sep", "_text")

    def __init__(self, root: str = "", *more: str) -> None:
        text = root
        for name in more:
            text = f"{text}.{name}" if text else name
        self._parent: Path | None = None
        self._part: str | int = ""
        self._sep = 0
        self._text: str | None = text

    @staticmethod
    def _below(parent: Path, part: str | int, sep: int) -> Path:
        p = Path()
        p._parent = parent
        p._part = part
        p._sep = sep
        p._text = None
        return p

    def child(self, name: str, *more: str) -> Path:
        return Path._below(self, ".".join((name, *more)) if more else name, _CHILD)

    def index(self, i: int) -> Path:
        return Path._below(self, i, _INDEX)

    def key(self, k: str) -> Path:
        # Map keys are rendered without quoting, like Go's field.Path.Key.
        return Path._below(self, k, _KEY)

    def __str__(self) -> str:
        text = self._text
        if text is None:
            parent = self._parent
            assert parent is not None
            above = str(parent)
            if self._sep == _CHILD:
                text = f"{above}.{self._part}" if above else str(self._part)
            else:
                text = f"{above}[{self._part}]"
            self._text = text
        return text

    def __repr__(self) -> str:
        return f"Path({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))


class ErrorType(Enum):
    """Field error types: value = (text shown in messages, cause reason)."""

    NOT_FOUND = ("Not found", "FieldValueNotFound")
    REQUIRED = ("Required value", "FieldValueRequired")
    DUPLICATE = ("Duplicate value", "FieldValueDuplicate")
    INVALID = ("Invalid value", "FieldValueInvalid")
    NOT_SUPPORTED = ("Unsupported value", "FieldValueNotSupported")
    FORBIDDEN = ("Forbidden", "FieldValueForbidden")
    TOO_LONG = ("Too long", "FieldValueTooLong")
    TOO_MANY = ("Too many", "FieldValueTooMany")
    INTERNAL = ("Internal error", "InternalError")
    TYPE_INVALID = ("Invalid value", "FieldValueTypeInvalid")

    @property
    def text(self) -> str:
        return self.value[0]

    @property
    def reason(self) -> str:
        return self.value[1]


class _Omit:
    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT"


# Marker for "no value shown" (apimachinery's omitValue).
OMIT: Final = _Omit()


@dataclass(frozen=True, slots=True)
class GoJSON:
    """A value that Go would print through ``encoding/json`` rather than ``%q``.

    Used for named string types (e.g. the GMS mode type renders as ``"InterPod"`` via
    JSON) and for explicitly ordered structs; plain ``dict``/``list`` values are
    rendered as JSON anyway, in their insertion order (callers build them in Go struct
    field order, omitting empty optional fields).
    """

    value: Any


# --- Go value formatting -------------------------------------------------------------------


def _json_default(o: Any) -> Any:
    if isinstance(o, GoJSON):
        return o.value
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def _go_json(value: Any) -> str:
    if isinstance(value, GoJSON):
        value = value.value
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, (int, str)):
        return go_json_text(json.dumps(value, ensure_ascii=False))
    if isinstance(value, dict):
        return "{" + ",".join(f"{_go_json(str(k))}:{_go_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_go_json(v) for v in value) + "]"
    return go_json_text(json.dumps(value, ensure_ascii=False, default=_json_default, separators=(",", ":")))


def render_value(value: Any) -> str:
    """Render a bad value as apimachinery's ``ErrorBody`` does."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_format_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return _go_json(value)


# --- field errors --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldError:
    type: ErrorType
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        t = self.type
        if t in (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL) or (
            self.bad_value is OMIT
        ):
            s = t.text
        else:
            s = f"{t.text}: {render_value(self.bad_value)}"
        if self.detail:
            s += f": {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> JSONObject:
        c: JSONObject = {"reason": self.type.reason, "message": self.body()}
        if self.field:
            c["field"] = self.field
        return c


def _p(path: Path | str) -> str:
    return str(path)


def required(path: Path | str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, _p(path), "", detail)


def forbidden(path: Path | str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, _p(path), "", detail)


def invalid(path: Path | str, value: Any, detail: str = "") -> FieldError:
    return FieldError(ErrorType.INVALID, _p(path), value, detail)


def duplicate(path: Path | str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, _p(path), value, "")


def not_supported(path: Path | str, value: Any, valid: Sequence[str]) -> FieldError:
    detail = ""
    if valid:
        detail = "supported values: " + ", ".join(go_quote(str(v)) for v in valid)
    return FieldError(ErrorType.NOT_SUPPORTED, _p(path), value, detail)


# --- aggregation ---------------------------------------------------------------------------


def aggregate_message(errs: Iterable[FieldError | str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: de-duplicated, ``[a, b]`` when ≥ 2 distinct."""
    seen: dict[str, None] = {}
    for e in errs:
        seen.setdefault(str(e), None)
    msgs = list(seen)
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"


def invalid_decision(
    kind: str,
    name: str,
    errs: Sequence[FieldError],
    warnings: Sequence[str] = (),
    group: str = "nvidia.com",
) -> Decision:
    """``apierrors.NewInvalid(GroupKind{group, kind}, name, errs)`` as a denied Decision (422)."""
    qualified = f"{kind}.{group}" if group else kind
    if errs:
        message = f"{qualified} {go_quote(name)} is invalid: {aggregate_message(errs)}"
    else:
        message = f"{qualified} {go_quote(name)} is invalid"
    details: JSONObject = {"kind": kind, "causes": [e.cause() for e in errs]}
    if name:
        details = {"name": name, **details}
    if group:
        details = {"group": group, **details}
    return Decision.deny(message, code=422, reason="Invalid", warnings=list(warnings), details=details)


def to_decision(
    kind: str,
    name: str,
    errs: Sequence[FieldError],
    warnings: Sequence[str] = (),
) -> Decision:
    """Allowed (with warnings) when ``errs`` is empty, else the 422 ``Invalid`` denial."""
    if not errs:
        return Decision.allow(list(warnings))
    return invalid_decision(kind, name, errs, warnings)
