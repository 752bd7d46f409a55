"""``lint``: every manifest of some files through :func:`apiserver.pipeline.create`, each answer
turned into findings that point at the file, line and column of the field they name.

A file that cannot be read (missing, not UTF-8 text, not YAML or JSON) is a problem of its own,
named with the file (and, for YAML, the line and column); the other files are still checked. A file
with no document at all is refused as kubectl refuses it (``no objects passed to create``). Documents
outside the ``nvidia.com`` group are left alone (counted as not checked); an ``nvidia.com`` kind or
version the vendored CRDs do not serve is refused as kubectl refuses it (no CRD installs it), and so
is an object larger than the API server reads in a request. Directories are walked and files that
are not manifests skipped as :mod:`apiserver.inputs` says; a skipped file is counted, never an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from apiserver import pipeline
from apiserver.admission import Service
from apiserver.crds import GROUP
from apiserver.inputs import MAX_OBJECT_BYTES, expand, load
from apiserver.pipeline import CreateOutcome, FieldValidation
from apiserver.source import Located, SourceError, parse_field

JSONObject = dict[str, Any]
EXIT_OK, EXIT_REFUSED, EXIT_UNREADABLE = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the report: ``severity`` is error, warning, skipped or default."""

    severity: str
    message: str
    line: int
    column: int
    field: str = ""


@dataclass(slots=True)
class Checked:
    """One document (or, with ``document`` 0, a file-level problem) and what lint found."""

    file: str
    document: int
    line: int
    api_version: str = ""
    kind: str = ""
    name: str = ""
    verdict: str = "accepted"  # accepted, refused, unreadable, not-checked; a file's: skipped
    findings: list[Finding] = field(default_factory=list)
    outcome: CreateOutcome | None = None


def _meta_text(body: JSONObject, key: str) -> str:
    meta = body.get("metadata")
    value = meta.get(key) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else ""


def _lines(outcome: CreateOutcome) -> list[tuple[str, str]]:
    """(field, message) of a refusal, one per line kubectl prints: the causes of an ``Invalid``
    Status (``field: message``), an unknown field each, or the message itself."""
    if outcome.client_error is not None:
        return [("", outcome.client_error.replace("\n", "; "))]
    status = outcome.status or {}
    message = str(status.get("message", ""))
    causes = (status.get("details") or {}).get("causes") or []
    if status.get("reason") == "Invalid" and causes:
        return [(str(c.get("field", "")), f"{c.get('field', '')}: {c.get('message', '')}") for c in causes]
    marker = "strict decoding error: "
    if marker in message:
        listed = message.split(marker, 1)[1]
        return [
            (p.removeprefix('unknown field "').removesuffix('"'), f"{marker}{p}")
            for p in listed.split(", ")
            if p.startswith("unknown field ")
        ]
    fields = [str(c.get("field", "")) for c in causes if c.get("field")]
    return [(fields[0] if fields else "", message)]


def _findings(doc: Located, outcome: CreateOutcome) -> list[Finding]:
    found: list[Finding] = []

    def at(severity: str, message: str, path: str = "") -> None:
        line, column = doc.position(parse_field(path))
        found.append(Finding(severity, message, line, column, path))

    if not outcome.allowed:
        for path, message in _lines(outcome):
            at("error", message, path)
    for warning in outcome.warnings:
        path = (
            warning.removeprefix('unknown field "').removesuffix('"')
            if warning.startswith("unknown field")
            else ""
        )
        at("warning", warning, path)
    for dup in doc.duplicates:
        shown = ".".join(str(p) for p in dup)
        line, column = doc.position(dup)
        found.append(
            Finding("warning", f"duplicate field {shown!r}: the last value is used", line, column, shown)
        )
    for rule in outcome.skipped:
        at("skipped", rule)
    return found


def check_document(
    doc: Located, file: str, service: Service, validation: FieldValidation, diff: bool
) -> Checked:
    body = doc.body
    checked = Checked(file, doc.number, doc.line)
    if not isinstance(body, dict):  # kubectl's own refusal
        checked.verdict = "refused"
        checked.findings.append(
            Finding("error", "unable to decode: the document is not an object", doc.line, 1)
        )
        return checked
    checked.api_version, checked.kind = str(body.get("apiVersion", "")), str(body.get("kind", ""))
    checked.name = _meta_text(body, "name") or _meta_text(body, "generateName")
    if checked.api_version.partition("/")[0] != GROUP or "/" not in checked.api_version:
        checked.verdict = "not-checked"
        return checked
    if len(orjson.dumps(body)) > MAX_OBJECT_BYTES:  # what kubectl sends; the API server reads no more
        checked.verdict = "refused"
        checked.findings.append(
            Finding("error", f"Request entity too large: limit is {MAX_OBJECT_BYTES}", doc.line, 1)
        )
        return checked
    outcome = pipeline.create(body, service, file, validation)
    checked.outcome = outcome
    checked.verdict = "accepted" if outcome.allowed else "refused"
    checked.findings = _findings(doc, outcome)
    if diff and outcome.allowed:
        checked.findings += [
            Finding(
                "default",
                f"{op.get('op')} {op.get('path')} = {orjson.dumps(op.get('value')).decode()}",
                doc.line,
                1,
            )
            for op in outcome.defaulted
        ]
    return checked


def check_files(
    files: Sequence[str],
    service: Service,
    validation: FieldValidation = "strict",
    diff: bool = False,
    skip_non_manifests: bool = False,
) -> list[Checked]:
    """Every document of ``files`` (directories walked, :func:`apiserver.inputs.expand`), checked; a
    file that is skipped as not a manifest (:func:`apiserver.inputs.load`) is one ``skipped`` entry."""
    out: list[Checked] = []
    for item in expand(files):
        file = item.path
        try:
            docs = load(item, skip_non_manifests)
        except SourceError as exc:
            text = str(exc)
            line, column = _position_of(text, file)
            out.append(
                Checked(
                    file,
                    0,
                    line,
                    verdict="unreadable",
                    findings=[
                        Finding(
                            "error", text.removeprefix(f"{file}:").lstrip("0123456789:").strip(), line, column
                        )
                    ],
                )
            )
            continue
        if docs is None:
            out.append(Checked(file, 0, 1, verdict="skipped"))
            continue
        if not docs:
            out.append(
                Checked(
                    file,
                    0,
                    1,
                    verdict="refused",
                    findings=[Finding("error", "no objects passed to create", 1, 1)],
                )
            )
            continue
        out += [check_document(doc, file, service, validation, diff) for doc in docs]
    return out


def _position_of(text: str, file: str) -> tuple[int, int]:
    rest = text.removeprefix(f"{file}:").split(":")
    if len(rest) >= 2 and rest[0].isdigit() and rest[1].isdigit():
        return int(rest[0]), int(rest[1])
    return 1, 1


def exit_code(results: Sequence[Checked]) -> int:
    if any(r.verdict == "unreadable" for r in results):
        return EXIT_UNREADABLE
    if any(r.verdict == "refused" for r in results):
        return EXIT_REFUSED
    return EXIT_OK
