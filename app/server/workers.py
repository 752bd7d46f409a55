"""``serve --workers N``: N uvicorn processes sharing one listening socket.

The supervisor (the process started as ``dynamo-webhook serve``) prepares the certificates,
binds the HTTPS socket, runs the certificate reconcile loop (when a Kubernetes API is in use)
and the plain-HTTP metrics port, and spawns the workers. Each worker builds its own
:class:`~app.server.tls.CertReloader` (so a rotated pair is picked up by every worker), its own Lease
watcher and app, and serves the inherited socket; the kernel hands each new connection to one
of them.

Metrics use prometheus-client's multiprocess mode: ``PROMETHEUS_MULTIPROC_DIR`` (a fresh
temporary directory unless already set) is exported before any worker starts, so ``/metrics``
on any worker and the supervisor's metrics port both report totals over all processes. A worker
that dies is marked dead (its live gauges are dropped) and replaced.

SIGTERM/SIGINT on the supervisor is forwarded to every worker; each drains as a single-process
server does (readiness false first, ``drain_seconds`` of service, in-flight requests finish)
and the supervisor exits once all of them have. SIGHUP on the supervisor is forwarded too (from
its main loop, within a fifth of a second): each worker re-reads its serving certificate and
serves on.

What a server process is made of is shared with the single-process ``serve`` (:mod:`app.server.runtime`).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from prometheus_client import CollectorRegistry, multiprocess, values

from app.server import memory
from app.server.cluster_services import ClusterServices, api_available, build_cluster_services, wait_for_pair
from app.server.observability import MULTIPROC_ENV, configure_logging
from app.server.routes import create_app
from app.server.runtime import (
    BindError,
    DrainingServer,
    bind_ports,
    build_state,
    ignore_hangup,
    prefer_the_event_loop,
    prepare_certificates,
    print_curl_hint,
    uvicorn_config,
)
from app.server.settings import Settings
from app.server.tls import CertReloader, load_pair

log = logging.getLogger("dynamo_webhook.workers")

#: Extra seconds, beyond drain and uvicorn's graceful timeout, before a stuck worker is killed.
STOP_GRACE = 10.0
#: A worker exiting sooner than this after its start counts as a failed start.
QUICK_EXIT_SECONDS = 5.0
#: Consecutive failed starts (per worker slot) after which the supervisor gives up.
MAX_QUICK_EXITS = 3
GRACEFUL_SHUTDOWN_SECONDS = 30.0


# --------------------------------------------------------------------------- metrics directory


def prepare_multiprocess_dir() -> tuple[Path, bool]:
    """Export ``PROMETHEUS_MULTIPROC_DIR`` for this process and its workers. Returns the directory
    and whether it was created here (and is removed at exit). Files of earlier runs are removed."""
    existing = os.environ.get(MULTIPROC_ENV)
    if existing:
        path, owned = Path(existing), False
        path.mkdir(parents=True, exist_ok=True)
        mine = f"_{os.getpid()}.db"
        for stale in path.glob("*.db"):
            if not stale.name.endswith(mine):
                stale.unlink(missing_ok=True)
    else:
        path, owned = Path(tempfile.mkdtemp(prefix="dynamo-webhook-metrics-")), True
        os.environ[MULTIPROC_ENV] = str(path)
    if values.ValueClass is values.MutexValue:
        # Metrics created from here on in this process (the cert loop's) are shared too.
        values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]
    return path, owned


def multiprocess_registry() -> Any:
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return registry


def mark_dead(pid: int | None) -> None:
    if pid is None:
        return
    with contextlib.suppress(OSError):
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


# --------------------------------------------------------------------------- worker process


def _worker_services(settings: Settings, cert_ready: Any | None) -> ClusterServices:
    """A worker's share of the cluster services: its own Lease watcher (with its readiness) and
    live admission look-ups (both answer inside the worker), and the supervisor's cert-loop
    readiness, read from shared memory. The cert loop itself runs once, in the supervisor."""
    services = ClusterServices()
    if api_available(settings):
        full = build_cluster_services(settings.model_copy(update={"cert_mode": "dev"}))
        services.scope, services.lookups = full.scope, full.lookups
        services.ready_checks.extend(full.ready_checks)
    if cert_ready is not None:
        services.ready_checks.append(
            lambda: (bool(cert_ready.value), "certificates not in place yet (cert loop has not converged)")
        )
    return services


def stop_seconds(settings: Settings) -> float:
    """How long a worker may take to stop after SIGTERM before it is killed."""
    return settings.drain_seconds + GRACEFUL_SHUTDOWN_SECONDS + STOP_GRACE


def _exit_with_parent(parent: int, limit: float) -> None:
    """A worker whose supervisor is gone (killed) stops gracefully instead of serving on, and
    exits at once if it has not stopped ``limit`` seconds later (:func:`stop_seconds`: when the
    supervisor would have killed it)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(limit)
    os._exit(1)


def worker_main(
    index: int, settings_data: dict[str, Any], sock: socket.socket, cert_ready: Any | None, supervisor: int
) -> None:
    """Entry point of one worker process (spawned; imports happen after the metrics dir is set)."""
    ignore_hangup()
    settings = Settings(**settings_data)
    threading.Thread(target=_exit_with_parent, args=(supervisor, stop_seconds(settings)), daemon=True).start()
    configure_logging(settings.log_format, settings.log_level, per_turn=True)
    memory.limit_arenas()
    cert_file, key_file = settings.cert_dir / "tls.crt", settings.cert_dir / "tls.key"
    reloader = CertReloader(cert_file, key_file, settings.cert_reload_interval)
    reloader.load()
    services = _worker_services(settings, cert_ready)
    state = build_state(settings, reloader, services)
    state.background.append(reloader.watch)
    config = uvicorn_config(settings, create_app(state), reloader, cert_file, key_file)
    server = DrainingServer(config, state, settings.drain_seconds, hangup=reloader.reread)
    memory.tune_gc(settings.gc_threshold)
    prefer_the_event_loop()
    log.info("worker started", extra={"worker": index, "pid": os.getpid()})
    services.start()
    try:
        server.run(sockets=[sock])
    finally:
        services.stop()
        sock.close()


# --------------------------------------------------------------------------- supervisor


@dataclass
class _Slot:
    index: int
    process: Any = None
    started: float = 0.0
    quick_exits: int = 0


@dataclass
class Supervisor:
    settings: Settings
    sock: socket.socket
    cert_ready: Any | None = None
    slots: list[_Slot] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    hangup: threading.Event = field(default_factory=threading.Event)
    failed: bool = False

    def __post_init__(self) -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._data = self.settings.model_dump()
        self.slots = [_Slot(i) for i in range(self.settings.workers)]

    def spawn(self, slot: _Slot) -> None:
        process = self._ctx.Process(
            target=worker_main,
            args=(slot.index, self._data, self.sock, self.cert_ready, os.getpid()),
            name=f"dynamo-webhook-worker-{slot.index}",
        )
        # SIGHUP stays blocked across the start: a worker inherits the mask and unblocks it once
        # it ignores the signal (ignore_hangup), so a SIGHUP during its start does not end it.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        slot.process, slot.started = process, time.monotonic()

    def on_signal(self, sig: int, frame: FrameType | None) -> None:
        if self.stop.is_set():
            self.forward(sig)  # a second signal: workers skip the rest of their drain
        self.stop.set()

    def on_hangup(self, sig: int, frame: FrameType | None) -> None:
        self.hangup.set()  # forwarded by the main loop: a signal handler does not log or kill

    def forward_hangup(self) -> None:
        if not self.hangup.is_set():
            return
        self.hangup.clear()
        log.info("SIGHUP: workers re-read the serving certificate")
        self.forward(signal.SIGHUP)

    def forward(self, sig: int) -> None:
        for slot in self.slots:
            if slot.process is not None and slot.process.is_alive():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(slot.process.pid, sig)

    def check(self) -> None:
        """Replace workers that died; give up when one keeps failing right after its start."""
        for slot in self.slots:
            process = slot.process
            if process is None or process.is_alive() or self.stop.is_set():
                continue
            process.join()
            mark_dead(process.pid)
            quick = time.monotonic() - slot.started < QUICK_EXIT_SECONDS
            slot.quick_exits = slot.quick_exits + 1 if quick else 0
            log.error(
                "worker exited; starting a new one",
                extra={"worker": slot.index, "pid": process.pid, "exitcode": process.exitcode},
            )
            if slot.quick_exits >= MAX_QUICK_EXITS:
                log.error("worker keeps failing at start; stopping", extra={"worker": slot.index})
                self.failed = True
                self.stop.set()
                return
            self.spawn(slot)

    def shutdown(self) -> None:
        # The workers hold their own copies of the socket; once they close theirs after the
        # drain, new connections are refused rather than queued for nobody.
        self.sock.close()
        self.forward(signal.SIGTERM)
        deadline = time.monotonic() + stop_seconds(self.settings)
        for slot in self.slots:
            process = slot.process
            if process is None:
                continue
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.error(
                    "worker did not stop in time; killing it",
                    extra={"worker": slot.index, "pid": process.pid},
                )
                process.kill()
                process.join()
            mark_dead(process.pid)

    def run(self) -> None:
        previous = {sig: signal.signal(sig, self.on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, self.on_hangup)
        try:
            for slot in self.slots:
                self.spawn(slot)
            while not self.stop.wait(0.2):
                self.forward_hangup()
                self.check()
            self.shutdown()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _publish_readiness(services: ClusterServices, cert_ready: Any, stop: threading.Event) -> None:
    while not stop.wait(0.5):
        try:
            cert_ready.value = 1 if services.reconciler.ready() else 0
        except Exception as exc:  # readiness publishing must never stop
            log.error("reading cert loop readiness failed", extra={"error": repr(exc)})
            cert_ready.value = 0


def serve_workers(settings: Settings) -> int:
    metrics_dir, owned = prepare_multiprocess_dir()
    try:
        return _serve_workers(settings)
    finally:
        if owned:
            shutil.rmtree(metrics_dir, ignore_errors=True)
            os.environ.pop(MULTIPROC_ENV, None)


def _serve_workers(settings: Settings) -> int:
    try:
        services = build_cluster_services(settings)
    except Exception as exc:
        print(f"dynamo-webhook: {exc}", file=sys.stderr)
        return 1
    services.scope = None  # each worker runs its own Lease watcher
    try:
        cert_file, key_file, ca_file = prepare_certificates(settings)
        if settings.cert_mode != "dev":
            wait_for_pair(cert_file, key_file, services, settings.cert_wait_timeout)
        load_pair(cert_file.read_bytes(), key_file.read_bytes())  # fail here, not in every worker
    except Exception as exc:
        log.error(
            "cannot load a serving certificate", extra={"cert_dir": str(settings.cert_dir), "error": str(exc)}
        )
        print(
            f"dynamo-webhook: cannot load a serving certificate from {settings.cert_dir}: {exc}",
            file=sys.stderr,
        )
        return 1
    try:
        sock, metrics_server = bind_ports(settings, multiprocess_registry())
    except BindError as exc:
        print(f"dynamo-webhook: {exc}", file=sys.stderr)
        return 1
    cert_ready = None
    if services.reconciler is not None:
        cert_ready = multiprocessing.get_context("spawn").RawValue("b", 0)
    supervisor = Supervisor(settings, sock, cert_ready)
    # Both ports listen: connections wait in the backlog until the first worker takes them.
    print_curl_hint(settings, ca_file, sock.getsockname()[1])
    log.info("starting workers", extra={"workers": settings.workers, "port": sock.getsockname()[1]})
    services.start()
    publisher_stop = threading.Event()
    publisher = None
    if cert_ready is not None:
        publisher = threading.Thread(
            target=_publish_readiness, args=(services, cert_ready, publisher_stop), daemon=True
        )
        publisher.start()
    try:
        supervisor.run()
    finally:
        publisher_stop.set()
        if publisher is not None:
            publisher.join(2)
        services.stop()
        if metrics_server is not None:
            metrics_server.shutdown()
        sock.close()
    log.info("all workers stopped")
    return 1 if supervisor.failed else 0
