"""``dynamo-webhook audit`` on the command line: its report as a table or JSON, and the command that
connects, runs the audit (:mod:`app.cluster.audit`) or the upgrade preflight
(:mod:`app.cluster.preflight`) and turns what they found into an exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

import orjson
from kubernetes.config.config_exception import ConfigException

from app.cluster import preflight
from app.cluster.audit import TOTAL_FIELDS, Check, Report, run
from app.cluster.inventory import Progress, cluster_failure, connect, fail, join, select_kinds
from app.server.settings import settings_from_args
from certs.kube import ApiError
from domain.constants import GROUP

# --------------------------------------------------------------------------- output


def _table(rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _status(check: Check, excluded: bool) -> str:
    if excluded:
        return "excluded"
    return "ok" if check.allowed else "refused"


def render_table(report: Report, out: TextIO, *, show_all: bool = False) -> None:
    scope = f"namespace {report.namespace}" if report.namespace else "all namespaces"
    out.write(f"Audit of {len(report.objects)} Dynamo object(s) in {scope} ({report.seconds:.1f} s)\n")
    shown = [o for o in report.objects if show_all or o.findings]
    if shown:
        rows: list[tuple[str, ...]] = [
            (
                "NAMESPACE",
                "KIND",
                "NAME",
                "CHECKED AS",
                "UPDATE",
                "CREATE",
                "DEFAULTING",
                "ROUND TRIP",
                "STORED AS",
            )
        ]
        for o in shown:
            rows.append(
                (
                    o.namespace,
                    o.kind,
                    o.name,
                    o.checked_as,
                    _status(o.update, o.excluded),
                    _status(o.create, o.excluded),
                    f"{len(o.update.changes)} field(s)" if o.defaulted else "-",
                    "differs" if o.not_round_tripping else ("ok" if o.roundtrip else "-"),
                    "|".join(o.stored),
                )
            )
        out.write("\n" + "\n".join(_table(rows)) + "\n")
    hidden = len(report.objects) - len(shown)
    if hidden:
        out.write(f"({hidden} object(s) without findings not listed; --show-all lists them)\n")

    refused = report.refused
    if refused:
        out.write("\nWould be refused:\n")
        for o in refused:
            for check in (o.update, o.create):
                if not check.allowed:
                    what = "next update" if check.operation == "UPDATE" else "re-creation"
                    out.write(
                        f"  {o.kind} {o.namespace}/{o.name} ({what}, {check.operation} as "
                        f"{GROUP}/{o.checked_as}):\n    {check.error}\n"
                    )
    defaulted = [o for o in report.objects if o.defaulted]
    if defaulted:
        out.write("\nWould be changed by defaulting on the next update:\n")
        for o in defaulted:
            out.write(f"  {o.kind} {o.namespace}/{o.name}: {', '.join(o.update.changes)}\n")
    broken = [o for o in report.objects if o.not_round_tripping]
    if broken:
        out.write("\nDo not round-trip:\n")
        for o in broken:
            for through, paths in o.roundtrip.items():
                if paths:
                    out.write(
                        f"  {o.kind} {o.namespace}/{o.name} from {GROUP}/{through}: {', '.join(paths)}\n"
                    )

    columns = ("OBJECTS", "REFUSED", "ON UPDATE", "ON CREATE", "DEFAULTED", "NO ROUND TRIP", "EXCLUDED")
    for title, key in (("KIND", lambda o: o.kind), ("NAMESPACE", lambda o: o.namespace)):
        totals = report.totals(key)
        if totals:
            rows = [(title, *columns), *[(k, *(str(v[f]) for f in TOTAL_FIELDS)) for k, v in totals.items()]]
            out.write(f"\nTotals by {title.lower()}:\n" + "\n".join(_table(rows, "  ")) + "\n")

    out.write("\nStored versions (from each CRD's status.storedVersions):\n")
    crd_rows: list[tuple[str, ...]] = [("CRD", "STORAGE", "STORED VERSIONS", "")]
    for k in report.kinds:
        if k.crd is None:
            crd_rows.append((k.kind.crd_name, "-", "-", "not installed"))
            continue
        note = (
            "all objects stored in the storage version"
            if k.crd.migrated
            else ("objects may still be stored in an older version: run storage-migrate")
        )
        crd_rows.append((k.kind.crd_name, k.crd.storage_version, join(k.crd.stored_versions), note))
    out.write("\n".join(_table(crd_rows, "  ")) + "\n")
    out.write(
        "  The API does not say which version one object is stored in; STORED AS lists the candidates.\n"
    )
    if report.excluded_namespaces:
        out.write(
            f"\nNamespaces claimed by a namespace-restricted operator (not admitted by this webhook): "
            f"{', '.join(report.excluded_namespaces)}\n"
        )
    s = report.settings
    on = {True: "on", False: "off"}
    out.write(
        f"\nSettings: operator version {s['operator_version']}; feature gates Grove {on[s['feature_grove']]}, "
        f"Checkpoint {on[s['feature_checkpoint']]}, GPUDiscovery {on[s['feature_gpu_discovery']]}; operator "
        f"principal {s['operator_principal']}\n"
    )
    n_update = sum(not o.update.allowed for o in refused)
    n_create = sum(not o.create.allowed for o in refused)
    out.write(
        f"Result: {len(refused)} of {len(report.objects)} object(s) would be refused "
        f"({n_update} on their next update, {n_create} if created again)\n"
    )


def render_json(report: Report, out: TextIO) -> None:
    out.write(orjson.dumps(report.as_json(), option=orjson.OPT_INDENT_2).decode() + "\n")


# --------------------------------------------------------------------------- command line


def cmd_audit(args: argparse.Namespace) -> int:
    try:
        kinds = select_kinds(args.kinds)
        settings = settings_from_args(args)
    except ValueError as exc:
        return fail("audit", str(exc))
    upgrade_to = getattr(args, "upgrade_to", None)
    if args.output == "github" and not upgrade_to:
        return fail("audit", "-o github is for --upgrade-to")
    try:
        conn = connect(args)
        namespace = None if args.all_namespaces else (args.namespace or conn.default_namespace)
        if upgrade_to:
            findings = preflight.run(
                conn.kube, kinds, namespace, page_size=args.page_size, progress=Progress()
            )
            preflight.render(findings, args.output)
            return preflight.exit_code(findings)
        report = run(conn.kube, kinds, namespace, settings, page_size=args.page_size, progress=Progress())
    except (ConfigException, ApiError) as exc:
        return cluster_failure("audit", exc, "cannot read the cluster: ")
    if args.output == "json":
        render_json(report, sys.stdout)
    else:
        render_table(report, sys.stdout, show_all=args.show_all)
    return report.exit_code
