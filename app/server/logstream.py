"""The serving process's log stream: the lines of one turn of the event loop in one write.

Every answered review logs a line (:class:`app.server.observability.ReviewLog`). Written and flushed one
by one, each line is a ``write`` system call of its own. :class:`PerTurnStream` wraps the
process's stderr and holds what is written while an event loop runs in the writing thread; a
callback queued on that loop at the first held line writes them all out, in order, as one write
at the end of the turn. Under load a turn answers several reviews (a mutation at 16 connections:
8 lines per write, and 0.0988 against 0.1006 ms of CPU per request, median of 4 alternating
runs); when idle a line still goes out within the turn that logged it, and before the answer it
logs: the answer's bytes are queued after it (:mod:`app.server.transport`).

Anything written outside a running loop (start-up, worker threads answering large reviews, the
CLI, ``logging.shutdown`` at exit) goes straight through, after what is held, so lines keep their
order. Held text also goes out at once past :data:`HOLD_LIMIT` characters, when another loop
starts writing, and on :meth:`PerTurnStream.flush` outside a loop. A stream that fails at a
turn's end loses that turn's lines, as :mod:`logging` drops a line it cannot write; the failure
is not raised into the event loop (whose error report would be logged, held, and fail again).
A signal handler that logs while the stream is writing (the SIGTERM handler) writes through it
again, and its line follows.

A review's line comes in through :meth:`PerTurnStream.write_line`, without the handler's lock
and flush: the stream's own lock keeps each line whole, and a held line is flushed with its turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from asyncio import _get_running_loop
from typing import TextIO

#: Characters held before they are written out without waiting for the turn's end.
HOLD_LIMIT = 64 * 1024


class PerTurnStream:
    """A text stream passing writes made in a running event loop to ``stream`` once per turn."""

    def __init__(self, stream: TextIO, limit: int = HOLD_LIMIT) -> None:
        self.stream = stream
        self.limit = limit
        self._held: list[str] = []
        self._size = 0
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop whose turn end is queued
        # Reentrant: a signal handler runs in the main thread between any two bytecodes, also
        # while this stream holds the lock, and it may log (the SIGTERM handler does); with a
        # plain lock that write would wait for itself forever.
        self._lock = threading.RLock()

    def write(self, text: str) -> int:
        loop = _get_running_loop()
        with self._lock:
            if loop is None:
                self._release()
                return self.stream.write(text)
            self._hold(text, loop)
        return len(text)

    def write_line(self, text: str) -> None:
        """:meth:`write` and, when ``text`` is not held for a turn's end, :meth:`flush` (a review's
        log line, :class:`app.server.observability.ReviewLog`, which calls no ``flush`` of its own)."""
        loop = _get_running_loop()
        with self._lock:
            if loop is None:
                self._release()
                self.stream.write(text)
                self.stream.flush()
            else:
                self._hold(text, loop)

    def _hold(self, text: str, loop: asyncio.AbstractEventLoop) -> None:
        """Hold ``text`` for the end of ``loop``'s turn (the caller holds the lock)."""
        if self._loop is not loop:
            self._release()  # held in another loop, whose turn may never end
            self._loop = loop
            loop.call_soon(self._end_turn, loop)
        self._held.append(text)
        self._size += len(text)
        if self._size >= self.limit:
            self._release()

    def flush(self) -> None:
        """Write out what is held and flush ``stream``; inside a loop that will end its turn
        with a write, leave that to the turn's end."""
        if self._loop is not None and _get_running_loop() is self._loop:
            return
        with self._lock:
            self._release()
            self.stream.flush()

    def _end_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            if self._loop is not loop:
                return
            self._loop = None
            with contextlib.suppress(OSError, ValueError):  # a broken or closed stream: lines lost
                self._release()

    def _release(self) -> None:
        """Write what is held as one write and flush ``stream`` (the caller holds the lock). A
        write made meanwhile by a signal handler lands in the list taken or in the new one,
        never in between."""
        if not self._held:
            return
        held, self._held = self._held, []
        text = "".join(held)
        self._size = 0
        self.stream.write(text)
        self.stream.flush()
