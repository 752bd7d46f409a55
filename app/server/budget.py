"""One memory budget for a serving process: what every request may hold, summed.

Each request is bounded on its own (body limits, one object at a time for large conversions),
but a pod is killed for the sum: several large reviews at once, bodies that were promised and
never sent, retries of requests whose callers have gone. An OOM-killed pod fails every Dynamo
write (``failurePolicy: Fail``) and every read through the conversion webhook until it restarts.
So each request reserves, before it reads a byte of its body, what answering it may take at its
peak (:func:`charge`: its body plus the work, measured per kind of review), and gives it back
once its answer is sent. When the budget is spent the request waits, its socket not read (TCP
flow control holds the sender), first come first served; one that cannot be had within its wait
is refused with a 503, one that could never fit with a 413. A declared ``Content-Length``
reserves budget, never memory: memory follows the bytes that arrive.

Two lanes share the budget. Admission reviews (every write, with a 10 s timeout) may use all of
it; conversions may use all but :data:`ADMISSION_RESERVE`, so a cluster's LISTs never leave a
write waiting. Waiters of one lane do not queue behind the other's.

The total defaults from the memory limit the process runs under (:func:`default_budget`: the
cgroup's, less the supervisor's when there are several workers, shared by the workers) less what a
serving process holds at rest. The default number of workers is no more than that limit holds
(:func:`workers_that_fit`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from prometheus_client import Counter, Gauge

MiB = 1024 * 1024

BUDGET_BYTES = Gauge(
    "dynamo_webhook_memory_budget_bytes",
    "The memory budget of the server's processes (state=total) and what requests hold of it (state=in_use).",
    ["state"],
    multiprocess_mode="livesum",
)
BUDGET_REFUSALS = Counter(
    "dynamo_webhook_memory_budget_refusals_total",
    "Requests refused for the memory budget, by HTTP status: 503 (not had in time), 413 (could never fit).",
    ["code"],
)

Lane = Literal["admission", "convert"]
LANES: tuple[Lane, ...] = ("admission", "convert")

#: Budget only admission reviews may use: what conversions, however many, always leave free.
ADMISSION_RESERVE = 16 * MiB
#: What a serving process holds at rest (the rule tables, schemas, the interpreter: 80–85 MiB
#: measured), kept out of the budget, with room for what the charges below leave out (TLS
#: buffers, the allocator's fragmentation: up to 30 MiB measured under the hostile mix).
RESIDENT = 128 * MiB
#: What the supervisor of ``serve --workers N`` (N > 1) holds beside its workers: it loads what a
#: worker does (the cert loop reads the kind registry) and serves no request (78 MiB measured, and
#: 12 MiB for multiprocessing's resource tracker).
SUPERVISOR = 96 * MiB
#: What a serving process holds at rest, of :data:`RESIDENT` (80–85 MiB measured), with a little
#: room for the allocator.
AT_REST = 88 * MiB
#: What one open connection may hold outside the budget: OpenSSL's state, the TLS layer's buffer
#: and what it reads ahead of a request that waits, uvicorn's parser (about 80 KiB idle, at most
#: 200–270 KiB with its request waiting and its body sent: see :mod:`app.server.connections`).
CONNECTION_BYTES = 320 * 1024
#: The most connections a process keeps open by default, and the fewest the default comes to.
MAX_CONNECTIONS = 1000
MIN_CONNECTIONS = 64
#: The budget of a process under no memory limit.
UNLIMITED_BUDGET = 512 * MiB
#: The least budget the default gives: enough for the largest ordinary reviews.
FLOOR = 32 * MiB

#: Peak memory per body byte, the body included (tracemalloc over the review's handling):
#: an AdmissionReview decoded whole, mutated and re-encoded peaks at 17-31 times its body; a
#: small ConversionReview (up to ``streamed_from`` bytes) is decoded whole, like an admission
#: review. A larger one is read one object at a time: its answer, about 1.25 times its body, is
#: held as it is up to :data:`PACKED_FROM` and then sent through the TLS layer, which holds an
#: encrypted copy while a slow client takes it; past that the answer is held compressed, and the
#: review peaks at 1.4 times its body (61 MiB: 85 MiB over the resident set).
ADMISSION_FACTOR = 32
STREAMED_FACTOR = 2.5
PACKED_FROM = 8 * MiB
PACKED_FACTOR = 1.75


def charge(lane: Lane, body_bytes: int, streamed_from: int) -> int:
    """What answering a review of ``body_bytes`` may hold at its peak."""
    if lane == "convert" and body_bytes > streamed_from:
        return int(body_bytes * (STREAMED_FACTOR if body_bytes <= PACKED_FROM else PACKED_FACTOR))
    return max(body_bytes, 1) * ADMISSION_FACTOR


CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


def cgroup_limit(paths: tuple[Path, ...] = CGROUP_LIMITS) -> int | None:
    """The memory limit of this process's cgroup (v2, then v1), or None when there is none."""
    for path in paths:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text == "max" or not text.isdigit():
            return None
        limit = int(text)
        # cgroup v1 says "no limit" with a huge number (a page-rounded LONG_MAX).
        return None if limit >= 1 << 60 else limit
    return None


def _shared(workers: int, limit: int) -> int:
    """What each of ``workers`` serving processes may hold of the memory ``limit``: all of it for one
    process serving alone, else a share of what the supervisor leaves."""
    return limit if workers == 1 else (limit - SUPERVISOR) // workers


def default_budget(workers: int, limit: int | None) -> int:
    """The budget of each of ``workers`` processes sharing the memory ``limit`` (None: none)."""
    if limit is None:
        return UNLIMITED_BUDGET
    return max(_shared(workers, limit) - RESIDENT, FLOOR)


def default_max_connections(workers: int, limit: int | None, budget: int) -> int:
    """The connections one of ``workers`` processes sharing the memory ``limit`` keeps open at once
    beside its ``budget``: what its share leaves beside the budget and :data:`AT_REST`, at
    :data:`CONNECTION_BYTES` each (128 in deploy/'s 256Mi pod), within :data:`MIN_CONNECTIONS`
    and :data:`MAX_CONNECTIONS`."""
    if limit is None:
        return MAX_CONNECTIONS
    room = _shared(workers, limit) - budget - AT_REST
    return min(max(room // CONNECTION_BYTES, MIN_CONNECTIONS), MAX_CONNECTIONS)


def workers_that_fit(limit: int | None) -> int | None:
    """The most workers the memory ``limit`` holds with at least :data:`FLOOR` of budget each
    (:func:`default_budget` is then true: the processes at rest and their budgets add up to no
    more than the limit); at least 1, None without a limit."""
    if limit is None:
        return None
    fit = (limit - SUPERVISOR) // (RESIDENT + FLOOR)
    return fit if fit >= 2 else 1


class BudgetRefused(Exception):
    """A reservation that could not be had: ``code`` 413 (it could never fit) or 503 (not in time).
    Answered as any request refused before its review is read. Not a subclass of
    :class:`app.review.errors.BadRequest`: that class is compiled in the compiled build, and an
    interpreted class cannot extend a compiled one."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CallerGone(Exception):
    """The request's connection closed while it waited."""


@dataclass(eq=False)
class _Waiter:
    amount: int
    granted: asyncio.Event = field(default_factory=asyncio.Event)


class Budget:
    """The bytes the requests of one process may hold at once, in two lanes.

    ``on_idle`` is called when the last reservation is given back after at least ``idle_after``
    bytes were reserved since the last call (the server hands freed memory back to the system
    then)."""

    def __init__(
        self,
        total: int,
        admission_reserve: int = ADMISSION_RESERVE,
        on_idle: Callable[[], None] | None = None,
        idle_after: int = 8 * MiB,
    ) -> None:
        self.total = total
        self.reserve = min(admission_reserve, total)
        self.in_use = 0
        self._in_use_gauge = BUDGET_BYTES.labels("in_use")
        BUDGET_BYTES.labels("total").set(total)
        self._on_idle = on_idle
        self._idle_after = idle_after
        self._since_idle = 0
        self._waiting: dict[Lane, collections.deque[_Waiter]] = {lane: collections.deque() for lane in LANES}

    def lane_limit(self, lane: Lane) -> int:
        """The most the requests of ``lane`` may hold at once."""
        return self.total if lane == "admission" else self.total - self.reserve

    def _fits(self, lane: Lane, amount: int) -> bool:
        if lane == "admission":
            return self.in_use + amount <= self.total
        # Conversions never take what admission reviews are waiting for (the first admission
        # waiter is counted while it is being let in: it is still queued then).
        waiting = sum(w.amount for w in self._waiting["admission"])
        return self.in_use + waiting + amount <= self.total - self.reserve

    def try_reserve(self, lane: Lane, amount: int) -> bool:
        """Reserve ``amount`` now if it fits and nobody of the lane waits before it."""
        if self._waiting[lane] or not self._fits(lane, amount):
            return False
        self._take(amount)
        return True

    def _take(self, amount: int) -> None:
        self.in_use += amount
        self._since_idle += amount
        self._in_use_gauge.inc(amount)

    def refuse(self, code: int, message: str) -> BudgetRefused:
        """A refusal, counted."""
        BUDGET_REFUSALS.labels(str(code)).inc()
        return BudgetRefused(code, message)

    def never_fits(self, lane: Lane, amount: int) -> str | None:
        """Why ``amount`` can never be reserved in ``lane`` (None when it can)."""
        limit = self.lane_limit(lane)
        if amount <= limit:
            return None
        return (
            f"answering it needs about {amount // MiB} MiB of memory, more than this server's "
            f"{limit // MiB} MiB budget for such reviews (--memory-budget)"
        )

    async def acquire(
        self, lane: Lane, amount: int, wait: float, gone: Callable[[], bool] | None = None, poll: float = 0.25
    ) -> None:
        """Reserve ``amount`` in ``lane``, waiting at most ``wait`` seconds (checking ``gone``, the
        caller's connection, every ``poll`` seconds). Raises :class:`BudgetRefused` or
        :class:`CallerGone`; on either, nothing is held."""
        reason = self.never_fits(lane, amount)
        if reason is not None:
            raise self.refuse(413, reason)
        if self.try_reserve(lane, amount):
            return
        waiter = _Waiter(amount)
        queue = self._waiting[lane]
        queue.append(waiter)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        try:
            while not waiter.granted.is_set():
                left = deadline - loop.time()
                if left <= 0:
                    raise self.refuse(
                        503,
                        f"the server's memory budget ({self.total // MiB} MiB) stayed in use by other "
                        f"requests for {wait:g} s; retry",
                    )
                if gone is not None and gone():
                    raise CallerGone()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.granted.wait(), min(poll, left))
        except BaseException:
            if waiter.granted.is_set():
                self.release(amount)
            else:
                queue.remove(waiter)
                self._grant()
            raise

    def release(self, amount: int) -> None:
        """Give back ``amount`` and let in those waiting that now fit."""
        self.in_use -= amount
        self._in_use_gauge.dec(amount)
        self._grant()
        if self.in_use == 0 and self._since_idle >= self._idle_after and self._on_idle is not None:
            self._since_idle = 0
            self._on_idle()

    def _grant(self) -> None:
        # Admission first; in each lane, in order of arrival (the first that does not fit stops its
        # lane, so a large review is not passed over for ever by small ones).
        for lane in LANES:
            queue = self._waiting[lane]
            while queue and self._fits(lane, queue[0].amount):
                waiter = queue.popleft()
                self._take(waiter.amount)
                waiter.granted.set()


class Reservation:
    """What one request holds of ``budget`` in ``lane``: reserved whole before its body is read
    when its length is declared (:meth:`acquire`), else as its bytes arrive (:meth:`grow`, which
    never waits: a request half read cannot wait for others that may be waiting for it)."""

    __slots__ = ("budget", "fixed", "held", "lane", "streamed_from")

    def __init__(self, budget: Budget, lane: Lane, streamed_from: int) -> None:
        self.budget = budget
        self.lane: Lane = lane
        self.streamed_from = streamed_from
        self.held = 0
        self.fixed = False

    async def acquire(self, length: int, wait: float, gone: Callable[[], bool] | None) -> None:
        amount = charge(self.lane, length, self.streamed_from)
        await self.budget.acquire(self.lane, amount, wait, gone)
        self.held = amount
        self.fixed = True

    def grow(self, size: int) -> None:
        """Hold what a body of ``size`` bytes so far needs (nothing to do when reserved whole)."""
        if self.fixed:
            return
        more = charge(self.lane, size, self.streamed_from) - self.held
        if more <= 0:
            return
        budget = self.budget
        reason = budget.never_fits(self.lane, self.held + more)
        if reason is not None:
            raise budget.refuse(413, reason)
        if not budget.try_reserve(self.lane, more):
            raise budget.refuse(
                503,
                f"the server's memory budget ({budget.total // MiB} MiB) is in use by other requests; retry",
            )
        self.held += more

    def release(self) -> None:
        held, self.held = self.held, 0
        if held:
            self.budget.release(held)


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def request_timeout(query: bytes) -> float | None:
    """The ``timeout`` the API server puts in a webhook's URL (a Go duration: ``10s``, ``1m0s``),
    in seconds; None when there is none, or it is not a duration."""
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        if name != b"timeout":
            continue
        text = value.decode("latin-1")
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            return None
        return sum(float(n) * _UNITS[u] for n, u in parts)
    return None
