"""The deadline of a request body's read (``--body-timeout``), kept by one timer for all reads.

A review's body must arrive within the body timeout, or the request is answered 408. A timer per
request (``asyncio.timeout``) is armed and cancelled on every review, though nearly every body is
already in the server's buffer when its handler reads it: on a small review that is a tenth of
the HTTP layer's own CPU time. Here a read registers its task and deadline in a set (an insert
and a delete), and one timer, armed while reads are registered and at most once per
``resolution``, cancels the reads whose deadline has passed. A read so times out between the
timeout and the timeout plus ``resolution`` after it started.

A cancelled read tells the expiry from any other cancellation as ``asyncio.timeout`` does: it
raises its timeout only when no other cancellation of the task is pending.
"""

from __future__ import annotations

import asyncio

#: The most a timeout may be late by (a tenth of the timeout when that is less).
MAX_RESOLUTION = 1.0


class Read:
    """One registered read: its task, deadline (loop time), and whether the deadline fired."""

    __slots__ = ("cancelling", "deadline", "fired", "task")

    def __init__(self, task: asyncio.Task[object], deadline: float) -> None:
        self.task = task
        self.deadline = deadline
        self.cancelling = task.cancelling()
        self.fired = False

    def timed_out(self) -> bool:
        """On a ``CancelledError`` in the read: whether it is this deadline's (and so to be
        answered as a timeout) rather than another cancellation of the task."""
        return self.fired and self.task.uncancel() <= self.cancelling


class BodyDeadlines:
    """The reads in progress on one event loop, and the timer that expires them."""

    __slots__ = ("_loop", "_reads", "_timer", "resolution", "timeout")

    def __init__(self, timeout: float, resolution: float | None = None) -> None:
        self.timeout = timeout
        self.resolution = resolution if resolution is not None else min(MAX_RESOLUTION, timeout / 10)
        self._reads: set[Read] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> Read:
        """Register the current task's read, to be cancelled once the timeout has passed."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a body read runs in a task")
        loop = task.get_loop()
        if loop is not self._loop:  # a new loop (a test's): the old one's timer and reads are gone
            self._loop, self._timer, self._reads = loop, None, set()
        read = Read(task, loop.time() + self.timeout)
        self._reads.add(read)
        if self._timer is None:
            self._timer = loop.call_later(self.resolution, self._sweep)
        return read

    def finish(self, read: Read) -> None:
        """The read ended (however): its deadline no longer applies."""
        self._reads.discard(read)

    def pending(self) -> int:
        """How many reads are registered."""
        return len(self._reads)

    def _sweep(self) -> None:
        self._timer = None
        loop = self._loop
        if loop is None:
            return
        now = loop.time()
        for read in [r for r in self._reads if r.deadline <= now]:
            self._reads.discard(read)
            read.fired = True
            read.task.cancel()
        if self._reads:
            self._timer = loop.call_later(self.resolution, self._sweep)
