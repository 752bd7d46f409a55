"""Verified DGDR vectors (expected values produced by the pinned upstream converter).

Each vector is checked through the module functions and through the ``kinds.convert``
dispatcher, compared under ``app.review.compare.normalize``; metadata is compared the way the
apiserver uses a conversion answer (only labels and annotations are taken from it).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conversion import ConversionError
from conversion.v1alpha1 import dgdr
from kinds import convert
from tests.conversion.vector_helpers import assert_same, load_vectors

VECTORS: list[dict[str, Any]] = load_vectors("dgdr_vectors.jsonl")
BETA = "nvidia.com/v1beta1"


def direct(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    return dgdr.to_hub(obj) if desired == BETA else dgdr.from_hub(obj)


def test_fixture_covers_both_directions_and_round_trips() -> None:
    assert len(VECTORS) == 39
    assert {v["desiredAPIVersion"] for v in VECTORS} == {"nvidia.com/v1alpha1", BETA}
    assert sum(bool(v.get("roundtrip")) for v in VECTORS) >= 10


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    src = vector["input"]
    desired = vector["desiredAPIVersion"]
    before = copy.deepcopy(src)
    if vector["expected"] is None:
        with pytest.raises(ConversionError) as info:
            direct(src, desired)
        assert str(info.value).startswith(vector["expectedErrorPrefix"])
        with pytest.raises(ConversionError):
            convert(src, desired)
        return
    assert_same(direct(src, desired), vector["expected"])
    assert_same(convert(src, desired), vector["expected"])
    assert src == before


@pytest.mark.parametrize(
    "vector",
    [v for v in VECTORS if v.get("roundtrip")],
    ids=[v["name"] for v in VECTORS if v.get("roundtrip")],
)
def test_vector_round_trip(vector: dict[str, Any]) -> None:
    back_version = vector["input"]["apiVersion"]
    assert_same(direct(vector["expected"], back_version), vector["input"])
    assert_same(convert(vector["expected"], back_version), vector["input"])
