"""The command lines of the cluster tools ``certs``, ``audit``, ``storage-migrate`` and ``crds``: their
parsers, and commands that import each tool only when it runs.

The tools need the Kubernetes client and the rules; their flags need neither. Keeping the flags
here lets ``dynamo-webhook --help`` (and every other command) build the whole parser without
loading them. The tools' defaults that ``serve`` shares (Service name, namespace, Secret, cluster
domain, the admission settings) come from :class:`~app.server.settings.Settings`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.server.settings import add_admission_arguments, settings_default

#: The exit statuses of every cluster tool (app.cluster.inventory's EXIT_* constants), ending each one's --help.
EXIT_STATUSES = (
    "Exit status, the same for every cluster tool: 0 done, nothing to report; 1 findings: objects that would be "
    "refused (audit), objects not rewritten (storage-migrate), certificates or caBundles out of date or not in "
    "place (certs), a refusal (crds release); 2 a usage error, or the cluster could not be used: no usable "
    "kubeconfig, the API server unreachable or not speaking TLS, its certificate not verified, authentication "
    "or authorization refused, an API error; 130 interrupted (storage-migrate keeps its progress)."
)

# --------------------------------------------------------------------------- commands


def cmd_certs_ensure(args: argparse.Namespace) -> int:
    from app.cluster.certs_cli import cmd_ensure

    return cmd_ensure(args)


def cmd_certs_status(args: argparse.Namespace) -> int:
    from app.cluster.certs_cli import cmd_status

    return cmd_status(args)


def cmd_audit(args: argparse.Namespace) -> int:
    from app.cluster.audit_command import cmd_audit as run

    return run(args)


def cmd_storage_migrate(args: argparse.Namespace) -> int:
    from app.cluster.storage_migrate import cmd_storage_migrate as run

    return run(args)


def cmd_crds_release(args: argparse.Namespace) -> int:
    from app.cluster.release import cmd_release as run

    return run(args)


# --------------------------------------------------------------------------- certs


def _certs_connection_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--namespace",
        default=None,
        help="namespace of the webhook Service and Secret (default: the pod's service-account namespace in a "
        f"cluster, else {settings_default('namespace')}, as for serve)",
    )
    parser.add_argument(
        "--service-name",
        default=settings_default("service_name"),
        help="webhook Service name (serving certificate SANs)",
    )
    parser.add_argument("--secret-name", default=settings_default("secret_name"), help="TLS Secret name")
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)",
    )
    parser.add_argument(
        "--mode", choices=["auto", "manual"], default="auto", help="certificate provisioning mode"
    )
    parser.add_argument(
        "--cluster-domain", default=settings_default("cluster_domain"), help="cluster DNS domain"
    )


def _group(subparsers: Any, name: str, commands: tuple[str, ...], **texts: str) -> Any:
    """A command with sub-commands (``certs ensure``): the sub-parser set its sub-commands go in."""
    group = subparsers.add_parser(name, **texts)
    sub = group.add_subparsers(dest=f"{name}_command", metavar="{" + ",".join(commands) + "}")
    sub.required = True
    return sub


def register_certs(subparsers: Any) -> None:
    """Add the ``certs`` sub-command (with ``ensure`` and ``status``) to an argparse sub-parser set."""
    sub = _group(
        subparsers,
        "certs",
        ("ensure", "status"),
        help="provision webhook certificates and keep caBundles in sync",
        description="Manage the webhook's TLS Secret and the caBundles of its webhook configurations and CRDs.",
    )

    ensure = sub.add_parser(
        "ensure",
        help="make certificates and caBundles right (once, or continuously)",
        description="With --once: one reconcile pass; exit 0 when everything is in place, 1 with the reasons "
        "otherwise, 2 when the API server cannot be used. Without --once: keep reconciling (interval plus watch "
        "events) until SIGTERM/SIGINT.",
        epilog=EXIT_STATUSES,
    )
    _certs_connection_args(ensure)
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
        "cert-manager has not written the Secret yet (0: no retry)",
    )
    ensure.set_defaults(func=cmd_certs_ensure)

    status = sub.add_parser(
        "status",
        help="show expiry dates, SANs, and which objects carry which CA",
        description="Read-only. Exit 0 when everything is up to date, 1 when something is out of date, 2 when "
        "the cluster cannot be read.",
        epilog=EXIT_STATUSES,
    )
    _certs_connection_args(status)
    status.add_argument("-o", "--output", choices=["text", "json"], default="text", help="output format")
    status.set_defaults(func=cmd_certs_status)


# --------------------------------------------------------------------------- audit, storage-migrate


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)",
    )
    parser.add_argument("--context", default=None, help="kubeconfig context (default: the current one)")
    parser.add_argument(
        "--request-timeout", type=float, default=60.0, metavar="SECONDS", help="timeout of one API request"
    )


def register_audit(subparsers: Any) -> None:
    audit = subparsers.add_parser(
        "audit",
        help="check every Dynamo object of a cluster against these admission and conversion rules (read-only)",
        description="List every Dynamo object (read-only) and run the server's own code on each: mutate then "
        "validate as a no-op UPDATE and as a CREATE, and a conversion round trip through both versions. "
        "Exit 0 when nothing would be refused, 1 when anything would be, 2 when the cluster cannot be read. "
        "The admission settings are serve's (flags or DYNAMO_WEBHOOK_* variables): pass the ones you plan to "
        "upgrade with.",
        epilog=EXIT_STATUSES,
    )
    add_connection_arguments(audit)
    scope = audit.add_mutually_exclusive_group()
    scope.add_argument("-n", "--namespace", default=None, help="namespace to audit (default: the context's)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="audit every namespace")
    audit.add_argument(
        "--kinds",
        default=None,
        metavar="KIND,...",
        help="only these kinds (kind, plural or short name: dgd, dcd, dgdr, dgdsa, dm, dckpt)",
    )
    audit.add_argument(
        "-o",
        "--output",
        choices=["table", "json", "github"],
        default="table",
        help="output format (github: workflow annotations, with --upgrade-to)",
    )
    audit.add_argument("--show-all", action="store_true", help="table: also list objects without findings")
    audit.add_argument("--page-size", type=int, default=500, help="objects per LIST page")
    audit.add_argument(
        "--upgrade-to",
        choices=["1.5"],
        default=None,
        help="instead: a read-only preflight of what breaks when the operator moves to this release "
        "(Dynamo objects and Pods in the audited namespaces; CRDs and webhook configurations)",
    )
    add_admission_arguments(audit)
    audit.set_defaults(func=cmd_audit)


def register_storage_migrate(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "storage-migrate",
        help="rewrite every Dynamo object in its CRD's storage version, then drop old storedVersions",
        description="For each convertible Dynamo CRD: rewrite every object unchanged in the storage version "
        "(a no-op update of its status; conflicts retried, deleted objects skipped), rate-limited and "
        "resumable; then, only if every object was rewritten, set status.storedVersions to the storage version "
        "alone. Exit 0 when every CRD ends with a single stored version, 1 when some objects could not be "
        "rewritten, 2 on usage or API errors.",
        epilog=EXIT_STATUSES,
    )
    add_connection_arguments(cmd)
    cmd.add_argument("--dry-run", action="store_true", help="only report what would be done; write nothing")
    cmd.add_argument(
        "--kinds",
        default=None,
        metavar="KIND,...",
        help="only these kinds (kind, plural or short name: dgd, dcd, dgdr, dgdsa)",
    )
    cmd.add_argument(
        "--qps", type=float, default=50.0, help="at most this many API requests a second (0: no limit)"
    )
    cmd.add_argument(
        "--workers", type=int, default=4, help="objects rewritten at the same time, within --qps"
    )
    cmd.add_argument("--page-size", type=int, default=500, help="objects per LIST page")
    cmd.add_argument(
        "--state-file",
        default=None,
        help="progress file for resuming (default $XDG_STATE_HOME/dynamo-webhook/storage-migrate.json)",
    )
    cmd.add_argument("--no-state", action="store_true", help="keep no progress file (a rerun starts over)")
    cmd.add_argument("-o", "--output", choices=["text", "json"], default="text", help="output format")
    cmd.set_defaults(func=cmd_storage_migrate)


# --------------------------------------------------------------------------- crds


def register_crds(subparsers: Any) -> None:
    """Add the ``crds`` sub-command (with ``release``) to an argparse sub-parser set."""
    sub = _group(
        subparsers,
        "crds",
        ("release",),
        help="the convertible Dynamo CRDs' conversion webhook (release it before an uninstall)",
        description="Work on the conversion stanza of the four convertible Dynamo CRDs.",
    )
    release = sub.add_parser(
        "release",
        help="stop the convertible CRDs naming this Service as their converter (before uninstalling it)",
        description="For each convertible CRD whose conversion webhook names --service: point it at "
        "--hand-over-to, or, when status.storedVersions holds only the storage version, set "
        "spec.conversion to {strategy: None}. When any CRD may still hold objects stored in another version "
        "(and nothing is handed over), no CRD is changed. CRDs naming another converter, or missing, are left "
        "alone. Needs get and patch on the four CRDs. Exit 0 when done (or nothing to do), 1 when refused, "
        "2 on usage or API errors (a dry run exits as the run would).",
        epilog=EXIT_STATUSES,
    )
    add_connection_arguments(release)
    release.add_argument(
        "--service",
        default=None,
        metavar="NAMESPACE/NAME",
        help="the Service being removed (default: namespace $DYNAMO_WEBHOOK_NAMESPACE, else the pod's in a cluster, "
        f"else {settings_default('namespace')}; name $DYNAMO_WEBHOOK_SERVICE_NAME, else "
        f"{settings_default('service_name')}: serve's settings)",
    )
    release.add_argument(
        "--hand-over-to",
        default=None,
        metavar="NAMESPACE/NAME[:PORT][/PATH]",
        help="point the conversion webhook at this Service instead (default port 443, path /convert), e.g. the "
        "operator's own webhook Service; any storedVersions",
    )
    release.add_argument(
        "--hand-over-ca-secret",
        default=None,
        metavar="NAMESPACE/NAME",
        help="with --hand-over-to: the caBundle is ca.crt of this Secret (default: webhook-server-cert in the "
        "--hand-over-to namespace, where the operator keeps its CA); needs get on it",
    )
    release.add_argument(
        "--hand-over-ca-file",
        default=None,
        type=Path,
        metavar="PEM",
        help="with --hand-over-to: the caBundle is this PEM file instead of the Secret's ca.crt",
    )
    release.add_argument(
        "--dry-run", action="store_true", help="only report what would be done; change nothing"
    )
    release.add_argument("-o", "--output", choices=["text", "json"], default="text", help="output format")
    release.set_defaults(func=cmd_crds_release)
