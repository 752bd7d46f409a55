"""The scale subresource's check of a create (``customResourceValidator.ValidateScaleSpec``): the
value at ``specReplicasPath`` read as an int64 must be a non-negative int32. Its field is the path
as the CRD writes it (``.spec.replicas``), and a value of another type is reported with Go's
accessor error (``1.5 is of the type float64, expected int64``)."""

from __future__ import annotations

from typing import Any

from gocompat.fielderrors import ErrorType, FieldError
from gocompat.gotext import go_format_float

_MAX_INT32 = 2**31 - 1


def _go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _go_v(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_format_float(value)
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(v)}" for k, v in sorted(value.items())) + "]"
    if value is None:
        return "<nil>"
    return str(value)


def validate(obj: dict[str, Any], replicas_path: str | None) -> list[FieldError]:
    if not replicas_path:
        return []
    keys = replicas_path.removeprefix(".").split(".")
    node: Any = obj
    for i, key in enumerate(keys):
        if not isinstance(node, dict):
            detail = (
                f"{replicas_path} accessor error: {_go_v(node)} is of the type {_go_type(node)}, "
                "expected map[string]interface{}"
            )
            return [FieldError(ErrorType.INVALID, replicas_path, 0, detail)]
        if key not in node:
            return []
        node = node[key]
        if i == len(keys) - 1:
            break
    if isinstance(node, bool) or not isinstance(node, int):
        detail = (
            f"{replicas_path} accessor error: {_go_v(node)} is of the type {_go_type(node)}, expected int64"
        )
        return [FieldError(ErrorType.INVALID, replicas_path, 0, detail)]
    if node < 0:
        return [FieldError(ErrorType.INVALID, replicas_path, node, "should be a non-negative integer")]
    if node > _MAX_INT32:
        return [
            FieldError(
                ErrorType.INVALID, replicas_path, node, f"should be less than or equal to {_MAX_INT32}"
            )
        ]
    return []
