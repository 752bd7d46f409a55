"""The review envelope parser (app.review.reviews) and dispatch on arbitrary input: a body is either
rejected with ``BadRequest`` (HTTP 4xx) or answered with a well-formed review."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from app.review.dispatch import review_admission, review_conversion
from app.review.errors import BadRequest, InvalidRequest
from app.review.reviews import admission_input, parse_json, read_admission_review
from app.server.settings import Settings
from domain.admission import AdmissionContext
from tests.fuzz.checks import check_admission_answer, check_conversion_answer
from tests.fuzz.strategies import admission_reviews, dynamo_objects, json_values

CTX = AdmissionContext(settings=Settings().admission_settings())


@given(st.binary(max_size=300))
def test_parse_json_of_any_bytes(body: bytes) -> None:
    try:
        parse_json(body)
    except BadRequest as exc:
        assert exc.code == 400 and exc.message


@given(json_values)
def test_parse_json_of_any_json(value: Any) -> None:
    assert parse_json(orjson.dumps(value)) == value


@st.composite
def broken_envelopes(draw: st.DrawFn) -> Any:
    """A review with one envelope field (top level or in ``request``) replaced or removed."""
    review = draw(admission_reviews())
    where = draw(st.sampled_from(("top", "request")))
    target = review if where == "top" else review["request"]
    key = draw(st.sampled_from([*sorted(target), "extra"]))
    if draw(st.booleans()):
        target[key] = draw(json_values)
    else:
        target.pop(key, None)
    return review


@given(
    st.one_of(json_values, broken_envelopes(), admission_reviews()), st.sampled_from(("validate", "mutate"))
)
def test_any_document_is_rejected_or_answered(doc: Any, review_type: str) -> None:
    original = copy.deepcopy(doc)
    # The envelope reader raises only its own two errors.
    with contextlib.suppress(BadRequest, InvalidRequest):
        admission_input(read_admission_review(doc))
    try:
        outcome = review_admission(doc, review_type, CTX)  # type: ignore[arg-type]
    except BadRequest as exc:
        assert 400 <= exc.code < 500
        return
    check_admission_answer(outcome.body, original, review_type == "mutate")


@st.composite
def conversion_reviews(draw: st.DrawFn) -> Any:
    objects: list[Any] = draw(st.lists(st.one_of(dynamo_objects(2), json_values), max_size=2))
    review: dict[str, Any] = {
        "apiVersion": draw(st.sampled_from(("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"))),
        "kind": "ConversionReview",
        "request": {
            "uid": "c-1",
            "desiredAPIVersion": draw(
                st.sampled_from(("nvidia.com/v1alpha1", "nvidia.com/v1beta1", "v1", ""))
            ),
            "objects": objects,
        },
    }
    if draw(st.integers(0, 4)) == 0:
        key = draw(st.sampled_from(("uid", "desiredAPIVersion", "objects")))
        review["request"][key] = draw(json_values)
    return review


@given(st.one_of(conversion_reviews(), json_values))
def test_any_conversion_document_is_rejected_or_answered(doc: Any) -> None:
    original = copy.deepcopy(doc)
    try:
        outcome = review_conversion(doc)
    except BadRequest as exc:
        assert 400 <= exc.code < 500
        return
    if isinstance(original, dict) and isinstance(original.get("request"), dict):
        check_conversion_answer(outcome.body, original)
