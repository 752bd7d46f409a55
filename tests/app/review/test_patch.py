"""The mutating answer's JSON Patch: applying it to what was sent gives exactly the defaulted
object whenever defaulting only adds or replaces, it never removes, and an unchanged object
gives no operation at all."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
from hypothesis import given
from hypothesis import strategies as st

from app.review.reviews import json_patch

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, width=16)
    | st.text(alphabet="ab~/", max_size=3)
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(alphabet="ab~/", max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


def grow(draw: st.DrawFn, value: Any, share: bool = False) -> Any:
    """A version of ``value`` with additions and replacements only (what a defaulter does); with
    ``share``, unchanged containers may stay the same objects, as the defaulters keep them (only
    the path to a change is copied)."""
    if share and isinstance(value, (dict, list)) and draw(st.booleans()):
        return value
    if isinstance(value, dict):
        out = {k: grow(draw, v, share) for k, v in value.items()}
        for key in draw(st.lists(st.text(alphabet="abc~/", max_size=3), max_size=2)):
            if key not in out:
                out[key] = draw(values)
        return out
    if isinstance(value, list):
        return [grow(draw, v, share) for v in value] + draw(st.lists(values, max_size=2))
    return draw(values) if draw(st.booleans()) else value


@st.composite
def grown_pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    original = draw(st.dictionaries(st.text(alphabet="ab~/", max_size=3), values, max_size=4))
    return original, grow(draw, original)


@given(grown_pairs())
def test_patch_applies_to_what_was_sent(pair: tuple[Any, Any]) -> None:
    original, patched = pair
    sent = copy.deepcopy(original)
    ops = json_patch(original, patched)
    assert original == sent  # the diff never mutates its inputs
    assert all(op["op"] in ("add", "replace") for op in ops)
    result = jsonpatch.apply_patch(original, ops)
    assert jsonpatch.JsonPatch([]).apply(result) == patched
    assert json_patch(result, patched) == []


@given(st.data())
def test_shared_subtrees_give_the_patch_of_copies(data: st.DataObject) -> None:
    original = data.draw(st.dictionaries(st.text(alphabet="ab~/", max_size=3), values, max_size=4))
    patched = grow(data.draw, original, share=True)
    ops = json_patch(original, patched)
    assert ops == json_patch(original, copy.deepcopy(patched))
    assert jsonpatch.apply_patch(original, ops) == patched
    assert json_patch(original, original) == []


@given(st.dictionaries(st.text(max_size=3), values, max_size=4))
def test_unchanged_object_gives_no_operation(obj: dict[str, Any]) -> None:
    assert json_patch(obj, copy.deepcopy(obj)) == []


def test_removals_are_never_sent() -> None:
    assert json_patch({"a": 1, "b": [1, 2]}, {"b": [1]}) == []


def test_type_changes_are_replacements() -> None:
    assert json_patch({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]
    assert json_patch({"a": 1}, {"a": 1.5}) == [{"op": "replace", "path": "/a", "value": 1.5}]
    assert json_patch({"a/b~": {}}, {"a/b~": {"c": 1}}) == [{"op": "add", "path": "/a~1b~0/c", "value": 1}]


def test_pointers_escape_and_keep_empty_names() -> None:
    ops = json_patch({"": 1, "a/b": {"c~d": 1}, "l": [1, 2]}, {"": 2, "a/b": {"c~d": 2}, "l": [1, 3, 4]})
    assert ops == [
        {"op": "replace", "path": "/", "value": 2},
        {"op": "replace", "path": "/a~1b/c~0d", "value": 2},
        {"op": "replace", "path": "/l/1", "value": 3},
        {"op": "add", "path": "/l/2", "value": 4},
    ]
