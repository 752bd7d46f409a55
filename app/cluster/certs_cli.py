"""``dynamo-webhook certs``: ``ensure`` (one pass or the loop; usable as an init container) and ``status``
(their flags: :mod:`app.cli.tool_args`)."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from typing import Any

from kubernetes.config.config_exception import ConfigException

from app.server.settings import settings_default
from certs.config import CertConfig, ReconcileResult
from certs.kube import ApiError, Kube, in_cluster_namespace, load_api_client
from certs.loop import Reconciler
from certs.status import collect_status, render

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _config(args: argparse.Namespace, **extra: Any) -> CertConfig:
    namespace = args.namespace or in_cluster_namespace() or settings_default("namespace")
    return CertConfig(
        mode=args.mode,
        namespace=namespace,
        service_name=args.service_name,
        secret_name=args.secret_name,
        cluster_domain=args.cluster_domain,
        **extra,
    )


def _api(args: argparse.Namespace) -> Any:
    try:
        return load_api_client(args.kubeconfig)
    except (ConfigException, OSError) as exc:
        print(f"certs: no Kubernetes API configuration: {exc}", file=sys.stderr)
        return None


def cmd_ensure(args: argparse.Namespace) -> int:
    extra: dict[str, Any] = {"interval": args.interval}
    if args.cert_dir is not None:
        extra.update(cert_dir=args.cert_dir, write_files=True)
    config = _config(args, **extra)
    api = _api(args)
    if api is None:
        return EXIT_USAGE
    try:
        reconciler = Reconciler(config, api)
        if args.once:
            result = _once(reconciler, args.wait)
            for line in result.changes:
                print(f"changed: {line}")
            for line in result.skipped:
                print(f"skipped: {line}")
            for line in result.errors:
                print(f"error: {line}", file=sys.stderr)
            if not result.ok:
                return EXIT_FAILED
            if not reconciler.ready():
                print("error: no valid serving key pair in place", file=sys.stderr)
                return EXIT_FAILED
            print("certificates and caBundles are in place")
            return EXIT_OK
        return _run_loop(reconciler)
    finally:
        api.close()


def _once(reconciler: Reconciler, wait: float) -> ReconcileResult:
    deadline = time.monotonic() + max(0.0, wait)
    delay = 0.5
    changes: list[str] = []
    while True:
        result = reconciler.reconcile_once()
        changes += result.changes
        if (result.ok and reconciler.ready()) or time.monotonic() + delay > deadline:
            result.changes = changes
            return result
        for line in result.errors:
            print(f"waiting: {line}", file=sys.stderr)
        time.sleep(delay)
        delay = min(delay * 2, 10.0)


def _run_loop(reconciler: Reconciler) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    done = threading.Event()

    def _stop(signum: int, frame: Any) -> None:
        done.set()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    reconciler.start()
    try:
        while not done.wait(1.0):
            pass
    finally:
        reconciler.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    config = _config(args)
    api = _api(args)
    if api is None:
        return EXIT_USAGE
    try:
        report = collect_status(Kube(api), config)
    except ApiError as err:
        print(f"certs: Kubernetes API: {err}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        api.close()
    if args.output == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(render(report))
    return EXIT_FAILED if report.out_of_date else EXIT_OK
