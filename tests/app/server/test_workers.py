"""app/server/workers.py in one process: what an orphaned worker does (the cluster of processes is
exercised in tests/bench/test_workers.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from app.server import workers
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
