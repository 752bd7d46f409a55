"""SIGHUP on a real ``dynamo-webhook serve``, one process or a supervisor with workers: the serving
certificate is re-read at once, and serving goes on (a review in flight is answered in full)."""

from __future__ import annotations

import os
import signal
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest
from cryptography.hazmat.primitives import serialization

from certs import pki
from tests.app.server.test_limits import _content_length, _large_conversion
from tests.app.server.test_serve import Server, traffic


def _new_pair(server: Server) -> bytes:
    """Write a new serving pair into the server's cert dir; the new certificate (DER)."""
    ca = pki.KeyPair((server.cert_dir / "ca.crt").read_bytes(), (server.cert_dir / "ca.key").read_bytes())
    fresh = pki.generate_serving_cert(ca, ["localhost"], ["127.0.0.1"])
    for name, data in (("tls.key", fresh.key_pem), ("tls.crt", fresh.cert_pem)):
        staging = server.cert_dir / f".{name}"
        staging.write_bytes(data)
        os.replace(staging, server.cert_dir / name)
    return pki.load_cert(fresh.cert_pem).public_bytes(serialization.Encoding.DER)


def _served_within(server: Server, der: bytes, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while server.peer_cert() != der:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_sighup_rereads_the_certificate_and_loses_no_review(tmp_path: Path) -> None:
    # The files are polled every 10 s: a new certificate served within a second is SIGHUP's doing.
    server = Server(tmp_path / "certs", ("--cert-reload-interval", "10"))
    try:
        body = _large_conversion(4)
        head = (
            b"POST /convert HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        )
        with (
            socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw,
            server.context().wrap_socket(raw, server_hostname="localhost") as sock,
        ):
            sock.sendall(head + body[: len(body) // 2])  # a review in flight
            fresh = _new_pair(server)
            server.proc.send_signal(signal.SIGHUP)
            assert _served_within(server, fresh, 1.0)
            sock.sendall(body[len(body) // 2 :])
            answer = b""
            while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _content_length(answer):
                chunk = sock.recv(1 << 20)
                assert chunk, answer[:200]
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert orjson.loads(answer.split(b"\r\n\r\n", 1)[1])["response"]["result"]["status"] == "Success"
        assert server.proc.poll() is None
        server.wait_for_log("serving certificate re-read")
    finally:
        server.stop()
    assert server.proc.returncode == 0


def test_sighup_reaches_every_worker(tmp_path: Path) -> None:
    server = Server(tmp_path / "certs", ("--workers", "2", "--cert-reload-interval", "10"))
    try:
        server.wait_for_log("worker started", count=2, within=30)
        with traffic(server):
            fresh = _new_pair(server)
            server.proc.send_signal(signal.SIGHUP)
            server.wait_for_log("serving certificate re-read", count=2, within=2)
            for _ in range(4):  # whichever worker answers serves the new certificate
                assert _served_within(server, fresh, 0)
        assert server.proc.poll() is None
        # The supervisor's metrics port: every worker's metrics, and /metrics only.
        base = f"http://127.0.0.1:{server.metrics_port}"
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as resp:
            assert b'controller_runtime_webhook_requests_total{code="200",webhook="/validate"}' in resp.read()
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{base}/readyz", timeout=5)
        assert info.value.code == 404
    finally:
        server.stop()
    assert server.proc.returncode == 0
