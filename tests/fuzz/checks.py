"""What every answer must look like, whatever the input."""

from __future__ import annotations

import base64
import copy
from typing import Any

import jsonpatch
import orjson

from app.review.reviews import MAX_WARNING_CHARS, MAX_WARNINGS_TOTAL


def check_admission_answer(body: bytes, review: dict[str, Any], mutating: bool) -> dict[str, Any]:
    """``body`` is a well-formed AdmissionReview answer to ``review``; returns its response."""
    doc = orjson.loads(body)
    assert doc["apiVersion"] == review["apiVersion"]
    assert doc["kind"] == "AdmissionReview"
    response = doc["response"]
    assert set(response) <= {"uid", "allowed", "status", "patch", "patchType", "warnings"}, response
    assert response["uid"] == review["request"]["uid"]
    assert isinstance(response["allowed"], bool)
    status = response["status"]
    assert isinstance(status, dict) and isinstance(status.get("code"), int), status
    if response["allowed"]:
        assert status["code"] == 200, status
    else:
        assert 400 <= status["code"] < 600, status
        assert isinstance(status.get("message"), str) and status["message"], status
    warnings = response.get("warnings", [])
    assert isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)
    assert all(len(w) <= MAX_WARNING_CHARS for w in warnings)
    assert sum(len(w) for w in warnings) <= MAX_WARNINGS_TOTAL
    if "patch" in response:
        assert mutating and response["allowed"]
        assert response["patchType"] == "JSONPatch"
        ops = orjson.loads(base64.b64decode(response["patch"], validate=True))
        assert isinstance(ops, list) and ops
        original = review["request"]["object"]
        patched = jsonpatch.apply_patch(copy.deepcopy(original), ops)
        assert isinstance(patched, dict)
    else:
        assert "patchType" not in response
    return dict(response)


def check_conversion_answer(body: bytes, review: dict[str, Any]) -> dict[str, Any]:
    doc = orjson.loads(body)
    assert doc["apiVersion"] == review["apiVersion"]
    assert doc["kind"] == "ConversionReview"
    response = doc["response"]
    assert response["uid"] == review["request"]["uid"]
    result = response["result"]
    assert result["status"] in ("Success", "Failure")
    if result["status"] == "Success":
        objects = review["request"].get("objects") or []
        converted = response["convertedObjects"]
        assert isinstance(converted, list) and len(converted) == len(objects)
        for out in converted:
            assert out["apiVersion"] == review["request"]["desiredAPIVersion"]
    else:
        assert response["convertedObjects"] is None
        assert isinstance(result.get("message"), str) and result["message"]
    return dict(response)
