"""The plain-HTTP metrics port in one process: /metrics only, keep-alive, HEAD, the name filter and
gzip; idle and surplus connections dropped, and long heads; the address it binds by default."""

from __future__ import annotations

import contextlib
import gzip
import socket
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter

from app.server import metrics_http
from app.server.metrics_http import MetricsServer, serve_metrics
from app.server.runtime import start_metrics_server
from app.server.settings import Settings


@pytest.fixture
def metrics() -> Iterator[MetricsServer]:
    registry = CollectorRegistry()
    Counter("first_total", "First.", registry=registry).inc()
    Counter("second_total", "Second.", registry=registry).inc(2)
    server = serve_metrics("127.0.0.1", 0, registry, header_timeout=0.5, send_timeout=1)
    yield server
    server.shutdown()


def _connect(server: MetricsServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=5)


def _exchange(sock: socket.socket, request: bytes) -> tuple[bytes, bytes]:
    """Send one request, read one answer (head, body) by its Content-Length."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
    if not request.startswith(b"HEAD "):
        while len(body) < length:
            body += sock.recv(65536)
    return head, body


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except TimeoutError:
        return False
    return True


def test_metrics_on_a_kept_alive_connection_and_nothing_else(metrics: MetricsServer) -> None:
    with _connect(metrics) as sock:
        head, body = _exchange(sock, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (
            head.startswith(b"HTTP/1.1 200 ") and b"first_total 1.0" in body and b"second_total 2.0" in body
        )
        head, body = _exchange(sock, b"GET /metrics?name[]=second_total HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b"second_total 2.0" in body and b"first_total" not in body
        head, body = _exchange(sock, b"GET /metrics HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n")
        assert b"content-encoding: gzip" in head.lower() and b"first_total 1.0" in gzip.decompress(body)
        head, body = _exchange(sock, b"HEAD /metrics HTTP/1.1\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ") and body == b""
        head, _ = _exchange(sock, b"GET /readyz HTTP/1.1\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 404 ")
        head, _ = _exchange(sock, b"DELETE /metrics HTTP/1.1\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 405 ") and b"Allow: GET, HEAD" in head
        head, _ = _exchange(sock, b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
        assert head.startswith(b"HTTP/1.1 405 ") and b"Connection: close" in head
        assert _closed_within(sock, 1)  # a request with a body closes its connection
    with _connect(metrics) as sock:
        head, _ = _exchange(sock, b"NONSENSE\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ")


def test_idle_and_slow_clients_are_dropped(metrics: MetricsServer) -> None:
    with _connect(metrics) as idle, _connect(metrics) as slow, _connect(metrics) as between:
        slow.sendall(b"GET /metr")
        _exchange(between, b"GET /metrics HTTP/1.1\r\n\r\n")
        started = time.monotonic()
        assert _closed_within(idle, 2) and _closed_within(slow, 2) and _closed_within(between, 2)
        assert time.monotonic() - started < 1.5


def test_a_head_past_its_cap_drops_the_connection(metrics: MetricsServer) -> None:
    pad = b"X-Pad: " + b"a" * (metrics_http.MAX_HEAD_BYTES - 100) + b"\r\n"
    with _connect(metrics) as sock:
        head, _ = _exchange(sock, b"GET /metrics HTTP/1.1\r\n" + pad + b"\r\n")
        assert head.startswith(b"HTTP/1.1 200 ")
        with contextlib.suppress(OSError):  # dropped while it sends
            sock.sendall(b"GET /metrics HTTP/1.1\r\nX-Long: " + b"a" * (1 << 20))
        assert _closed_within(sock, 5)


def test_connections_beyond_the_limit_are_closed_at_once() -> None:
    server = serve_metrics("127.0.0.1", 0, CollectorRegistry(), header_timeout=10, send_timeout=10)
    held = [_connect(server) for _ in range(metrics_http.MAX_CONNECTIONS)]
    try:
        for sock in held:
            _exchange(sock, b"GET /metrics HTTP/1.1\r\n\r\n")
        with _connect(server) as surplus:
            assert _closed_within(surplus, 0.5)
        held.pop().close()
        time.sleep(0.1)
        with _connect(server) as sock:
            assert _exchange(sock, b"GET /metrics HTTP/1.1\r\n\r\n")[0].startswith(b"HTTP/1.1 200 ")
    finally:
        for sock in held:
            sock.close()
        server.shutdown()


def test_the_metrics_port_binds_the_https_address_unless_told_otherwise() -> None:
    assert Settings().metrics_address() == "0.0.0.0"
    assert Settings(host="127.0.0.1").metrics_address() == "127.0.0.1"
    assert Settings(host="127.0.0.1", metrics_host="0.0.0.0").metrics_address() == "0.0.0.0"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = start_metrics_server(Settings(host="127.0.0.1", port=1, metrics_port=port))
    assert server is not None
    try:
        assert server.sock.getsockname()[0] == "127.0.0.1"
    finally:
        server.shutdown()
