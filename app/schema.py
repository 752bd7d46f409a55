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

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
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


def _matches(expected: str, value: Any) -> bool:
    if expected == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "int-or-string":
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    return isinstance(value, _PY_TYPES.get(expected, (object,)))


def _check(value: Any, node: Skeleton) -> tuple[list[str | int], str] | None:
    """None when ``value`` fits ``node``; else (reversed path segments, problem). Paths are only
    built on the way back from a failure, so a clean object costs no string work."""
    expected = node.get("t")
    if expected is not None and not _matches(expected, value):
        return [], f"expected {expected}, got {json_type(value)}"
    if isinstance(value, dict):
        props = node.get("p")
        extra = node.get("a")
        if props is None and extra is None:
            return None
        for key, child in value.items():
            if child is None:
                continue
            sub = props.get(key) if props is not None else None
            if sub is None:
                sub = extra
            if sub is None or "x" in sub:
                continue
            found = _check(child, sub)
            if found is not None:
                found[0].append(key)
                return found
    elif isinstance(value, list):
        items = node.get("i")
        if items is None or "x" in items:
            return None
        for index, child in enumerate(value):
            if child is None:
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
    skel = skeleton_for(api_version, kind)
    if skel is None or obj is None:
        return None
    found = _check(obj, skel)
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
