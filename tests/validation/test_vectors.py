"""The verified validating vectors for DGD and DCD (expected values from the pinned upstream code)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from domain.admission import AdmissionContext
from kinds import validate
from tests.admission_helpers import make_input
from tests.validation.conversion_probe import require_conversion

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "admission"


def _load(kind: str) -> list[dict[str, Any]]:
    with (FIXTURES / f"{kind}.validating.jsonl").open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


VECTORS = _load("DynamoGraphDeployment") + _load("DynamoComponentDeployment")


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_validating_vector(vector: dict[str, Any]) -> None:
    require_conversion(vector["kind"])
    inp = make_input(
        vector["apiVersion"], vector["kind"], vector["operation"], vector["object"], vector.get("oldObject")
    )
    d = validate(inp, AdmissionContext())
    expect = vector["expect"]
    assert d.allowed is expect["allowed"], d.status
    for text in expect["messageContains"]:
        assert text in d.message
    for text in expect["warningsContain"]:
        assert text in d.warnings
    if expect["allowed"]:
        assert d.status == {"code": 200}
    else:
        assert d.code == 422
        assert d.message.startswith(
            f'{vector["kind"]}.nvidia.com "{vector["object"]["metadata"]["name"]}" is invalid: '
        )
