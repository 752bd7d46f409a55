"""The memory budget on a real ``dynamo-webhook serve``: bodies promised and not sent reserve
budget, never memory; a request that cannot have its share in time is refused 503 saying why,
one that never could 413; admission reviews are answered while conversions hold the budget; and a
request whose caller has gone while it waited is dropped, not answered."""

from __future__ import annotations

import contextlib
import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import orjson
import pytest

from bench.harness import status_kib
from bench.payloads import dgd_migrated_update, list_review
from tests.app.server.test_serve import Server

MiB = 1024 * 1024
BUDGET = 200 * MiB
VALIDATE = "/validate/nvidia.com/v1beta1/dynamographdeployments"
GONE = "caller gone: review dropped"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("budget") / "serving-certs", ("--memory-budget", str(BUDGET)))
    yield srv
    srv.stop()


def _tls(server: Server) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return server.context().wrap_socket(raw, server_hostname="localhost")


def _head(path: str, length: int) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _post(server: Server, path: str, body: bytes) -> tuple[int, dict[str, object]]:
    try:
        return server.post(path, body)
    except urllib.error.HTTPError as exc:
        return exc.code, orjson.loads(exc.read())


def _wait_for(condition: object, what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _conversion(uid: str) -> bytes:
    review = list_review(2)
    review["request"]["uid"] = uid
    return orjson.dumps(review)


def _flood(server: Server, count: int) -> list[ssl.SSLSocket]:
    """Connections that each promise a 64 MiB ConversionReview and send none of it."""
    socks = []
    for _ in range(count):
        sock = _tls(server)
        sock.sendall(_head("/convert", 64 * MiB))
        socks.append(sock)
    return socks


def _answered(server: Server, uid: str) -> bool:
    return uid in server.log_path.read_text()


def test_promised_bodies_reserve_budget_not_memory(server: Server) -> None:
    peak = status_kib(server.proc.pid, "VmHWM")
    flood = _flood(server, 8)
    try:
        # Admission reviews are answered beside the conversions holding the budget.
        status, answer = _post(server, VALIDATE, orjson.dumps(dgd_migrated_update()))
        assert status == 200 and answer["response"]["allowed"] is True  # type: ignore[index]
        # A conversion cannot have its share within half the timeout the API server gave it.
        status, answer = _post(server, "/convert?timeout=2s", _conversion("late"))
        assert (status, answer) == (
            503,
            {
                "code": 503,
                "error": f"the server's memory budget ({BUDGET // MiB} MiB) stayed in use by other requests for 1 s; retry",
            },
        )
        # Eight promised 64 MiB bodies: no buffer of their size was made (512 MiB before).
        assert status_kib(server.proc.pid, "VmHWM") - peak < 32 * 1024
    finally:
        for sock in flood:
            sock.close()
    # Once the promises are gone, so are their reservations.
    _wait_for(
        lambda: _post(server, "/convert", _conversion("after"))[0] == 200, "the budget was not given back"
    )


def test_bodies_sent_while_their_requests_wait_are_not_read_ahead(server: Server) -> None:
    flood = _flood(server, 3)  # the first holds the conversion lane's budget, the others wait
    waiting: list[ssl.SSLSocket] = []
    try:
        before = status_kib(server.proc.pid, "VmRSS")
        for _ in range(40):
            sock = _tls(server)
            sock.settimeout(5)
            sock.sendall(_head("/convert", 2 * MiB))
            with contextlib.suppress(OSError):  # the kernel's buffers take what the server does not read
                sock.sendall(b" " * (2 * MiB))
            waiting.append(sock)
        # What came with each head and one read of the TLS layer (about 200 KiB), not its body:
        # about 950 KiB each when the TLS and HTTP layers read on while the request waited.
        held = status_kib(server.proc.pid, "VmRSS") - before
        assert held < 40 * 512, f"{held / 40:.0f} KiB held per waiting connection"
    finally:
        # The waiting requests go first, while the budget is still held: each is dropped unread.
        dropped = server.log_path.read_text().count(GONE)
        for sock in waiting:
            sock.close()
        server.wait_for_log(GONE, dropped + len(waiting), within=30)
        for sock in flood:
            sock.close()
    _wait_for(
        lambda: _post(server, "/convert", _conversion("after-waiting"))[0] == 200,
        "the budget was not given back",
    )


def test_a_review_that_could_never_fit_is_refused_413_at_once(server: Server) -> None:
    with _tls(server) as sock:
        sock.sendall(_head(VALIDATE, 7 * MiB))  # an AdmissionReview of 7 MiB, decoded whole
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, answer
            answer += chunk
    head, body = answer.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 413 ") and b"connection: close" in head.lower()
    assert orjson.loads(body)["error"] == (
        f"answering it needs about 224 MiB of memory, more than this server's {BUDGET // MiB} MiB budget "
        "for such reviews (--memory-budget)"
    )


def test_a_request_whose_caller_left_while_it_waited_is_dropped(server: Server) -> None:
    flood = _flood(server, 3)
    try:
        body = _conversion("abandoned")
        with _tls(server) as sock:
            sock.sendall(_head("/convert", len(body)) + body)
        _wait_for(lambda: GONE in server.log_path.read_text(), "the review was not dropped")
    finally:
        for sock in flood:
            sock.close()
    _wait_for(
        lambda: _post(server, "/convert", _conversion("next"))[0] == 200, "the budget was not given back"
    )
    # The review's log line may be written just after its answer is sent.
    _wait_for(lambda: _answered(server, "next"), "the next review was not logged")
    assert not _answered(server, "abandoned")


def test_a_large_review_refused_lets_go_of_its_body_at_once(server: Server) -> None:
    # Not JSON past its first 4 MiB: read, refused 400 off the event loop, and its body freed then,
    # not when the garbage collector next runs (this server makes no other allocations meanwhile).
    body = b'{"apiVersion": "admission.k8s.io/v1", "padding": "' + b"x" * (4 * MiB) + b'", oops}'
    status, _ = _post(server, VALIDATE, body)
    assert status == 400
    before = status_kib(server.proc.pid, "VmRSS")
    for _ in range(5):
        assert _post(server, VALIDATE, body)[0] == 400
    # Freed memory reaches the system when the budget falls idle (a trim on a thread of its own, just
    # after the answer); a body held until the garbage collector ran would stay.
    _wait_for(
        lambda: status_kib(server.proc.pid, "VmRSS") - before < 8 * 1024,
        "the refused bodies were not let go",
        limit=10,
    )
