"""One TLS record per answer: uvicorn's HTTP protocol with its writes coalesced.

uvicorn writes a response in two calls, the status line and headers first, then the body. Over
TLS each write is encrypted into a record of its own and sent with a system call of its own, so a
small review's answer costs two records and two sends, a large part of its CPU time. The
protocol here hands uvicorn a transport that holds the writes made during one turn of the event
loop and passes them on together at the end of it (``loop.call_soon``): the same bytes, in the
same order, in one record and one send. Closing (or aborting) the connection first passes on (or
drops) what is held, so nothing is reordered or lost; everything else is the real transport's.

Each request's scope carries, under :data:`CALLER_GONE`, a function telling whether its
connection has gone (closed by this side, or by the client: :func:`peer_closed`), which the
handlers ask before they start a review and between its objects.

The protocol also puts each connection under its server's :class:`~app.server.connections.ConnectionWatch`
(header and answer deadlines) from ``connection_made`` to ``connection_lost``; nothing is added per
request.

It also caps each request's head (request line and headers: ``max_header_bytes``) and URL
(:data:`~app.server.connections.MAX_URL_BYTES`). httptools and uvicorn gather a URL, a header name
or a header value that comes in several reads by joining the pieces, each join a copy of all so far:
uncapped, a head of tens of MiB held hundreds of MiB and took seconds of the event loop. So the
bytes of a head are counted as they arrive, and the parser is never handed more of one than the
cap: past it, or past the URL's cap, the request is answered 431 (414 for the URL, both as
``{"error", "code"}`` like the port's other errors) with ``connection: close``, once the answers to the requests before it have gone, and the connection is
closed; what the client sends after is read and dropped by the TLS layer. The work per byte stays
that of a head within the cap.
"""

from __future__ import annotations

import asyncio
import functools
import select
import weakref
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from app.server.connections import MAX_HEADER_BYTES, MAX_URL_BYTES, ConnectionWatch

#: The scope extension holding the request's "has the caller gone" function.
CALLER_GONE = "dynamo_webhook.caller_gone"
_HUNG_UP = select.POLLRDHUP | select.POLLHUP | select.POLLERR
#: The body of a refused head's answer, by status: in the shape of every other error answer of the
#: port, ``{"error", "code"}``.
REFUSALS = {
    414: b'{"error":"the request\'s URL is longer than this server reads","code":414}',
    431: b'{"error":"the request\'s head is longer than this server reads","code":431}',
}


def peer_closed(transport: Any) -> bool:
    """Whether the client has closed or shut down its side of the connection, as the kernel
    tells it (``POLLRDHUP``), even while the connection is not read and unread bytes are still
    queued before the end. Go's HTTP server takes a client's end of stream the same way: the
    request's context is cancelled. Safe from any thread; False when it cannot be told."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        poller = select.poll()
        poller.register(sock.fileno(), _HUNG_UP)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


#: Held writes up to this many bytes in all are joined into one (larger ones are passed on as they
#: are, still at the end of the turn: a TLS record holds at most 16 KiB).
JOIN_LIMIT = 64 * 1024


class CoalescingTransport:
    """A transport whose ``write`` calls made in one turn of the event loop reach the wrapped
    transport as one write."""

    __slots__ = ("_held", "_loop", "_scheduled", "transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self._loop = loop
        self._held: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self._held.append(bytes(data))
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        """Pass on what is held (a no-op when nothing is, or when the connection is closing)."""
        self._scheduled = False
        held = self._held
        if not held:
            return
        chunks = list(held)
        held.clear()
        if self.transport.is_closing():
            return
        if len(chunks) == 1:
            self.transport.write(chunks[0])
        elif sum(len(c) for c in chunks) <= JOIN_LIMIT:
            self.transport.write(b"".join(chunks))
        else:
            # A large body fills records of its own: no gain in copying it to join the headers.
            for chunk in chunks:
                self.transport.write(chunk)

    def is_closing(self) -> bool:
        # Asked on every answer: a method of its own is cheaper than the __getattr__ fallback.
        return self.transport.is_closing()

    def get_write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size() + sum(len(b) for b in self._held)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def abort(self) -> None:
        self._held.clear()
        self.transport.abort()

    def __getattr__(self, name: str) -> Any:
        # Reading, flow control, extra info, is_closing: the real transport's.
        return getattr(self.transport, name)


def _caller_gone(protocol: weakref.ref[HttpToolsProtocol]) -> bool:
    """Whether the connection of ``protocol`` has gone (see :func:`peer_closed`)."""
    live = protocol()
    if live is None:
        return True
    transport = live.transport
    return transport.is_closing() or peer_closed(transport)


def refusal(status: int, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole answer refusing a request's head with ``status`` (414 or 431)."""
    body = REFUSALS[status]
    lines = [STATUS_LINE[status]]
    lines += [b"%s: %s\r\n" % header for header in default_headers]
    lines.append(b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body))
    lines.append(b"connection: close\r\n\r\n")
    return b"".join(lines) + body


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol writing through a :class:`CoalescingTransport`, watched by
    ``watch`` (set by :class:`~app.server.connections.TlsGate` before the connection is made), each
    request's head capped."""

    watch: ConnectionWatch | None = None
    # The watch's state of this connection (see ConnectionWatch).
    header_key: object = None
    header_since: float = 0.0
    send_pending: int = 0
    send_since: float | None = None
    #: Bytes of the current request's head read so far; None while its body is read.
    head_bytes: int | None = 0
    #: The status a request's head was refused with (0: none): nothing of the connection is parsed
    #: after it, and its answer is the last.
    refused: int = 0
    max_head: int = MAX_HEADER_BYTES

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        limits = getattr(transport, "set_read_buffer_limits", None)
        if limits is not None:  # TLS: no ciphertext read ahead of what is asked for
            limits(high=1)  # paused while it holds a byte not asked for, resumed once drained
        wrapped = CoalescingTransport(transport, self.loop)
        super().connection_made(wrapped)  # type: ignore[arg-type]
        if self.watch is not None:
            self.max_head = self.watch.limits.max_header_bytes
            self.watch.add(self)

    def data_received(self, data: bytes) -> None:
        while data and not self.refused:
            used = self.head_bytes
            if used is None:  # a body: its bytes are the app's to bound
                super().data_received(data)
                break
            room = self.max_head - used
            if room <= 0:
                self.refused = 431
                break
            # Counted before the parser sees them. A message that ends within ``piece`` sets the
            # count to 0: the next head is counted from the next piece or read (so a request
            # pipelined behind another in one read may pass the cap by that read, 256 KiB at most).
            piece = data if len(data) <= room else memoryview(data)[:room]
            self.head_bytes = used + len(piece)
            super().data_received(piece)  # type: ignore[arg-type]  # httptools reads any buffer
            if self.transport.is_closing():  # a request uvicorn found bad (400)
                return
            data = data[len(piece) :]
        if self.refused and not self.transport.is_closing():
            self._head_refused()

    def _head_refused(self) -> None:
        cycle = self.cycle
        if cycle is not None and (not cycle.response_complete or self.pipeline):
            # The answers to the requests before it go first (see on_response_complete); nothing
            # more is read, and the head refused is no longer timed by the watch.
            self.flow.pause_reading()
            self.scope = cycle.scope
            return
        self._unset_keepalive_if_required()
        self.transport.write(refusal(self.refused, self.server_state.default_headers))
        self.transport.close()
        if self.watch is not None:
            self.watch.head_refused(self.refused)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.refused and not self.transport.is_closing():
            self._head_refused()

    # The parser's callbacks: none does anything once a head is refused.

    def on_message_begin(self) -> None:
        if self.refused:
            return
        super().on_message_begin()
        # By weak reference: the protocol holds the scope, which would otherwise hold the protocol
        # back, and a cycle is freed only by the garbage collector, late.
        gone = functools.partial(_caller_gone, weakref.ref(self))
        self.scope["extensions"] = {CALLER_GONE: gone}  # type: ignore[dict-item]  # a function, not a dict

    def on_url(self, url: bytes) -> None:
        if self.refused:
            return
        if len(self.url) + len(url) > MAX_URL_BYTES:
            self.refused = 414
            return
        self.url += url

    def on_headers_complete(self) -> None:
        if self.refused:
            return
        self.head_bytes = None
        super().on_headers_complete()
        # Nothing of a body is read before the app asks for it (uvicorn's receive resumes reading):
        # a request waiting for the memory budget holds what came with its head, not its body.
        self.flow.pause_reading()

    def on_body(self, body: bytes) -> None:
        if self.refused:
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        if self.refused:
            return
        self.head_bytes = 0
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.watch is not None:
            self.watch.discard(self)
