"""The pieces of a server process that ``serve`` (one process) and ``serve --workers N`` (a
supervisor and its workers, :mod:`app.server.workers`) share: certificates in place, the app's state,
the listening HTTPS socket, the uvicorn configuration and server with its graceful drain, its
event loop (with the connection limits of :mod:`app.server.connections`) and SIGHUP, the plain-HTTP
metrics port and the curl hint printed at start.

Both ports are bound before anything is printed: a port that cannot be bound is a
:class:`BindError`, one line naming the address and the flags that change it, and the curl hint
comes only once both listen.

SIGHUP re-reads the serving certificate (:meth:`~app.server.tls.CertReloader.reread`) and changes
nothing else: requests in flight and connections go on. It is ignored from the start of the
process (:func:`ignore_hangup`) until the server's loop handles it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn
from prometheus_client import REGISTRY

from app.server.cluster_services import ClusterServices
from app.server.connections import Limits, loop_factory
from app.server.metrics_http import MetricsServer, serve_metrics
from app.server.routes import AppState
from app.server.settings import Settings
from app.server.tls import CertReloader
from app.server.transport import CoalescingHttpToolsProtocol
from certs.dev import ensure_dev_certs
from domain.admission import AdmissionContext

log = logging.getLogger("dynamo_webhook.server")

REPO_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CURL_EXAMPLE = "admission/dgd-v1beta1-create.json"
#: Listen backlog of the HTTPS socket (uvicorn's default).
BACKLOG = 2048


class BindError(Exception):
    """A port that cannot be bound, said in one line: the address, why, and which flags change it."""


def bind_error(what: str, host: str, port: int, exc: OSError, flags: str) -> BindError:
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    # errno's own words: socket.create_server appends the address to strerror.
    errno = None if isinstance(exc, socket.gaierror) else exc.errno
    reason = (os.strerror(errno) if errno else exc.strerror or str(exc)).lower()
    return BindError(f"cannot listen on {address} ({what}): {reason}; {flags}")


def bind_https(settings: Settings) -> socket.socket:
    """The HTTPS listening socket on ``host``:``port``, inheritable by workers (``"::"`` takes IPv4
    too). Raises :class:`BindError`."""
    host, port = settings.host, settings.port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and host in ("::", ""):
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise bind_error(
            "HTTPS", host, port, exc, "choose another port with --port or another address with --host"
        ) from exc
    sock.set_inheritable(True)
    return sock


def print_curl_hint(settings: Settings, ca_file: Path, port: int) -> None:
    """Say that the server is up and how to try it (``print_curl``; once both ports are bound)."""
    if settings.print_curl:
        print(
            "dynamo-webhook is serving HTTPS. Try it:\n\n  " + curl_hint(settings, ca_file, port) + "\n",
            flush=True,
        )


def curl_hint(settings: Settings, ca_file: Path, port: int | None = None) -> str:
    """A curl command posting an example review to the server (on ``port``, the bound one, when
    ``--port 0`` let the system choose)."""
    host = settings.host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    local = Path("examples") / CURL_EXAMPLE
    example = local if local.exists() else REPO_EXAMPLES / CURL_EXAMPLE
    return (
        f"curl --cacert {ca_file} -H 'Content-Type: application/json' "
        f"--data-binary @{example} https://{host}:{settings.port if port is None else port}/validate"
    )


def start_metrics_server(settings: Settings, registry: Any = None) -> MetricsServer | None:
    """The plain-HTTP metrics port (``metrics_port``; 0 disables it) on ``metrics_host``, or on
    ``host`` when that is not set. ``registry`` defaults to this process's; the multi-worker
    supervisor passes one that reads every worker's metrics. Raises :class:`BindError`."""
    if not settings.metrics_port:
        return None
    host = settings.metrics_address()
    if settings.metrics_port == settings.port and host == settings.host:
        return None  # the HTTPS server already answers /metrics there
    try:
        return serve_metrics(
            host, settings.metrics_port, registry or REGISTRY, settings.header_timeout, settings.send_timeout
        )
    except OSError as exc:
        flags = (
            "choose another port with --metrics-port (0 turns it off) or another address with --metrics-host"
        )
        raise bind_error("metrics", host, settings.metrics_port, exc, flags) from exc


def bind_ports(settings: Settings, registry: Any = None) -> tuple[socket.socket, MetricsServer | None]:
    """Both ports of a server: the HTTPS socket (:func:`bind_https`) and the metrics port
    (:func:`start_metrics_server`). Raises :class:`BindError`, with nothing left bound."""
    sock = bind_https(settings)
    try:
        return sock, start_metrics_server(settings, registry)
    except BindError:
        sock.close()
        raise


def prepare_certificates(settings: Settings) -> tuple[Path, Path, Path]:
    """Make sure a serving pair exists in the cert dir; returns (cert, key, ca) paths."""
    cert_dir = settings.cert_dir
    cert_file, key_file, ca_file = cert_dir / "tls.crt", cert_dir / "tls.key", cert_dir / "ca.crt"
    if settings.cert_mode == "dev":
        result = ensure_dev_certs(
            cert_dir, settings.service_name, settings.namespace, settings.cluster_domain
        )
        if result.generated:
            log.info("generated a self-signed CA and serving certificate", extra={"cert_dir": str(cert_dir)})
    return cert_file, key_file, ca_file


def build_state(
    settings: Settings, reloader: CertReloader | None, services: ClusterServices | None = None
) -> AppState:
    checks: list[Callable[[], tuple[bool, str]]] = []
    if reloader is not None:
        checks.append(lambda: (reloader.loaded, "no serving certificate loaded"))
    admission = AdmissionContext(settings=settings.admission_settings())
    if services is not None:
        checks.extend(services.ready_checks)
        admission = services.admission_context(settings)
    return AppState(settings=settings, admission=admission, ready_checks=checks)


def uvicorn_config(
    settings: Settings, app: Any, reloader: CertReloader, cert_file: Path, key_file: Path
) -> uvicorn.Config:
    """The uvicorn configuration of one server process, serving with ``reloader``'s context."""
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        ssl_certfile=str(cert_file),
        ssl_keyfile=str(key_file),
        http=CoalescingHttpToolsProtocol,  # httptools, each answer's writes in one TLS record
        loop="uvloop",
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_keep_alive=30,
        timeout_graceful_shutdown=30,
        server_header=False,
        # The API server calls directly; no proxy headers to honour, and no per-request wrapper.
        proxy_headers=False,
    )
    config.load()
    config.ssl = reloader.server_context  # hot-reloading context (SNI callback swaps certificates)
    return config


#: Allocations (minus deallocations) between young-generation collections in a server process
#: (Python's default: 700).
GC_THRESHOLD_GEN0 = 20_000


#: How long a thread holding the GIL may keep it while another waits (Python's default: 5 ms).
SWITCH_INTERVAL = 0.001


def prefer_the_event_loop() -> None:
    """Let the event loop's thread wait at most :data:`SWITCH_INTERVAL` for the GIL.

    Large conversions run on worker threads, pure Python most of the time (the whole of the
    Python build). The event loop releases the GIL at every socket read and write and waits for it
    each time, up to the switch interval: with Python's 5 ms a 425 KiB admission review during
    large conversions took seconds (bench.bench_hostile: p99 1.1–2.2 s in the Python build); at
    1 ms, 0.18 s, and the small probe's p99 fell from 1.3–1.7 s to under 40 ms during four 61 MiB
    conversions."""
    sys.setswitchinterval(SWITCH_INTERVAL)


def ignore_hangup() -> None:
    """SIGHUP does not end a server process (by default it would, at once); a worker starts with
    it blocked (see :meth:`app.server.workers.Supervisor.spawn`) and unblocks it here."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})


class DrainingServer(uvicorn.Server):
    """uvicorn server with a graceful SIGTERM/SIGINT: readiness turns false at once, requests keep
    being answered for ``drain_seconds``, then the listener closes and in-flight requests finish.
    A second signal skips the rest of the drain. The process then exits normally (status 0).
    SIGHUP calls ``hangup`` on the event loop (when given), and nothing else. ``started`` (when
    given) is called once the server answers: the app started and the listener served."""

    def __init__(
        self,
        config: uvicorn.Config,
        state: AppState,
        drain_seconds: float,
        hangup: Callable[[], object] | None = None,
        started: Callable[[], object] | None = None,
    ) -> None:
        super().__init__(config)
        self.state = state
        self.drain_seconds = drain_seconds
        self.drain_until: float | None = None
        self.hangup = hangup
        self.on_started = started
        assert state.budget is not None  # set by AppState
        self.limits = Limits.from_settings(state.settings, state.budget.total)

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        with asyncio.Runner(loop_factory=loop_factory(self.limits)) as runner:
            runner.run(self.serve(sockets=sockets))

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.state.draining:
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True
            return
        self.state.draining = True
        log.info(
            "shutting down: readiness is now false",
            extra={"signal": sig, "drain_seconds": self.drain_seconds},
        )
        if self.drain_seconds > 0:
            self.drain_until = time.monotonic() + self.drain_seconds
        else:
            self.should_exit = True

    def on_hangup(self) -> None:
        log.info("SIGHUP: re-reading the serving certificate; serving goes on")
        if self.hangup is not None:
            self.hangup()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        with contextlib.suppress(ValueError, RuntimeError):  # signals are for the main thread only
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.on_hangup)
        # Everything loaded so far (modules, rule tables, the app) lives as long as the process:
        # keep it out of the collector's scans, and collect young objects less often, so large
        # reviews (thousands of objects each) do not pay for repeated full collections.
        gc.collect()
        gc.freeze()
        gc.set_threshold(GC_THRESHOLD_GEN0, 20, 20)
        if self.on_started is not None:
            self.on_started()

    async def on_tick(self, counter: int) -> bool:
        if self.drain_until is not None and time.monotonic() >= self.drain_until:
            self.should_exit = True
        return await super().on_tick(counter)
