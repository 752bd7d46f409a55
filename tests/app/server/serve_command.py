"""The ``dynamo-webhook serve`` command line the process tests start: this venv's executable, both
ports on 127.0.0.1 and the certificate directory re-read every half second, so that
``tests/app/server/test_serve.py`` and the e2e cluster (``tests/e2e/cluster.py``) start the same
server and differ only in the flags they add."""

from __future__ import annotations

import sys
from pathlib import Path

EXE = Path(sys.executable).parent / "dynamo-webhook"


def serve_argv(exe: Path, cert_dir: Path, port: int, metrics_port: int, *extra: str) -> list[str]:
    """``exe serve`` on ``port`` and ``metrics_port`` of 127.0.0.1, reading ``cert_dir``, then ``extra``."""
    return [
        str(exe),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--metrics-host",
        "127.0.0.1",
        "--metrics-port",
        str(metrics_port),
        "--cert-dir",
        str(cert_dir),
        "--cert-reload-interval",
        "0.5",
        *extra,
    ]
