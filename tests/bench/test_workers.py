"""``serve --workers 2``: one socket, requests spread over both workers, metrics totals over all
processes on both metrics endpoints, a rotated certificate served by every worker, and
SIGTERM stopping every process."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.server.cpus import default_workers
from bench.harness import ServerProcess, free_port, start_webhook, worker_pids
from certs import pki
from tests.bench.helpers import example, get, metric, peer_cert, post, requests_by_pid

REQUESTS = 60
BODY = example("admission/dgd-v1beta1-create.json")


@pytest.fixture(scope="module")
def multi(
    certs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, Path, int]]:
    cert_dir, _ = certs
    work = tmp_path_factory.mktemp("workers")
    metrics_dir = work / "metrics"
    metrics_dir.mkdir()
    metrics_port = free_port()
    srv = start_webhook(
        cert_dir,
        work,
        workers=2,
        metrics_port=metrics_port,
        extra=["--cert-reload-interval", "0.5"],
        env={"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)},
    )
    try:
        # The supervisor listens before its workers are up: wait until both answer.
        deadline = time.monotonic() + 60
        while (
            len(worker_pids(srv.pid)) < 2 or get(f"https://127.0.0.1:{srv.port}/healthz", certs[1])[0] != 200
        ):
            assert time.monotonic() < deadline, srv.log_text()[-3000:]
            time.sleep(0.2)
        yield srv, metrics_dir, metrics_port
    finally:
        srv.stop()


def _send(srv: ServerProcess, ca_file: Path, n: int) -> list[int]:
    with ThreadPoolExecutor(max_workers=6) as pool:
        return list(pool.map(lambda _: post(srv.port, ca_file, "/validate", BODY)[0], range(n)))


def test_requests_spread_and_metrics_total(
    multi: tuple[ServerProcess, Path, int], certs: tuple[Path, Path]
) -> None:
    srv, metrics_dir, metrics_port = multi
    ca_file = certs[1]
    workers = worker_pids(srv.pid)
    # The kernel hands each connection to whichever worker accepts first; on a loaded machine
    # one worker can take a whole batch, so batches are sent until both have answered.
    sent = 0
    for _ in range(10):
        statuses = _send(srv, ca_file, REQUESTS)
        assert statuses == [200] * REQUESTS
        sent += REQUESTS
        per_pid = requests_by_pid(metrics_dir, "/validate")
        served = {pid: n for pid, n in per_pid.items() if pid in workers and n > 0}
        if len(served) == 2:
            break
    assert len(served) == 2, (per_pid, workers)
    assert sum(per_pid.values()) == sent
    labels = {"webhook": "/validate", "code": "200"}
    name = "controller_runtime_webhook_requests_total"
    for _ in range(4):  # /metrics answered by whichever worker takes the connection: all agree
        status, text = get(f"https://127.0.0.1:{srv.port}/metrics", ca_file)
        assert status == 200
        assert metric(text.decode(), name, labels) == sent
    status, text = get(f"http://127.0.0.1:{metrics_port}/metrics")
    assert status == 200
    assert metric(text.decode(), name, labels) == sent
    assert (
        metric(
            text.decode(),
            "dynamo_webhook_admission_reviews_total",
            {"webhook": "/validate", "allowed": "true"},
        )
        == sent
    )
    # Live gauge summed over workers: nothing in flight now.
    assert (
        metric(text.decode(), "controller_runtime_webhook_requests_in_flight", {"webhook": "/validate"}) == 0
    )


def test_rotated_certificate_is_served_by_every_worker(
    multi: tuple[ServerProcess, Path, int], certs: tuple[Path, Path]
) -> None:
    srv, metrics_dir, _ = multi
    cert_dir, ca_file = certs
    before = peer_cert(srv.port, ca_file)
    ca = pki.KeyPair((cert_dir / "ca.crt").read_bytes(), (cert_dir / "ca.key").read_bytes())
    fresh = pki.generate_serving_cert(ca, ["localhost"], ["127.0.0.1"])
    staging = cert_dir.parent / "staging"
    staging.mkdir(exist_ok=True)
    (staging / "tls.crt").write_bytes(fresh.cert_pem)
    (staging / "tls.key").write_bytes(fresh.key_pem)
    os.replace(staging / "tls.key", cert_dir / "tls.key")
    os.replace(staging / "tls.crt", cert_dir / "tls.crt")
    expected = pki.load_cert(fresh.cert_pem).public_bytes(pki.serialization.Encoding.DER)
    assert expected != before
    # Both workers poll every 0.5 s; give them a few seconds under a loaded machine.
    deadline = time.monotonic() + 20
    while True:
        seen = {peer_cert(srv.port, ca_file) for _ in range(10)}
        if seen == {expected}:
            break
        assert time.monotonic() < deadline, "not every new connection got the new certificate"
        time.sleep(0.3)
    # Every worker answers on fresh connections with the new certificate: 40 new connections,
    # each checked for the new certificate and counted per worker.
    workers = worker_pids(srv.pid)
    counts_before = requests_by_pid(metrics_dir, "/validate")
    with ThreadPoolExecutor(max_workers=4) as pool:
        certs_seen = list(pool.map(lambda _: peer_cert(srv.port, ca_file), range(20)))
        statuses = list(pool.map(lambda _: post(srv.port, ca_file, "/validate", BODY)[0], range(20)))
    assert set(certs_seen) == {expected}
    assert statuses == [200] * 20
    counts_after = requests_by_pid(metrics_dir, "/validate")
    grew = [pid for pid in workers if counts_after.get(pid, 0) > counts_before.get(pid, 0)]
    assert len(grew) == 2, (counts_before, counts_after, workers)


def test_sigterm_stops_every_worker(multi: tuple[ServerProcess, Path, int], certs: tuple[Path, Path]) -> None:
    srv, _, _ = multi
    workers = worker_pids(srv.pid)
    assert len(workers) == 2
    srv.signal(signal.SIGTERM)
    assert srv.proc.wait(45) == 0, srv.log_text()[-3000:]
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or _is_zombie_of_gone_parent(pid), pid


def _is_zombie_of_gone_parent(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.slow
def test_workers_stop_when_the_supervisor_is_killed(certs: tuple[Path, Path], tmp_path: Path) -> None:
    srv = start_webhook(certs[0], tmp_path, workers=2)
    try:
        deadline = time.monotonic() + 60
        while len(worker_pids(srv.pid)) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(2.0)  # let the workers finish starting
        workers = worker_pids(srv.pid)
        srv.signal(signal.SIGKILL)
        srv.proc.wait(10)
        deadline = time.monotonic() + 30
        while any(Path(f"/proc/{pid}").exists() and not _is_zombie_of_gone_parent(pid) for pid in workers):
            assert time.monotonic() < deadline, "workers kept running without their supervisor"
            time.sleep(0.2)
    finally:
        srv.stop()


def test_serve_starts_the_default_workers(certs: tuple[Path, Path], tmp_path: Path) -> None:
    """Without ``--workers``, serve starts as many workers as the CPUs it may use (its cgroup quota,
    else its affinity; app/server/cpus.py): one process serving alone when that is one."""
    expected = default_workers()
    srv = start_webhook(certs[0], tmp_path, workers=None)
    try:
        deadline = time.monotonic() + 60
        while get(f"https://127.0.0.1:{srv.port}/healthz", certs[1])[0] != 200 or (
            expected > 1 and len(worker_pids(srv.pid)) < expected
        ):
            assert time.monotonic() < deadline, srv.log_text()[-3000:]
            time.sleep(0.2)
        assert len(worker_pids(srv.pid)) == (expected if expected > 1 else 0)
        if expected > 1:
            lines = [json.loads(line) for line in srv.log_text().splitlines() if line.startswith("{")]
            assert [line["workers"] for line in lines if line.get("msg") == "starting workers"] == [expected]
    finally:
        srv.stop()
