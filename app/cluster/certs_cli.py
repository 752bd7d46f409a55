"""``dynamo-webhook certs``: ``ensure`` (one pass or the loop; usable as an init container) and ``status``
(their flags: :mod:`app.cli.tool_args`). Exit statuses are those of every cluster tool
(:mod:`app.cluster.inventory`)."""

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

from app.cluster.inventory import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, cluster_failure, fail
from app.server.settings import settings_default
from certs.config import CertConfig, ReconcileResult
from certs.kube import ApiError, Kube, in_cluster_namespace, load_api_client
from certs.loop import Reconciler
from certs.status import collect_status, render


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


def _api(args: argparse.Namespace, command: str) -> Any:
    try:
        return load_api_client(args.kubeconfig)
    except ConfigException as exc:
        cluster_failure(command, exc)
    except OSError as exc:
        fail(command, f"no Kubernetes API configuration: {exc}")
    return None


def cmd_ensure(args: argparse.Namespace) -> int:
    extra: dict[str, Any] = {"interval": args.interval}
    if args.cert_dir is not None:
        extra.update(cert_dir=args.cert_dir, write_files=True)
    config = _config(args, **extra)
    api = _api(args, "certs ensure")
    if api is None:
        return EXIT_USAGE
    try:
        reconciler = Reconciler(config, api)
        if args.once:
            # The pass's outcome is printed below: the loop's own log lines would say it twice.
            logging.getLogger("certs.loop").addHandler(logging.NullHandler())
            result = _once(reconciler, args.wait)
            if result.unreachable:
                return fail("certs ensure", "; ".join(result.errors))
            for line in result.changes:
                print(f"changed: {line}")
            for line in result.skipped:
                print(f"skipped: {line}")
            for line in result.errors:
                print(f"error: {line}", file=sys.stderr)
            if not result.ok:
                return EXIT_FINDINGS
            if not reconciler.ready():
                print("error: no valid serving key pair in place", file=sys.stderr)
                return EXIT_FINDINGS
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
    api = _api(args, "certs status")
    if api is None:
        return EXIT_USAGE
    try:
        report = collect_status(Kube(api), config)
    except ApiError as err:
        return cluster_failure("certs status", err, "cannot read the cluster: ")
    finally:
        api.close()
    if args.output == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(render(report))
    return EXIT_FINDINGS if report.out_of_date else EXIT_OK
