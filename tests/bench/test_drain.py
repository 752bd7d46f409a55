"""Graceful SIGTERM: readiness turns false first, requests keep being answered for
``drain_seconds``, then the listener closes, the request still in flight completes, and the
process exits with status 0 — with one process and with workers, under load."""

from __future__ import annotations

import signal
import socket
import ssl
import time
from pathlib import Path

import pytest

from bench.harness import finish_loadgen, start_loadgen, start_webhook, worker_pids, write_spec
from tests.bench.helpers import context, example, get, post

DRAIN = 3.0
BODY = example("admission/dgd-v1beta1-create.json")


def _open_slow_request(port: int, ca_file: Path) -> ssl.SSLSocket:
    """A request whose body is only half sent: in flight until the rest arrives."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    tls = context(ca_file).wrap_socket(raw, server_hostname="localhost")
    head = (
        f"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(BODY)}\r\n\r\n"
    ).encode()
    tls.sendall(head + BODY[: len(BODY) // 2])
    return tls


def _read_status(tls: ssl.SSLSocket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = tls.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]) if data else 0


def _drain(certs: tuple[Path, Path], work: Path, workers: int) -> None:
    cert_dir, ca_file = certs
    srv = start_webhook(cert_dir, work, workers=workers, extra=["--drain-seconds", str(DRAIN)])
    try:
        deadline = time.monotonic() + 60
        while get(f"https://127.0.0.1:{srv.port}/readyz", ca_file)[0] != 200 or (
            workers > 1 and len(worker_pids(srv.pid)) < workers
        ):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        body = work / "create.json"
        body.write_bytes(BODY)
        spec = write_spec(
            work / "spec.json",
            [{"name": "validate", "path": "/validate", "body_file": str(body), "expect": '"allowed":true'}],
        )
        # Load that stops during the drain, as the apiserver stops once the endpoint is removed.
        load = start_loadgen(
            srv.port, ca_file, spec, work / "load.json", connections=8, rate=100, duration=2.5
        )
        slow = _open_slow_request(srv.port, ca_file)
        time.sleep(0.5)
        t0 = time.monotonic()
        srv.signal(signal.SIGTERM)
        while get(f"https://127.0.0.1:{srv.port}/readyz", ca_file)[0] != 503:
            assert time.monotonic() - t0 < 1.5, "readiness did not turn false"
            time.sleep(0.05)
        status, _ = post(srv.port, ca_file, "/validate", BODY)
        assert status == 200, "requests must still be answered during the drain"
        assert time.monotonic() - t0 < DRAIN
        summary = finish_loadgen(load, work / "load.json", timeout=60)
        assert summary["ok"] > 50
        assert summary["errors"] == 0, summary["kinds"]["validate"]["error_samples"]
        # After the drain the listener is closed while the slow request is still in flight.
        time.sleep(max(0.0, t0 + DRAIN + 1.0 - time.monotonic()))
        assert srv.proc.poll() is None, "exited before its in-flight request completed"
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
        slow.sendall(BODY[len(BODY) // 2 :])
        assert _read_status(slow) == 200
        slow.close()
        assert srv.proc.wait(30) == 0, srv.log_text()[-3000:]
    finally:
        srv.stop()


def test_sigterm_drains_one_process(certs: tuple[Path, Path], tmp_path: Path) -> None:
    _drain(certs, tmp_path, workers=1)


@pytest.mark.slow
def test_sigterm_drains_every_worker(certs: tuple[Path, Path], tmp_path: Path) -> None:
    _drain(certs, tmp_path, workers=2)
