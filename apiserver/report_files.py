"""``lint``'s report as the files CI systems read: SARIF 2.1.0 (``-o sarif``: GitHub code scanning,
GitLab, editors) and JUnit XML (``-o junit``: Jenkins, GitLab's test reports, as kubeconform writes
it).

- SARIF: one run of the tool ``dynamo-webhook lint`` with a rule per kind of finding
  (:data:`RULES`); each finding a result with its rule, level (``error``, ``warning``, ``note``),
  message and location (the file as a URI reference, the line and column).
- JUnit, in the Apache Ant JUnit schema (the strictest of the readers' schemas): a ``testsuite``
  per file, a ``testcase`` per document (``KIND/NAME (document N)``); a refused document has a
  ``failure`` (its first error as the message, every error in the text), a file that cannot be read
  an ``error``. The schema has no ``skipped`` and no output per test case, so warnings, notes,
  documents outside ``nvidia.com`` (passed, not checked) and files skipped as not manifests (a
  suite without test cases) are lines of the suite's ``system-out``.

Both are built from ``results`` in the order given (:func:`apiserver.report.ordered`).
"""

from __future__ import annotations

import importlib.metadata
import os
import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import orjson

from apiserver.lint import Checked, Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "dynamo-webhook lint"

#: Rule id → what it finds.
RULES = {
    "unreadable-file": "The file cannot be read, is too large, or is not YAML or JSON.",
    "unknown-field": "A field the CRD's schema does not describe (strict decoding).",
    "duplicate-field": "A key written twice in one mapping: the last value is used.",
    "refused": "The API server (its schema, CEL rules or the Dynamo webhooks) refuses the object.",
    "warning": "The API server or a webhook warns about the object.",
    "not-checked-offline": "A rule that needs the cluster and is not checked offline.",
    "default": "A field defaulting would set (--diff).",
}
_LEVEL = {"error": "error", "warning": "warning", "skipped": "note", "default": "note"}


def rule_of(checked: Checked, finding: Finding) -> str:
    """The :data:`RULES` id of ``finding``."""
    if checked.verdict == "unreadable":
        return "unreadable-file"
    if finding.severity == "skipped":
        return "not-checked-offline"
    if finding.severity == "default":
        return "default"
    if finding.message.startswith("duplicate field"):
        return "duplicate-field"
    if "unknown field" in finding.message:
        return "unknown-field"
    return "refused" if finding.severity == "error" else "warning"


def _version() -> str:
    try:
        return importlib.metadata.version("dynamo-webhook")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def uri(path: str) -> str:
    """``path`` as a SARIF artifact URI: a relative reference for a relative path, ``file://`` else."""
    posix = path.replace(os.sep, "/")
    if os.path.isabs(path):
        return "file://" + quote(posix)
    return quote(posix)


def _result(checked: Checked, finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    rule = rule_of(checked, finding)
    subject = f"{checked.kind}/{checked.name} (document {checked.document}): " if checked.document else ""
    return {
        "ruleId": rule,
        "ruleIndex": index[rule],
        "level": _LEVEL.get(finding.severity, "note"),
        "message": {"text": subject + finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri(checked.file)},
                    "region": {"startLine": finding.line, "startColumn": finding.column},
                }
            }
        ],
    }


def sarif_log(results: Sequence[Checked]) -> dict[str, Any]:
    index = {rule: i for i, rule in enumerate(RULES)}
    rules = [{"id": rule, "shortDescription": {"text": text}} for rule, text in RULES.items()]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": TOOL, "version": _version(), "rules": rules}},
                "results": [_result(r, f, index) for r in results for f in r.findings],
            }
        ],
    }


def sarif(results: Sequence[Checked]) -> str:
    return orjson.dumps(sarif_log(results), option=orjson.OPT_INDENT_2).decode() + "\n"


def _case(suite: ET.Element, checked: Checked, notes: list[str]) -> str:
    """The test case of ``checked`` in ``suite``, what it adds to the suite's output in ``notes``;
    its outcome: ``failure``, ``error`` or ``""`` (passed)."""
    name = (
        f"{checked.kind or '(no kind)'}/{checked.name} (document {checked.document})"
        if checked.document
        else checked.file
    )
    case = ET.SubElement(suite, "testcase", name=name, classname=checked.file, time="0")
    errors = [f for f in checked.findings if f.severity == "error"]
    notes += [
        f"{checked.file}:{f.line}:{f.column}: {f.severity}: {name}: {f.message}"
        for f in checked.findings
        if f.severity != "error"
    ]
    if checked.verdict == "not-checked":
        notes.append(
            f"{checked.file}:{checked.line}:1: not checked: {name}: {checked.api_version} is not nvidia.com"
        )
    if not errors:
        return ""
    outcome = "error" if checked.verdict == "unreadable" else "failure"
    ET.SubElement(
        case, outcome, message=errors[0].message, type=rule_of(checked, errors[0])
    ).text = "\n".join(f"{checked.file}:{f.line}:{f.column}: {f.message}" for f in errors)
    return outcome


def junit(results: Sequence[Checked]) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites")
    by_file: dict[str, list[Checked]] = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    for number, (file, checked) in enumerate(by_file.items()):
        suite = ET.SubElement(
            root,
            "testsuite",
            name=file,
            package=file,
            id=str(number),
            timestamp=stamp,
            hostname=socket.gethostname() or "localhost",
        )
        ET.SubElement(suite, "properties")
        notes: list[str] = []
        cases = [c for c in checked if c.verdict != "skipped"]
        outcomes = [_case(suite, c, notes) for c in cases]
        if len(cases) < len(checked):
            notes.append(f"{file}: skipped: not a Kubernetes manifest")
        ET.SubElement(suite, "system-out").text = "\n".join(notes)
        ET.SubElement(suite, "system-err").text = ""
        suite.attrib.update(
            tests=str(len(cases)),
            failures=str(outcomes.count("failure")),
            errors=str(outcomes.count("error")),
            time="0",
        )
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
