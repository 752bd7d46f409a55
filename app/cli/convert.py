"""``dynamo-webhook convert``: offline manifest migration and its checks: each document round-trips,
and, converted to ``--to``, is one the API server's create accepts (:func:`apiserver.pipeline.create`
with the service's own webhooks, as ``lint`` runs it).

A conversion never drops a field silently: :func:`dropped_fields` names each field of the input its
output does not carry, whether the API server would not keep it (unknown to the source version's
schema: what :func:`apiserver.pipeline.decode` prunes) or the conversion cannot (lost on the round
trip, :func:`app.review.roundtrip.roundtrip_problems`); ``--validate`` says what to do about them.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

import orjson

from apiserver import crds, pipeline
from apiserver.admission import Service
from apiserver.pipeline import FieldValidation
from app.cli.documents import EXIT_FINDINGS, EXIT_OK, Document, dump, is_dynamo
from app.review.errors import ConversionFailure
from app.review.roundtrip import CONVERTIBLE, VERSIONS, convert_one, other_version, roundtrip_problems
from kinds import REGISTRY

PAYLOAD_KEYS = tuple(key for kind in REGISTRY for key in kind.payload_keys)


def convertible(body: Any) -> bool:
    return is_dynamo(body) and body.get("kind") in CONVERTIBLE and body.get("apiVersion") in VERSIONS


def leaf_paths(value: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            yield from leaf_paths(child, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value:
        for index, child in enumerate(value):
            yield from leaf_paths(child, f"{prefix}[{index}]")
    else:
        yield prefix or "(root)"


def payload_report(body: dict[str, Any]) -> list[str]:
    """What the target version cannot represent and therefore carries in payload annotations."""
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    annotations = (meta or {}).get("annotations") or {}
    lines: list[str] = []
    for key in PAYLOAD_KEYS:
        raw = annotations.get(key)
        if not raw:
            continue
        try:
            payload = orjson.loads(raw)
        except orjson.JSONDecodeError:
            lines.append(f"    {key}: (not JSON)")
            continue
        content = (
            payload.get("spec", payload) if isinstance(payload, dict) and "version" in payload else payload
        )
        paths = sorted(set(leaf_paths(content)))
        lines.append(f"    + annotation {key} keeps {len(paths)} field(s) the target version cannot hold:")
        lines.extend(f"        {p}" for p in paths)
    return lines


def schema_unknown_fields(body: dict[str, Any]) -> list[str]:
    """The paths of ``body`` its own version's schema does not describe (metadata's too): what the
    API server's strict decoding refuses, and prunes otherwise."""
    version = crds.lookup(str(body.get("apiVersion")), str(body.get("kind")))
    if version is None:
        return []
    decoded = pipeline.CreateOutcome(False)
    pipeline.decode(copy.deepcopy(body), version, "ignore", decoded)
    return decoded.pruned


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith((parent + ".", parent + "["))


def dropped_fields(body: dict[str, Any], to: str) -> list[tuple[str, str]]:
    """(path, why) of each field of ``body`` (in the version other than ``to``) that ``body`` converted
    to ``to`` does not carry: unknown to its version's schema, or lost by the conversion (a path under
    one already named is not named again)."""
    unknown = schema_unknown_fields(body)
    why = f"unknown to the {body.get('apiVersion')} {body.get('kind')} schema"
    lost = roundtrip_problems(body, added=False)
    return [(path, why) for path in unknown] + [
        (path, f"the conversion to {to} and back does not carry it")
        for path in lost
        if not any(_within(path, u) for u in unknown)
    ]


def report_drops(label: str, body: dict[str, Any], to: str, validation: FieldValidation, err: TextIO) -> bool:
    """Name on ``err`` each field :func:`dropped_fields` finds, unless ``validation`` is ``ignore`` or
    ``body`` is already in ``to`` (nothing is converted); whether they fail the document (strict)."""
    if validation == "ignore" or body.get("apiVersion") == to:
        return False
    drops = dropped_fields(body, to)
    for path, why in drops:
        err.write(f"{label}: drops {path}: {why}\n")
    return bool(drops) and validation == "strict"


def refusal(doc: Document, converted: dict[str, Any], service: Service) -> str | None:
    """What the API server answers a create of ``converted`` (``doc`` in the target version) when it
    refuses it: its Status's message, or kubectl's own refusal; ``None`` when it accepts it."""
    outcome = pipeline.create(converted, service, doc.source)
    if outcome.allowed:
        return None
    if outcome.client_error is not None:
        return outcome.client_error.replace("\n", "; ")
    return str((outcome.status or {}).get("message", ""))


def check_one(doc: Document, label: str, to: str, service: Service, report: bool, err: TextIO) -> int:
    """``--check`` of one convertible document: whether it round-trips, and whether the API server's
    create accepts it converted to ``to``; the number of those that fail, each named on ``err``."""
    body = doc.body
    failed = 0
    problems = roundtrip_problems(body)
    if problems:
        failed += 1
        err.write(f"{label}: does not round-trip: {', '.join(problems)}\n")
    elif report:
        err.write(f"{label}: round-trips through {other_version(str(body['apiVersion']))}\n")
    refused = refusal(doc, convert_one(body, to), service)
    if refused is not None:
        failed += 1
        err.write(f"{label}: the API server refuses it as {to}: {refused}\n")
    elif report:
        err.write(f"{label}: the API server accepts it as {to}\n")
    return failed


def convert_documents(
    docs: Sequence[Document],
    to: str,
    *,
    check: bool,
    output: str,
    report: bool,
    out: TextIO | None = None,
    err: TextIO | None = None,
    service: Service | None = None,
    validation: FieldValidation = "strict",
) -> int:
    """Convert ``docs`` to ``to`` and write them; ``check``: instead prove each round-trips and, in
    ``to``, is accepted by the API server's create under ``service`` (the service's own webhooks
    with default settings when ``None``). Converting, a field the output would not carry
    (:func:`dropped_fields`) is, per ``validation``: ``strict``, named on ``err``, the exit status 1
    and nothing written; ``warn``, named and written; ``ignore``, written silently. (``check`` needs
    no such report: a field the conversion drops does not round-trip, one it carries that the schema
    does not describe is refused by the API server's strict decoding.)"""
    out = out or sys.stdout
    err = err or sys.stderr
    if check and service is None:
        from app.cli.offline import OfflineService
        from app.server.settings import Settings

        service = OfflineService(Settings())
    results: list[Any] = []
    failed = lossy = 0
    for doc in docs:
        body = doc.body
        label = f"{doc.source}: {doc.ident} (document {doc.index + 1})"
        if not convertible(body):
            results.append(body)
            if report and is_dynamo(body):
                err.write(f"{label}: not convertible, passed through\n")
            continue
        try:
            if check:
                assert service is not None
                failed += check_one(doc, label, to, service, report, err)
                continue
            converted = convert_one(body, to)
            lossy += report_drops(label, body, to, validation, err)
        except ConversionFailure as exc:
            failed += 1
            err.write(f"{label}: conversion failed: {exc}\n")
            results.append(body)
            continue
        results.append(converted)
        if report:
            if body.get("apiVersion") == to:
                err.write(f"{label}: already {to}\n")
            else:
                err.write(f"{label}: {body.get('apiVersion')} -> {to}\n")
                for line in payload_report(converted):
                    err.write(line + "\n")
    if lossy:
        err.write(
            f"nothing written: {lossy} document(s) would lose the fields named "
            "(--validate warn writes them anyway)\n"
        )
    elif not check:
        dump(results, output, out)
    return EXIT_FINDINGS if failed or lossy else EXIT_OK
