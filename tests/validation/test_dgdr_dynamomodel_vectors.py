"""The verified validating vectors of DynamoGraphDeploymentRequest and DynamoModel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kinds
from conversion.errors import ConversionError
from domain.admission import AdmissionContext, AdmissionSettings
from tests.admission_helpers import make_input
from validation import dgdr, dynamomodel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "admission"
CTX = AdmissionContext(AdmissionSettings(operator_version="1.1.0"))
VALIDATORS = {"DynamoGraphDeploymentRequest": dgdr.validate, "DynamoModel": dynamomodel.validate}


def load(kind: str) -> list[dict[str, Any]]:
    with (FIXTURES / f"{kind}.jsonl").open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


VECTORS = [v for kind in VALIDATORS for v in load(kind) if v["webhook"] == "validating"]


def converts(obj: dict[str, Any]) -> bool:
    try:
        kinds.convert(obj, "nvidia.com/v1beta1")
    except ConversionError:
        return False
    return True


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_validating_vector(vector: dict[str, Any]) -> None:
    alpha_dgdr = vector["kind"] == "DynamoGraphDeploymentRequest" and vector["apiVersion"].endswith(
        "/v1alpha1"
    )
    if alpha_dgdr and not converts(vector["object"]):
        pytest.skip("v1alpha1 DGDR conversion is not available")
    inp = make_input(
        vector["apiVersion"], vector["kind"], vector["operation"], vector["object"], vector["oldObject"]
    )
    d = VALIDATORS[vector["kind"]](inp, CTX)
    expect = vector["expect"]
    assert d.allowed is expect["allowed"], d.message
    for text in expect["messageContains"]:
        assert text in d.message
    for text in expect["warningsContain"]:
        assert any(text in w for w in d.warnings)
    if d.allowed:
        assert d.status == {"code": 200}
    else:
        assert d.code == 422
