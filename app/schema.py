"""Structural type check of Dynamo objects against the CRD schemas (compact skeletons in
``app/schemas/``, derived from the operator's CRDs by ``scripts/gen_schemas.py``).

The operator decodes every object into typed structs, so a value of the wrong JSON type is a
400 error naming the field. Here the check runs only when a handler could not process an
object: it turns a failure deep inside the rules into a precise answer, at no cost to the
common path.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

Skeleton = dict[str, Any]

class _Node:
    """A compiled skeleton node: the exact Python types a value may have (None: anything), and
    the child nodes of its members or items. ``leaf`` nodes have no children to visit."""

    __slots__ = ("accepted", "expected", "extra", "integral", "items", "leaf", "props")

    def __init__(self, skel: Skeleton) -> None:
        expected = skel.get("t")
        self.expected: str = expected or ""
        self.accepted: frozenset[type] | None = None if "x" in skel or not expected else _ACCEPTED.get(expected)
        self.integral = expected == "integer"  # a float with an integral value also decodes into an int
        self.props: dict[str, _Node] | None = (
            {k: _Node(v) for k, v in skel["p"].items()} if "p" in skel and "x" not in skel else None
        )
        self.extra: _Node | None = _Node(skel["a"]) if "a" in skel and "x" not in skel else None
        self.items: _Node | None = _Node(skel["i"]) if "i" in skel and "x" not in skel else None
        self.leaf = self.props is None and self.extra is None and self.items is None


# Exact types: orjson and the YAML loader produce plain dict/list/str/int/float/bool values.
_ACCEPTED: dict[str, frozenset[type]] = {
    "object": frozenset({dict}),
    "array": frozenset({list}),
    "string": frozenset({str}),
    "boolean": frozenset({bool}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "int-or-string": frozenset({int, str}),
}


@functools.cache
def skeleton_for(api_version: str, kind: str) -> Skeleton | None:
    group, _, version = api_version.rpartition("/")
    name = f"{group}_{version}_{kind}.json"
    try:
        text = resources.files("app.schemas").joinpath(name).read_text()
    except (FileNotFoundError, OSError):
        return None
    result: Skeleton = json.loads(text)
    return result


@functools.cache
def _compiled(api_version: str, kind: str) -> _Node | None:
    skel = skeleton_for(api_version, kind)
    return None if skel is None else _Node(skel)


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``integer`` and ``number`` told apart)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _wrong(node: _Node, value: Any) -> bool:
    accepted = node.accepted
    if accepted is None or type(value) in accepted:
        return False
    return not (node.integral and type(value) is float and value.is_integer())


def _check(value: Any, node: _Node) -> tuple[list[str | int], str] | None:
    """None when ``value`` fits ``node``; else (reversed path segments, problem). Paths are only
    built on the way back from a failure, so a clean object costs no string work."""
    if _wrong(node, value):
        return [], f"expected {node.expected}, got {json_type(value)}"
    kind = type(value)
    if kind is dict:
        props, extra = node.props, node.extra
        if props is None and extra is None:
            return None
        for key, child in value.items():
            if child is None:
                continue
            sub = props.get(key) if props is not None else None
            if sub is None:
                sub = extra
                if sub is None:
                    continue
            if sub.leaf:
                if _wrong(sub, child):
                    return [key], f"expected {sub.expected}, got {json_type(child)}"
                continue
            found = _check(child, sub)
            if found is not None:
                found[0].append(key)
                return found
    elif kind is list:
        items = node.items
        if items is None:
            return None
        for index, child in enumerate(value):
            if child is None:
                continue
            if items.leaf:
                if _wrong(items, child):
                    return [index], f"expected {items.expected}, got {json_type(child)}"
                continue
            found = _check(child, items)
            if found is not None:
                found[0].append(index)
                return found
    return None


def first_type_error(obj: Any, api_version: str, kind: str, root: str = "") -> str | None:
    """``<path>: expected <type>, got <type>`` for the first value (in document order) of the
    wrong JSON type, or None (also when the kind/version has no known schema). ``null`` is
    accepted anywhere, as the operator's decoder does."""
    node = _compiled(api_version, kind)
    if node is None or obj is None:
        return None
    found = _check(obj, node)
    if found is None:
        return None
    segments, problem = found
    path = root
    for segment in reversed(segments):
        if isinstance(segment, int):
            path += f"[{segment}]"
        else:
            path = f"{path}.{segment}" if path else segment
    return f"{path or '(root)'}: {problem}"
