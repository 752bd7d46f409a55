"""The HTTPS server's connections against slow and hostile clients: how many are open at once, how
long a TLS handshake and a request's headers may take, and how long an answer may wait for its
client.

- **Cap** (``max_connections``, per server process). A connection accepted while that many are open
  (TLS handshakes in progress included) is closed at once, before any TLS work; a log line (at
  most one per ten seconds, with the count) and ``dynamo_webhook_connections_closed_total{reason=
  "limit"}`` say so.
- **Handshake** (``header_timeout``). uvloop's TLS layer is put on each connection here, with that
  handshake timeout; it aborts a handshake that does not finish in time.
- **Headers** (``header_timeout``). The first request's headers must be complete that long after
  the connection is established, each later request's that long after its first byte; the
  connection is closed otherwise. Nothing is done per request for it: one timer per server
  (:class:`ConnectionWatch`) looks at every connection once per ``resolution`` and reads uvicorn's
  own state (a request whose headers are complete has its cycle; the one being parsed has only its
  scope). A connection so times out between the timeout and the timeout plus two resolutions.
- **Answers** (``send_timeout``). An answer the client does not take (its bytes still buffered in
  the process or in the kernel) resets the connection (RST) once no byte of it has left for that
  long, with a log line. The TLS layer's own shutdown timer, which ended a closed connection 30 s
  after its close and dropped what was still buffered (a clean end after a short body), is set
  beyond any transfer (:data:`SHUTDOWN_BACKSTOP`): an answer is delivered whole or the connection
  reset, never cut short. A closed connection whose answer has left but whose client does not end
  the TLS session is dropped after the same time.
- **Heads** (``max_header_bytes``). A request's head (request line and headers) longer than that, or
  a URL longer than :data:`MAX_URL_BYTES`, is answered 431 (414 for the URL) with ``connection:
  close`` and its connection closed, with a log line and ``reason="header_too_large"`` (or
  ``"uri_too_long"``); the bytes are counted as they arrive, before the parser holds them
  (:class:`~app.server.transport.CoalescingHttpToolsProtocol`).
- **Read-ahead**. uvloop's TLS layer reads up to 256 KiB from the socket at a time and, while its
  HTTP protocol reads nothing, keeps 256 KiB more of ciphertext before it stops reading: a request
  waiting for the memory budget with its body sent had about 1 MiB of it read ahead, which no budget
  counts (200 such connections took a 256Mi pod's process to 274 MiB). Here each read is offered
  :data:`READ_BYTES` (:class:`SmallReads`, between the socket and the TLS layer), the TLS layer
  stops reading the socket as soon as it holds ciphertext its HTTP protocol has not asked for
  (a read buffer high-water mark of one byte), and the HTTP protocol asks for nothing of a body until the app
  reads it (:class:`~app.server.transport.CoalescingHttpToolsProtocol`): what a waiting request's
  connection holds is at most about three reads.
- **Memory**. Each TLS connection takes tens of KB from the C allocator (OpenSSL's state, the TLS
  layer's buffers), which glibc keeps once they are freed: a thousand connections closed left the
  process some 50 MB larger for good. Once :data:`RELEASE_AFTER` connections have closed since the
  most open, and when the last one has, the sweep hands that memory back
  (:func:`app.server.memory.release`, on a thread of its own).

:class:`ServingLoop` is the event loop of a server process; its ``create_server`` puts a
:class:`TlsGate` in front of every TLS connection of the server uvicorn asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import logging
import socket
import ssl
import struct
import termios
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import uvloop
from prometheus_client import Counter
from uvloop.loop import SSLProtocol  # type: ignore[attr-defined]  # the TLS layer of its servers

from app.server import memory
from app.server.budget import cgroup_limit, default_max_connections
from app.server.settings import Settings

log = logging.getLogger("dynamo_webhook.connections")

CONNECTIONS_CLOSED = Counter(
    "dynamo_webhook_connections_closed_total",
    "Connections the server closed itself, by reason: limit (over max_connections), handshake_timeout, "
    "header_timeout, send_timeout (reset), header_too_large (431), uri_too_long (414).",
    ["reason"],
)

#: The most a deadline may be late by (a tenth of the shorter timeout when that is less).
MAX_RESOLUTION = 1.0
#: Seconds between two log lines of the same kind of closed connections.
LOG_INTERVAL = 10.0
#: The TLS layer's shutdown timeout: longer than any answer takes (``send_timeout`` bounds them).
SHUTDOWN_BACKSTOP = 24 * 3600.0
#: ``SO_LINGER`` on, zero seconds: closing the socket sends RST and drops what is unsent.
LINGER_RESET = struct.pack("ii", 1, 0)
#: Connections closed (from the most open since the last release) before the allocator's free
#: memory is handed back.
RELEASE_AFTER = 200
#: The most read from a TLS connection's socket at a time (TLS records are at most 16 KiB).
READ_BYTES = 32 * 1024
#: The ``header_key`` of a connection whose first request's headers are not complete yet.
FIRST_REQUEST = object()
#: The longest request head (request line and headers) read by default: see ``max_header_bytes``.
MAX_HEADER_BYTES = 64 * 1024
#: The longest URL (request target) read; a longer one is a 414. Webhook paths are a few dozen
#: bytes; this is the request line nginx and Apache take by default.
MAX_URL_BYTES = 8 * 1024
#: The ``dynamo_webhook_connections_closed_total`` reason of a head refused, by its status.
HEAD_REFUSED = {414: "uri_too_long", 431: "header_too_large"}


@dataclass(frozen=True, slots=True)
class Limits:
    max_connections: int = 1000
    header_timeout: float = 10.0
    send_timeout: float = 30.0
    max_header_bytes: int = MAX_HEADER_BYTES

    @classmethod
    def from_settings(cls, settings: Settings, budget: int) -> Limits:
        """The settings' limits; without ``max_connections``, what the memory limit leaves beside the
        process's ``budget`` (:func:`app.server.budget.default_max_connections`)."""
        connections = settings.max_connections
        if connections is None:
            connections = default_max_connections(settings.workers, cgroup_limit(), budget)
        return cls(
            connections,
            settings.header_timeout,
            settings.send_timeout,
            settings.max_header_bytes,
        )


class WatchedConnection(Protocol):
    """What the watch reads of an HTTP protocol (uvicorn's ``transport``, ``scope`` and ``cycle``)
    and the state it keeps on it."""

    transport: Any
    scope: Any
    cycle: Any
    header_key: object
    header_since: float
    send_pending: int
    send_since: float | None


class Throttled:
    """A log line for events that may come by the thousand: the first at once, then at most one
    per ``interval`` seconds, each with the count since the previous line."""

    __slots__ = ("_level", "_message", "_next", "_unlogged", "interval")

    def __init__(self, level: int, message: str, interval: float = LOG_INTERVAL) -> None:
        self._level, self._message, self.interval = level, message, interval
        self._next = 0.0
        self._unlogged = 0

    def note(self, now: float, **extra: Any) -> None:
        self._unlogged += 1
        if now < self._next:
            return
        log.log(self._level, self._message, extra={**extra, "connections": self._unlogged})
        self._unlogged = 0
        self._next = now + self.interval


def unsent_in_kernel(transport: Any) -> int:
    """Bytes written to the connection's socket and not yet acknowledged by the client (0 when
    this cannot be told)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    except (OSError, ValueError, AttributeError):
        return 0
    return int(struct.unpack("i", raw)[0])


def reset(transport: Any) -> None:
    """End the connection with RST (what is unsent is dropped, and the client sees that it was)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RESET)
    transport.abort()


class ConnectionWatch:
    """The connections of one server: their count, and the one timer that enforces the header
    and answer deadlines."""

    def __init__(self, limits: Limits, loop: asyncio.AbstractEventLoop) -> None:
        self.limits = limits
        self.loop = loop
        self.handshaking = 0
        self.connections: set[WatchedConnection] = set()
        self.most = 0  # the most connections open since memory was last released
        self.resolution = min(MAX_RESOLUTION, min(limits.header_timeout, limits.send_timeout) / 10)
        self._timer: asyncio.TimerHandle | None = None
        self._over_limit = Throttled(logging.WARNING, "connection limit reached: new connections closed")
        self._slow_headers = Throttled(
            logging.INFO, "request headers not received in time: connections closed"
        )
        self._slow_handshakes = Throttled(
            logging.INFO, "TLS handshake not finished in time: connections closed"
        )
        self._unread = Throttled(logging.WARNING, "answer not taken by the client in time: connections reset")
        self._large_heads = Throttled(
            logging.WARNING, "request head too large: answered 431 or 414, connections closed"
        )

    def open(self) -> int:
        """Connections open: established ones and handshakes in progress."""
        return self.handshaking + len(self.connections)

    def admit(self) -> bool:
        """Whether a connection just accepted may stay (counted as closed for the limit if not)."""
        open_ = self.open()
        if open_ < self.limits.max_connections:
            if open_ >= self.most:
                self.most = open_ + 1
            if self._timer is None:
                self._timer = self.loop.call_later(self.resolution, self._sweep)
            return True
        CONNECTIONS_CLOSED.labels("limit").inc()
        self._over_limit.note(self.loop.time(), max_connections=self.limits.max_connections)
        return False

    def handshake_done(self, raw: Any, waiter: asyncio.Future[None]) -> None:
        """A handshake ended: the connection is established (and counted as such), or it failed."""
        self.handshaking -= 1
        exc = None if waiter.cancelled() else waiter.exception()
        if exc is None:
            return
        if isinstance(exc, ConnectionAbortedError):  # uvloop's handshake timeout
            CONNECTIONS_CLOSED.labels("handshake_timeout").inc()
            self._slow_handshakes.note(self.loop.time(), header_timeout=self.limits.header_timeout)
        raw.abort()

    def head_refused(self, status: int) -> None:
        """A request's head was refused with ``status`` (414 or 431) and its connection closed."""
        CONNECTIONS_CLOSED.labels(HEAD_REFUSED[status]).inc()
        self._large_heads.note(
            self.loop.time(), max_header_bytes=self.limits.max_header_bytes, max_url_bytes=MAX_URL_BYTES
        )

    def add(self, conn: WatchedConnection) -> None:
        """An established connection (its first request's headers timed from now)."""
        conn.header_key = FIRST_REQUEST
        conn.header_since = self.loop.time()
        conn.send_pending, conn.send_since = 0, None
        self.connections.add(conn)

    def discard(self, conn: WatchedConnection) -> None:
        self.connections.discard(conn)

    def _sweep(self) -> None:
        self._timer = None
        now = self.loop.time()
        for conn in list(self.connections):
            transport = conn.transport
            closing = transport.is_closing()
            if closing or transport.get_write_buffer_size():
                self._check_answer(conn, transport, closing, now)
            else:
                conn.send_since = None
            if not closing:
                self._check_headers(conn, transport, now)
        open_ = self.open()
        if self.most - open_ >= RELEASE_AFTER or (not open_ and self.most):
            memory.release_in_background()
            self.most = open_
        if open_:
            self._timer = self.loop.call_later(self.resolution, self._sweep)

    def _check_headers(self, conn: WatchedConnection, transport: Any, now: float) -> None:
        cycle = conn.cycle
        if cycle is None:
            key: object = FIRST_REQUEST
        else:
            scope = conn.scope
            if cycle.scope is scope:  # the current request's headers are complete
                conn.header_key = None
                return
            key = scope  # the next request's headers are being read (since at most a resolution ago)
        if conn.header_key is not key:
            conn.header_key, conn.header_since = key, now
        elif now - conn.header_since >= self.limits.header_timeout:
            CONNECTIONS_CLOSED.labels("header_timeout").inc()
            self._slow_headers.note(now, header_timeout=self.limits.header_timeout)
            transport.abort()

    def _check_answer(self, conn: WatchedConnection, transport: Any, closing: bool, now: float) -> None:
        pending = transport.get_write_buffer_size() + unsent_in_kernel(transport)
        if conn.send_since is None or pending != conn.send_pending:
            conn.send_pending, conn.send_since = pending, now
            return
        if now - conn.send_since < self.limits.send_timeout:
            return
        conn.send_since = None
        if pending:
            CONNECTIONS_CLOSED.labels("send_timeout").inc()
            self._unread.note(now, send_timeout=self.limits.send_timeout, unsent_bytes=pending)
            reset(transport)
        elif closing:  # everything delivered; the client does not end the TLS session
            transport.abort()


class TlsGate(asyncio.Protocol):
    """The first protocol of an accepted connection: closes it at once over the limit, else puts
    the TLS layer in its place (as uvloop's own TLS server does, with this module's timeouts),
    which hands the connection to the HTTP protocol once the handshake is done."""

    def __init__(self, watch: ConnectionWatch, factory: Callable[[], Any], context: ssl.SSLContext) -> None:
        self.watch = watch
        self.factory = factory
        self.context = context

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        raw: Any = transport
        watch = self.watch
        if not watch.admit():
            raw.abort()
            return
        protocol = self.factory()
        protocol.watch = watch
        waiter = watch.loop.create_future()
        tls = SSLProtocol(
            watch.loop,
            protocol,
            self.context,
            waiter,
            server_side=True,
            server_hostname=None,
            ssl_handshake_timeout=watch.limits.header_timeout,
            ssl_shutdown_timeout=SHUTDOWN_BACKSTOP,
        )
        # Synchronously, before the transport starts reading (right after this returns): the
        # ClientHello reaches the TLS layer.
        raw.set_protocol(SmallReads(tls))
        tls.connection_made(raw)
        watch.handshaking += 1
        waiter.add_done_callback(functools.partial(watch.handshake_done, raw))


class SmallReads(asyncio.BufferedProtocol):
    """The socket's protocol in front of uvloop's TLS layer: it offers the socket that layer's own
    read buffer, :data:`READ_BYTES` of it at a time (no copy), and passes everything else on."""

    __slots__ = ("tls",)

    def __init__(self, tls: Any) -> None:
        self.tls = tls

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.tls.connection_made(transport)

    def get_buffer(self, sizehint: int) -> memoryview:
        buffer: memoryview = self.tls.get_buffer(READ_BYTES)
        return buffer[:READ_BYTES]

    def buffer_updated(self, nbytes: int) -> None:
        self.tls.buffer_updated(nbytes)

    def eof_received(self) -> bool | None:
        result: bool | None = self.tls.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        self.tls.connection_lost(exc)

    def pause_writing(self) -> None:
        self.tls.pause_writing()

    def resume_writing(self) -> None:
        self.tls.resume_writing()


class ServingLoop(uvloop.Loop):
    """The event loop of a server process: a TLS server it creates gets a :class:`TlsGate` in
    front of each connection, with ``limits`` (set before the loop runs)."""

    limits: Limits = Limits()
    watches: list[ConnectionWatch]

    async def create_server(  # type: ignore[override]
        self,
        protocol_factory: Callable[[], Any],
        *args: Any,
        ssl: ssl.SSLContext | None = None,
        **kwargs: Any,
    ) -> Any:
        if ssl is None:
            return await super().create_server(protocol_factory, *args, **kwargs)
        watch = ConnectionWatch(self.limits, self)
        self.watches = [*getattr(self, "watches", []), watch]
        context = ssl

        def gate() -> TlsGate:
            return TlsGate(watch, protocol_factory, context)

        return await super().create_server(gate, *args, **kwargs)


def loop_factory(limits: Limits) -> Callable[[], ServingLoop]:
    def new_loop() -> ServingLoop:
        loop = ServingLoop()
        loop.limits = limits
        return loop

    return new_loop
