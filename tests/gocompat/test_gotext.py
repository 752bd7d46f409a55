"""Go's text: ``strconv.Quote`` and ``json.Marshal``'s escapes."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gocompat import gotext
from gocompat.gotext import go_format_float, go_json_float, go_json_text, go_quote


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


def test_go_json_text_writes_exponents_as_go_and_keeps_strings() -> None:
    assert go_json_text('{"a":1.8446744073709552e19,"b":1E-7}') == '{"a":18446744073709552000,"b":1e-7}'
    assert go_json_text('{"1e5":"2E8","x":"\u0663e1"}') == '{"1e5":"2E8","x":"\u0663e1"}'


_SCREENED = st.text(
    alphabet=st.sampled_from(list('0123456789eE.-+"<>&ab \u2028\u2029\u0663\ud800\U0001f600'))
)


@given(_SCREENED)
def test_go_json_text_screens_as_the_expressions_they_stand_for(text: str) -> None:
    # The two quick screens answer as the regular expressions they replace, for every text
    # (an ASCII digit before e/E; a character json.Marshal escapes).
    assert gotext._may_hold_exponent(text) is (re.search(r"[0-9][eE]", text) is not None)
    assert gotext._needs_escapes(text) is (gotext._JSON_ESCAPED.search(text) is not None)


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.integers(-(2**63), 2**63 - 1)
        | st.text(alphabet=st.sampled_from(list('09eE<>&\u2028\u0663a"'))),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
        max_leaves=12,
    )
)
def test_go_json_text_of_any_json_is_that_of_the_full_scans(value: object) -> None:
    # What the screens let through is what the unscreened rewrite writes.
    text = orjson.dumps(value).decode()
    full = gotext._JSON_ESCAPED.sub(
        lambda m: gotext._JSON_ESCAPES[m.group()], gotext._STRING_OR_EXPONENT.sub(gotext._go_exponent, text)
    )
    assert go_json_text(text) == full


# --- every value of tests/fixtures/gotext/text.jsonl, as Go 1.26 writes it -------------------------------

TEXT_CORPUS = [
    json.loads(line)
    # split at "\n" only: the strings hold other characters str.splitlines() takes for line ends
    for line in (Path(__file__).resolve().parent.parent / "fixtures" / "gotext" / "text.jsonl")
    .read_text()
    .split("\n")
    if line
]


def _newer_unicode(s: str) -> bool:
    """Holds a code point this Python's Unicode database does not assign (Go 1.26 knows a newer
    Unicode, where some of them are printable): ``strconv.Quote`` may keep it where this escapes it."""
    return any(unicodedata.category(ch) == "Cn" for ch in s)


def test_strings_as_go_quotes_and_marshals_them() -> None:
    strings = [(c, json.loads(c["raw"])) for c in TEXT_CORPUS if c["raw"].startswith('"')]
    assert len(strings) > 2000
    wrong_quote = [(c["raw"], c["quote"], go_quote(s)) for c, s in strings if go_quote(s) != c["quote"]]
    assert all(_newer_unicode(json.loads(raw)) for raw, _, _ in wrong_quote) and len(wrong_quote) < 20
    wrong_json = [
        (c["raw"], c["json"], got)
        for c, s in strings
        if (got := go_json_text(orjson.dumps(s).decode())) != c["json"]
    ]
    assert wrong_json == []


def test_floats_as_go_prints_and_marshals_them() -> None:
    numbers = [c for c in TEXT_CORPUS if not c["raw"].startswith('"')]
    assert len(numbers) > 300
    wrong = [
        (c["raw"], c["v"], c["json"], go_format_float(float(c["raw"])), go_json_float(float(c["raw"])))
        for c in numbers
        if (go_format_float(float(c["raw"])), go_json_float(float(c["raw"]))) != (c["v"], c["json"])
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("value", "v", "marshalled"),
    [
        (1e6, "1e+06", "1000000"),
        (123456789.0, "1.23456789e+08", "123456789"),
        (100000.0, "100000", "100000"),
        (1.5e-5, "1.5e-05", "0.000015"),
        (1e-7, "1e-07", "1e-7"),
        (1e21, "1e+21", "1e+21"),
        (12345678901234567890.0, "1.2345678901234567e+19", "12345678901234567000"),
        (-0.0, "-0", "-0"),
    ],
)
def test_float_forms(value: float, v: str, marshalled: str) -> None:
    """``%v`` takes the exponent form from 1e+06 (fmt's shortest %g); ``json.Marshal`` from 1e21."""
    assert go_format_float(value) == v
    assert go_json_float(value) == marshalled
