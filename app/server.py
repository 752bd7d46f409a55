"""``dynamo-webhook serve``: HTTPS webhook server (uvicorn), plain-HTTP metrics, cert hot reload
(and a re-read of the certificate on SIGHUP)."""

from __future__ import annotations

import logging
import sys

from app import memory
from app.build import build_kind
from app.cluster import build_cluster_services, wait_for_pair
from app.observability import BUILD_INFO, configure_logging
from app.routes import create_app
from app.runtime import (
    DrainingServer,
    build_state,
    curl_hint,
    ignore_hangup,
    prepare_certificates,
    start_metrics_server,
    uvicorn_config,
)
from app.settings import Settings
from app.tls import CertReloader
from app.workers import serve_workers

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
        log.error("cannot load a serving certificate", extra={"cert_dir": str(settings.cert_dir), "error": str(exc)})
        print(f"dynamo-webhook: cannot load a serving certificate from {settings.cert_dir}: {exc}", file=sys.stderr)
        return 1
    state = build_state(settings, reloader, services)
    state.background.append(reloader.watch)
    app = create_app(state)
    start_metrics_server(settings)
    config = uvicorn_config(settings, app, reloader, cert_file, key_file)
    if settings.print_curl:
        print("dynamo-webhook is serving HTTPS. Try it:\n\n  " + curl_hint(settings, ca_file) + "\n", flush=True)
    server = DrainingServer(config, state, settings.drain_seconds, hangup=reloader.reread)
    memory.tune_gc(settings.gc_threshold)
    services.start()
    try:
        server.run()
    finally:
        services.stop()
    return 0
