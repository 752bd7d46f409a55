"""A real ``dynamo-webhook serve`` with short limits (1 s) against slow and hostile clients on real
sockets: half-sent headers and handshakes are closed, connections beyond the cap are closed at
once, a 408 closes its connection, a head past its cap is a 431 (a URL past its cap a 414) in
bounded memory, an answer is delivered whole or the connection reset, and the plain-HTTP metrics
port serves /metrics only."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import orjson
import pytest

from bench.harness import status_kib
from tests.app.server.test_serve import ROOT, Server

MAX_CONNECTIONS = 40
MAX_HEADER_BYTES = 16 * 1024
LIMITS = (
    "--header-timeout",
    "1",
    "--send-timeout",
    "1",
    "--body-timeout",
    "1",
    "--max-connections",
    str(MAX_CONNECTIONS),
    "--max-header-bytes",
    str(MAX_HEADER_BYTES),
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("limits") / "serving-certs", LIMITS)
    yield srv
    srv.stop()


def _tcp(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=5)


def _tls(server: Server, ctx: ssl.SSLContext | None = None) -> ssl.SSLSocket:
    return (ctx or server.context()).wrap_socket(_tcp(server), server_hostname="localhost")


def _closed_after(sock: socket.socket, limit: float = 4.0) -> float:
    """Seconds until the server ends the connection (reads whatever comes before)."""
    started = time.monotonic()
    sock.settimeout(limit)
    with contextlib.suppress(ConnectionResetError, ssl.SSLError):
        while sock.recv(65536):
            pass
    return time.monotonic() - started


def _get(sock: socket.socket, path: str = "/healthz") -> bytes:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, answer
        answer += chunk
    return answer


def _closed_by_reason(server: Server) -> dict[str, float]:
    url = f"http://127.0.0.1:{server.metrics_port}/metrics?name[]=dynamo_webhook_connections_closed_total"
    with urllib.request.urlopen(url, timeout=5) as resp:
        text = resp.read().decode()
    return {
        line.split('"')[1]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("dynamo_webhook_connections_closed_total{")
    }


def test_half_sent_headers_and_handshakes_are_closed(server: Server) -> None:
    with _tls(server) as half:  # half a first request
        half.sendall(b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Ty")
        assert _closed_after(half) < 3
    with _tls(server) as idle:  # nothing at all after the handshake
        assert _closed_after(idle) < 3
    with _tls(server) as keep_alive:  # a request answered, then half the next one's headers
        assert b" 200 " in _get(keep_alive)
        time.sleep(1.5)  # idle between requests is the keep-alive timeout's (30 s), not this one
        keep_alive.sendall(b"GET /healthz HTTP/1.1\r\nHo")
        assert _closed_after(keep_alive) < 3
    with _tcp(server) as silent:  # no ClientHello
        assert _closed_after(silent) < 3
    with _tcp(server) as half_hello:  # the start of a ClientHello
        half_hello.sendall(bytes.fromhex("160301020001"))
        assert _closed_after(half_hello) < 3
    # The server counts a closed connection just after closing it: the client may see the close first.
    deadline = time.monotonic() + 3
    while True:
        closed = _closed_by_reason(server)
        done = closed.get("header_timeout", 0) >= 3 and closed.get("handshake_timeout", 0) >= 2
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert closed["header_timeout"] >= 3 and closed["handshake_timeout"] >= 2, closed


def test_closed_half_header_connections_give_their_memory_back(server: Server) -> None:
    def round_of_half_headers(count: int) -> None:
        socks = [_tls(server) for _ in range(count)]
        for sock in socks:
            sock.sendall(b"POST /convert HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\nX-")
        for sock in socks:
            assert _closed_after(sock) < 4
            sock.close()

    round_of_half_headers(MAX_CONNECTIONS)  # warm-up: allocator pools and caches filled once
    time.sleep(0.5)
    baseline = status_kib(server.proc.pid, "VmRSS")
    for _ in range(3):
        round_of_half_headers(MAX_CONNECTIONS)
    time.sleep(0.5)
    assert status_kib(server.proc.pid, "VmRSS") - baseline < 4 * 1024


def test_connections_beyond_the_cap_are_closed_at_once(server: Server) -> None:
    before = _closed_by_reason(server).get("limit", 0)
    held = [_tls(server) for _ in range(MAX_CONNECTIONS)]
    try:
        for sock in held:
            assert b" 200 " in _get(sock)  # established, and idle in keep-alive from here
        started = time.monotonic()
        with pytest.raises((ConnectionError, ssl.SSLError)):
            _get(_tls(server))
        assert time.monotonic() - started < 1
        assert _closed_by_reason(server)["limit"] == before + 1
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 3
    while True:  # the server sees the closes soon after
        try:
            with _tls(server) as sock:
                assert b" 200 " in _get(sock)
            break
        except (ConnectionError, ssl.SSLError):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    server.wait_for_log("connection limit reached")


def test_a_408_closes_the_connection(server: Server) -> None:
    with _tls(server) as sock:
        sock.sendall(
            b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"apiVersion"'
        )
        sock.settimeout(5)
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408 ") and b"connection: close" in answer.lower()
        started = time.monotonic()
        with contextlib.suppress(ConnectionResetError, ssl.SSLError):
            while sock.recv(65536):  # more bytes of the body would keep it open otherwise
                sock.sendall(b" ")
        assert time.monotonic() - started < 2


def _head(size: int, start: bytes = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: ") -> bytes:
    """A request head of exactly ``size`` bytes: ``start``, padding, the end of the head."""
    return start + b"a" * (size - len(start) - 4) + b"\r\n\r\n"


def _to_the_end(sock: socket.socket) -> bytes:
    """All the server sends until it ends the connection."""
    sock.settimeout(10)
    data = b""
    with contextlib.suppress(ConnectionResetError, ssl.SSLError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def _wait_for_closes(server: Server, reason: str, count: float, within: float = 10) -> None:
    """Until ``dynamo_webhook_connections_closed_total{reason}`` reaches ``count`` (counted around
    the close, which the client may see first), at most ``within`` seconds."""
    deadline = time.monotonic() + within
    while _closed_by_reason(server).get(reason, 0) < count:
        assert time.monotonic() < deadline, _closed_by_reason(server)
        time.sleep(0.05)


def _in_the_error_shape(answer: bytes, status: int) -> None:
    """A refused head's answer is JSON ``{"error", "code"}``, as every other error of the port."""
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"\r\ncontent-type: application/json\r\n" in head + b"\r\n", head
    error = orjson.loads(body)
    assert set(error) == {"error", "code"} and error["code"] == status and "longer than" in error["error"]


def test_a_head_up_to_the_cap_is_answered_and_one_past_it_is_a_431(server: Server) -> None:
    before = _closed_by_reason(server).get("header_too_large", 0)
    with _tls(server) as sock:
        sock.sendall(_head(MAX_HEADER_BYTES))
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 "), answer
    with _tls(server) as sock:
        assert b" 200 " in _get(sock)  # a request before it on the same connection is answered
        sock.sendall(_head(MAX_HEADER_BYTES + 1))
        answer = _to_the_end(sock)
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer
    assert b"\r\nconnection: close\r\n" in answer
    _in_the_error_shape(answer, 431)
    _wait_for_closes(server, "header_too_large", before + 1)
    server.wait_for_log("request head too large")


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Long: ", b"\r\n\r\n"),  # a header's value
        (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-", b": 1\r\n\r\n"),  # a header's name
        (b"GET /healthz?x=", b" HTTP/1.1\r\nHost: localhost\r\n\r\n"),  # the URL
    ],
)
def test_a_long_url_is_a_414_and_a_long_header_a_431(server: Server, start: bytes, end: bytes) -> None:
    status = b"414" if start.startswith(b"GET /healthz?") else b"431"
    with _tls(server) as sock:
        sock.sendall(start + b"a" * (2 * MAX_HEADER_BYTES) + end)
        answer = _to_the_end(sock)
    assert answer.startswith(b"HTTP/1.1 " + status + b" "), answer
    assert b"\r\nconnection: close\r\n" in answer
    _in_the_error_shape(answer, int(status))


def test_a_url_just_past_its_cap_is_a_414(server: Server) -> None:
    before = _closed_by_reason(server).get("uri_too_long", 0)
    with _tls(server) as sock:
        path = b"/healthz?x=" + b"a" * (8 * 1024 - len(b"/healthz?x="))
        sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        sock.sendall(b"GET " + path + b"a HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert _to_the_end(sock).startswith(b"HTTP/1.1 414 ")
    _wait_for_closes(server, "uri_too_long", before + 1)


def test_many_small_headers_past_the_cap_are_a_431(server: Server) -> None:
    headers = b"".join(b"X-H%d: 1\r\n" % i for i in range(MAX_HEADER_BYTES // 8))
    with _tls(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + headers + b"\r\n")
        assert _to_the_end(sock).startswith(b"HTTP/1.1 431 ")


def test_answers_before_a_refused_head_come_first(server: Server) -> None:
    # Pipelined: two requests, then a head past the cap, in one write. (A head begun in the read
    # that ends the request before it is counted from the next read: past twice the cap here.)
    request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    with _tls(server) as sock:
        sock.sendall(request * 2 + _head(3 * MAX_HEADER_BYTES))
        answer = _to_the_end(sock)
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert statuses == [b"200", b"200", b"431"], answer


def test_a_head_of_64_mib_is_refused_in_bounded_memory(server: Server) -> None:
    peak = status_kib(server.proc.pid, "VmHWM")
    answer: list[bytes] = []
    with _tls(server) as sock:
        reader = threading.Thread(target=lambda: answer.append(_to_the_end(sock)))
        reader.start()
        # The server reads and drops what comes after its answer, then ends the connection.
        with contextlib.suppress(OSError):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Long: ")
            piece = b"a" * (1 << 20)
            for _ in range(64):
                sock.sendall(piece)
        reader.join(30)
    assert answer and answer[0].startswith(b"HTTP/1.1 431 "), answer
    assert status_kib(server.proc.pid, "VmHWM") - peak < 16 * 1024


def _large_conversion(mib: int) -> bytes:
    doc = json.loads((ROOT / "examples/conversion/dgd-to-v1beta1.json").read_text())
    doc["request"]["objects"][0]["metadata"].setdefault("annotations", {})["example.com/padding"] = "x" * (
        mib << 20
    )
    return orjson.dumps(doc)


def _ask(server: Server, body: bytes) -> ssl.SSLSocket:
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)  # a small window: the answer waits
    raw.settimeout(10)
    raw.connect(("127.0.0.1", server.port))
    sock = server.context().wrap_socket(raw, server_hostname="localhost", suppress_ragged_eofs=False)
    sock.sendall(
        b"POST /convert HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    )
    return sock


def _read(sock: ssl.SSLSocket, pause: float, chunk: int) -> bytes:
    """Read to the end (a TLS close_notify; an end without one raises), ``chunk`` bytes per ``pause``."""
    data = b""
    while True:
        time.sleep(pause)
        got = sock.recv(chunk)
        if not got:
            return data
        data += got


def _content_length(answer: bytes) -> int:
    head = answer.split(b"\r\n\r\n", 1)[0].decode().lower()
    return int(head.split("content-length: ", 1)[1].split("\r\n", 1)[0])


def test_an_answer_is_delivered_whole_or_the_connection_reset(server: Server) -> None:
    body = _large_conversion(8)
    # A slow reader that keeps taking bytes gets all of them, however long it takes (4 s here).
    with _ask(server, body) as sock:
        started = time.monotonic()
        answer = _read(sock, 0.002, 4096)
        assert time.monotonic() - started > 2
    rest = answer.split(b"\r\n\r\n", 1)[1]
    assert len(rest) == _content_length(answer) > len(body) - 4096
    assert orjson.loads(rest)["response"]["result"]["status"] == "Success"
    # One that stops reading is reset (RST) once nothing has left for a second: what it then reads
    # ends in an error, never in a short answer that looks whole.
    resets = _closed_by_reason(server).get("send_timeout", 0)
    with _ask(server, body) as sock:
        _wait_for_closes(server, "send_timeout", resets + 1, within=60)  # counted just before the RST
        with pytest.raises((ConnectionResetError, ssl.SSLEOFError)):
            _read(sock, 0, 1 << 20)  # what came before the RST, then the RST (within its 10 s timeout)
    server.wait_for_log("answer not taken by the client in time")


def test_tls12_serves_aead_suites_only(server: Server) -> None:
    def tls12(cipher: str) -> ssl.SSLContext:
        ctx = server.context()
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers(cipher)
        return ctx

    for cbc in ("ECDHE-RSA-AES128-SHA256", "ECDHE-RSA-AES256-SHA384"):
        with pytest.raises((ssl.SSLError, ConnectionError)), _tls(server, tls12(cbc)):
            pass
    for aead in ("ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305"):
        with _tls(server, tls12(aead)) as sock:
            assert sock.version() == "TLSv1.2" and sock.cipher()[0] == aead  # type: ignore[index]
            assert b" 200 " in _get(sock)


def test_the_metrics_port_serves_metrics_only(server: Server) -> None:
    base = f"http://127.0.0.1:{server.metrics_port}"
    with urllib.request.urlopen(f"{base}/metrics", timeout=5) as resp:
        assert b"controller_runtime_webhook_requests_total" in resp.read()
    for path in ("/readyz", "/foo", "/"):
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{base}{path}", timeout=5)
        assert info.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(urllib.request.Request(f"{base}/metrics", data=b"x", method="POST"), timeout=5)
    assert info.value.code == 405
    with socket.create_connection(("127.0.0.1", server.metrics_port), timeout=5) as idle:
        idle.sendall(b"GET /metr")
        assert _closed_after(idle) < 3
