"""bench/bench_machine.py against a real ``serve --workers 2``: both workers started before it is
loaded, a round of two load generators at once, and the CPU time of every process of the server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import bench_machine
from bench.harness import cpu_seconds, worker_pids, write_spec
from bench.scenarios import SCENARIOS
from tests.bench.helpers import example


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_a_whole_machine_round(certs: tuple[Path, Path], tmp_path: Path) -> None:
    cert_dir, ca_file = certs
    body = tmp_path / "review.json"
    body.write_bytes(example("admission/dgd-v1beta1-create.json"))
    spec = write_spec(
        tmp_path / "spec.json",
        [
            {
                "name": "validate",
                "path": "/validate",
                "body_file": str(body),
                "status": 200,
                "expect": '"allowed":true',
            }
        ],
    )
    with bench_machine.start(cert_dir, tmp_path) as server:
        workers = worker_pids(server.pid)
        assert len(workers) == bench_machine.WORKERS
        before = {pid: cpu_seconds(pid) for pid in workers}
        got = bench_machine.whole_round(server, ca_file, spec, tmp_path, connections=4, seconds=1.0)
        assert got["ok"] > 0 and got["errors"] == 0
        assert got["rps"] > 0 and got["p99_ms"] >= got["p50_ms"] > 0
        # The workers answered, and their CPU time is counted with the supervisor's.
        assert sum(cpu_seconds(pid) - before[pid] for pid in workers) > 0
        assert got["cpu_ms_per_request"] > 0
        total = sum(cpu_seconds(pid) for pid in workers)
        assert bench_machine.server_cpu(server) >= total + cpu_seconds(server.pid) - 0.05


def test_the_docs_say_what_the_whole_machine_run_does() -> None:
    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md").read_text().split())
    assert f"Its rounds ({bench_machine.ROUNDS} of {bench_machine.ROUND_SECONDS:g} s) alternate" in docs
    assert f"`dynamo-webhook serve --workers {bench_machine.WORKERS}`, not pinned" in docs
    assert bench_machine.LOADGENS == 2 and "loaded by two load generator processes at once" in docs
    names = {sc.name for sc in SCENARIOS}
    assert set(bench_machine.SCENARIOS) == {"validate-migrated", "convert-to-v1beta1"} <= names
