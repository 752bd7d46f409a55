"""app/server/workers.py in one process: what an orphaned worker does, how many workers a
supervisor starts by default (the cluster of processes is exercised in tests/bench/test_workers.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.server import cpus, workers
from app.server import settings as settings_module
from app.server.settings import Settings

ROOT = Path(__file__).resolve().parents[3]


def test_an_orphaned_worker_that_does_not_stop_is_ended() -> None:
    """Its supervisor gone, a worker is sent SIGTERM; one whose graceful stop hangs (here: the
    signal is ignored) exits on its own ``stop_seconds`` later instead of serving on."""
    code = (
        "import signal\n"
        "from app.server import workers\n"
        "signal.signal(signal.SIGTERM, lambda *_: None)\n"
        "workers._exit_with_parent(-1, 0.5)\n"  # -1: never this process's parent
        "raise SystemExit(0)\n"
    )
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60, check=False)
    assert proc.returncode == 1
    assert time.monotonic() - started < 30


def test_a_worker_is_given_as_long_to_stop_as_the_supervisor_waits() -> None:
    settings = Settings(drain_seconds=5)
    assert workers.stop_seconds(settings) == 5 + workers.GRACEFUL_SHUTDOWN_SECONDS + workers.STOP_GRACE


def test_the_supervisor_starts_the_default_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``--workers``, a supervisor starts one worker per CPU of its cgroup quota (here a
    fake cgroup v2 root: 3 CPUs, 2.5 rounded up, and memory for them)."""
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cpu.max").write_text("250000 100000\n")
    (root / "memory.max").write_text(f"{2048 * 1024 * 1024}\n")
    proc = tmp_path / "cgroup-of-self"
    proc.write_text("0::/\n")
    monkeypatch.delenv("DYNAMO_WEBHOOK_WORKERS", raising=False)
    monkeypatch.setattr(settings_module, "default_workers", lambda: cpus.default_workers(root, proc))
    started: list[int] = []
    with socket.socket() as sock:
        supervisor = workers.Supervisor(Settings(), sock)

        def spawn(slot: Any) -> None:
            started.append(slot.index)
            if len(started) == len(supervisor.slots):
                supervisor.stop.set()

        monkeypatch.setattr(supervisor, "spawn", spawn)
        supervisor.run()
    assert started == [0, 1, 2]
