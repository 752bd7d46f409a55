"""Go's ``time.Parse`` with the layouts of ``metav1.Time`` and ``metav1.MicroTime``, printed as
those types print it, and ``time.ParseDuration`` printed by ``Duration.String``: every text of
``tests/fixtures/gotime/rfc3339.jsonl`` and ``durations.jsonl`` (what Go made of it) is accepted or
refused alike, with the same output or the same error text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gocompat.decoding import decode
from gocompat.errors import GoTypeError
from gocompat.gotime import format_duration, go_time, parse_duration

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "gotime"
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in (FIXTURES / "rfc3339.jsonl").read_text().splitlines() if line
]
DURATIONS: list[dict[str, str]] = [
    json.loads(line) for line in (FIXTURES / "durations.jsonl").read_text().splitlines() if line
]
ERROR = "error: "


def _go_time(text: str, micro: bool) -> str:
    try:
        return go_time(text, micro)
    except ValueError as exc:
        return ERROR + str(exc)


@pytest.mark.parametrize("micro", [False, True], ids=["time", "microtime"])
def test_every_text_as_go_reads_it(micro: bool) -> None:
    key = "microtime" if micro else "time"
    wrong = [(c["in"], c[key], got) for c in CASES if (got := _go_time(c["in"], micro)) != c[key]]
    assert wrong == []


def test_the_corpus_holds_both_outcomes() -> None:
    accepted = [c for c in CASES if not c["time"].startswith(ERROR)]
    assert len(accepted) > 50 and len(CASES) - len(accepted) > 500
    assert any(not c["microtime"].startswith(ERROR) for c in CASES)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z"),
        ("2024-01-01T00:00:00.5+05:00", "2023-12-31T19:00:00Z"),
        ("2024-01-01T1:00:00,25Z", "2024-01-01T01:00:00Z"),  # Go reads a one-digit hour and a comma
        ("2024-01-01T00:00:00+24:00", "2023-12-31T00:00:00Z"),
        ("0000-01-01T00:00:00+01:00", "-0001-12-31T23:00:00Z"),
        ("2024-01-01t00:00:00Z", None),  # RFC 3339 allows a lower-case t and z; Go does not
        ("2024-01-01T00:00:00z", None),
        ("2024-02-30T00:00:00Z", None),
        ("2024-01-01T00:00:00", None),
    ],
)
def test_one_go_time_parser_for_the_tables_and_the_schema_vocabulary(text: str, printed: str | None) -> None:
    """The Kubernetes tables and the ``"time"`` kind of the schema vocabulary (the DGDR types)
    parse times with the same function, as Go does."""
    if printed is None:
        with pytest.raises(ValueError):
            go_time(text)
        with pytest.raises(GoTypeError):
            decode(text, "time")
    else:
        assert go_time(text) == printed
        assert decode(text, "time") == printed


def test_errors_name_the_element_go_stopped_at() -> None:
    with pytest.raises(ValueError) as caught:
        go_time("2024-01-01 00:00:00Z")
    assert str(caught.value) == (
        'parsing time "2024-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"'
    )
    with pytest.raises(ValueError, match=r'^parsing time "2024-13-01T00:00:00Z": month out of range$'):
        go_time("2024-13-01T00:00:00Z")
    with pytest.raises(ValueError, match=r'^parsing time "\\xd9\\xa2024-01-01T00:00:00Z" as '):
        go_time("\u0662024-01-01T00:00:00Z")


def _duration(text: str) -> str:
    try:
        return format_duration(parse_duration(text))
    except ValueError as exc:
        return ERROR + str(exc)


def test_every_duration_as_go_reads_it() -> None:
    wrong = [(c["in"], c["duration"], got) for c in DURATIONS if (got := _duration(c["in"])) != c["duration"]]
    assert wrong == []
    assert sum(not c["duration"].startswith(ERROR) for c in DURATIONS) > 100


def test_duration_errors_quote_as_go_does() -> None:
    assert _duration("1é") == ERROR + 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'
    assert _duration("92233720368547758070ns") == ERROR + 'time: invalid duration "92233720368547758070ns"'
