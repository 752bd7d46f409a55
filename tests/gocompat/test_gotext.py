"""Go's text: ``strconv.Quote`` and ``json.Marshal``'s escapes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gocompat.gotext import go_json_text, go_quote


@pytest.mark.parametrize(
    ("s", "q"),
    [
        ("abc", '"abc"'),
        ("a\nb", '"a\\nb"'),
        ("\x00", '"\\x00"'),
        ("é", '"é"'),
        ("\u200b", '"\\u200b"'),
        ("\\", '"\\\\"'),
    ],
)
def test_go_quote(s: str, q: str) -> None:
    assert go_quote(s) == q


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126)))
def test_go_quote_ascii_matches_json(s: str) -> None:
    # For printable ASCII Go's %q and JSON string escaping coincide.
    assert go_quote(s) == json.dumps(s)


def test_go_json_text_escapes_what_json_marshal_escapes() -> None:
    assert go_json_text('{"a":"<b>&\u2028\u2029"}') == '{"a":"\\u003cb\\u003e\\u0026\\u2028\\u2029"}'
    assert go_json_text('{"a":1}') == '{"a":1}'
