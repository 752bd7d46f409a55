"""The review log line: written directly in the deployed JSON setup, through logging otherwise,
and the same line either way."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from app.server import observability
from app.server.observability import JSONFormatter, ReviewLog, configure_logging

FIELDS: dict[str, Any] = {
    "webhook": "/validate",
    "uid": "u-1",
    "kind": "DynamoGraphDeployment",
    "operation": "UPDATE",
    "allowed": False,
    "duration_ms": 0.412,
    "object": "ns/name",
    "patched": False,
    "code": 403,
    "detail": 'DynamoGraphDeployment.nvidia.com "x" is invalid: spec: <\u2028>',
}


@pytest.fixture
def json_logging() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, observability._direct)
    configure_logging("json", "info")
    stream = io.StringIO()
    assert observability._direct is not None
    observability._direct[0].setStream(stream)
    try:
        yield stream
    finally:
        root.handlers[:], root.level, observability._direct = saved[0], saved[1], saved[2]


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in stream.getvalue().split("\n") if line]


def test_direct_line_equals_the_formatters(
    json_logging: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    review_log = ReviewLog("dynamo_webhook.review")
    assert observability._direct is not None
    # pytest's own log capture adds a handler for the test's call phase: the deployed setup has one.
    monkeypatch.setattr(logging.getLogger(), "handlers", [observability._direct[0]])
    with monkeypatch.context() as m:
        m.setattr(review_log.logger, "info", lambda *a, **k: pytest.fail("the line went through logging"))
        review_log.info(dict(FIELDS))
    logging.getLogger("dynamo_webhook.review").info("review", extra=dict(FIELDS))
    direct, formatted = _lines(json_logging)
    assert list(direct) == list(formatted)  # same members in the same order
    assert {k: v for k, v in direct.items() if k != "ts"} == {k: v for k, v in formatted.items() if k != "ts"}
    assert (
        direct["ts"][:16] == formatted["ts"][:16] and direct["ts"].endswith("Z") and len(direct["ts"]) == 24
    )


def test_level_and_added_handlers_are_honoured(json_logging: io.StringIO) -> None:
    log = ReviewLog("dynamo_webhook.review")
    logging.getLogger().setLevel("WARNING")
    log.info(dict(FIELDS))
    assert json_logging.getvalue() == ""
    logging.getLogger().setLevel("INFO")
    records: list[logging.LogRecord] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    capture = Capture()
    logging.getLogger().addHandler(capture)
    try:
        log.info(dict(FIELDS))
    finally:
        logging.getLogger().removeHandler(capture)
    # A second handler: the line goes through logging, so both handlers get it.
    assert len(records) == 1 and records[0].getMessage() == "review" and records[0].uid == "u-1"  # type: ignore[attr-defined]
    assert len(_lines(json_logging)) == 1


def test_text_format_goes_through_logging(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, observability._direct)
    try:
        configure_logging("text", "info")
        assert observability._direct is None
        assert not isinstance(root.handlers[0].formatter, JSONFormatter)
    finally:
        root.handlers[:], root.level, observability._direct = saved[0], saved[1], saved[2]


@pytest.mark.parametrize("msecs", [0.0, 0.999, 7.5, 99.0, 500.4999, 999.0, 999.99])
def test_timestamp_prints_the_whole_milliseconds(msecs: float) -> None:
    formatter = JSONFormatter()
    created = 1_790_000_000 + msecs / 1000
    ts = formatter._timestamp(created, msecs)
    assert ts == f"2026-09-21T14:13:20.{int(msecs):03d}Z"
    # the second's part is cached: a later second is printed anew
    assert formatter._timestamp(created + 61, msecs).startswith("2026-09-21T14:14:21.")
