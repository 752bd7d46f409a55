"""The review path converts what the converters need: the answer to a ConversionReview equals
converting each whole object and keeping its source metadata (labels and annotations aside)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

import kinds
from app.review.dispatch import review_conversion
from bench import payloads

ALPHA, BETA = payloads.ALPHA, payloads.BETA


def _stored() -> list[dict[str, Any]]:
    """Stored objects of every convertible kind, as a cluster holds them (with managedFields)."""
    out = []
    for build in payloads.STORED_ALPHA.values():
        for obj in build():
            out += [obj, payloads.migrated(obj)]
    return out


def _reference(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    out = kinds.convert(copy.deepcopy(obj), desired)
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("labels", "annotations")}
    for key in ("labels", "annotations"):
        if out["metadata"].get(key):
            meta[key] = out["metadata"][key]
    out["metadata"] = meta
    return out


@pytest.mark.parametrize("desired", [ALPHA, BETA])
def test_review_answers_match_whole_object_conversion(desired: str) -> None:
    objects = _stored()
    assert any("managedFields" in o["metadata"] for o in objects)
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "u", "desiredAPIVersion": desired, "objects": copy.deepcopy(objects)},
    }
    answer = orjson.loads(review_conversion(review).body)
    converted = answer["response"]["convertedObjects"]
    assert [orjson.dumps(o) for o in converted] == [orjson.dumps(_reference(o, desired)) for o in objects]
