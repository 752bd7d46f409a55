"""Defaulting, validation and conversion entry points on structurally plausible Dynamo objects
(real objects with random edits): nothing escapes but the documented errors, and every answer
through the dispatcher is a well-formed review."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

import conversion
import kinds
from app.review.dispatch import review_admission
from app.review.errors import InvalidRequest
from app.review.reviews import admission_input, read_admission_review
from app.server.settings import Settings
from domain.admission import AdmissionContext, Decision
from tests.fuzz.checks import check_admission_answer
from tests.fuzz.strategies import admission_reviews, dynamo_objects

GATES = st.builds(
    lambda grove, checkpoint, gpu: AdmissionContext(
        settings=Settings(
            feature_grove=grove, feature_checkpoint=checkpoint, feature_gpu_discovery=gpu
        ).admission_settings()
    ),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@given(dynamo_objects(), st.sampled_from(("nvidia.com/v1alpha1", "nvidia.com/v1beta1")))
def test_conversion_raises_only_conversion_error(obj: dict[str, Any], desired: str) -> None:
    before = copy.deepcopy(obj)
    try:
        out = kinds.convert(obj, desired)
    except conversion.ConversionError:
        return
    finally:
        assert obj == before, "convert must not mutate its input"
    assert isinstance(out, dict)
    assert out.get("apiVersion") == desired
    assert out.get("kind") == obj.get("kind")
    orjson.dumps(out)  # plain JSON data


def _direct(handler: Any, review: dict[str, Any], ctx: AdmissionContext) -> Decision | None:
    try:
        inp = admission_input(read_admission_review(review))
    except InvalidRequest:
        return None
    decision = handler(inp, ctx)
    assert isinstance(decision, Decision)
    orjson.dumps(decision.status)
    return decision


@given(admission_reviews(), GATES)
def test_admission_handlers_never_raise_and_answers_are_well_formed(
    review: dict[str, Any], ctx: AdmissionContext
) -> None:
    original = copy.deepcopy(review)
    checked = _direct(kinds.validate, review, ctx)
    assert checked is None or checked.patched is None
    defaulted = _direct(kinds.default, review, ctx)
    if defaulted is not None and defaulted.patched is not None:
        orjson.dumps(defaulted.patched)
    assert review == original, "handlers must not modify the request"
    for review_type in ("validate", "mutate"):
        outcome = review_admission(review, review_type, ctx)  # type: ignore[arg-type]
        check_admission_answer(outcome.body, original, review_type == "mutate")
