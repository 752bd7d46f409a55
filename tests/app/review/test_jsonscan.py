"""The byte scanner finds the same members and elements as a decoder, refuses what is not JSON
with the offset of the problem, and keeps to its nesting limit, however the input is shaped."""

from __future__ import annotations

import json
import re
from array import array
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.review import jsonscan
from app.review.bignumbers import loads_with_big_numbers
from app.review.jsonscan import ScanError, TooDeep, document_end, elements, members, validate, value_end

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
    | st.sampled_from(['"', "\\", "[", "]", "{", "}", '\\"', "},{", '"}],[{"']),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=5),
    max_leaves=30,
)


def spans_of(text: bytes) -> list[tuple[int, int]]:
    spans: array[int] = array("q")
    end = elements(text, 0, 1000, spans)
    document_end(text, end)
    return [(spans[i], spans[i + 1]) for i in range(0, len(spans), 2)]


@settings(max_examples=300, deadline=None)
@given(st.lists(json_values, max_size=6), st.sampled_from([None, 0, 2]), st.booleans())
def test_elements_are_the_decoded_items(items: list[Any], indent: int | None, alike: bool) -> None:
    if alike:  # objects starting alike, so that the list's guess is tried on them
        items = [{"apiVersion": "v1", "kind": "K", "x": item} for item in items]
    text = json.dumps(items, indent=indent).encode()
    found = spans_of(text)
    assert [orjson.loads(text[a:b]) for a, b in found] == orjson.loads(text)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6), st.sampled_from([None, 1]))
def test_members_are_the_decoded_members(obj: dict[str, Any], indent: int | None) -> None:
    text = json.dumps(obj, indent=indent).encode()
    listed, end = members(text, 0, 1000)
    document_end(text, end)
    assert {name: orjson.loads(text[a:b]) for name, a, b in listed} == orjson.loads(text)


def is_json(text: bytes) -> bool:
    """Whether ``text`` is one JSON document, numbers past a double's range included (a
    damaged ``1.0e+295`` can turn into ``1.0,100e+295``, which is JSON that orjson refuses)."""
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        try:
            loads_with_big_numbers(text, exc)
        except orjson.JSONDecodeError:
            return False
    return True


@settings(max_examples=300, deadline=None)
@given(json_values, st.data())
def test_a_damaged_document_is_refused_where_a_decoder_refuses_it(value: Any, data: st.DataObject) -> None:
    text = json.dumps([value, value]).encode()
    cut = data.draw(st.integers(0, len(text)))
    damaged = (
        text[:cut]
        + data.draw(st.sampled_from([b"", b",", b"]", b"}", b'"', b"\\", b"{", b"x"]))
        + text[cut + data.draw(st.integers(0, 2)) :]
    )
    valid = is_json(damaged)
    try:
        for a, b in spans_of(damaged):
            validate(damaged, a, b, 1000)
        scanned = True
    except ScanError:
        scanned = False
    assert scanned == valid


@pytest.mark.parametrize(
    ("text", "offset", "words"),
    [
        (b"[1,]", 3, "unexpected character ']'"),
        (b"[1 2]", 3, "expected ',' or ']'"),
        (b'{"a" 1}', 5, "expected ':'"),
        (b"{1:2}", 1, "expected a member name"),
        (b'{"a":1 "b":2}', 7, "expected ',' or '}'"),
        (b'["abc', 1, "unterminated string"),
        (b"[[1}]", 3, "unexpected '}'"),
        (b"[[1]", 4, "unexpected end of data"),
        (b"[1] x", 4, "trailing characters"),
        (b'[{"a":1},', 9, "unexpected end of data"),
        (b'[{"apiVersion":"v1","kind":"K"},', 32, "unexpected end of data"),
    ],
)
def test_problems_are_told_with_their_offset(text: bytes, offset: int, words: str) -> None:
    with pytest.raises(ScanError) as caught:
        if text.startswith(b"{"):
            document_end(text, members(text, 0, 10)[1])
        else:
            spans_of(text)
    assert caught.value.offset == offset and words in caught.value.message


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5, 6, 9, 40])
def test_depth_is_counted_as_levels(depth: int) -> None:
    for levels in range(1, depth + 3):
        for opener, closer in ((b"[", b"]"), (b'{"k":', b"}")):
            text = opener * levels + b"1" + closer * levels
            if levels <= depth:
                assert value_end(text, 0, depth) == len(text)
            else:
                with pytest.raises(TooDeep):
                    value_end(text, 0, depth)


def test_hostile_shapes_are_walked_in_one_pass() -> None:
    """Bodies built to make a backtracking or guessing scanner quadratic are refused or read at
    once (the suite's timeout would catch a hang)."""
    megabyte = 1024 * 1024
    with pytest.raises(ScanError):
        value_end(b'["' + b"\\a" * megabyte, 0, 10)  # an unterminated string of escapes
    with pytest.raises(TooDeep):
        value_end(b"[" * (8 * megabyte), 0, 125)
    # thousands of objects alike in their start but each holding the start of the next one,
    # so that every guess is wrong
    start = b'{"apiVersion":"v1","kind":"K"'
    one = start + b',"x":[' + start + b"},{" + start[1:] + b"}]}"
    text = b"[" + b",".join([one] * 20_000) + b"]"
    assert len(spans_of(text)) == 20_000


def test_wrong_guesses_stop_the_guessing(monkeypatch: pytest.MonkeyPatch) -> None:
    tried = 0
    one_value = jsonscan._one_value

    def counting(buf: Any, start: int, end: int) -> bool:
        nonlocal tried
        tried += 1
        return one_value(buf, start, end)

    monkeypatch.setattr(jsonscan, "_one_value", counting)
    start = b'{"apiVersion":"v1","kind":"K"'
    one = start + b',"x":[' + start + b"},{" + start[1:] + b"}]}"
    spans_of(b"[" + b",".join([one] * 1000) + b"]")
    assert tried <= jsonscan.GUESS_FAILURES + 1
    tried = 0
    alike = b"[" + b",".join([start + b',"n":%d}' % i for i in range(1000)]) + b"]"
    spans_of(alike)
    assert tried == 1000  # every guess held: each element decoded once, none walked


def test_a_large_member_is_validated_in_pieces() -> None:
    big = json.dumps({"a": [{"b": "x" * 100}] * 30_000, "c": list(range(1000))}).encode()
    assert len(big) > jsonscan.VALIDATE_WHOLE
    validate(big, 0, len(big), 10)
    broken = big.replace(b'"x', b"'x", 1)
    with pytest.raises(ScanError):
        validate(broken, 0, len(broken), 10)


def test_the_nested_pattern_matches_only_containers_within_its_levels() -> None:
    pattern = re.compile(b"(?:" + jsonscan._nested(2) + b")")
    assert pattern.fullmatch(b'{"a":[1,"]"],"b":{}}')
    assert not pattern.fullmatch(b'{"a":[[1]]}')  # three levels
    assert not pattern.fullmatch(b'{"a":[1}]')  # brackets of the wrong kind


def test_a_number_past_a_doubles_range_is_json_in_every_piece() -> None:
    text = b'[{"a": [1.0, 100000206145801e+295]}, {"a": [1.0100000206145801e+295]}]'
    for a, b in spans_of(text):
        validate(text, a, b, 1000)
    assert is_json(text)
