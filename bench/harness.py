"""Process plumbing shared by the benchmark and the soak/fault tests: start ``dynamo-webhook
serve`` or the echo server on loopback, run the load generator in its own process, read a
process's RSS and open file descriptors."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
WEBHOOK_EXE = Path(sys.executable).parent / "dynamo-webhook"
LOOPBACK = "127.0.0.1"


def cpu_split() -> tuple[set[int], set[int]] | None:
    """(the CPUs a server under test runs on, the load generator's): the first CPU this process
    may use, and the others; None with fewer than two. Pinned apart, a server and the load
    generator never share a core or move between cores mid-run, so a server's CPU time per
    request varies far less from run to run (a mutation's ratio to echo over three short runs on
    2 CPUs: 80 to 95 % unpinned, 83 to 87 % pinned)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return {cpus[0]}, set(cpus[1:])


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def ensure_certs(cert_dir: Path) -> Path:
    """A dev CA and serving pair (SANs include localhost and 127.0.0.1); returns the CA file."""
    from certs.dev import ensure_dev_certs

    ensure_dev_certs(cert_dir, "dynamo-operator-webhook-service", "dynamo-system", "cluster.local")
    return cert_dir / "ca.crt"


def status_kib(pid: int, field: str) -> int:
    """A memory figure of one process in KiB from ``/proc/<pid>/status`` (``VmRSS``: resident
    now, ``VmHWM``: its peak); raises OSError when the process is gone, LookupError without it."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise LookupError(f"no {field} for process {pid}")


def rss_kib(pid: int) -> int:
    """Resident set size of one process in KiB (0 when it is gone)."""
    try:
        return status_kib(pid, "VmRSS")
    except (OSError, LookupError):
        return 0


def peak_rss_kib(pid: int) -> int:
    """The peak resident set size of one process in KiB (``VmHWM``)."""
    return status_kib(pid, "VmHWM")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            out.extend(int(x) for x in text.split())
    return out


def worker_pids(pid: int) -> list[int]:
    """The ``serve --workers N`` worker processes of a supervisor (its spawned children, not
    multiprocessing's resource tracker)."""
    out = []
    for child in children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            out.append(child)
    return out


class ServerProcess:
    """A server subprocess on loopback with its log in a file (an undrained pipe would block it)."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        port: int,
        log_path: Path,
        env: dict[str, str] | None = None,
        start_timeout: float = 60.0,
        cpus: set[int] | None = None,
    ) -> None:
        self.name = name
        self.port = port
        self.log_path = log_path
        self._log: TextIO = log_path.open("w")
        self.proc = subprocess.Popen(
            list(argv),
            cwd=ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        if cpus:
            os.sched_setaffinity(self.proc.pid, cpus)  # before it starts threads, which inherit it
        self.wait_listening(start_timeout)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log_path.read_text()[-4000:]}")
            try:
                with socket.create_connection((LOOPBACK, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not start listening within {timeout:g} s")

    def log_text(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def signal(self, sig: int = signal.SIGTERM) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)

    def stop(self, timeout: float = 30.0) -> int | None:
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        return self.proc.returncode

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_webhook(
    cert_dir: Path,
    workdir: Path,
    *,
    workers: int | None = 1,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
    metrics_port: int | None = None,
    log_level: str = "info",
    floor: bool = False,
    cpus: set[int] | None = None,
) -> ServerProcess:
    """``dynamo-webhook serve`` on loopback (``floor``: the same server with the rules taken
    out, :mod:`bench.floor_server`), with ``workers`` worker processes (None: serve's default)."""
    port = free_port()
    program = [PYTHON, "-m", "bench.floor_server"] if floor else [str(WEBHOOK_EXE)]
    argv = [
        *program,
        "serve",
        "--host",
        LOOPBACK,
        "--port",
        str(port),
        "--metrics-host",
        LOOPBACK,
        "--metrics-port",
        str(metrics_port if metrics_port is not None else free_port()),
        "--cert-dir",
        str(cert_dir),
        "--cert-mode",
        "dev",
        *(["--workers", str(workers)] if workers is not None else []),
        "--log-format",
        "json",
        "--log-level",
        log_level,
        "--no-print-curl",
        *extra,
    ]
    name = "floor" if floor else "dynamo-webhook"
    return ServerProcess(name, argv, port, workdir / f"{name}-{port}.log", env=env, cpus=cpus)


def start_echo(cert_dir: Path, workdir: Path, cpus: set[int] | None = None) -> ServerProcess:
    port = free_port()
    argv = [PYTHON, "-m", "bench.echo_server", "--port", str(port), "--cert-dir", str(cert_dir)]
    return ServerProcess("echo", argv, port, workdir / f"echo-{port}.log", cpus=cpus)


def loadgen_argv(
    port: int,
    cafile: Path,
    spec_file: Path,
    *,
    connections: int,
    duration: float,
    rate: float | None = None,
    max_requests: int | None = None,
    new_connection_every: int = 0,
    out: Path | None = None,
) -> list[str]:
    argv = [
        PYTHON,
        "-m",
        "bench.loadgen",
        "--port",
        str(port),
        "--cafile",
        str(cafile),
        "--spec",
        str(spec_file),
        "--connections",
        str(connections),
        "--duration",
        str(duration),
    ]
    if rate:
        argv += ["--rate", str(rate)]
    if max_requests:
        argv += ["--max-requests", str(max_requests)]
    if new_connection_every:
        argv += ["--new-connection-every", str(new_connection_every)]
    if out is not None:
        argv += ["--out", str(out)]
    return argv


def write_spec(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(entries))
    return path


def start_loadgen(
    port: int, cafile: Path, spec_file: Path, out: Path, *, cpus: set[int] | None = None, **kwargs: Any
) -> subprocess.Popen[bytes]:
    """Start the load generator in the background (on ``cpus`` when given); read the summary
    with :func:`finish_loadgen`."""
    return subprocess.Popen(
        loadgen_argv(port, cafile, spec_file, out=out, **kwargs),
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finish_loadgen(proc: subprocess.Popen[bytes], out: Path, timeout: float) -> dict[str, Any]:
    try:
        _, err = proc.communicate(timeout=timeout)
    except BaseException:  # timed out, or the caller was interrupted: never leave load running
        proc.kill()
        proc.communicate()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"load generator failed ({proc.returncode}): {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_loadgen(port: int, cafile: Path, spec_file: Path, out: Path, **kwargs: Any) -> dict[str, Any]:
    duration = float(kwargs.get("duration", 10.0))
    proc = start_loadgen(port, cafile, spec_file, out, **kwargs)
    return finish_loadgen(proc, out, timeout=duration + 60)


def loaded_round(
    server: ServerProcess,
    cafile: Path,
    spec_file: Path,
    out: Path,
    *,
    connections: int,
    duration: float,
    cpus: set[int] | None = None,
) -> dict[str, Any]:
    """One closed-loop run of the load generator (on ``cpus``) against a one-process server: its
    summary, with the server's CPU time per answered request (``cpu_ms_per_request``)."""
    before = cpu_seconds(server.pid)
    got = run_loadgen(
        server.port, cafile, spec_file, out, connections=connections, duration=duration, cpus=cpus
    )
    cpu = cpu_seconds(server.pid) - before
    got["cpu_ms_per_request"] = cpu / got["ok"] * 1000 if got["ok"] else 0.0
    return got
