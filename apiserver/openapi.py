"""OpenAPI v3 validation of a custom object against its version's schema, in the API server's words.

This follows kube-openapi's ``validate.SchemaValidator`` as apiextensions-apiserver runs it (``in``
is ``body``) and its ``kubeOpenAPIResultToFieldErrors``, which turns each result into a field error:
per node the type, then ``anyOf``/``allOf``, then a string's length and pattern (the first failing),
its format, a number's range, a list's items then its size, the enum, and an object's members then
its required fields. Within one result, errors with the same text are kept once.

Go walks an object's properties in map order, which changes from one request to the next; this walk
takes them in the schema's order, so when one request holds errors in two sibling fields the API
server may list them the other way round (the set of errors is the same).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import orjson

from apiserver.crds import Schema
from gocompat.fielderrors import ErrorType, FieldError, not_supported
from gocompat.gotext import go_format_float, go_quote
from gocompat.jsonvalue import json_type

IN = "body"
_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def validate(obj: Any, schema: Schema) -> list[FieldError]:
    """Every schema error of ``obj`` (the whole object, the root schema), in walk order."""
    out: list[FieldError] = []
    _node(obj, schema, "", out)
    return out


def _add(out: list[FieldError], err: FieldError) -> None:
    if all(str(e) != str(err) for e in out):
        out.append(err)


def _field(path: str) -> str:
    return path.removeprefix(".") if path else "<nil>"


def _unplaced(detail: str) -> FieldError:
    """An error kube-openapi gives no field: its path is in the detail."""
    return FieldError(ErrorType.INVALID, "<nil>", "", detail)


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    """kube-openapi's ``<path> in body <detail>`` on the field at ``path``."""
    return FieldError(ErrorType.INVALID, _field(path), value, f"{path} in {IN} {detail}")


def _too_many(path: str, count: int, limit: int, out: list[FieldError]) -> None:
    """More items or properties than ``limit``, as apiextensions words both."""
    noun = "item" if limit == 1 else "items"
    _add(out, FieldError(ErrorType.TOO_MANY, _field(path), count, f"must have at most {limit} {noun}"))


def _go_v(value: int | float) -> str:
    return go_format_float(value) if isinstance(value, float) else str(value)


def _types(s: Schema) -> list[str]:
    if s.int_or_string:
        return ["integer", "string"]
    return [s.type] if s.type else []


def _type_error(path: str, expected: str, got: str) -> FieldError:
    detail = f"{path} in {IN} must be of type {expected}: {go_quote(got)}"
    return FieldError(ErrorType.TYPE_INVALID, _field(path), got, detail)


def _go_format(value: Any) -> str:
    """The format kube-openapi infers for a decoded value: int64 for integers, float64 for others."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    return "int64" if isinstance(value, int) else "float64"


def _check_type(value: Any, s: Schema, path: str) -> FieldError | None:
    """kube-openapi's ``typeValidator``: a number is checked against the format first."""
    types = _types(s)
    if not types and not s.format:
        return None
    if value is None:
        return None if s.nullable or not types else _type_error(path, ",".join(types), "null")
    got, got_format = json_type(value), _go_format(value)
    float_int = got == "number" and float(value).is_integer() and "integer" in types
    int_float = got == "integer" and "number" in types
    textual = isinstance(value, (str, list))
    if not textual and s.format and not (got in types or got_format == s.format or float_int or int_float):
        return _type_error(path, s.format, got_format)
    if not ("number" in types or "integer" in types) and s.format and textual:
        return None
    if got in types or float_int or int_float:
        return None
    return _type_error(path, ",".join(types), got)


def _node(value: Any, s: Schema, path: str, out: list[FieldError]) -> None:
    if value is None:
        err = _check_type(value, s, path)
        if err is not None:
            _add(out, err)
        _enum(value, s, path, out)
        return
    err = _check_type(value, s, path)
    if err is not None:
        _add(out, err)
    _composition(value, s, path, out)
    if isinstance(value, str):
        _string(value, s, path, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(value, s, path, out)
    elif isinstance(value, list):
        _list(value, s, path, out)
    _enum(value, s, path, out)
    if isinstance(value, dict):
        _object(value, s, path, out)


def _composition(value: Any, s: Schema, path: str, out: list[FieldError]) -> None:
    if s.any_of:
        best: list[FieldError] | None = None
        for sub in s.any_of:
            tried: list[FieldError] = []
            _node(value, sub, path, tried)
            if not tried:
                best = None
                break
            if best is None:
                best = tried
        else:
            _add(
                out,
                _unplaced(f"{go_quote(path.removeprefix('.'))} must validate at least one schema (anyOf)"),
            )
        for e in best or []:
            _add(out, e)
    failed: list[FieldError] = []
    validated = 0
    for sub in s.all_of:
        errs: list[FieldError] = []
        _node(value, sub, path, errs)
        validated += not errs
        failed += errs
    for e in failed:
        _add(out, e)
    if s.all_of and validated != len(s.all_of):
        more = ". None validated" if validated == 0 else ""
        _add(
            out, _unplaced(f"{go_quote(path.removeprefix('.'))} must validate all the schemas (allOf){more}")
        )


def _string(value: str, s: Schema, path: str, out: list[FieldError]) -> None:
    length = len(value)
    if s.max_length is not None and length > s.max_length:
        noun = "byte" if s.max_length == 1 else "bytes"
        _add(
            out,
            FieldError(
                ErrorType.TOO_LONG,
                _field(path),
                "<value omitted>",
                f"may not be more than {s.max_length} {noun}",
            ),
        )
        return
    if s.min_length is not None and length < s.min_length:
        _add(out, _invalid(path, value, f"should be at least {s.min_length} chars long"))
        return
    if s.regex is not None and s.regex.search(value) is None:
        _add(out, _invalid(path, value, f"should match '{s.pattern}'"))
        return
    if s.format == "date-time" and not _is_date_time(value):
        _add(out, _invalid(path, value, f"must be of type date-time: {go_quote(value)}"))


def _is_date_time(value: str) -> bool:
    m = _DATE_TIME.match(value)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        dt.datetime(year, month, day, hour, minute, min(second, 59))
    except ValueError:
        return False
    return second <= 60


def _number(value: int | float, s: Schema, path: str, out: list[FieldError]) -> None:
    if s.type == "integer" and not s.int_or_string:
        low, high = _INT32 if s.format == "int32" else _INT64
        integral = isinstance(value, int) or float(value).is_integer()
        if not integral or not low <= int(value) <= high:
            shown = f"with format {s.format}" if s.format in ("int32", "int64") else "(default format)"
            _add(out, _unplaced(f"Checked value must be of type integer {shown} in {path}"))
    bound_errs: list[FieldError] = []
    if s.minimum is not None:
        low_ok = value > s.minimum if s.exclusive_minimum else value >= s.minimum
        if not low_ok:
            word = "greater than" if s.exclusive_minimum else "greater than or equal to"
            lower: int | float = int(s.minimum) if isinstance(value, int) else float(s.minimum)
            bound_errs.append(_invalid(path, value, f"should be {word} {_go_v(lower)}"))
    if s.maximum is not None:
        high_ok = value < s.maximum if s.exclusive_maximum else value <= s.maximum
        if not high_ok:
            word = "less than" if s.exclusive_maximum else "less than or equal to"
            upper: int | float = int(s.maximum) if isinstance(value, int) else float(s.maximum)
            bound_errs.append(_invalid(path, value, f"should be {word} {_go_v(upper)}"))
    for e in bound_errs:
        _add(out, e)


def _list(value: list[Any], s: Schema, path: str, out: list[FieldError]) -> None:
    if s.items is not None:
        for i, item in enumerate(value):
            _node(item, s.items, f"{path}[{i}]", out)
    if s.min_items is not None and len(value) < s.min_items:
        _add(out, _invalid(path, value, f"should have at least {s.min_items} items"))
    if s.max_items is not None and len(value) > s.max_items:
        _too_many(path, len(value), s.max_items, out)


def _enum(value: Any, s: Schema, path: str, out: list[FieldError]) -> None:
    if not s.enum:
        return
    for allowed in s.enum:
        if type(allowed) is type(value) and allowed == value:
            return
        if (
            isinstance(allowed, (int, float))
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and not isinstance(allowed, bool)
            and allowed == value
        ):
            return
    shown = [a if isinstance(a, str) else _enum_json(a) for a in s.enum]
    _add(out, not_supported(_field(path), value, shown))


def _enum_json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _object(value: dict[str, Any], s: Schema, path: str, out: list[FieldError]) -> None:
    if s.max_properties is not None and len(value) > s.max_properties:
        _too_many(path, len(value), s.max_properties, out)
    if s.additional is not None:
        for key, member in value.items():
            if key not in s.properties:
                _node(member, s.additional, f"{path}.{key}", out)
    for name, prop in s.properties.items():
        if name in value:
            _node(value[name], prop, f"{path}.{name}" if path else name, out)
    for name in s.required:
        if name not in value:
            _add(out, FieldError(ErrorType.REQUIRED, _field(f"{path}.{name}"), "", ""))
