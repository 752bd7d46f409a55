"""``lint``'s report, its findings sorted by file, then line, then column, in every format:

- ``text``: ``FILE:LINE:COLUMN: SEVERITY: KIND/NAME (document N): MESSAGE``, then a summary on
  standard error; a file-level problem has no document part;
- ``json``: one object with every document (file, 1-based number, kind, name, verdict, the API
  server's Status, findings with positions) and the counts;
- ``github``: GitHub Actions workflow commands (``::error file=…,line=…,col=…::…``), which show
  as annotations on the pull request's files;
- ``sarif`` and ``junit``: :mod:`apiserver.report_files`.

A file skipped as not a manifest (:func:`apiserver.inputs.load`) has no finding; it is counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

import orjson

from apiserver.lint import Checked, Finding

_GITHUB_LEVEL = {"error": "error", "warning": "warning", "skipped": "notice", "default": "notice"}


def _subject(checked: Checked) -> str:
    if checked.document == 0:
        return ""
    kind = checked.kind or "(no kind)"
    return f"{kind}/{checked.name} (document {checked.document}): "


def ordered(results: Sequence[Checked]) -> list[Checked]:
    """``results`` by file, then document, each one's findings by line, then column."""
    out = sorted(results, key=lambda r: (r.file, r.document))
    for r in out:
        r.findings.sort(key=lambda f: (f.line, f.column))
    return out


def lines(results: Sequence[Checked]) -> list[tuple[Checked, Finding]]:
    """Every finding with its document, by file, then line, then column."""
    return sorted(
        ((r, f) for r in results for f in r.findings), key=lambda p: (p[0].file, p[1].line, p[1].column)
    )


def text_line(checked: Checked, finding: Finding) -> str:
    return (
        f"{checked.file}:{finding.line}:{finding.column}: {finding.severity}: "
        f"{_subject(checked)}{finding.message}"
    )


def counts(results: Sequence[Checked]) -> dict[str, int]:
    out = {
        "documents": 0,
        "checked": 0,
        "accepted": 0,
        "refused": 0,
        "unreadable": 0,
        "notChecked": 0,
        "skippedFiles": 0,
    }
    for r in results:
        if r.document:
            out["documents"] += 1
        if r.verdict == "skipped":
            out["skippedFiles"] += 1
        elif r.verdict == "accepted":
            out["accepted"] += 1
        elif r.verdict == "refused":
            out["refused"] += 1
        elif r.verdict == "unreadable":
            out["unreadable"] += 1
        else:
            out["notChecked"] += 1
    out["checked"] = out["accepted"] + sum(1 for r in results if r.verdict == "refused" and r.document)
    return out


def summary(results: Sequence[Checked]) -> str:
    c = counts(results)
    return (
        f"{c['checked']} Dynamo document(s) checked: {c['accepted']} accepted, {c['refused']} refused"
        f"; {c['notChecked']} other document(s) not checked; {c['unreadable']} unreadable file(s)"
        f"; {c['skippedFiles']} file(s) skipped, not Kubernetes manifests"
    )


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(checked: Checked, finding: Finding) -> str:
    level = _GITHUB_LEVEL.get(finding.severity, "notice")
    title = f"{checked.kind}/{checked.name}" if checked.document else "dynamo-webhook lint"
    props = (
        f"file={escape_property(checked.file)},line={finding.line},col={finding.column},"
        f"title={escape_property(title)}"
    )
    return f"::{level} {props}::{escape_data(_subject(checked) + finding.message)}"


def as_json(results: Sequence[Checked]) -> dict[str, Any]:
    docs = []
    for r in ordered(results):
        if r.verdict == "skipped":
            continue
        outcome = r.outcome
        docs.append(
            {
                "file": r.file,
                "document": r.document,
                "line": r.line,
                "apiVersion": r.api_version,
                "kind": r.kind,
                "name": r.name,
                "verdict": r.verdict,
                "status": outcome.status if outcome else None,
                "clientError": outcome.client_error if outcome else None,
                "findings": [
                    {
                        "severity": f.severity,
                        "field": f.field,
                        "message": f.message,
                        "line": f.line,
                        "column": f.column,
                    }
                    for f in r.findings
                ],
                "pruned": outcome.pruned if outcome else [],
            }
        )
    skipped = sorted(r.file for r in results if r.verdict == "skipped")
    return {"documents": docs, "skippedFiles": skipped, "summary": counts(results)}


def write(results: Sequence[Checked], fmt: str, out: TextIO, err: TextIO) -> None:
    """The report of ``results`` in ``fmt`` on ``out``; the summary on ``err`` for text and github."""
    if fmt == "json":
        out.write(orjson.dumps(as_json(results), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if fmt in ("sarif", "junit"):
        from apiserver import report_files

        out.write(
            report_files.sarif(ordered(results)) if fmt == "sarif" else report_files.junit(ordered(results))
        )
        return
    render = github_line if fmt == "github" else text_line
    for r, f in lines(results):
        out.write(render(r, f) + "\n")
    err.write(summary(results) + "\n")
