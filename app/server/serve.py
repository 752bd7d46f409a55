"""``dynamo-webhook serve``: HTTPS webhook server (uvicorn), plain-HTTP metrics, cert hot reload
(and a re-read of the certificate on SIGHUP).

Exit status 1 when it cannot start (no Kubernetes API for a cluster cert mode, no serving
certificate, a port that cannot be bound), with one line saying why on stderr; 0 after a stop by
SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import sys

from app.server import memory
from app.server.build import build_kind
from app.server.cluster_services import build_cluster_services, wait_for_pair
from app.server.observability import BUILD_INFO, configure_logging
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
from app.server.tls import CertReloader
from app.server.workers import serve_workers

log = logging.getLogger("dynamo_webhook.server")


def serve(settings: Settings) -> int:
    ignore_hangup()
    configure_logging(settings.log_format, settings.log_level, per_turn=True)
    memory.limit_arenas()
    build = build_kind()
    BUILD_INFO.labels(build).set(1)
    log.info("rule layer loaded", extra={"build": build})
    if settings.workers > 1:
        return serve_workers(settings)
    try:
        services = build_cluster_services(settings)
    except Exception as exc:
        print(f"dynamo-webhook: {exc}", file=sys.stderr)
        return 1
    try:
        cert_file, key_file, ca_file = prepare_certificates(settings)
        if settings.cert_mode != "dev":
            wait_for_pair(cert_file, key_file, services, settings.cert_wait_timeout)
        reloader = CertReloader(cert_file, key_file, settings.cert_reload_interval)
        reloader.load()
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
        sock, _ = bind_ports(settings)
    except BindError as exc:
        print(f"dynamo-webhook: {exc}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    log.info("listening", extra={"address": f"https://{settings.host}:{port}"})
    state = build_state(settings, reloader, services)
    state.background.append(reloader.watch)
    config = uvicorn_config(settings, create_app(state), reloader, cert_file, key_file)
    server = DrainingServer(
        config,
        state,
        settings.drain_seconds,
        hangup=reloader.reread,
        started=lambda: print_curl_hint(settings, ca_file, port),
    )
    memory.tune_gc(settings.gc_threshold)
    prefer_the_event_loop()
    services.start()
    try:
        server.run(sockets=[sock])
    finally:
        services.stop()
    return 0
