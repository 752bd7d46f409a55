"""The benchmark's floor: ``dynamo-webhook serve`` with the rules taken out.

Everything a review costs before and after its rules stays as deployed — TLS, the HTTP layer,
the body read with its timeout, the JSON decode and nesting check, the envelope and the request's
objects read into an :class:`~domain.admission.AdmissionInput`, the encoded answer, the metrics
and the log line — but the answer is decided without any rule: every admission is allowed and
a ConversionReview returns its objects unchanged (each encoded on its own, as the webhook does;
a review past the route's offload size read one object at a time from its bytes, as the webhook
reads it, with each object returned unchanged there too).
The CPU time per request of this server is the least any rule set could cost on top of it, so a
throughput target above ``echo / floor`` cannot be met by faster rules alone::

    python -m bench.floor_server serve --port 9445 --cert-dir <dir> --cert-mode dev ...

(the arguments of ``dynamo-webhook serve``).
"""

from __future__ import annotations

import sys
from typing import Any, Literal

import orjson

from app.cli.main import main as cli_main
from app.review import conversion_stream
from app.review.dispatch import Outcome, object_name
from app.review.errors import ReviewFailure
from app.review.reviews import (
    AdmissionResponse,
    admission_input,
    admission_review,
    conversion_input,
    conversion_review,
    conversion_review_encoded,
    denial,
    read_admission_review,
    read_conversion_review,
)
from app.server import routes
from domain.admission import GVK, AdmissionContext


def review_admission(
    doc: Any,
    review_type: Literal["validate", "mutate"],
    ctx: AdmissionContext,
    expected_gvk: GVK | None = None,
) -> Outcome:
    """Allow the review, after reading it as the webhook does (a malformed request is still
    answered with its error)."""
    env = read_admission_review(doc)
    try:
        inp = admission_input(env, expected_gvk)
    except ReviewFailure as exc:
        refused = denial(env.uid, exc.message, exc.code)
        return Outcome(admission_review(env.api_version, refused), uid=env.uid, allowed=False, code=exc.code)
    response: AdmissionResponse = {"uid": env.uid, "allowed": True, "status": {"code": 200}}
    return Outcome(
        admission_review(env.api_version, response),
        uid=env.uid,
        kind=inp.kind.kind,
        namespace=inp.namespace,
        name=inp.name or object_name(inp.object or inp.old_object),
        operation=inp.operation,
        response=response,
    )


def review_conversion(doc: Any) -> Outcome:
    """Return the objects unchanged, each encoded on its own."""
    env = read_conversion_review(doc)
    try:
        desired, objects = conversion_input(env)
    except ReviewFailure as exc:
        body = conversion_review(env.api_version, env.uid, None, exc.message)
        return Outcome(body, uid=env.uid, allowed=False, code=exc.code, operation="CONVERT")
    encoded = [orjson.dumps(obj) for obj in objects]
    done = [(str(obj.get("kind", "")), f"same->{desired}") for obj in objects if isinstance(obj, dict)]
    return Outcome(
        conversion_review_encoded(env.api_version, env.uid, encoded),
        uid=env.uid,
        operation="CONVERT",
        conversions=done,
    )


def converted_with_direction(
    obj: Any, index: int, desired: str, big_numbers: bool = False
) -> tuple[Any, tuple[str, str]]:
    """Object ``index`` of a large review, unchanged (what the webhook's walk of a large review
    converts one object at a time)."""
    kind = str(obj.get("kind", "")) if isinstance(obj, dict) else ""
    return obj, (kind, f"same->{desired}")


def main(argv: list[str] | None = None) -> int:
    # The routes (and the walk of a large ConversionReview) call the dispatch functions they
    # imported: replace those names.
    for module, names in (
        (routes, {"review_admission": review_admission, "review_conversion": review_conversion}),
        (conversion_stream, {"converted_with_direction": converted_with_direction}),
    ):
        missing = sorted(set(names) - set(vars(module)))
        assert not missing, f"{module.__name__} no longer has {missing}: the floor would convert"
        vars(module).update(names)
    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
