"""The verified mutating vectors of every kind (expected values from the pinned upstream code).

Each vector is answered by :func:`kinds.default`; the answer's JSON patch (as the HTTP
layer computes it: a diff against the object as sent, without ``remove`` operations) is
applied to the sent object and the result compared with the vector's expectations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonpatch
import jsonpointer
import pytest

import kinds
from conversion.errors import ConversionError
from domain.admission import AdmissionContext, AdmissionSettings
from tests.admission_helpers import make_input

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "admission"
KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest")
# The vectors were produced by an operator built as version 1.1.0 with default gates.
CTX = AdmissionContext(AdmissionSettings(operator_version="1.1.0"))
ABSENT = "<absent>"


def load(kind: str) -> list[dict[str, Any]]:
    with (FIXTURES / f"{kind}.jsonl").open() as fh:
        return [json.loads(line) for line in fh if line.strip()]


VECTORS = [v for kind in KINDS for v in load(kind) if v["webhook"] == "mutating"]


def converts(obj: dict[str, Any]) -> bool:
    try:
        kinds.convert(obj, "nvidia.com/v1beta1")
    except ConversionError:
        return False
    return True


def lookup(doc: Any, path: str) -> Any:
    pointer = (
        path
        if path.startswith("/")
        else "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in path.split("."))
    )
    return jsonpointer.resolve_pointer(doc, pointer, ABSENT)


def test_every_kind_has_mutating_vectors() -> None:
    assert {v["kind"] for v in VECTORS} == set(KINDS)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_mutating_vector(vector: dict[str, Any]) -> None:
    sent = vector["object"]
    alpha_hub_kind = (
        vector["apiVersion"].endswith("/v1alpha1") and vector["kind"] != "DynamoComponentDeployment"
    )
    if alpha_hub_kind and not converts(sent):
        pytest.skip("v1alpha1 conversion of this kind is not available")
    inp = make_input(vector["apiVersion"], vector["kind"], vector["operation"], sent, vector["oldObject"])
    d = kinds.default(inp, CTX)
    expect = vector["expect"]
    assert d.allowed is expect["allowed"]
    for text in expect.get("messageContains", []):
        assert text in d.message
    for text in expect.get("warningsContain", []):
        assert any(text in w for w in d.warnings)
    if d.patched is None:
        ops: list[dict[str, Any]] = []
        result = sent
    else:
        ops = [op for op in jsonpatch.make_patch(sent, d.patched).patch if op["op"] != "remove"]
        result = jsonpatch.apply_patch(sent, ops)
    if expect.get("noPatch"):
        assert ops == []
    for path, value in expect.get("patchedObjectContains", {}).items():
        assert lookup(result, path) == value, path
    # Reinvocation: defaulting the answer again changes nothing.
    again = kinds.default(
        make_input(vector["apiVersion"], vector["kind"], vector["operation"], result, vector["oldObject"]),
        CTX,
    )
    assert again.patched is None or jsonpatch.make_patch(result, again.patched).patch == []
