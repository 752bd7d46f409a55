"""Re-record the verified vectors: every case of ``tests/fixtures/admission/*.jsonl`` and
``tests/fixtures/conversion/*.jsonl`` is answered again by the operator's own handlers (the Go
program ``tools/record/main.go``, built by ``tools/record/prepare``) and its expected answer is
written back in the fixtures' format; the cases themselves (their inputs) are kept.

    python -m tools.record.record --recorder /tmp/record/record [--root DIR] [--check]

What is recorded per case:

- **Admission** (``expect``): ``allowed``; ``messageContains``, one entry per field error of the
  denial (a value Go prints as a struct, with pointers in it, is left out: the entry is split in
  the field with its error type, and the detail); ``warningsContain``, every warning; for the
  mutating webhook, ``noPatch`` or ``patchedObjectContains`` (each member the patch writes, by JSON
  pointer). A case written in a version the webhook is not registered for is sent as the API
  server sends it: converted to the hub first, the version written named in ``requestKind``.
- **Conversion** (``expected``, ``roundtrip``): the converted object (keys sorted as Go writes a
  map, metadata last, without the Go zero-value artefacts :data:`app.review.compare.ARTEFACTS`
  lists) and whether converting it back gives the input again (under
  :func:`app.review.compare.normalize`, metadata as the API server reads it); when the operator
  refuses the conversion, ``expected`` is null and ``expectedErrorPrefix`` its message. A case's
  ``note`` (on the answer) is dropped when the answer changes.

``--check`` writes nothing and exits 1 when a file would change. The operator commit named in
each case's ``source`` is :data:`app.cli.version.OPERATOR_COMMIT`.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonpatch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.cli.version import OPERATOR_COMMIT, OPERATOR_REPOSITORY  # noqa: E402
from app.review.compare import ARTEFACTS, OPAQUE_SUFFIXES, Context, diff_paths, normalize  # noqa: E402
from tests.e2e.admission import HUB_REGISTERED, MUTATING, VALIDATING  # noqa: E402
from tools.opdiff.drive import admission_review as opdiff_review  # noqa: E402

Obj = dict[str, Any]
BETA = "nvidia.com/v1beta1"
ADMISSION = Path("tests/fixtures/admission")
CONVERSION = Path("tests/fixtures/conversion")
ADMISSION_KINDS = (
    "DynamoGraphDeployment",
    "DynamoComponentDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoModel",
)
#: Kinds whose validating cases are also kept on their own (``<Kind>.validating.jsonl``).
VALIDATING_COPIES = ("DynamoGraphDeployment", "DynamoComponentDeployment")
CONVERSION_FILES = ("vectors_dgd.jsonl", "vectors_dcd.jsonl", "dgdr_vectors.jsonl", "dgdsa_vectors.jsonl")
#: A case keeps at most this many field errors of a denial, and members of a patch.
MAX_CAUSES = 3
ORIGIN_VERSION = "/metadata/annotations/nvidia.com~1dynamo-operator-origin-version"
#: The settings the vectors were recorded with (see their origin-version annotations).
RECORDER_FLAGS = ("--operator-version", "1.1.0")


def source() -> str:
    return f"generated; expected value from running the pinned upstream code ({OPERATOR_REPOSITORY} {OPERATOR_COMMIT})"


class RecordError(Exception):
    """The recorder could not answer a case; the message names it."""


class ConversionFailed(RecordError):
    """The operator's converter refused the object; the message is its answer's."""


class Operator:
    """The recorder process: one review in, one answer out, in order."""

    def __init__(self, recorder: Path) -> None:
        self.proc = subprocess.Popen(
            [str(recorder), *RECORDER_FLAGS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def ask(self, path: str, review: Obj) -> Obj:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"path": path, "review": review}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RecordError(f"the recorder exited (code {self.proc.wait()}) on {path}")
        answer: Obj = json.loads(line)
        if "httpStatus" in answer:
            raise RecordError(f"{path} answered HTTP {answer['httpStatus']}: {answer['body'][:200]}")
        response: Obj = answer["response"]
        return response

    def convert(self, obj: Obj, desired: str) -> Obj:
        review = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "00000000-0000-0000-0000-000000000002",
                "desiredAPIVersion": desired,
                "objects": [obj],
            },
        }
        response = self.ask("/convert", review)
        result = response.get("result") or {}
        if result.get("status") != "Success":
            raise ConversionFailed(str(result.get("message", "")))
        converted: Obj = response["convertedObjects"][0]
        return converted

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


# --------------------------------------------------------------------------- admission


def admission_review(path: str, vec: Obj, obj: Obj, old: Obj | None) -> Obj:
    """The review the API server sends to ``path`` for ``vec`` (``obj`` in the webhook's version),
    as tools/opdiff sends it, in the case's own namespace."""
    review = opdiff_review(path, obj, old, vec["apiVersion"].split("/")[1])
    review["request"]["namespace"] = vec["object"]["metadata"].get("namespace", "")
    review["request"]["operation"] = vec["operation"]
    return review


def split_cause(field: str, message: str) -> list[str]:
    """A field error as fragments of the denial: whole, or without a value Go prints as a struct."""
    for kind in ("Invalid value: ", "Unsupported value: ", "Duplicate value: ", "Not found: "):
        if not message.startswith(kind):
            continue
        rest = message[len(kind) :]
        if rest[:1] in ('"', "-") or rest[:1].isdigit() or rest.split(":")[0] in ("true", "false", "null"):
            break
        end = _value_end(rest)
        out = [f"{field}: {kind[:-2]}"]
        if end < len(rest):
            out.append(rest[end + 2 :])
        return out
    return [f"{field}: {message}" if field else message]


def _value_end(text: str) -> int:
    """Where a value printed with Go's %#v ends: the first ``": "`` outside brackets and quotes."""
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif depth == 0 and text.startswith(": ", i):
            return i
        i += 1
    return len(text)


def denial_fragments(status: Obj) -> list[str]:
    causes = (status.get("details") or {}).get("causes") or []
    if causes:
        return [
            frag
            for c in causes[:MAX_CAUSES]
            for frag in split_cause(c.get("field", ""), c.get("message", ""))
        ]
    message: str = status.get("message", "")
    return [message] if message else []


def patch_members(patch: list[Obj]) -> Obj:
    """What a patch writes, by JSON pointer: scalar members only, not the status (the API server
    resets it on create) nor the annotation that names the operator's own version."""
    return {
        op["path"]: op["value"]
        for op in patch
        if op["op"] in ("add", "replace")
        and not isinstance(op["value"], (dict, list))
        and not op["path"].startswith("/status")
        and op["path"] != ORIGIN_VERSION
    }


def record_admission(op: Operator, vec: Obj) -> Obj:
    obj, old = vec["object"], vec["oldObject"]
    alpha = vec["kind"] in HUB_REGISTERED and vec["apiVersion"] != BETA
    if alpha:
        obj = op.convert(obj, BETA)
        old = op.convert(old, BETA) if old is not None else None
    mutating = vec["webhook"] == "mutating"
    path = MUTATING[vec["kind"]] if mutating else VALIDATING[vec["kind"]][1]
    response = op.ask(path, admission_review(path, vec, obj, old))
    expect: Obj = {
        "allowed": bool(response.get("allowed")),
        "messageContains": [] if response.get("allowed") else denial_fragments(response.get("status") or {}),
        "warningsContain": list(response.get("warnings") or []),
    }
    if mutating:
        patch = json.loads(base64.b64decode(response["patch"])) if "patch" in response else []
        if alpha and patch:
            back = op.convert(jsonpatch.apply_patch(obj, patch), vec["apiVersion"])
            patch = jsonpatch.make_patch(vec["object"], back).patch
        written = dict(list(patch_members(patch).items())[:MAX_CAUSES])
        if written:
            expect["patchedObjectContains"] = written
        else:
            expect["noPatch"] = True
    return expect


# --------------------------------------------------------------------------- conversion


def _apiserver_view(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    return {**obj, "metadata": {k: meta[k] for k in ("labels", "annotations") if k in meta}}


def same(a: Obj, b: Obj) -> bool:
    return diff_paths(normalize(_apiserver_view(a)), normalize(_apiserver_view(b))) == []


def _opaque(path: tuple[str | int, ...]) -> bool:
    return any(
        len(path) >= len(suffix)
        and all(s in ("*", t) for s, t in zip(suffix, path[-len(suffix) :], strict=True))
        for suffix in OPAQUE_SUFFIXES
    )


def _without_artefacts(value: Any, path: tuple[str | int, ...], ctx: Context) -> Any:
    """``value`` without nulls and the Go zero-value artefacts of :data:`ARTEFACTS`, keys sorted
    (as Go writes a map); opaque JSON keeps its nulls, payload annotations (text) are kept as text."""
    if path and _opaque(path):
        return _sorted(value)
    if isinstance(value, dict):
        out = {}
        for key in sorted(value):
            item = value[key]
            if item is None and not (path and path[-1] == "services"):
                continue
            kept = item if item is None else _without_artefacts(item, (*path, key), ctx)
            if kept is not _DROP:
                out[key] = kept
        value = out
    elif isinstance(value, list):
        items = (_without_artefacts(x, (*path, i), ctx) for i, x in enumerate(value))
        value = [x for x in items if x is not _DROP]
    if path and any(rule(path, value, ctx) for _, rule in ARTEFACTS):
        return _DROP
    return value


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(x) for x in value]
    return value


_DROP = object()


def expected_object(converted: Obj) -> Obj:
    """The converted object as the vectors keep it: without Go's zero-value artefacts, metadata last."""
    ctx = Context(kind=str(converted.get("kind", "")), version=str(converted.get("apiVersion", "")))
    out: Obj = _without_artefacts({k: v for k, v in converted.items() if k != "metadata"}, (), ctx)
    meta = converted.get("metadata") or {}
    out["metadata"] = {k: meta[k] for k in sorted(meta) if meta[k] is not None}
    return out


def record_conversion(op: Operator, vec: Obj) -> tuple[Obj | None, bool, str]:
    """(expected object, whether it converts back to the input, the error when it fails)."""
    try:
        expected = expected_object(op.convert(vec["input"], vec["desiredAPIVersion"]))
    except ConversionFailed as exc:
        return None, False, str(exc)
    try:
        back = op.convert(expected, vec["input"]["apiVersion"])
    except ConversionFailed:
        return expected, False, ""
    return expected, same(back, vec["input"]), ""


# --------------------------------------------------------------------------- files


def read_cases(path: Path) -> list[Obj]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def render(cases: list[Obj]) -> str:
    return "".join(json.dumps(c) + "\n" for c in cases)


def recorded_files(op: Operator, root: Path) -> Iterator[tuple[Path, str]]:
    """(path, new text) of every fixture file the recorder writes."""
    for kind in ADMISSION_KINDS:
        path = root / ADMISSION / f"{kind}.jsonl"
        cases = read_cases(path)
        for case in cases:
            case["source"] = source()
            case["expect"] = record_admission(op, case)
        yield path, render(cases)
        if kind in VALIDATING_COPIES:
            yield (
                root / ADMISSION / f"{kind}.validating.jsonl",
                render([c for c in cases if c["webhook"] == "validating"]),
            )
    for name in CONVERSION_FILES:
        path = root / CONVERSION / name
        cases = read_cases(path)
        for case in cases:
            expected, roundtrip, error = record_conversion(op, case)
            case["source"] = source()
            if expected != case["expected"]:
                case.pop("note", None)  # a note on the old answer
            case["expected"] = expected
            case["roundtrip"] = roundtrip
            if error:
                case["expectedErrorPrefix"] = error
            else:
                case.pop("expectedErrorPrefix", None)
        yield path, render(cases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.record.record", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--recorder", type=Path, required=True, help="the binary tools/record/prepare built")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree whose fixtures are re-recorded")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    args = parser.parse_args(argv)
    if not args.recorder.is_file():
        print(
            f"record: no recorder binary at {args.recorder} (build it with tools/record/prepare)",
            file=sys.stderr,
        )
        return 2
    op = Operator(args.recorder)
    changed: list[Path] = []
    try:
        for path, text in recorded_files(op, args.root):
            if path.read_text() == text:
                continue
            changed.append(path)
            if not args.check:
                path.write_text(text)
    except RecordError as exc:
        print(f"record: {exc}", file=sys.stderr)
        return 1
    finally:
        op.close()
    for path in changed:
        print(f"record: {'would change' if args.check else 'changed'} {path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
