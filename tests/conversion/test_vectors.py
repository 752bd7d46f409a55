"""Verified DGD/DCD vectors (expected values from the pinned upstream code)."""

from __future__ import annotations

from typing import Any

import pytest

from app.review.compare import diff_paths, normalize
from conversion import ConversionError
from kinds import convert
from tests.conversion.support import load_vectors

VECTORS = load_vectors("vectors_dgd.jsonl") + load_vectors("vectors_dcd.jsonl")


def _apiserver_view(obj: dict[str, Any]) -> dict[str, Any]:
    # The apiserver keeps the original metadata and takes only labels and annotations from
    # the webhook's answer.
    out = dict(obj)
    meta = obj.get("metadata") or {}
    out["metadata"] = {k: meta[k] for k in ("labels", "annotations") if k in meta}
    return out


def _assert_same(got: dict[str, Any], want: dict[str, Any]) -> None:
    diffs = diff_paths(normalize(_apiserver_view(got)), normalize(_apiserver_view(want)))
    assert diffs == []


def test_vector_set_is_complete() -> None:
    kinds = {v["input"]["kind"] for v in VECTORS}
    assert kinds == {"DynamoGraphDeployment", "DynamoComponentDeployment"}
    assert len(VECTORS) == 107


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    if vector["expected"] is None:
        with pytest.raises(ConversionError) as info:
            convert(vector["input"], vector["desiredAPIVersion"])
        assert str(info.value).startswith(vector["expectedErrorPrefix"])
        return
    got = convert(vector["input"], vector["desiredAPIVersion"])
    assert got["apiVersion"] == vector["desiredAPIVersion"]
    assert got["kind"] == vector["input"]["kind"]
    _assert_same(got, vector["expected"])
    if vector.get("roundtrip"):
        back = convert(vector["expected"], vector["input"]["apiVersion"])
        _assert_same(back, vector["input"])
