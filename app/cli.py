"""``dynamo-webhook`` command line: serve, review, lint, convert, certs, audit, storage-migrate.

The offline commands call the same dispatch functions as the server, so a manifest that
``lint`` accepts is one the running webhook admits, and ``convert`` writes what ``/convert``
would answer.
"""

from __future__ import annotations

import argparse
import base64
import sys
import uuid
from collections.abc import Sequence
from typing import Any

import jsonpatch
import orjson

from app import audit, certs_cli, storage_migrate
from app.dispatch import review_admission, review_conversion
from app.documents import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    Document,
    InputError,
    dump,
    is_dynamo,
    iter_documents,
    load_documents,
)
from app.errors import BadRequest
from app.migrate import migrate
from app.settings import Settings, add_settings_arguments, settings_from_args
from app.webhooks import WEBHOOK_ROUTES
from domain.admission import AdmissionContext
from domain.constants import ALPHA_API_VERSION, HUB_API_VERSION

JSONObject = dict[str, Any]


# --------------------------------------------------------------------------- review


def cmd_review(args: argparse.Namespace) -> int:
    settings = Settings()
    ctx = AdmissionContext(settings=settings.admission_settings())
    routes = {r.path: r for r in WEBHOOK_ROUTES}
    try:
        docs = load_documents(args.file)
        if len(docs) != 1:
            raise InputError(f"{args.file}: expected exactly one review, found {len(docs)} documents")
        doc = docs[0]
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if kind == "ConversionReview":
            outcome = review_conversion(doc)
        else:
            route = routes.get(args.path)
            if route is None or route.type == "convert":
                raise InputError(f"--path {args.path!r} is not an admission webhook path")
            outcome = review_admission(doc, route.type, ctx, route.expected_gvk)
    except (InputError, BadRequest) as exc:
        print(f"dynamo-webhook review: {exc}", file=sys.stderr)
        return EXIT_USAGE
    dump([orjson.loads(outcome.body)], args.output, sys.stdout)
    return EXIT_OK if outcome.allowed else EXIT_FINDINGS


# --------------------------------------------------------------------------- lint


def _admission_review_for(body: JSONObject, operation: str = "CREATE") -> JSONObject:
    api_version = str(body.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    gvk = {"group": group, "version": version, "kind": body.get("kind", "")}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": gvk,
            "requestKind": gvk,
            "resource": {"group": group, "version": version, "resource": str(body.get("kind", "")).lower() + "s"},
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", "default"),
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": body,
            "oldObject": None,
            "dryRun": True,
        },
    }


def _findings(label: str, response: JSONObject) -> list[str]:
    status = response.get("status") or {}
    causes = (status.get("details") or {}).get("causes") or []
    if causes:
        return [f"{label} {c.get('field', '')}: {c.get('message', '')}".replace(" : ", ": ") for c in causes]
    return [f"{label}: {status.get('message', 'denied')}"]


def lint_document(doc: Document, ctx: Any, diff: bool) -> tuple[list[str], list[str], list[str]]:
    """Default then validate one manifest as a CREATE. Returns (denials, warnings, diff lines)."""
    label = f"{doc.label} {doc.ident}"
    mutated = review_admission(_admission_review_for(doc.body), "mutate", ctx).response
    warnings = [f"{label}: warning: {w}" for w in mutated.get("warnings", [])]
    if not mutated.get("allowed"):
        return _findings(label, mutated), warnings, []
    body = doc.body
    diff_lines: list[str] = []
    if "patch" in mutated:
        ops = orjson.loads(base64.b64decode(mutated["patch"]))
        body = jsonpatch.apply_patch(doc.body, ops)
        if diff:
            diff_lines = [f"{label}: default: {op['op']} {op['path']} = {orjson.dumps(op.get('value')).decode()}"
                          for op in ops]
    validated = review_admission(_admission_review_for(body), "validate", ctx).response
    warnings += [f"{label}: warning: {w}" for w in validated.get("warnings", [])]
    if not validated.get("allowed"):
        return _findings(label, validated), warnings, diff_lines
    return [], warnings, diff_lines


def cmd_lint(args: argparse.Namespace) -> int:
    settings = Settings(
        feature_grove=args.feature_grove, feature_checkpoint=args.feature_checkpoint
    )
    ctx = AdmissionContext(settings=settings.admission_settings())
    denied = checked = 0
    try:
        for doc in iter_documents(args.files):
            if not is_dynamo(doc.body):
                continue
            checked += 1
            denials, warnings, diff_lines = lint_document(doc, ctx, args.diff)
            for line in [*diff_lines, *warnings, *denials]:
                print(line)
            denied += bool(denials)
    except InputError as exc:
        print(f"dynamo-webhook lint: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{checked} Dynamo document(s) checked, {denied} denied", file=sys.stderr)
    return EXIT_FINDINGS if denied else EXIT_OK


# --------------------------------------------------------------------------- convert


def cmd_convert(args: argparse.Namespace) -> int:
    try:
        docs = list(iter_documents(args.files))
    except InputError as exc:
        print(f"dynamo-webhook convert: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return migrate(docs, args.to, check=args.check, output=args.output, report=not args.quiet)


# --------------------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:
    # The server (uvicorn, FastAPI) is imported only when serving: the offline commands start
    # without loading it.
    from app.server import serve

    return serve(settings_from_args(args))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynamo-webhook",
        description="Admission and conversion webhook for the NVIDIA Dynamo operator's nvidia.com resources.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser(
        "serve",
        help="run the HTTPS webhook server",
        description="Serve /mutate, /validate, /convert and the operator's per-kind webhook paths over HTTPS. "
        "Every flag can also be set with the environment variable shown in its help.",
    )
    add_settings_arguments(serve)
    serve.set_defaults(func=cmd_serve)

    review = sub.add_parser(
        "review",
        help="answer one AdmissionReview or ConversionReview offline",
        description="Read an AdmissionReview or ConversionReview (JSON or YAML) and print the response review "
        "the server would send. Exit 0 allowed/success, 1 denied/failure, 2 unreadable input.",
    )
    review.add_argument("file", help="review file, or - for standard input")
    review.add_argument("--path", default="/validate", help="webhook path for AdmissionReviews (default /validate)")
    review.add_argument("-o", "--output", choices=["json", "yaml"], default="json")
    review.set_defaults(func=cmd_review)

    lint = sub.add_parser(
        "lint",
        help="default and validate manifests as a CREATE, offline",
        description="Run the mutating then the validating webhook on every nvidia.com document as a CREATE and "
        "print findings as 'file:doc Kind/name field: message'. Exit 1 on any denial.",
    )
    lint.add_argument("files", nargs="+", metavar="FILE", help="YAML/JSON manifests (multi-document); - for stdin")
    lint.add_argument("--diff", action="store_true", help="also show what defaulting would add")
    lint.add_argument("--feature-grove", action=argparse.BooleanOptionalAction, default=False,
                      help="feature gate Grove (default off, as upstream without a cluster)")
    lint.add_argument("--feature-checkpoint", action=argparse.BooleanOptionalAction, default=False,
                      help="feature gate Checkpoint (default off)")
    lint.set_defaults(func=cmd_lint)

    convert = sub.add_parser(
        "convert",
        help="migrate manifests between nvidia.com/v1alpha1 and v1beta1",
        description="Convert every convertible Dynamo document to --to (other documents pass through untouched, "
        "order kept) and print them. A report of what moved into payload annotations goes to stderr.",
    )
    convert.add_argument("files", nargs="+", metavar="FILE", help="YAML/JSON manifests (multi-document); - for stdin")
    convert.add_argument("--to", default=HUB_API_VERSION, choices=[HUB_API_VERSION, ALPHA_API_VERSION])
    convert.add_argument("-o", "--output", choices=["yaml", "json"], default="yaml")
    convert.add_argument("--check", action="store_true",
                         help="prove every document round-trips; exit 1 naming the fields that would not")
    convert.add_argument("-q", "--quiet", action="store_true", help="no report on stderr")
    convert.set_defaults(func=cmd_convert)

    certs_cli.register(sub)
    audit.register(sub)
    storage_migrate.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
