"""Review dispatch: one decoded review in, one answer out.

The HTTP routes and the offline CLI (``dynamo-webhook review``) both call these functions,
so the server and the tools can never disagree. This is where a :class:`~app.review.errors.ReviewFailure`
becomes an answer: a denial with its code inside an AdmissionReview, a ``Failure`` inside a
ConversionReview.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import orjson

import kinds
from app.review.bignumbers import MarkedDict, first_out_of_range, out_of_range_text
from app.review.errors import ConversionFailure, InternalError, InvalidRequest, ReviewFailure
from app.review.reviews import (
    AdmissionResponse,
    Part,
    admission_input,
    admission_response,
    admission_review,
    conversion_input,
    conversion_review,
    conversion_review_encoded,
    denial,
    read_admission_review,
    read_conversion_review,
    unpacked,
)
from app.review.schema import check_object, first_type_error
from conversion.errors import ConversionError
from conversion.hub import without_managed_fields
from domain.admission import GVK, AdmissionContext, AdmissionInput
from gocompat.jsonvalue import json_type

log = logging.getLogger("dynamo_webhook.review")


@dataclass(slots=True, init=False)
class Outcome:
    """The encoded answer plus what the log line and metrics need. Its ``__init__`` is written
    out so that the compiled build compiles it (see :mod:`domain.admission`)."""

    body: bytes
    uid: str
    kind: str
    namespace: str
    name: str
    operation: str
    allowed: bool
    code: int
    message: str
    patched: bool
    warnings: int
    conversions: list[tuple[str, str]]  # (kind, "v1alpha1->v1beta1")
    response: Any
    #: The answer in parts, when it is sent as they are (a large ConversionReview's); ``body``
    #: is then empty. See :meth:`pieces`.
    parts: list[Part] | None

    def __init__(
        self,
        body: bytes,
        uid: str = "",
        kind: str = "",
        namespace: str = "",
        name: str = "",
        operation: str = "",
        allowed: bool = True,
        code: int = 200,
        message: str = "",
        patched: bool = False,
        warnings: int = 0,
        conversions: list[tuple[str, str]] | None = None,
        response: Any = None,
        parts: list[Part] | None = None,
    ) -> None:
        self.body = body
        self.uid = uid
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.operation = operation
        self.allowed = allowed
        self.code = code
        self.message = message
        self.patched = patched
        self.warnings = warnings
        self.conversions = [] if conversions is None else conversions
        self.response = response
        self.parts = parts

    def pieces(self) -> list[bytes]:
        """The answer's bytes in the order they are sent (their join is the whole answer)."""
        return [unpacked(part) for part in self.parts] if self.parts is not None else [self.body]


# --------------------------------------------------------------------------- admission


def review_admission(
    doc: Any,
    review_type: Literal["validate", "mutate"],
    ctx: AdmissionContext,
    expected_gvk: GVK | None = None,
) -> Outcome:
    """Answer one AdmissionReview document. Raises ``BadRequest`` only when ``doc`` is no review."""
    env = read_admission_review(doc)
    response: AdmissionResponse
    inp: AdmissionInput | None = None
    try:
        inp = admission_input(env, expected_gvk)
        response = _admit(env.uid, inp, review_type == "mutate", ctx, type(doc) is MarkedDict)
    except ReviewFailure as exc:
        response = denial(env.uid, exc.message, exc.code)
    request = env.request
    kind = request.get("kind")
    status = response.get("status") or {}
    return Outcome(
        body=admission_review(env.api_version, response),
        uid=env.uid,
        kind=inp.kind.kind if inp else (str(kind.get("kind", "")) if isinstance(kind, dict) else ""),
        namespace=inp.namespace if inp else "",
        name=(inp.name or object_name(inp.object or inp.old_object)) if inp else "",
        operation=inp.operation if inp else str(request.get("operation", "")),
        allowed=bool(response.get("allowed")),
        code=int(status.get("code", 200)),
        message=str(status.get("message", "")),
        patched="patch" in response,
        warnings=len(response.get("warnings", [])),
        response=response,
    )


def _admit(
    uid: str, inp: AdmissionInput, mutating: bool, ctx: AdmissionContext, big_numbers: bool = False
) -> AdmissionResponse:
    """The handler's answer; raises :class:`InvalidRequest` for an object of the wrong types and
    :class:`InternalError` when the handler fails. ``big_numbers``: the review holds numbers past
    a double's range (:mod:`app.review.bignumbers`), which no object may hold."""
    problem, spec_decodes = _problem_and_spec_decodes(inp)
    if problem is None and big_numbers:
        problem = _big_number(inp.object, "request.object") or _big_number(
            inp.old_object, "request.oldObject"
        )
    if problem is not None:
        # The operator decodes objects into typed structs first: a value of the wrong JSON
        # type, or one its Go type's own decoder refuses, is answered with a 400 before any rule
        # runs.
        raise InvalidRequest(problem)
    try:
        decision = kinds.default(inp, ctx) if mutating else kinds.validate(inp, ctx, spec_decodes)
        return admission_response(uid, decision, mutating, inp.object)
    except Exception as exc:  # the answer is always a review, as controller-runtime's recover()
        problem = _old_object_problem(inp)
        if problem is not None:
            raise InvalidRequest(problem) from exc
        log.error(
            "admission handler failed",
            extra={"uid": uid, "error": repr(exc), "traceback": traceback.format_exc()},
        )
        raise InternalError(f"internal error: {type(exc).__name__}: {exc}") from exc


def _checked(inp: AdmissionInput, obj: Any) -> tuple[str, str] | None:
    """The (apiVersion, kind) ``obj`` is type checked as, or None when the request's objects are
    not checked (another operation, a subresource, a per-kind path whose GVK guard answers first)."""
    if inp.operation not in ("CREATE", "UPDATE") or inp.sub_resource:
        return None
    if inp.expected_gvk is not None and inp.expected_gvk != inp.kind:
        return None
    if not isinstance(obj, dict):
        return None
    return str(obj.get("apiVersion") or inp.kind.api_version), str(obj.get("kind") or inp.kind.kind)


def _problem_and_spec_decodes(inp: AdmissionInput) -> tuple[str | None, bool]:
    """(the first problem of the request's ``object``, checked up front with the values Go parses
    itself, :func:`~app.review.schema.check_object`; whether its ``spec`` decodes as it is, which
    the caller passes on to the rules). Not checked: (None, False)."""
    checked = _checked(inp, inp.object)
    if checked is None:
        return None, False
    return check_object(inp.object, *checked, "request.object")


def _old_object_problem(inp: AdmissionInput) -> str | None:
    """The first wrongly typed value of the request's stored ``oldObject`` (it already passed the
    apiserver's schema validation, so it is only examined when a handler could not process the
    request)."""
    checked = _checked(inp, inp.old_object)
    return None if checked is None else first_type_error(inp.old_object, *checked, "request.oldObject")


def _big_number(obj: Any, root: str) -> str | None:
    """The refusal of the first number past a double's range in ``obj`` (None: it holds none)."""
    found = first_out_of_range(obj, root)
    return None if found is None else out_of_range_text(*found)


def object_name(obj: Any) -> str:
    """``metadata.name`` of a request's object, else its ``generateName`` ("" when neither)."""
    if isinstance(obj, dict):
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            return str(meta.get("name") or meta.get("generateName") or "")
    return ""


# --------------------------------------------------------------------------- conversion


def describe_object(obj: Any, index: int) -> str:
    """``objects[3] DynamoGraphDeployment ns/name`` — names the object in failure messages."""
    if not isinstance(obj, dict):
        return f"objects[{index}]"
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    name = meta.get("name") or ""
    ns = meta.get("namespace") or ""
    ident = f"{ns}/{name}" if ns else str(name)
    return f"objects[{index}] {obj.get('kind', '')} {ident}".rstrip()


def _restore_metadata(src: dict[str, Any], out: dict[str, Any]) -> None:
    """The apiserver only takes labels and annotations from a converted object; keep everything
    else of the source metadata as it was, so a converter can never change it."""
    src_meta = src.get("metadata")
    if not isinstance(src_meta, dict):
        return
    out_meta = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    assert isinstance(out_meta, dict)
    merged = {k: v for k, v in src_meta.items() if k not in ("labels", "annotations")}
    for key in ("labels", "annotations"):
        if out_meta.get(key):
            merged[key] = out_meta[key]
    out["metadata"] = merged


def converted_with_direction(
    obj: Any, index: int, desired: str, big_numbers: bool = False
) -> tuple[dict[str, Any], tuple[str, str]]:
    """Object ``index`` of a review converted to ``desired``, with its (kind,
    "v1alpha1->v1beta1"); a failure raises :class:`ConversionFailure` naming the object (the
    converter's own text first, as upstream prints it). ``big_numbers``: the object may hold
    numbers past a double's range (:mod:`app.review.bignumbers`), which fail its decode."""
    if not isinstance(obj, dict):
        raise ConversionFailure(f"objects[{index}]: expected a JSON object, got {json_type(obj)}")
    problem = first_type_error(obj, str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if problem is None and big_numbers:
        problem = _big_number(obj, "")
    if problem is not None:
        # Typed decoding fails before any conversion runs (and a converter could otherwise
        # drop a field it cannot read).
        raise ConversionFailure(f"{problem} ({describe_object(obj, index)})")
    try:
        out = kinds.convert(without_managed_fields(obj), desired)
    except Exception as exc:
        if isinstance(exc, ConversionError):
            raise ConversionFailure(f"{exc} ({describe_object(obj, index)})") from exc
        log.error(
            "converter failed",
            extra={
                "object": describe_object(obj, index),
                "error": repr(exc),
                "traceback": traceback.format_exc(),
            },
        )
        raise ConversionFailure(
            f"internal error occurred during conversion ({describe_object(obj, index)})"
        ) from exc
    if out is not obj:
        _restore_metadata(obj, out)
    source = str(obj.get("apiVersion", "")).rpartition("/")[2]
    return out, (str(obj.get("kind", "")), f"{source}->{desired.rpartition('/')[2]}")


def _converted(
    objects: list[Any], desired: str, big_numbers: bool = False
) -> Iterator[tuple[dict[str, Any], tuple[str, str]]]:
    """Each object converted (:func:`converted_with_direction`), in order; the first failure raises."""
    for index, obj in enumerate(objects):
        yield converted_with_direction(obj, index, desired, big_numbers)


def convert_objects(objects: list[Any], desired: str) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Convert every object or none (see :func:`_converted`)."""
    converted: list[dict[str, Any]] = []
    done: list[tuple[str, str]] = []
    for out, direction in _converted(objects, desired):
        converted.append(out)
        done.append(direction)
    return converted, done


def review_conversion(doc: Any) -> Outcome:
    """Answer one ConversionReview document. Raises ``BadRequest`` only when ``doc`` is no review."""
    env = read_conversion_review(doc)
    try:
        desired, objects = conversion_input(env)
        # Each converted object is encoded at once, so a large review never holds all the
        # converted objects as Python values beside the decoded ones (half the peak memory).
        encoded: list[bytes] = []
        done: list[tuple[str, str]] = []
        for out, direction in _converted(objects, desired, type(doc) is MarkedDict):
            encoded.append(orjson.dumps(out))
            done.append(direction)
    except ReviewFailure as exc:
        return Outcome(
            conversion_review(env.api_version, env.uid, None, exc.message),
            uid=env.uid,
            allowed=False,
            code=exc.code,
            message=exc.message,
            operation="CONVERT",
        )
    kinds = sorted({k for k, _ in done})
    return Outcome(
        conversion_review_encoded(env.api_version, env.uid, encoded),
        uid=env.uid,
        kind=",".join(kinds),
        operation="CONVERT",
        conversions=done,
    )
