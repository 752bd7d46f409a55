"""The uniqueness that ``x-kubernetes-list-type: set`` and ``map`` promise, checked as
apiextensions-apiserver's ``listtype.ValidateListSetsAndMaps`` checks it: each value (or map key)
met a second time is a ``Duplicate value`` at its index, once however often it repeats.
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.crds import Schema
from gocompat.fielderrors import ErrorType, FieldError, duplicate

_UNSPECIFIED = object()


def validate(obj: dict[str, Any], schema: Schema) -> list[FieldError]:
    return _object("", schema, obj)


def _object(path: str, s: Schema, obj: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    if s.additional is not None:
        for k, v in obj.items():
            errs += _value(f"{path}[{k}]", s.additional, v)
    for k, v in obj.items():
        sub = s.properties.get(k)
        if sub is not None:
            errs += _value(f"{path}.{k}" if path else k, sub, v)
    return errs


def _value(path: str, s: Schema, value: Any) -> list[FieldError]:
    if isinstance(value, list):
        return _array(path, s, value)
    if isinstance(value, dict):
        return _object(path, s, value)
    return []


def _identity(x: Any) -> Any:
    if isinstance(x, (dict, list)):
        return ("json", orjson.dumps(x, option=orjson.OPT_SORT_KEYS))
    if x is _UNSPECIFIED:
        return ("unspecified",)
    return (type(x).__name__, x)


def _repeated(values: list[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, x in enumerate(values):
        key = _identity(x)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            out.append(i)
    return out


def _array(path: str, s: Schema, value: list[Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    if s.list_type == "set" and len(value) > 1:
        errs += [duplicate(f"{path}[{i}]", value[i]) for i in _repeated(value)]
    elif s.list_type == "map":
        errs += _list_map(path, s, value)
    if s.items is not None:
        for i, item in enumerate(value):
            errs += _value(f"{path}[{i}]", s.items, item)
    return errs


def _list_map(path: str, s: Schema, value: list[Any]) -> list[FieldError]:
    for i, x in enumerate(value):
        if x is not None and not isinstance(x, dict):
            return [
                FieldError(
                    ErrorType.INVALID, f"{path}[{i}]", x, "must be an object for an array of list-type map"
                )
            ]
    if len(value) <= 1:
        return []
    if len(s.list_map_keys) == 1:
        key = s.list_map_keys[0]
        keys = [x[key] if isinstance(x, dict) and key in x else _UNSPECIFIED for x in value]
        return [
            duplicate(f"{path}[{i}]", {} if keys[i] is _UNSPECIFIED else {key: keys[i]})
            for i in _repeated(keys)
        ]
    composite = [{k: x[k] for k in s.list_map_keys if k in x} if isinstance(x, dict) else {} for x in value]
    return [duplicate(f"{path}[{i}]", dict(sorted(composite[i].items()))) for i in _repeated(composite)]
