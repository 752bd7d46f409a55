"""The CRDs' CEL rules (``x-kubernetes-validations``), evaluated as the API server evaluates them.

The rules run on the official CEL implementation (``cel-expr-python``, the CEL team's binding of
cel-cpp) with the libraries the Kubernetes CEL environment gives the pinned rules: the strings
extension (``lowerAscii``, ``split``), optionals (``oldSelf.hasValue()``) and Kubernetes'
``quantity`` library (``quantity()``, ``isGreaterThan``, ..., on :mod:`gocompat.quantity`).

What this module owns is the API server's side of the contract (apiextensions-apiserver
``schema/cel/validation.go``):

* the walk: a node's rules first, then its ``additionalProperties`` values, then its properties,
  then list items; ``null`` values are not validated;
* ``self`` is the node's value, numbers of ``type: number`` as doubles; ``oldSelf`` the correlated
  old value (map keys and properties always correlate; list items only in ``listType: map`` lists,
  by their keys). Rules that use ``oldSelf`` run only when there is an old value, unless they set
  ``optionalOldSelf``, when ``oldSelf`` is ``optional.none()`` on a create;
* a rule that evaluates to false gives ``Invalid value`` with the rule's message (the value itself
  shown for scalars, no value for objects and arrays), or its ``messageExpression``'s, at its
  ``fieldPath`` below the node, of the type its ``reason`` names; a rule that fails to evaluate
  gives the cel-go error (``no such key: mode``, ``no such overload``) in the API server's wording;
* ratcheting on update: a failure of a rule without ``oldSelf`` at a value equal to its old value
  is a warning, not an error.

The API server walks maps in Go's (random) order; this walk takes the schema's order for
properties and the object's for map keys.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from apiserver.crds import Schema
from gocompat.fielderrors import OMIT, ErrorType, FieldError, Path
from gocompat.quantity import parse_quantity

_OLD_SELF = re.compile(r"\boldSelf\b")


# --------------------------------------------------------------------------- Kubernetes' quantity library

# cel-expr-python has no opaque values: a quantity is carried as a one-member map holding its exact
# value as a fraction, which no rule can build or read itself (the key is not a CEL identifier).
_QKEY = "#quantity"
_QUANTITY_TYPE = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)


def _q(value: str) -> dict[str, Any]:
    q = parse_quantity(value)  # ValueError with resource.ParseQuantity's message
    return {_QKEY: [q.unscaled, q.exp10]}


def _fraction(q: dict[str, Any]) -> tuple[int, int]:
    """(numerator, denominator) of a carried quantity."""
    unscaled, exp10 = q[_QKEY]
    return (unscaled * 10**exp10, 1) if exp10 >= 0 else (unscaled, 10**-exp10)


def _cmp(a: dict[str, Any], b: dict[str, Any]) -> int:
    (an, ad), (bn, bd) = _fraction(a), _fraction(b)
    left, right = an * bd, bn * ad
    return (left > right) - (left < right)


def _quantity_library() -> cel.CelExtension:
    q, boolean, integer = _QUANTITY_TYPE, cel.Type.BOOL, cel.Type.INT

    def member(name: str, result: cel.Type, impl: Callable[..., Any], *params: cel.Type) -> cel.FunctionDecl:
        return cel.FunctionDecl(
            name, [cel.Overload(f"quantity_{name}", result, [q, *params], is_member=True, impl=impl)]
        )

    return cel.CelExtension(
        "kubernetes.quantity",
        [
            cel.FunctionDecl("quantity", [cel.Overload("string_to_quantity", q, [cel.Type.STRING], impl=_q)]),
            cel.FunctionDecl(
                "isQuantity",
                [cel.Overload("is_quantity_string", boolean, [cel.Type.STRING], impl=_is_quantity)],
            ),
            member("isGreaterThan", boolean, lambda a, b: _cmp(a, b) > 0, q),
            member("isLessThan", boolean, lambda a, b: _cmp(a, b) < 0, q),
            member("compareTo", integer, _cmp, q),
            member("sign", integer, lambda a: _cmp(a, {_QKEY: [0, 0]})),
            member("isInteger", boolean, lambda a: _fraction(a)[0] % _fraction(a)[1] == 0),
        ],
    )


def _is_quantity(value: str) -> bool:
    try:
        parse_quantity(value)
    except ValueError:
        return False
    return True


@functools.cache
def _env() -> cel.Env:
    return cel.NewEnv(
        variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
        extensions=[
            ext_strings.ExtStrings(),
            ext_optional.ExtOptional(),
            ext_bindings.ExtBindings(),
            _quantity_library(),
        ],
    )


# --------------------------------------------------------------------------- compiled rules


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``x-kubernetes-validations`` entry, compiled."""

    source: str
    message: str
    uses_old_self: bool
    optional_old_self: bool
    program: cel.Expression
    #: an ``optionalOldSelf`` rule with ``oldSelf`` bound to ``optional.none()`` (a create) and to
    #: ``optional.of(oldSelf)`` (an update)
    without_old: cel.Expression | None
    with_old: cel.Expression | None
    #: ``messageExpression``, compiled; ``reason``; ``fieldPath`` relative to the node, as a path's text
    message_expression: cel.Expression | None = None
    reason: str = ""
    field_path: str = ""

    @property
    def error_string(self) -> str:
        """``ruleErrorString``: the message, else the rule."""
        return self.message.strip() or self.source.strip()

    @property
    def failure(self) -> str:
        """``ruleMessageOrDefault``."""
        return self.message.strip() or f"failed rule: {self.source.strip()}"


def _compile(raw: dict[str, Any]) -> Rule:
    source = str(raw.get("rule", ""))
    optional = bool(raw.get("optionalOldSelf", False))
    uses_old = bool(_OLD_SELF.search(source))
    env = _env()
    message = str(raw.get("message") or "")
    expression = str(raw.get("messageExpression") or "")
    extra: dict[str, Any] = {
        "message_expression": env.compile(expression) if expression else None,
        "reason": str(raw.get("reason") or ""),
        "field_path": relative_field_path(str(raw.get("fieldPath") or "")),
    }
    if not (optional and uses_old):
        return Rule(source, message, uses_old, optional, env.compile(source), None, None, **extra)
    return Rule(
        source,
        message,
        uses_old,
        optional,
        env.compile(source),
        env.compile(f"cel.bind(oldSelf, optional.none(), {source})"),
        env.compile(f"cel.bind(oldSelf, optional.of(oldSelf), {source})"),
        **extra,
    )


_FIELD_PATH_PART = re.compile(r"\.([^.\[\]]+)|\['((?:[^'\\]|\\.)*)'\]")


def relative_field_path(json_path: str) -> str:
    """A rule's ``fieldPath`` (``.spec.replicas``, ``.labels['a.b']``) as the text the API server
    appends to the node's path (``ValidFieldPath``: names joined by dots, map keys in brackets)."""
    text, pos = "", 0
    while pos < len(json_path):
        match = _FIELD_PATH_PART.match(json_path, pos)
        if match is None:
            return ""  # the API server refuses such a CRD; nothing to append
        if match.group(1) is not None:
            text = f"{text}.{match.group(1)}" if text else match.group(1)
        else:
            key = re.sub(r"\\(.)", r"\1", match.group(2))
            text = f"{text}[{key}]"
        pos = match.end()
    return text


@functools.cache
def rules_of(schema: Schema) -> tuple[Rule, ...]:
    """The node's rules, compiled once per node (schema nodes hash by identity)."""
    return tuple(_compile(r) for r in schema.rules)


@functools.cache
def _has_rules(schema: Schema) -> bool:
    if schema.rules:
        return True
    children = [*schema.properties.values(), *schema.all_of]
    for child in (schema.additional, schema.items):
        if child is not None:
            children.append(child)
    return any(_has_rules(c) for c in children)


# --------------------------------------------------------------------------- values


def _as_cel(value: Any, schema: Schema) -> Any:
    """``UnstructuredToVal``: the value as the rule sees it (numbers of ``type: number`` are doubles)."""
    if schema.type == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict):
        if schema.properties:
            return {
                k: _as_cel(v, schema.properties[k]) if k in schema.properties else v for k, v in value.items()
            }
        if schema.additional is not None:
            return {k: _as_cel(v, schema.additional) for k, v in value.items()}
    if isinstance(value, list) and schema.items is not None:
        return [_as_cel(v, schema.items) for v in value]
    return value


_STATUS = re.compile(r"^[A-Z_]+: ")


def _go_error(text: str) -> str:
    """A cel-cpp evaluation error in cel-go's words (the API server quotes cel-go)."""
    text = _STATUS.sub("", text, count=1)
    if text.startswith("No matching overloads found"):
        return "no such overload"
    key = re.match(r'Key not found in map : "?(.*?)"?$', text)
    if key:
        return f"no such key: {key.group(1)}"
    index = re.match(r"Index error: index=(-?\d+)", text)
    if index:
        return f"index out of bounds: {index.group(1)}"
    return text


def _error(
    path: Path, schema: Schema, value: Any, rule: Rule, result: Any, data: dict[str, Any]
) -> FieldError | None:
    if result.type() == cel.Type.BOOL and result.value() is True:
        return None
    if result.type() == cel.Type.ERROR:
        err = _go_error(str(result.value()))
        if err.startswith("no such overload"):
            detail = (
                f"'{err}': call arguments did not match a supported operator, function or macro "
                f"signature for rule: {rule.error_string}"
            )
        else:
            detail = f"{err} evaluating rule: {rule.error_string}"
        return FieldError(ErrorType.INVALID, str(path), schema.type, detail)
    where = str(path.child(rule.field_path)) if rule.field_path else str(path)
    detail = _expressed(rule, data) or rule.failure
    shown = OMIT if schema.type in ("object", "array") else value
    if rule.reason == "FieldValueForbidden":
        return FieldError(ErrorType.FORBIDDEN, where, "", detail)
    if rule.reason == "FieldValueRequired":
        return FieldError(ErrorType.REQUIRED, where, "", detail)
    if rule.reason == "FieldValueDuplicate":
        return FieldError(ErrorType.DUPLICATE, where, shown, "")
    return FieldError(ErrorType.INVALID, where, shown, detail)


_MAX_MESSAGE = 5 * 1024


def _expressed(rule: Rule, data: dict[str, Any]) -> str:
    """The ``messageExpression``'s message, or "" when it has none or its result is unusable (not a
    string, empty, too long, several lines), when the API server falls back to ``message``."""
    if rule.message_expression is None:
        return ""
    result = rule.message_expression.eval(data=data)
    if result.type() != cel.Type.STRING:
        return ""
    text = str(result.value()).strip()
    if not text or len(text.encode()) > _MAX_MESSAGE or "\n" in text:
        return ""
    return text


# --------------------------------------------------------------------------- the walk

_NO_OLD = object()


@dataclass(slots=True)
class Result:
    errors: list[FieldError]
    #: ratcheted failures (update only), as the API server's warning texts
    warnings: list[str]


def validate(obj: Any, schema: Schema, old: Any = _NO_OLD) -> Result:
    """The CEL rules of ``schema`` and below on ``obj`` (a create; an update when ``old`` is given)."""
    result = Result([], [])
    if _has_rules(schema):
        _walk(obj, schema, Path(), None if old is _NO_OLD else old, old is not _NO_OLD, result)
    return result


def _walk(obj: Any, schema: Schema, path: Path, old: Any, update: bool, out: Result) -> None:
    if obj is None or not _has_rules(schema):
        return
    _expressions(obj, schema, path, old, update, out)
    for sub in schema.all_of:
        _walk(obj, sub, path, old, update, out)
    if isinstance(obj, dict):
        olds = old if isinstance(old, dict) else {}
        if schema.additional is not None:
            for key, value in obj.items():
                _walk(value, schema.additional, path.key(key), olds.get(key), update, out)
        for key, sub in schema.properties.items():
            if key in obj:
                _walk(obj[key], sub, path.child(key), olds.get(key), update, out)
    elif isinstance(obj, list) and schema.items is not None:
        match = _list_correlation(schema, old)
        for i, item in enumerate(obj):
            _walk(item, schema.items, path.index(i), match(item), update, out)


def _list_correlation(schema: Schema, old: Any) -> Callable[[Any], Any]:
    """Old items of a ``listType: map`` list, found by their keys; other lists do not correlate."""
    if schema.list_type != "map" or not isinstance(old, list):
        return lambda _item: None
    keys = schema.list_map_keys

    def ident(item: Any) -> tuple[Any, ...] | None:
        return tuple(repr(item.get(k)) for k in keys) if isinstance(item, dict) else None

    by_key = {ident(item): item for item in old}
    return lambda item: by_key.get(ident(item))


def _expressions(obj: Any, schema: Schema, path: Path, old: Any, update: bool, out: Result) -> None:
    rules = rules_of(schema)
    if not rules:
        return
    value = _as_cel(obj, schema)
    old_value = None if old is None else _as_cel(old, schema)
    ratchet = update and old is not None and old == obj
    data = {"self": value} if old_value is None else {"self": value, "oldSelf": old_value}
    for rule in rules:
        if rule.uses_old_self and old is None:
            if rule.without_old is None:
                continue  # transition rules need an existing value
            result = rule.without_old.eval(data=data)
        elif rule.with_old is not None:
            result = rule.with_old.eval(data=data)
        else:
            result = rule.program.eval(data=data)
        err = _error(path, schema, obj, rule, result, data)
        if err is None:
            continue
        if ratchet and not rule.uses_old_self:
            out.warnings.append(str(err))
        else:
            out.errors.append(err)
