"""gocompat.jsonvalue.same_json: ``==`` on decoded JSON with the value types too."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gocompat.jsonvalue import same_json

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, -0.0, 1.0, 2.5]) | st.sampled_from(["", "a", "1"])
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=12,
)


def tagged(v: Any) -> Any:
    """The value with its JSON type at every node, key order and the sign of zero left out."""
    if isinstance(v, dict):
        return ("object", tuple(sorted((k, tagged(x)) for k, x in v.items())))
    if isinstance(v, list):
        return ("array", tuple(tagged(x) for x in v))
    if isinstance(v, float) and v == 0:
        return ("float", 0.0)
    return (type(v).__name__, v)


@given(values, values)
def test_same_json_is_equality_of_typed_values(a: Any, b: Any) -> None:
    assert same_json(a, b) == (tagged(a) == tagged(b))


@given(values)
def test_a_value_and_its_decoded_encoding_are_the_same(a: Any) -> None:
    assert same_json(a, orjson.loads(orjson.dumps(a)))


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (1, 1.0, False),
        (1, True, False),
        (0, False, False),
        ({"x": [1]}, {"x": [1.0]}, False),
        ({"x": [1, {"y": True}]}, {"x": [1, {"y": 1}]}, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        ([1, 2], [2, 1], False),
        ({"a": None}, {}, False),
        ({}, {"a": None}, False),
        ({"a": 1}, {"b": 1}, False),
        (-0.0, 0.0, True),
        ("1", 1, False),
        ([], {}, False),
    ],
)
def test_examples(a: Any, b: Any, same: bool) -> None:
    assert same_json(a, b) is same
    assert same_json(b, a) is same
