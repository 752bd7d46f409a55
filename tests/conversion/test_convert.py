"""The ``kinds.convert`` contract: dispatch, pass-through, errors."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import conversion
import kinds
from conversion import ConversionError
from conversion.hub import KindConverter, Spoke
from kinds import convert
from kinds.registry import Registry

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"


def _dgd(version: str = ALPHA) -> dict[str, Any]:
    return {
        "apiVersion": version,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {"services": {"a": {}}},
    }


def test_output_version_and_kind() -> None:
    out = convert(_dgd(), BETA)
    assert out["apiVersion"] == BETA
    assert out["kind"] == "DynamoGraphDeployment"
    assert out["spec"] == {"components": [{"name": "a"}]}


def test_same_version_is_a_deep_copy() -> None:
    src = _dgd(BETA)
    out = convert(src, BETA)
    assert out == src and out is not src
    out["metadata"]["name"] = "x"
    assert src["metadata"]["name"] == "g"


@pytest.mark.parametrize(
    ("obj", "desired", "match"),
    [
        ([], BETA, "expected a JSON object"),
        (
            _dgd(),
            "nvidia.com/v2",
            "unsupported desired apiVersion 'nvidia.com/v2' for kind 'DynamoGraphDeployment'",
        ),
        (
            {**_dgd(), "apiVersion": "apps/v1"},
            BETA,
            "unsupported apiVersion 'apps/v1' for kind DynamoGraphDeployment",
        ),
        ({**_dgd(), "kind": "DynamoModel"}, BETA, "unsupported kind 'DynamoModel'"),
        ({"apiVersion": ALPHA}, BETA, "unsupported kind None"),
    ],
)
def test_invalid_requests(obj: Any, desired: str, match: str) -> None:
    with pytest.raises(ConversionError, match=match):
        convert(obj, desired)


def test_unexpected_exception_becomes_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(obj: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("x")

    broken = KindConverter(
        kind="DynamoGraphDeployment",
        group="nvidia.com",
        hub="v1beta1",
        spokes={"v1alpha1": Spoke(to_hub=boom, from_hub=boom)},
    )
    registry = Registry()
    for kind in kinds.REGISTRY:
        registry.register(
            dataclasses.replace(kind, converter=broken) if kind.kind == "DynamoGraphDeployment" else kind
        )
    monkeypatch.setattr(kinds, "REGISTRY", registry)
    with pytest.raises(ConversionError) as info:
        convert(_dgd(), BETA)
    assert str(info.value) == "internal error occurred during conversion"
    assert isinstance(info.value.__context__, KeyError)


def test_type_mismatch_in_live_object_is_reported() -> None:
    bad = {**_dgd(), "spec": {"services": {"a": {"replicas": "two"}}}}
    with pytest.raises(ConversionError, match="cannot unmarshal"):
        convert(bad, BETA)


def test_public_names() -> None:
    assert conversion.__all__ == ["ConversionError"]
