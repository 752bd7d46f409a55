"""``dynamo-webhook`` command line: serve, review, lint, convert, certs, audit, storage-migrate, crds.

The offline commands call the same dispatch functions as the server, so a manifest that
``lint`` accepts is one the running webhook admits, and ``convert`` writes what ``/convert``
would answer.

Building the parser loads neither the server nor the rules nor the Kubernetes client: each
command imports what it runs, so ``--help`` and ``--version`` answer at once. Every option's help
shows its default.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from app.cli import tool_args
from app.cli.offline import OfflineService as OfflineService  # re-exported: the service lint runs
from app.server.settings import Settings, add_admission_arguments, add_settings_arguments, settings_from_args
from domain.constants import ALPHA_API_VERSION, HUB_API_VERSION

JSONObject = dict[str, Any]


def command_settings(args: argparse.Namespace, command: str) -> Settings | None:
    """The settings a command applies the rules with (:func:`settings_from_args`: flag, variable,
    default); ``None``, said on stderr in one line, when one is not valid."""
    try:
        return settings_from_args(args)
    except ValueError as exc:
        print(f"dynamo-webhook {command}: {exc}", file=sys.stderr)
        return None


# --------------------------------------------------------------------------- review


def cmd_review(args: argparse.Namespace) -> int:
    import orjson

    from app.cli.documents import (
        EXIT_FINDINGS,
        EXIT_OK,
        EXIT_USAGE,
        InputError,
        dump,
        is_dynamo,
        load_documents,
    )
    from app.review.dispatch import review_admission, review_conversion
    from app.review.errors import BadRequest
    from app.review.webhook_paths import WEBHOOK_ROUTES
    from domain.admission import AdmissionContext

    settings = command_settings(args, "review")
    if settings is None:
        return EXIT_USAGE
    ctx = AdmissionContext(settings=settings.admission_settings())
    routes = {r.path: r for r in WEBHOOK_ROUTES}
    try:
        if args.validate is not None and not args.apiserver:
            raise InputError("--validate applies with --apiserver only")
        docs = load_documents(args.file)
        if len(docs) != 1:
            raise InputError(f"{args.file}: expected exactly one review, found {len(docs)} documents")
        doc = docs[0]
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if is_dynamo(doc):
            raise InputError(
                f"{args.file} holds a {kind} manifest, not a review: "
                f"`dynamo-webhook lint {args.file}` defaults and validates manifests as a CREATE"
            )
        if kind == "ConversionReview":
            if args.apiserver:
                raise InputError(
                    "--apiserver applies to AdmissionReviews: a ConversionReview holds stored objects"
                )
            outcome = review_conversion(doc)
        else:
            route = routes.get(args.path)
            if route is None or route.type == "convert":
                valid = ", ".join(r.path for r in WEBHOOK_ROUTES if r.type != "convert")
                raise InputError(f"--path {args.path!r} is not an admission webhook path; valid: {valid}")
            if args.apiserver:
                return _review_behind_apiserver(doc, args, settings)
            outcome = review_admission(doc, route.type, ctx, route.expected_gvk)
    except (InputError, BadRequest) as exc:
        print(f"dynamo-webhook review: {exc}", file=sys.stderr)
        return EXIT_USAGE
    dump([orjson.loads(outcome.body)], args.output, sys.stdout)
    return EXIT_OK if outcome.allowed else EXIT_FINDINGS


def _review_behind_apiserver(doc: Any, args: argparse.Namespace, settings: Settings) -> int:
    from apiserver.request import NotModelled
    from app.cli.documents import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, dump
    from app.cli.offline import review_behind_apiserver
    from app.review.errors import BadRequest

    try:
        answer, allowed = review_behind_apiserver(
            doc, args.path, args.validate or "strict", args.file, settings
        )
    except (BadRequest, NotModelled) as exc:
        print(f"dynamo-webhook review: {exc}", file=sys.stderr)
        return EXIT_USAGE
    dump([answer], args.output, sys.stdout)
    return EXIT_OK if allowed else EXIT_FINDINGS


# --------------------------------------------------------------------------- lint


def cmd_lint(args: argparse.Namespace) -> int:
    from apiserver import lint, report
    from app.cli.documents import EXIT_USAGE

    settings = command_settings(args, "lint")
    if settings is None:
        return EXIT_USAGE
    results = lint.check_files(
        args.files, OfflineService(settings), args.validate, args.diff, args.skip_non_manifests
    )
    report.write(results, args.output, sys.stdout, sys.stderr)
    return lint.exit_code(results)


# --------------------------------------------------------------------------- convert


def cmd_convert(args: argparse.Namespace) -> int:
    from app.cli.convert import convert_documents
    from app.cli.documents import EXIT_USAGE, InputError, collect

    settings = command_settings(args, "convert")
    if settings is None:
        return EXIT_USAGE
    try:
        found = collect(args.files, args.skip_non_manifests)
    except InputError as exc:
        print(f"dynamo-webhook convert: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not args.quiet:
        for path in found.skipped:
            print(f"{path}: skipped: not a Kubernetes manifest", file=sys.stderr)
    return convert_documents(
        found.documents,
        args.to,
        check=args.check,
        output=args.output,
        report=not args.quiet,
        service=OfflineService(settings) if args.check else None,
        validation=args.validate,
    )


# --------------------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace) -> int:
    from app.server.serve import serve

    settings = command_settings(args, "serve")
    return 1 if settings is None else serve(settings)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's help ends with its default, unless it has none worth showing (None, a switch's
    False) or its help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or action.default is False or action.default is argparse.SUPPRESS:
            return text
        if "%(default)" in text or "(default" in text:
            return text
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An argument parser whose help shows defaults; its sub-command parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


class VersionAction(argparse.Action):
    """``--version``: the version, the build and the operator commit, worked out only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from app.cli.version import version_text

        print(version_text())
        parser.exit()


def add_inputs(parser: argparse.ArgumentParser) -> None:
    """The positional inputs of ``lint`` and ``convert``, and ``--skip-non-manifests``."""
    parser.add_argument(
        "files",
        nargs="+",
        metavar="PATH",
        help="YAML/JSON manifests (multi-document), directories (their .yaml, .yml and .json files, "
        "recursively, in sorted order; hidden files and directories left out) or - for stdin; a "
        "file over 64 MiB is refused (exit 2). A file found in a directory that is "
        "not a Kubernetes manifest (no document with apiVersion and kind, a Helm chart's template, "
        "not UTF-8, or not parsing and either holding {{ or naming no nvidia.com apiVersion) is "
        "skipped and counted (docs/lint.md)",
    )
    parser.add_argument(
        "--skip-non-manifests",
        action="store_true",
        help="skip files named on the command line that are not Kubernetes manifests too, as files "
        "found in a directory are (for pre-commit, which names every YAML file it checks)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="dynamo-webhook",
        description="Admission and conversion webhook for the NVIDIA Dynamo operator's nvidia.com resources.",
    )
    parser.add_argument(
        "--version",
        action=VersionAction,
        help="print the version, the build (python or compiled) and the operator commit it matches",
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
    review.add_argument(
        "file", help="review file, or - for standard input; over 64 MiB it is refused (exit 2)"
    )
    review.add_argument("--path", default="/validate", help="webhook path for AdmissionReviews")
    review.add_argument("-o", "--output", choices=["json", "yaml"], default="json", help="output format")
    review.add_argument(
        "--apiserver",
        action="store_true",
        help="first do to the review's objects what the API server does before calling that "
        "webhook (strict decoding, pruning, null dropping, schema defaults; before a validating "
        "webhook also the schema's validation); print its refusal instead when it refuses",
    )
    review.add_argument(
        "--validate",
        choices=["strict", "warn", "ignore"],
        default=None,
        help="with --apiserver, unknown fields: refused, warned about, or dropped silently "
        "(as kubectl's --validate; default strict)",
    )
    add_admission_arguments(review)
    review.set_defaults(func=cmd_review)

    lint = sub.add_parser(
        "lint",
        help="check manifests as kubectl create would meet them in a cluster, offline",
        description="Put every nvidia.com document through what the API server does on a create (strict "
        "decoding, the CRD schema, the mutating and validating webhooks) and print each finding as "
        "'FILE:LINE:COLUMN: SEVERITY: KIND/NAME (document N): MESSAGE'. "
        "Exit 0 all accepted, 1 any refused, 2 a file unreadable.",
    )
    add_inputs(lint)
    lint.add_argument("--diff", action="store_true", help="also show what defaulting would add")
    lint.add_argument(
        "-o",
        "--output",
        choices=["text", "json", "github", "sarif", "junit"],
        default="text",
        help="report format (github: workflow annotations; sarif: SARIF 2.1.0 for code scanning; "
        "junit: JUnit XML, a testsuite per file and a testcase per document); findings are sorted "
        "by file, line and column",
    )
    lint.add_argument(
        "--validate",
        choices=["strict", "warn", "ignore"],
        default="strict",
        help="unknown fields: refused, warned about, or dropped silently (as kubectl's --validate)",
    )
    add_admission_arguments(lint)
    lint.set_defaults(func=cmd_lint)

    convert = sub.add_parser(
        "convert",
        help="migrate manifests between nvidia.com/v1alpha1 and v1beta1",
        description="Convert every convertible Dynamo document to --to (other documents pass through untouched, "
        "order kept) and print them. A report of what moved into payload annotations goes to stderr, and one "
        "line 'FILE: KIND/NAME (document N): drops PATH: WHY' for each field of the input the output would not "
        "carry (unknown to its version's schema, or lost by the conversion): see --validate. "
        "The rule settings apply to the webhooks --check runs. "
        "Exit 0 converted, 1 a field dropped (strict), a conversion failed or --check failed, 2 a file unreadable.",
    )
    add_inputs(convert)
    convert.add_argument(
        "--to",
        default=HUB_API_VERSION,
        choices=[HUB_API_VERSION, ALPHA_API_VERSION],
        help="API version to convert to",
    )
    convert.add_argument("-o", "--output", choices=["yaml", "json"], default="yaml", help="output format")
    convert.add_argument(
        "--check",
        action="store_true",
        help="instead of converting, prove every document round-trips and, converted to --to, is "
        "accepted by the API server's create (as lint checks it); exit 1 naming the fields that "
        "would not round-trip or the API server's refusal",
    )
    convert.add_argument(
        "--validate",
        choices=["strict", "warn", "ignore"],
        default="strict",
        help="fields of the input the converted output would not carry: strict: name each on "
        "stderr, write nothing and exit 1; warn: name each and write the output; ignore: write "
        "the output silently (as lint's --validate for unknown fields; --check names them as a "
        "field that does not round-trip or the API server's refusal)",
    )
    convert.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no report on stderr but dropped fields, failures and refusals",
    )
    add_admission_arguments(convert)
    convert.set_defaults(func=cmd_convert)

    tool_args.register_certs(sub)
    tool_args.register_audit(sub)
    tool_args.register_storage_migrate(sub)
    tool_args.register_crds(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
