"""The serving processes' log stream: a turn's lines in one write, in order, and nothing held
outside an event loop."""

from __future__ import annotations

import asyncio
import io
import logging
import threading
from collections.abc import Callable, Iterator

import orjson
import pytest

from app.server import observability
from app.server.logstream import PerTurnStream
from app.server.observability import ReviewLog, configure_logging


class Recorder(io.StringIO):
    """A stream that keeps each write apart."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []
        self.flushes = 0

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)

    def flush(self) -> None:
        self.flushes += 1


class Broken(Recorder):
    def write(self, text: str) -> int:
        raise OSError("broken pipe")


def test_outside_a_loop_each_write_goes_straight_through() -> None:
    out = Recorder()
    stream = PerTurnStream(out)
    stream.write("a\n")
    assert out.writes == ["a\n"]
    stream.write("b\n")
    stream.flush()
    assert out.writes == ["a\n", "b\n"] and out.flushes == 1


def test_a_turns_lines_reach_the_stream_as_one_write_at_its_end() -> None:
    out = Recorder()
    stream = PerTurnStream(out)
    seen: list[list[str]] = []

    async def main() -> None:
        for line in ("a\n", "b\n", "c\n"):
            stream.write(line)
            stream.flush()  # as a handler flushes after each line: left to the turn's end
        seen.append(list(out.writes))
        await asyncio.sleep(0)
        seen.append(list(out.writes))
        stream.write("d\n")
        await asyncio.sleep(0)

    asyncio.run(main())
    assert seen == [[], ["a\nb\nc\n"]]
    assert out.writes == ["a\nb\nc\n", "d\n"]


def test_a_write_from_another_thread_follows_what_the_loop_holds() -> None:
    out = Recorder()
    stream = PerTurnStream(out)

    async def main() -> None:
        stream.write("loop\n")
        thread = threading.Thread(target=stream.write, args=("thread\n",))
        thread.start()
        thread.join()
        assert out.writes == ["loop\n", "thread\n"]
        stream.write("later\n")
        await asyncio.sleep(0)

    asyncio.run(main())
    assert out.writes == ["loop\n", "thread\n", "later\n"]


def test_text_past_the_limit_goes_out_at_once() -> None:
    out = Recorder()
    stream = PerTurnStream(out, limit=10)

    async def main() -> None:
        stream.write("12345\n")
        assert out.writes == []
        stream.write("67890\n")
        assert out.writes == ["12345\n67890\n"]
        stream.write("x\n")
        await asyncio.sleep(0)

    asyncio.run(main())
    assert out.writes == ["12345\n67890\n", "x\n"]


def _write_in_a_last_turn(stream: PerTurnStream, text: str) -> None:
    """``text`` written in the turn a loop stops in: the turn-end callback never runs."""
    loop = asyncio.new_event_loop()
    try:

        def last() -> None:
            loop.stop()
            stream.write(text)

        loop.call_soon(last)
        loop.run_forever()
    finally:
        loop.close()


def test_lines_held_when_a_loop_stopped_come_first_afterwards() -> None:
    out = Recorder()
    stream = PerTurnStream(out)
    _write_in_a_last_turn(stream, "last of loop 1\n")

    async def in_another_loop() -> None:
        stream.write("loop 2\n")
        await asyncio.sleep(0)

    assert out.writes == []
    asyncio.run(in_another_loop())
    assert out.writes == ["last of loop 1\n", "loop 2\n"]
    stream.write("x\n")
    assert out.writes[-1] == "x\n"


def test_flush_outside_a_loop_writes_out_what_is_held() -> None:
    out = Recorder()
    stream = PerTurnStream(out)
    _write_in_a_last_turn(stream, "held\n")
    assert out.writes == []
    stream.flush()  # what logging.shutdown does at exit
    assert out.writes == ["held\n"]


class Interrupted(Recorder):
    """A stream during whose next write a signal handler runs and logs (the main thread runs a
    handler between any two bytecodes, also while the stream holds its lock)."""

    def __init__(self) -> None:
        super().__init__()
        self.handler: Callable[[], None] | None = None

    def write(self, text: str) -> int:
        handler, self.handler = self.handler, None
        if handler is not None:
            handler()
        return super().write(text)


def _finishes(target: Callable[[], None]) -> bool:
    """Whether ``target`` returns within 10 seconds (a deadlock would hold its thread forever)."""
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    return not thread.is_alive()


def test_a_signal_handler_logging_while_a_turns_lines_are_written_does_not_deadlock() -> None:
    out = Interrupted()
    stream = PerTurnStream(out)

    async def main() -> None:
        out.handler = lambda: stream.write("shutting down\n")
        stream.write("a\n")
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    assert _finishes(lambda: asyncio.run(main()))
    assert out.getvalue() == "a\nshutting down\n"


def test_a_signal_handler_logging_while_a_line_goes_straight_through_does_not_deadlock() -> None:
    out = Interrupted()
    stream = PerTurnStream(out)
    out.handler = lambda: stream.write("shutting down\n")
    assert _finishes(lambda: stream.write("a\n"))
    assert out.getvalue() == "shutting down\na\n"


def test_a_broken_stream_loses_the_turns_lines_without_failing_the_loop() -> None:
    out = Broken()
    stream = PerTurnStream(out)
    errors: list[object] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: errors.append(context))
        stream.write("lost\n")
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert errors == []
    with pytest.raises(OSError):
        stream.write("outside a loop the writer sees the error\n")


@pytest.fixture
def per_turn_logging() -> Iterator[Recorder]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, observability._direct)
    configure_logging("json", "info", per_turn=True)
    out = Recorder()
    assert observability._direct is not None
    handler = observability._direct[0]
    assert isinstance(handler.stream, PerTurnStream)
    handler.stream.stream = out
    try:
        yield out
    finally:
        root.handlers[:], root.level, observability._direct = saved[0], saved[1], saved[2]


def test_review_lines_and_other_records_keep_their_order(
    per_turn_logging: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert observability._direct is not None
    # pytest's own log capture adds a handler for the test's call phase: the deployed setup has one.
    monkeypatch.setattr(logging.getLogger(), "handlers", [observability._direct[0]])
    review_log = ReviewLog("dynamo_webhook.review")

    async def main() -> None:
        review_log.info({"uid": "u-1"})
        logging.getLogger("dynamo_webhook.server").warning("between")
        review_log.info({"uid": "u-2"})
        assert per_turn_logging.writes == []
        await asyncio.sleep(0)

    asyncio.run(main())
    assert len(per_turn_logging.writes) == 1
    lines = [orjson.loads(line) for line in per_turn_logging.writes[0].splitlines()]
    assert [(line["msg"], line.get("uid")) for line in lines] == [
        ("review", "u-1"),
        ("between", None),
        ("review", "u-2"),
    ]


def test_a_review_line_outside_a_loop_is_written_and_flushed_at_once(
    per_turn_logging: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A large review is answered on a worker thread, outside the loop: its line is not held.
    assert observability._direct is not None
    monkeypatch.setattr(logging.getLogger(), "handlers", [observability._direct[0]])
    review_log = ReviewLog("dynamo_webhook.review")
    thread = threading.Thread(target=review_log.info, args=({"uid": "u-thread"},))
    thread.start()
    thread.join()
    assert len(per_turn_logging.writes) == 1 and per_turn_logging.flushes == 1
    assert orjson.loads(per_turn_logging.writes[0])["uid"] == "u-thread"

    async def main() -> None:
        review_log.info({"uid": "u-loop"})  # held for the turn's end, flushed with it
        assert len(per_turn_logging.writes) == 1 and per_turn_logging.flushes == 1
        await asyncio.sleep(0)

    asyncio.run(main())
    assert [orjson.loads(w)["uid"] for w in per_turn_logging.writes] == ["u-thread", "u-loop"]
    assert per_turn_logging.flushes == 2


def test_a_review_line_the_stream_cannot_take_is_reported_by_the_handler(
    per_turn_logging: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert observability._direct is not None
    handler = observability._direct[0]
    monkeypatch.setattr(logging.getLogger(), "handlers", [handler])
    assert isinstance(handler.stream, PerTurnStream)
    handler.stream.stream = Broken()
    reported: list[logging.LogRecord] = []
    monkeypatch.setattr(handler, "handleError", reported.append)
    ReviewLog("dynamo_webhook.review").info({"uid": "u-1"})  # outside a loop: straight through
    assert [r.getMessage() for r in reported] == ["review"]


def test_only_the_serving_processes_hold_lines() -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, observability._direct)
    try:
        configure_logging("json", "info")
        assert not isinstance(root.handlers[0].stream, PerTurnStream)  # type: ignore[attr-defined]
        configure_logging("text", "info", per_turn=True)
        assert isinstance(root.handlers[0].stream, PerTurnStream)  # type: ignore[attr-defined]
    finally:
        root.handlers[:], root.level, observability._direct = saved[0], saved[1], saved[2]
