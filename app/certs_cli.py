"""``dynamo-webhook certs``: ``ensure`` (one pass or the loop; usable as an init container) and ``status``."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kubernetes.config.config_exception import ConfigException

from certs.kube import ApiError, Kube, in_cluster_namespace, load_api_client
from certs.loop import DEFAULT_SECRET_NAME, CertConfig, Reconciler, ReconcileResult
from certs.status import collect_status, render

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _connection_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--namespace",
        default=None,
        help="namespace of the webhook Service and Secret (default: the pod's service-account namespace)",
    )
    parser.add_argument(
        "--service-name", required=True, help="webhook Service name (serving certificate SANs)"
    )
    parser.add_argument(
        "--secret-name", default=DEFAULT_SECRET_NAME, help="TLS Secret name (default %(default)s)"
    )
    parser.add_argument(
        "--kubeconfig", default=None, help="kubeconfig file (default: $KUBECONFIG, in-cluster)"
    )
    parser.add_argument(
        "--mode", choices=["auto", "manual"], default="auto", help="certificate provisioning mode"
    )
    parser.add_argument(
        "--cluster-domain", default="cluster.local", help="cluster DNS domain (default %(default)s)"
    )


def register(subparsers: Any) -> None:
    """Add the ``certs`` sub-command (with ``ensure`` and ``status``) to an argparse sub-parser set."""
    certs = subparsers.add_parser(
        "certs",
        help="provision webhook certificates and keep caBundles in sync",
        description="Manage the webhook's TLS Secret and the caBundles of its webhook configurations and CRDs.",
    )
    sub = certs.add_subparsers(dest="certs_command", metavar="{ensure,status}")
    sub.required = True

    ensure = sub.add_parser(
        "ensure",
        help="make certificates and caBundles right (once, or continuously)",
        description="With --once: one reconcile pass; exit 0 when everything is in place, 1 with the reasons "
        "otherwise. Without --once: keep reconciling (interval plus watch events) until SIGTERM/SIGINT.",
    )
    _connection_args(ensure)
    ensure.add_argument("--once", action="store_true", help="one pass, then exit (init containers, jobs)")
    ensure.add_argument(
        "--cert-dir",
        type=Path,
        default=None,
        help="also write tls.crt, tls.key and ca.crt into this directory",
    )
    ensure.add_argument("--interval", type=float, default=60.0, help="seconds between passes (jittered)")
    ensure.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --once: repeat the pass (backing off) for up to this long before giving up, e.g. while "
        "cert-manager has not written the Secret yet (default: no retry)",
    )
    ensure.set_defaults(func=cmd_ensure)

    status = sub.add_parser(
        "status",
        help="show expiry dates, SANs, and which objects carry which CA",
        description="Read-only. Exit 0 when everything is up to date, 1 when something is out of date.",
    )
    _connection_args(status)
    status.add_argument("-o", "--output", choices=["text", "json"], default="text")
    status.set_defaults(func=cmd_status)


def _config(args: argparse.Namespace, **extra: Any) -> CertConfig | None:
    namespace = args.namespace or in_cluster_namespace()
    if not namespace:
        print("certs: --namespace is required outside a cluster", file=sys.stderr)
        return None
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
    if config is None:
        return EXIT_USAGE
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
    if config is None:
        return EXIT_USAGE
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
