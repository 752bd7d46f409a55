"""``dynamo-webhook lint`` says what the real API server says.

Every ``nvidia.com`` document of ``examples/manifests`` and ``tests/fixtures/admission/manifests``, and a
few hundred seeded edits of them (:mod:`tools.opdiff.lint_edits`: mistyped keys, misspelled enums, flipped
types, required fields and list-map keys deleted, nulls in lists, broken patterns, wrong kinds, invalid
names, ...), each written to a file of its own, goes through ``kubectl create --dry-run=server -f FILE``
(kubectl's default ``--validate=strict``) against the API server of the ``cluster`` fixture, and through
``lint`` of the same file. Per document the verdict (accepted, refused by the API server, refused by
kubectl itself) must be the same, and for a refusal what kubectl prints: lint's Status (or kubectl's own
error) is rendered as kubectl renders it (:func:`kubectl_text`) and compared with kubectl's standard error.
The API server lists errors of sibling fields in Go's map order, which changes from one request to the
next: the causes of an ``Invalid`` answer, an aggregated message's errors (``[a, b]``) and a list of
unknown fields are compared as sets.

The rules that read the cluster, which lint reports as ``skipped`` (:mod:`apiserver.cluster`): the e2e
service looks them up live. The InferencePool API is not served in this cluster, so an ``epp`` component
is refused by the validating webhook; for a document lint skipped that rule for, the API server's answer
must be lint's, or lint's with exactly those errors added (accepted by lint when they are the only ones).
The ClusterTopologyBinding look-up runs only on the Grove pathway, which this service has off: lint and
the API server must agree there as elsewhere (each v1beta1 DynamoGraphDeployment is also sent with a
topology constraint naming one).

Disagreements whose API server answer names a CEL rule's message (``x-kubernetes-validations``) that
lint's does not are counted apart in the failure message. ``DYNAMO_WEBHOOK_LINT_PROOF_OUT=DIR`` writes
every disagreement (the document, the API server's answer and lint's) to
``DIR/lintproof-mismatches.jsonl``, and those from CEL rules also to ``DIR/lintproof-cel.jsonl``.
``DYNAMO_WEBHOOK_LINT_PROOF_SEED`` draws other edits; ``DYNAMO_WEBHOOK_LINT_PROOF_BASES`` adds folders of
manifests to start from.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver import inputs, lint
from apiserver.pipeline import CreateOutcome
from apiserver.source import SourceError
from app.cli.main import OfflineService
from app.server.settings import Settings
from gocompat.gotext import go_quote
from tests.e2e.cluster import CRD_DIR, STAND_INS, Cluster
from tests.e2e.objects import namespace
from tests.e2e.testenv import ROOT
from tools.opdiff import lint_edits

Obj = dict[str, Any]
NS = "e2e-lint"
#: Another seed (``DYNAMO_WEBHOOK_LINT_PROOF_SEED``) explores other edits; this one is the committed proof.
SEED = int(os.environ.get("DYNAMO_WEBHOOK_LINT_PROOF_SEED", "20261127"))
EDITED = 340
WORKERS = 4
#: More folders of manifests to start from (``DYNAMO_WEBHOOK_LINT_PROOF_BASES``, separated by ``os.pathsep``),
#: for a run on other published manifests than this repository's: their files as ``lint`` walks a
#: directory, those that are not manifests (a Helm chart's templates, configs) left out as it skips them.
EXTRA_BASES = [Path(p) for p in os.environ.get("DYNAMO_WEBHOOK_LINT_PROOF_BASES", "").split(os.pathsep) if p]


def _manifests(base: Path) -> list[Path]:
    found = []
    for item in inputs.walk(str(base)):
        try:
            if inputs.load(item, skip_non_manifests=True) is not None:
                found.append(Path(item.path))
        except SourceError:  # a manifest that does not parse has nothing to edit
            continue
    return found


SOURCES = (
    *sorted((ROOT / "examples" / "manifests").glob("*.yaml")),
    *sorted((ROOT / "tests" / "fixtures" / "admission" / "manifests").rglob("*.yaml")),
    *(path for base in EXTRA_BASES for path in _manifests(base)),
)
POOL_ERROR = re.compile(
    r"spec\.components\[\d+\]\.type: Forbidden: cannot deploy EPP component: InferencePool API group "
    r"\(inference\.networking\.k8s\.io\) is not available in the cluster; install the Gateway API Inference "
    r"Extension before deploying EPP components"
)
UNKNOWN = "strict decoding error: "
#: The edits that delete list-map keys and nested required fields and put nulls into lists (the
#: refusals of the core types a pod template embeds), counted in the figures.
NEW_CLASSES = ("schema_required_deleted", "null_in_list")


@dataclass
class Doc:
    number: int
    origin: str
    edits: list[str]
    obj: Obj
    path: Path = Path()


@dataclass(frozen=True)
class Answer:
    """``verdict``: accepted, refused (by the API server) or client (kubectl's own refusal); ``text``:
    what kubectl prints on standard error (its warnings aside)."""

    verdict: str
    text: str = ""
    causes: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    step: str = ""


#: Kinds the cluster serves through a stand-in CRD (:data:`tests.e2e.cluster.STAND_INS`) that lint, which
#: knows the vendored CRDs only, answers with kubectl's ``no matches for kind``: left out of the bases.
STAND_IN_KINDS = {
    crd["spec"]["names"]["kind"]
    for crd in yaml.safe_load_all(STAND_INS.read_text())
    if crd and crd["spec"]["group"] == "nvidia.com"
}


def base_documents() -> list[tuple[str, Obj]]:
    found = []
    for path in SOURCES:
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if (
                isinstance(doc, dict)
                and str(doc.get("apiVersion", "")).startswith("nvidia.com/")
                and doc.get("kind") not in STAND_IN_KINDS
            ):
                found.append((f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{i}", doc))
    return found


def _place(obj: Obj, name: str | None) -> None:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    meta["namespace"] = NS
    if name is not None:
        meta["name"] = name


def documents() -> list[Doc]:
    """The base documents, then ``EDITED`` seeded edits of them, each with a name of its own unless an
    edit wrote the name."""
    bases = base_documents()
    donors = [obj for _, obj in bases]
    rng = random.Random(SEED)
    docs: list[Doc] = []
    for origin, obj in bases:
        n = len(docs)
        placed = json.loads(json.dumps(obj))
        _place(placed, f"lint-{n:03d}")
        docs.append(Doc(n, origin, [], placed))
    for origin, obj in bases:  # the kind in lower case, which kubectl maps too (discovery gives both)
        n = len(docs)
        lowered = json.loads(json.dumps(obj))
        lowered["kind"] = str(lowered["kind"]).lower()
        _place(lowered, f"lint-{n:03d}")
        docs.append(Doc(n, origin, ["lower_case_kind"], lowered))
    for origin, obj in bases:  # a topology constraint naming a ClusterTopologyBinding (a cluster look-up)
        if obj["kind"] != "DynamoGraphDeployment" or obj["apiVersion"] != "nvidia.com/v1beta1":
            continue
        n = len(docs)
        constrained = json.loads(json.dumps(obj))
        constrained["spec"]["topologyConstraint"] = {"clusterTopologyName": "default", "packDomain": "rack"}
        _place(constrained, f"lint-{n:03d}")
        docs.append(Doc(n, origin, ["topology_constraint"], constrained))
    for _ in range(EDITED):
        n = len(docs)
        origin, base = rng.choice(bases)
        obj, made = lint_edits.edited(rng, base, donors)
        _place(obj, None if lint_edits.NAMING.intersection(made) else f"lint-{n:03d}")
        docs.append(Doc(n, origin, made, obj))
    return docs


def cel_messages() -> set[str]:
    """The messages of the vendored CRDs' CEL rules (``failed rule: RULE`` for a rule without one)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations") or []:
                found.add(str(rule.get("message") or f"failed rule: {rule.get('rule')}"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in CRD_DIR.glob("*.yaml"):
        walk(yaml.safe_load(path.read_text()))
    return found


# --------------------------------------------------------------------------- the two answers


def kubectl_answer(cluster: Cluster, path: Path) -> Answer:
    result = cluster.kubectl("create", "--dry-run=server", "-f", str(path), "-n", NS, check=False)
    text = "\n".join(line for line in result.stderr.split("\n") if not line.startswith("Warning: ")).strip()
    if result.returncode == 0:
        return Answer("accepted")
    return Answer("refused" if text.startswith(("Error from server", "The ")) else "client", text)


def _cause_texts(status: Obj) -> tuple[str, ...]:
    causes = (status.get("details") or {}).get("causes") or []
    return tuple(dict.fromkeys(f"{c.get('field', '')}: {c.get('message', '')}" for c in causes))


def kubectl_text(status: Obj, source: str) -> str:
    """A refusal as kubectl prints it (``cmdutil.CheckErr`` of the Status with the file added by
    ``AddSourceToErr``): an ``Invalid`` Status with details as ``The KIND "NAME" is invalid: `` and its
    causes (one inline, several a ``* `` line each), any other as ``Error from server (REASON): error
    when creating "FILE": MESSAGE``."""
    reason, message = str(status.get("reason", "")), str(status.get("message", ""))
    message = f"error when creating {go_quote(source)}: {message}"
    details = status.get("details")
    if reason == "Invalid":
        if details is None:
            return f"The request is invalid: {message}"
        head = "The request is invalid"
        causes = _cause_texts(status)
        if details.get("kind") or details.get("name"):
            head = f"The {details.get('kind', '')} {go_quote(str(details.get('name', '')))} is invalid"
        elif not causes:
            head += f": {message}"
        if not causes:
            return head
        if len(causes) == 1:
            return f"{head}: {causes[0]}"
        return f"{head}: \n" + "\n".join(f"* {c}" for c in causes)
    if reason:
        return f"Error from server ({reason}): {message}"
    return f"Error from server: {message}"


def lint_answer(service: OfflineService, path: Path) -> Answer:
    (checked,) = lint.check_files([str(path)], service)
    outcome: CreateOutcome | None = checked.outcome
    if outcome is None:
        return Answer("client", checked.findings[0].message if checked.findings else checked.verdict)
    skipped = tuple(outcome.skipped)
    if outcome.allowed:
        return Answer("accepted", skipped=skipped, step="accepted")
    if outcome.client_error is not None:
        return Answer("client", f"error: {outcome.client_error}", skipped=skipped, step="kubectl")
    status = outcome.status or {}
    return Answer(
        "refused", kubectl_text(status, str(path)), _cause_texts(status), skipped, first_step(status)
    )


# --------------------------------------------------------------------------- comparing them


def _permutation(text: str, items: list[str]) -> bool:
    """Whether ``text`` is ``items`` joined with ``, `` in some order."""
    if not items:
        return text == ""
    for i, item in enumerate(items):
        if text == item and len(items) == 1:
            return True
        if text.startswith(item + ", ") and _permutation(text[len(item) + 2 :], items[:i] + items[i + 1 :]):
            return True
    return False


def _listed(text: str) -> tuple[str, list[str]] | None:
    """(``The KIND "NAME" is invalid``, its causes) of kubectl's rendering of an ``Invalid`` Status."""
    if not text.startswith("The ") or " is invalid: " not in text:
        return None
    head, rest = text.split(" is invalid: ", 1)
    return head, rest.removeprefix("\n* ").split("\n* ") if rest.startswith("\n* ") else [rest]


def _unlisted(head: str, causes: list[str]) -> str:
    if len(causes) == 1:
        return f"{head} is invalid: {causes[0]}"
    return f"{head} is invalid: \n" + "\n".join(f"* {c}" for c in causes)


FIELD_ERROR = re.compile(r", (?=(?:metadata|spec|status|kind|apiVersion)[.\[:]|<nil>: )")


def _same_fields(server: str, mine: str) -> bool:
    """An aggregate without causes to go by (a conversion's metadata errors): the same prefix, and the
    same field errors between the brackets in some order."""
    if not (server.endswith("]") and mine.endswith("]")) or "[" not in mine:
        return False
    prefix = mine[: mine.index("[")]
    return server.startswith(prefix + "[") and sorted(
        FIELD_ERROR.split(server[len(prefix) + 1 : -1])
    ) == sorted(FIELD_ERROR.split(mine[len(prefix) + 1 : -1]))


def same_text(server: str, offline: Answer) -> bool:
    """``server`` is lint's text, up to the order of the causes of an ``Invalid`` answer, of an
    aggregated message's errors (``[a, b]``) or of unknown fields."""
    mine = offline.text
    if server == mine:
        return True
    theirs, ours = _listed(server), _listed(mine)
    if theirs is not None and ours is not None:
        return theirs[0] == ours[0] and sorted(theirs[1]) == sorted(ours[1])
    if UNKNOWN in mine and UNKNOWN in server:
        head, listed = mine.split(UNKNOWN, 1)
        their_head, their_listed = server.split(UNKNOWN, 1)
        return head == their_head and sorted(listed.split(", unknown field ")) == sorted(
            their_listed.split(", unknown field ")
        )
    items = list(offline.causes)
    joined = "[" + ", ".join(items) + "]"
    if len(items) < 2 or not mine.endswith(joined):
        return _same_fields(server, mine)
    prefix = mine[: -len(joined)]
    return (
        server.startswith(prefix + "[")
        and server.endswith("]")
        and _permutation(server[len(prefix) + 1 : -1], items)
    )


def agree(server: Answer, offline: Answer) -> bool:
    return server.verdict == offline.verdict and (
        server.verdict == "accepted" or same_text(server.text, offline)
    )


def without_pool_errors(server: Answer) -> Answer:
    """The API server's answer without the InferencePool errors the e2e service's live look-up adds
    (the rule lint skips): accepted when they were the validating webhook's only errors."""
    listed = _listed(server.text)
    if server.verdict != "refused" or listed is None:
        return server
    head, causes = listed
    rest = [c for c in causes if not POOL_ERROR.fullmatch(c)]
    if not rest:
        return Answer("accepted")
    return Answer("refused", _unlisted(head, rest))


def first_step(status: Obj) -> str:
    """The step of a create that refused, by lint's Status (kubectl prints an ``Invalid`` answer without
    the webhook's name)."""
    message, reason = str(status.get("message", "")), str(status.get("reason", ""))
    hook = re.match(r'admission webhook "([mv])', message)
    if hook:
        return "mutating webhook" if hook.group(1) == "m" else "validating webhook"
    if UNKNOWN in message:
        return "strict decoding"
    if message.startswith("Internal error occurred: Internal error occurred: conversion webhook"):
        return "conversion webhook"
    return {"Invalid": "validation", "BadRequest": "decoding"}.get(reason, reason)


def _record(doc: Doc, server: Answer, offline: Answer) -> Obj:
    return {
        "document": doc.number,
        "origin": doc.origin,
        "edits": doc.edits,
        "object": doc.obj,
        "apiServer": {"verdict": server.verdict, "kubectl": server.text},
        "lint": {"verdict": offline.verdict, "kubectl": offline.text, "skipped": list(offline.skipped)},
    }


def _write(out: Path, name: str, records: list[Obj]) -> None:
    with (out / name).open("w") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=False) + "\n")


@pytest.fixture(scope="module")
def ns(cluster: Cluster) -> str:
    return namespace(cluster.kubectl, NS)


def _written(docs: list[Doc], directory: Path) -> Iterator[Doc]:
    for doc in docs:
        doc.path = directory / f"doc-{doc.number:03d}.yaml"
        doc.path.write_text(yaml.safe_dump(doc.obj, sort_keys=False))
        yield doc


def test_lint_says_what_the_api_server_says(
    cluster: Cluster, ns: str, tmp_path: Path, e2e_figures: list[str]
) -> None:
    started = time.monotonic()
    docs = list(_written(documents(), tmp_path))
    assert len(docs) >= 300
    cel = cel_messages()
    # The e2e service runs with the Checkpoint gate on; lint is given the same settings.
    service = OfflineService(Settings(feature_checkpoint=True))
    with ThreadPoolExecutor(WORKERS) as executor:
        pending = [executor.submit(kubectl_answer, cluster, doc.path) for doc in docs]
        offline = [lint_answer(service, doc.path) for doc in docs]
        served = [p.result() for p in pending]

    steps: Counter[str] = Counter()
    mismatches: list[Obj] = []
    by_cel: list[Obj] = []
    pool = pool_refused = topology = 0
    for doc, server, mine in zip(docs, served, offline, strict=True):
        topology += any(s.startswith("ClusterTopologyBinding") for s in mine.skipped)
        if any(s.startswith("InferencePool") for s in mine.skipped):
            pool += 1
            stripped = without_pool_errors(server)
            if not agree(server, mine) and agree(stripped, mine):
                pool_refused += 1
                server = stripped
        if agree(server, mine):
            steps[mine.step] += 1
            continue
        steps["disagreement"] += 1
        record = _record(doc, server, mine)
        if server.verdict == "refused" and any(m in server.text and m not in mine.text for m in cel):
            by_cel.append(record)
        mismatches.append(record)
    seconds = time.monotonic() - started

    out = os.environ.get("DYNAMO_WEBHOOK_LINT_PROOF_OUT")
    if out:
        _write(Path(out), "lintproof-mismatches.jsonl", mismatches)
        _write(Path(out), "lintproof-cel.jsonl", by_cel)
    accepted = steps.pop("accepted", 0)
    steps.pop("disagreement", None)
    refused = sum(1 for answer in served if answer.verdict != "accepted")
    e2e_figures += [
        f"lint vs kubectl create --dry-run=server: {len(docs)} documents in {seconds:.1f} s ({len(docs) - EDITED} "
        f"as written, with the kind in lower case or with a topology constraint; {EDITED} edited, seed {SEED}): "
        f"{len(docs) - refused} accepted, {refused} refused by the API server or kubectl",
        f"  agreed: {accepted} accepted, refused by "
        + ", ".join(f"{step} {n}" for step, n in sorted(steps.items())),
        f"  cluster rules lint skips: InferencePool {pool} ({pool_refused} refused for it alone by the live "
        f"look-up), ClusterTopologyBinding {topology} (compared as any other)",
        f"  disagreements: {len(mismatches)}, {len(by_cel)} of them from CEL rules",
        "  edits of the core-type classes: "
        + ", ".join(f"{name} {sum(name in doc.edits for doc in docs)}" for name in NEW_CLASSES),
    ]
    shown = "\n".join(
        f"#{m['document']} {m['origin']} {m['edits']}:\n  API server: {m['apiServer']}\n  lint:       {m['lint']}"
        for m in mismatches[:20]
    )
    assert not mismatches, (
        f"{len(mismatches)} disagreements ({len(by_cel)} where the API server names a CEL rule's message "
        f"that lint does not):\n{shown}"
    )


def test_a_key_written_twice_keeps_its_last_value_as_kubectl_keeps_it(
    cluster: Cluster, ns: str, tmp_path: Path
) -> None:
    """kubectl turns YAML into JSON itself, so a key written twice never reaches the API server's strict
    decoding: the last value is sent. ``lint`` sends the same and warns about the first."""
    text = (
        (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml")
        .read_text()
        .replace("namespace: inference", f"namespace: {NS}")
    )
    assert text.count("    replicas: 2\n") == 1
    path = tmp_path / "twice.yaml"
    path.write_text(text.replace("    replicas: 2\n", "    replicas: -1\n    replicas: 2\n"))
    answer = kubectl_answer(cluster, path)
    assert answer.verdict == "accepted", answer.text
    (checked,) = lint.check_files([str(path)], OfflineService(Settings(feature_checkpoint=True)))
    assert checked.outcome is not None and checked.outcome.allowed
    assert any(f.severity == "warning" and "replicas" in f.message for f in checked.findings), (
        checked.findings
    )
    path.write_text(text.replace("    replicas: 2\n", "    replicas: 2\n    replicas: -1\n"))
    assert (
        kubectl_answer(cluster, path).verdict
        == lint_answer(OfflineService(Settings(feature_checkpoint=True)), path).verdict
        == "refused"
    )
