"""Verified DGDSA vectors, through the module functions and the ``kinds.convert`` dispatcher."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conversion.v1alpha1 import dgdsa
from kinds import convert
from tests.conversion.vector_helpers import assert_same, load_vectors

VECTORS: list[dict[str, Any]] = load_vectors("dgdsa_vectors.jsonl")
BETA = "nvidia.com/v1beta1"


def direct(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    return dgdsa.to_hub(obj) if desired == BETA else dgdsa.from_hub(obj)


def test_fixture_size() -> None:
    assert len(VECTORS) == 5


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    src = vector["input"]
    desired = vector["desiredAPIVersion"]
    before = copy.deepcopy(src)
    assert_same(direct(src, desired), vector["expected"])
    assert_same(convert(src, desired), vector["expected"])
    # metadata is copied verbatim, not only labels and annotations
    assert direct(src, desired)["metadata"] == src["metadata"]
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
