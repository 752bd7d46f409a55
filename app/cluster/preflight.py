"""The upgrade preflight of ``audit --upgrade-to``: what in a cluster breaks on a given operator release.

It reads only what the rules of :mod:`app.cluster.preflight_rules` need, with audit's paginated
listing and progress: the Dynamo kinds' CRDs, the DGDs, DCDs and DynamoCheckpoints, Pods (all
namespaces, or the one audited) and the cluster's Mutating/ValidatingWebhookConfigurations. Only what
a note states precisely enough to check mechanically is a rule; the rest is listed in
docs/operations.md as not checked, so a clean preflight never claims more than it read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

import orjson

from apiserver.report import escape_data, escape_property
from app.cluster import inventory
from app.cluster import preflight_rules as rules
from app.cluster.inventory import CrdInfo, JsonObj, Progress
from app.cluster.preflight_rules import Finding
from kinds.registry import Kind

TARGETS = ("1.5",)
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
WEBHOOK_CONFIGURATIONS = (
    ("MutatingWebhookConfiguration", f"{ADMISSION}/mutatingwebhookconfigurations"),
    ("ValidatingWebhookConfiguration", f"{ADMISSION}/validatingwebhookconfigurations"),
)


def findings_1_5(crds: Sequence[CrdInfo]) -> list[Finding]:
    """The CRD rule alone (what the CRDs say, no objects listed)."""
    return [f for crd in crds for f in rules.stored_alpha(crd.name, crd.stored_versions)]


class Reader:
    """Lists one collection after another with audit's :class:`Listing` and progress line."""

    def __init__(self, kube: Any, page_size: int, progress: Progress) -> None:
        self.kube, self.page_size, self.progress = kube, page_size, progress

    def each(self, label: str, path: str, rule: Callable[[JsonObj], list[Finding]]) -> list[Finding]:
        listing = inventory.Listing(self.kube, path, self.page_size)
        out: list[Finding] = []
        for done, obj in enumerate(listing, 1):
            out += rule(obj)
            self.progress.update(f"preflight {label}", done, listing.total)
        self.progress.clear()
        return out


def _pods_path(namespace: str | None) -> str:
    return f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"


def _dynamo_rule(kind: Kind, version: str) -> Callable[[JsonObj], list[Finding]]:
    def rule(obj: JsonObj) -> list[Finding]:
        obj.setdefault("apiVersion", f"{kind.group}/{version}")
        return rules.dynamo_object(kind.kind, obj)

    return rule


def _config_rule(kind: str) -> Callable[[JsonObj], list[Finding]]:
    return lambda obj: rules.webhook_configuration(kind, obj)


def run(
    kube: Any,
    kinds: Sequence[Kind],
    namespace: str | None = None,
    *,
    page_size: int = 500,
    progress: Progress | None = None,
) -> list[Finding]:
    """Every finding for the 1.5 upgrade; Dynamo objects and Pods in ``namespace`` (None: all)."""
    reader = Reader(kube, page_size, progress or Progress(enabled=False))
    found: list[Finding] = []
    for kind in kinds:
        crd = inventory.read_crd(kube, kind)
        if crd is None:
            continue
        if kind.convertible:  # a single-version kind has nothing else to store in
            found += findings_1_5([crd])
        if crd.served and kind.kind in (rules.DGD, rules.DCD, rules.CHECKPOINT):
            version = crd.list_version
            found += reader.each(
                kind.plural, inventory.collection_path(kind, version, namespace), _dynamo_rule(kind, version)
            )
    found += reader.each("pods", _pods_path(namespace), rules.pod)
    for config_kind, path in WEBHOOK_CONFIGURATIONS:
        found += reader.each(config_kind, path, _config_rule(config_kind))
    return found


# --------------------------------------------------------------------------- output


def _table(findings: Iterable[Finding]) -> str:
    return "".join(f"{f.subject}: {f.breaks}\n  fix: {f.fix}\n  source: {f.source}\n" for f in findings)


def _github(findings: Iterable[Finding]) -> str:
    return "".join(
        f"::warning title={escape_property(f.subject)}::"
        f"{escape_data(f'{f.breaks}. Fix: {f.fix}. Source: {f.source}')}\n"
        for f in findings
    )


def render(findings: Sequence[Finding], output: str, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if output == "json":
        doc = {"upgradeTo": "1.5", "findings": [f.as_json() for f in findings]}
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if output == "github":
        out.write(_github(findings))
    else:
        out.write(_table(findings))
    if not findings:
        out.write("upgrade to 1.5: nothing found that breaks (see the docs for what is not checked)\n")
    else:
        out.write(f"upgrade to 1.5: {len(findings)} finding(s)\n")


def exit_code(findings: Sequence[Finding]) -> int:
    return inventory.EXIT_FINDINGS if findings else inventory.EXIT_OK
