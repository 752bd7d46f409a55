"""app.review.reviews.json_patch: applied to the original it gives the patched object exactly (types
included) when the change only adds or replaces; a removed field is never removed."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import orjson
from hypothesis import given
from hypothesis import strategies as st

from app.review.reviews import json_patch
from tests.fuzz.strategies import json_values

objects = st.dictionaries(st.text(max_size=6), json_values, max_size=5)


def _grow(draw: st.DrawFn, node: Any) -> Any:
    """A copy of ``node`` with values replaced and keys/items added, nothing removed."""
    if isinstance(node, dict):
        out = {k: _grow(draw, v) if draw(st.booleans()) else copy.deepcopy(v) for k, v in node.items()}
        for key in draw(st.lists(st.sampled_from(["a", "b/c", "~d", "e~1", ""]), max_size=2)):
            out.setdefault(key, draw(json_values))
        return out
    if isinstance(node, list):
        out_list = [_grow(draw, v) if draw(st.booleans()) else copy.deepcopy(v) for v in node]
        return out_list + draw(st.lists(json_values, max_size=2))
    return draw(json_values) if draw(st.booleans()) else node


@st.composite
def grown(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    original = draw(objects)
    return original, _grow(draw, original)


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@given(grown(), st.booleans())
def test_patch_reproduces_additions_and_replacements_and_never_removes(
    pair: tuple[dict[str, Any], dict[str, Any]], drop: bool
) -> None:
    original, patched = pair
    if drop and original:
        del patched[next(iter(original))]  # a removal: never sent, the field stays
    ops = json_patch(original, patched)
    assert all(op["op"] in ("add", "replace") for op in ops)
    result = jsonpatch.apply_patch(copy.deepcopy(original), ops)
    if drop and original:
        key = next(iter(original))
        assert _canonical(result[key]) == _canonical(original[key])
        patched = {**patched, key: original[key]}
    assert _canonical(result) == _canonical(patched)
    assert (ops == []) == (_canonical(original) == _canonical(patched))
