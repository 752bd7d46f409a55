"""The whole machine: ``serve --workers 2`` on two CPUs beside the per-core figure.

The main run measures each server pinned to one CPU with the load generator on the other: a
figure per core. A pod with a 2-CPU limit runs two workers (``serve``'s default; app/server/cpus.py)
and nothing is pinned. So for the scenarios of :data:`SCENARIOS` (the migrated DGD UPDATE and the
500-object ConversionReview) a second webhook runs with ``--workers 2``, not pinned, and is loaded
by two load generator processes, not pinned either (each half the scenario's connections, at
least one): the servers and the clients share both CPUs, as they share a node. Its rounds
alternate with rounds of the pinned one-process webhook of the main run (its load generator on
the other CPU, as there), so a burst of other load on the machine falls on both alike; the
scaling is the median of the rounds' throughput ratios (2 CPUs over 1). CPU time per request is
the server's processes' (the supervisor and its workers) from ``/proc``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from bench.harness import (
    ServerProcess,
    cpu_seconds,
    finish_loadgen,
    loaded_round,
    start_loadgen,
    start_webhook,
    worker_pids,
)

#: The scenarios measured on the whole machine (names of :data:`bench.scenarios.SCENARIOS`).
SCENARIOS = ("validate-migrated", "convert-to-v1beta1")
WORKERS = 2
#: Load generator processes of the whole-machine run.
LOADGENS = 2
ROUNDS = 3
#: Seconds of each round (of each server), and of a quick run's.
ROUND_SECONDS = 3.0
QUICK_ROUND_SECONDS = 1.0


def start(cert_dir: Path, work: Path, timeout: float = 60.0) -> ServerProcess:
    """``serve --workers 2``, not pinned, once both workers have started."""
    server = start_webhook(cert_dir, work, workers=WORKERS)
    deadline = time.monotonic() + timeout
    while _started(server) < WORKERS:
        if time.monotonic() > deadline or server.proc.poll() is not None:
            server.stop()
            raise RuntimeError(f"{WORKERS} workers did not start: {server.log_text()[-3000:]}")
        time.sleep(0.2)
    return server


def _started(server: ServerProcess) -> int:
    started = 0
    for line in server.log_text().splitlines():
        if line.startswith("{") and json.loads(line).get("msg") == "worker started":
            started += 1
    return min(started, len(worker_pids(server.pid)))


def server_cpu(server: ServerProcess) -> float:
    """CPU seconds of a server's processes: the supervisor and its workers."""
    return cpu_seconds(server.pid) + sum(cpu_seconds(pid) for pid in worker_pids(server.pid))


def whole_round(
    server: ServerProcess, cafile: Path, spec: Path, work: Path, connections: int, seconds: float
) -> dict[str, Any]:
    """One round on the whole machine: :data:`LOADGENS` load generators at once, not pinned; their
    throughputs summed, the slower one's latency percentiles."""
    each = max(1, connections // LOADGENS)
    before = server_cpu(server)
    procs = [
        (out, start_loadgen(server.port, cafile, spec, out, connections=each, duration=seconds))
        for out in (work / f"machine-{n}.json" for n in range(LOADGENS))
    ]
    got = [finish_loadgen(proc, out, timeout=seconds + 60) for out, proc in procs]
    cpu = server_cpu(server) - before
    ok = sum(g["ok"] for g in got)
    return {
        "rps": sum(g["rps"] for g in got),
        "p50_ms": max(g["p50_ms"] for g in got),
        "p99_ms": max(g["p99_ms"] for g in got),
        "ok": ok,
        "errors": sum(g["errors"] for g in got),
        "cpu_ms_per_request": cpu / ok * 1000 if ok else 0.0,
    }


def measure(
    per_core: ServerProcess,
    whole: ServerProcess,
    cafile: Path,
    spec: Path,
    work: Path,
    connections: int,
    quick: bool,
    loadgen_cpus: set[int] | None,
) -> dict[str, list[dict[str, Any]]]:
    """:data:`ROUNDS` rounds of each server, taking turns (a warm-up of the whole-machine one
    first); returns the rounds of each, ``per_core`` and ``whole``."""
    seconds = QUICK_ROUND_SECONDS if quick else ROUND_SECONDS
    whole_round(whole, cafile, spec, work, connections, 1.0)
    rounds: dict[str, list[dict[str, Any]]] = {"per_core": [], "whole": []}
    for index in range(ROUNDS):
        turns = ["per_core", "whole"] if index % 2 == 0 else ["whole", "per_core"]
        for turn in turns:
            if turn == "whole":
                rounds[turn].append(whole_round(whole, cafile, spec, work, connections, seconds))
            else:
                rounds[turn].append(
                    loaded_round(
                        per_core,
                        cafile,
                        spec,
                        work / "per-core.json",
                        connections=connections,
                        duration=seconds,
                        cpus=loadgen_cpus,
                    )
                )
    return rounds
