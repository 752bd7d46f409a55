"""The plain-HTTP metrics port: ``GET``/``HEAD /metrics`` and nothing else, with bounded work.

prometheus-client's own server answers every path with the metrics and gives each connection a
thread of its own, without limit or timeout. This one runs an asyncio loop in one thread of its
own (so a scrape never runs on a review's event loop, and works the same in the multi-worker
supervisor, which has none) and bounds what a client can hold:

- at most :data:`MAX_CONNECTIONS` connections at once; one more is closed as soon as it is accepted;
- a request's head (line and headers, at most :data:`MAX_HEAD_BYTES`) must arrive within
  ``header_timeout`` seconds, the first from the connection's start, the next ones (keep-alive)
  from the end of the previous answer; a slow or idle client is dropped;
- an answer the client does not take within ``send_timeout`` seconds ends the connection.

``/metrics`` answers 200 (``?name[]=`` selects metrics by name; gzip when the client accepts it;
OpenMetrics when asked for), other paths 404, other methods on ``/metrics`` 405. A request with a
body is answered and its connection closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import logging
import socket
import threading
from typing import Any
from urllib.parse import parse_qs

from prometheus_client.exposition import choose_encoder

log = logging.getLogger("dynamo_webhook.metrics")

#: Connections served at once; more are closed at once.
MAX_CONNECTIONS = 16
#: Largest request head (request line and headers) read.
MAX_HEAD_BYTES = 8 * 1024
REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed"}


class Request:
    """A parsed request head: method, path, query and the headers the answer depends on."""

    __slots__ = ("accept", "gzip", "has_body", "keep_alive", "method", "path", "query")

    def __init__(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise ValueError("not an HTTP/1 request line")
        self.method, target, version = parts
        self.path, _, self.query = target.partition("?")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, sep, value = line.partition(":")
                if not sep:
                    raise ValueError("malformed header line")
                headers[name.strip().lower()] = value.strip()
        self.accept = headers.get("accept", "")
        self.gzip = "gzip" in headers.get("accept-encoding", "").lower()
        self.has_body = "transfer-encoding" in headers or headers.get("content-length", "0") != "0"
        connection = headers.get("connection", "").lower()
        self.keep_alive = "close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection


def metrics_answer(registry: Any, request: Request) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers and body of a request's answer."""
    if request.path != "/metrics":
        return 404, [("Content-Type", "text/plain; charset=utf-8")], b"Not Found: only /metrics is served\n"
    if request.method not in ("GET", "HEAD"):
        return (
            405,
            [("Allow", "GET, HEAD"), ("Content-Type", "text/plain; charset=utf-8")],
            b"Method Not Allowed\n",
        )
    names = parse_qs(request.query).get("name[]")
    if names:
        registry = registry.restricted_registry(names)
    encoder, content_type = choose_encoder(request.accept)
    body = encoder(registry)
    headers = [("Content-Type", content_type)]
    if request.gzip:
        body = gzip.compress(body, compresslevel=6)
        headers.append(("Content-Encoding", "gzip"))
    return 200, headers, body


def _head(status: int, headers: list[tuple[str, str]], length: int, keep_alive: bool) -> bytes:
    lines = [b"HTTP/1.1 %d %s" % (status, REASONS[status])]
    lines += [f"{name}: {value}".encode("latin-1") for name, value in headers]
    lines.append(b"Content-Length: %d" % length)
    if not keep_alive:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


class MetricsServer:
    """The metrics port's listener and the thread serving it."""

    def __init__(
        self, host: str, port: int, registry: Any, header_timeout: float, send_timeout: float
    ) -> None:
        self.registry = registry
        self.header_timeout = header_timeout
        self.send_timeout = send_timeout
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.create_server((host, port), family=family, backlog=64)
        self.open = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metrics-http", daemon=True)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def shutdown(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # its loop already ended
                loop.call_soon_threadsafe(stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=self.sock, limit=MAX_HEAD_BYTES)
        self._ready.set()
        async with server:
            await self._stop.wait()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.open >= MAX_CONNECTIONS:
            writer.transport.abort()
            return
        self.open += 1
        try:
            while await self._one_request(reader, writer):
                pass
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # a client gone, too slow or not speaking HTTP: nothing more to answer
        finally:
            self.open -= 1
            writer.transport.abort()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; whether the connection stays open for another."""
        async with asyncio.timeout(self.header_timeout):
            head = await reader.readuntil(b"\r\n\r\n")
        try:
            request = Request(head)
        except ValueError:
            await self._send(writer, 400, [], b"Bad Request\n", False)
            return False
        status, headers, body = metrics_answer(self.registry, request)
        keep_alive = request.keep_alive and not request.has_body
        await self._send(
            writer, status, headers, b"" if request.method == "HEAD" else body, keep_alive, len(body)
        )
        return keep_alive

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        headers: list[tuple[str, str]],
        body: bytes,
        keep_alive: bool,
        length: int | None = None,
    ) -> None:
        writer.write(_head(status, headers, len(body) if length is None else length, keep_alive) + body)
        async with asyncio.timeout(self.send_timeout):
            await writer.drain()
        if not keep_alive:
            writer.close()
            async with asyncio.timeout(self.send_timeout):
                await writer.wait_closed()


def serve_metrics(
    host: str, port: int, registry: Any, header_timeout: float, send_timeout: float
) -> MetricsServer:
    """Bind the metrics port (raises ``OSError`` when it cannot) and serve it from a thread."""
    server = MetricsServer(host, port, registry, header_timeout, send_timeout).start()
    log.info("metrics listening", extra={"address": f"http://{host}:{server.port}/metrics"})
    return server
