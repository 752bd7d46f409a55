"""The upgrade preflight of ``audit --upgrade-to``: what in a cluster breaks on a given operator release.

It owns the rules per target release, each tied to the release note that states it, and reads only
what those rules need. Only what a note states precisely enough to check mechanically is a rule; the
rest is listed in docs/operations.md as not checked, so a clean preflight never claims more than it read.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import orjson

from app.cluster.inventory import EXIT_FINDINGS, EXIT_OK, CrdInfo, read_crd
from kinds.registry import Kind

NOTES_1_5 = "https://docs.nvidia.com/dynamo/v1.5.0/reference/releases/deprecations.md"
TARGETS = ("1.5",)


@dataclass(frozen=True)
class Finding:
    """One thing that breaks on the upgrade, with its fix and the note that says so."""

    kind: str
    name: str
    breaks: str
    fix: str
    source: str

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "breaks": self.breaks, "fix": self.fix,
                "source": self.source}


def stored_alpha(crds: Sequence[CrdInfo]) -> list[Finding]:
    """CRDs whose status.storedVersions still lists v1alpha1: 1.5 stores v1beta1 only."""
    return [Finding("CustomResourceDefinition", crd.name,
                    "status.storedVersions still lists v1alpha1; 1.5 promotes storage to v1beta1",
                    "dynamo-webhook storage-migrate", NOTES_1_5)
            for crd in crds if "v1alpha1" in crd.stored_versions]


def findings_1_5(crds: Sequence[CrdInfo]) -> list[Finding]:
    return stored_alpha(crds)


def run(kube: Any, kinds: Sequence[Kind]) -> list[Finding]:
    crds = [crd for crd in (read_crd(kube, kind) for kind in kinds) if crd is not None]
    return findings_1_5(crds)


def render(findings: Sequence[Finding], output: str, out: TextIO = sys.stdout) -> None:
    if output == "json":
        doc = {"upgradeTo": "1.5", "findings": [f.as_json() for f in findings]}
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if not findings:
        out.write("upgrade to 1.5: nothing found that breaks (see the docs for what is not checked)\n")
        return
    for f in findings:
        out.write(f"{f.kind} {f.name}: {f.breaks}\n  fix: {f.fix}\n  source: {f.source}\n")


def exit_code(findings: Sequence[Finding]) -> int:
    return EXIT_FINDINGS if findings else EXIT_OK
