"""Verified DGDSA vectors, through the module functions and the ``conversion.convert`` dispatcher."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conversion import convert, dgdsa
from conversion.compare import diff_paths, normalize

FIXTURE = Path(__file__).parent.parent / "fixtures" / "conversion" / "dgdsa_vectors.jsonl"
VECTORS: list[dict[str, Any]] = [
    json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()
]
BETA = "nvidia.com/v1beta1"


def comparable(obj: dict[str, Any]) -> Any:
    obj = dict(obj)
    meta = obj.get("metadata") or {}
    obj["metadata"] = {k: meta[k] for k in ("labels", "annotations") if k in meta}
    return normalize(obj)


def direct(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    return dgdsa.alpha_to_beta(obj) if desired == BETA else dgdsa.beta_to_alpha(obj)


def assert_same(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    a, e = comparable(actual), comparable(expected)
    assert a == e, diff_paths(a, e)


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
