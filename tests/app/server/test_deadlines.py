"""The body read's deadline (``--body-timeout``): a body that does not arrive in time is answered
408 with the connection closed after, one that does is never cancelled afterwards, another cancellation of the task stays a
cancellation, and the one timer stops once no read is registered."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
import pytest

from app.server.deadlines import BodyDeadlines
from app.server.routes import AppState, create_app
from app.server.settings import Settings
from domain.admission import AdmissionContext
from tests.app.conftest import admission_review

Message = dict[str, Any]


def _scope(body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/validate",
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }


def test_a_body_that_does_not_arrive_in_time_is_answered_408() -> None:
    settings = Settings(body_timeout=0.2)
    app = create_app(
        AppState(settings=settings, admission=AdmissionContext(settings=settings.admission_settings()))
    )
    body = orjson.dumps(admission_review(uid="late"))
    sent: list[Message] = []

    async def main() -> float:
        first = True

        async def receive() -> Message:
            nonlocal first
            if first:  # half the body, then nothing more
                first = False
                return {"type": "http.request", "body": body[:20], "more_body": True}
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        async def send(message: Message) -> None:
            sent.append(message)

        started = time.monotonic()
        await app(_scope(body), receive, send)
        return time.monotonic() - started

    elapsed = asyncio.run(main())
    assert 0.2 <= elapsed < 0.2 + 0.02 + 0.5  # the timeout, its resolution (a tenth), scheduling slack
    start, answer = sent
    assert start["status"] == 408
    assert (b"connection", b"close") in start["headers"]  # the rest of the body would follow
    assert orjson.loads(answer["body"]) == {"error": "request body not received within 0.2 s", "code": 408}


def test_a_read_that_ended_is_not_cancelled_later() -> None:
    deadlines = BodyDeadlines(0.05, resolution=0.01)

    async def main() -> int:
        read = deadlines.start()
        deadlines.finish(read)
        await asyncio.sleep(0.15)  # well past the deadline: no cancellation reaches the task
        return deadlines.pending()

    assert asyncio.run(main()) == 0


def test_an_expired_read_times_out_and_other_reads_go_on() -> None:
    deadlines = BodyDeadlines(0.05, resolution=0.01)
    outcomes: list[str] = []

    async def reader(wait: float) -> None:
        read = deadlines.start()
        try:
            await asyncio.sleep(wait)
            outcomes.append(f"read {wait}")
        except asyncio.CancelledError:
            assert read.timed_out()
            outcomes.append(f"timed out {wait}")
        finally:
            deadlines.finish(read)

    async def main() -> None:
        await asyncio.gather(reader(0.01), reader(10), reader(0.02))
        assert deadlines.pending() == 0

    asyncio.run(main())
    assert sorted(outcomes) == ["read 0.01", "read 0.02", "timed out 10"]


def test_another_cancellation_stays_a_cancellation() -> None:
    deadlines = BodyDeadlines(0.05, resolution=0.01)

    async def main() -> None:
        async def reader(sleep: float) -> bool:
            read = deadlines.start()
            try:
                await asyncio.sleep(sleep)
            except asyncio.CancelledError:
                if read.timed_out():
                    return True
                raise
            finally:
                deadlines.finish(read)
            return False

        # Cancelled before its deadline: a cancellation.
        task = asyncio.create_task(reader(10))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Cancelled by someone else after the deadline fired too: still a cancellation.
        task = asyncio.create_task(reader(10))
        await asyncio.sleep(0)
        for read in list(deadlines._reads):
            read.deadline = 0  # expire at the next sweep
        task.cancel()
        deadlines._sweep()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Only the deadline: a timeout.
        assert await asyncio.create_task(reader(10)) is True

    asyncio.run(main())


def test_the_timer_is_armed_only_while_reads_are_registered() -> None:
    deadlines = BodyDeadlines(1.0, resolution=0.01)

    async def main() -> None:
        for _ in range(100):
            deadlines.finish(deadlines.start())
        assert deadlines._timer is not None  # one timer for all the reads above
        await asyncio.sleep(0.05)
        assert deadlines._timer is None  # it fired, found no read and was not armed again

    asyncio.run(main())


def test_a_new_event_loop_gets_its_own_timer() -> None:
    deadlines = BodyDeadlines(0.05, resolution=0.01)

    async def expire() -> bool:
        read = deadlines.start()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return read.timed_out()
        finally:
            deadlines.finish(read)
        return False

    async def leave_a_timer() -> None:
        deadlines.start()  # never finished: its loop closes with the timer armed

    asyncio.run(leave_a_timer())
    assert asyncio.run(expire()) is True


def test_the_resolution_is_a_tenth_of_the_timeout_up_to_a_second() -> None:
    assert BodyDeadlines(0.2).resolution == pytest.approx(0.02)
    assert BodyDeadlines(30).resolution == 1.0
