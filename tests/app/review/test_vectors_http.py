"""Every verified admission vector (expected values from the operator's own webhooks) sent
through the HTTP app's generic routes, exactly as the apiserver would send it."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from starlette.testclient import TestClient

from tests.app.conftest import JSON_HEADERS, make_client

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "admission"
KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest", "DynamoModel")
VECTORS = [
    json.loads(line)
    for kind in KINDS
    for line in (FIXTURES / f"{kind}.jsonl").read_text().splitlines()
    if line.strip()
]
# The vectors were produced by an operator built as version 1.1.0 (see their origin-version annotations).
_client = make_client(operator_version="1.1.0")
ABSENT = "<absent>"


def review(vec: dict[str, Any]) -> dict[str, Any]:
    group, _, version = vec["apiVersion"].rpartition("/")
    gvk = {"group": group, "version": version, "kind": vec["kind"]}
    obj = vec.get("object") or {}
    meta = obj.get("metadata", {}) if isinstance(obj, dict) else {}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": f"vec-{vec.get('name', '')}",
            "kind": gvk,
            "requestKind": gvk,
            "resource": {"group": group, "version": version, "resource": vec["kind"].lower() + "s"},
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "operation": vec["operation"],
            "userInfo": {
                "username": "kubernetes-admin",
                "groups": ["system:masters", "system:authenticated"],
            },
            "object": vec.get("object"),
            "oldObject": vec.get("oldObject"),
        },
    }


def lookup(obj: Any, path: str) -> Any:
    pointer = path if path.startswith("/") else "/" + path.replace(".", "/")
    try:
        return jsonpatch.JsonPointer(pointer).resolve(obj)
    except (jsonpatch.JsonPointerException, KeyError, IndexError, TypeError):
        return ABSENT


@pytest.mark.parametrize("vec", VECTORS, ids=[v.get("name", str(i)) for i, v in enumerate(VECTORS)])
def test_vector_through_http(vec: dict[str, Any]) -> None:
    client: TestClient = _client
    path = "/mutate" if vec["webhook"] == "mutating" else "/validate"
    resp = client.post(path, content=json.dumps(review(vec)), headers=JSON_HEADERS)
    assert resp.status_code == 200
    out = resp.json()["response"]
    expect = vec["expect"]
    assert out["allowed"] is expect["allowed"], out
    message = out.get("status", {}).get("message", "")
    for fragment in expect.get("messageContains", []):
        assert fragment in message
    warnings = "\n".join(out.get("warnings", []))
    for fragment in expect.get("warningsContain", []):
        assert fragment in warnings
    if vec["webhook"] == "mutating":
        if expect.get("noPatch"):
            assert "patch" not in out
        patched = vec["object"]
        if "patch" in out:
            patched = jsonpatch.apply_patch(vec["object"], json.loads(base64.b64decode(out["patch"])))
        for where, value in (expect.get("patchedObjectContains") or {}).items():
            assert lookup(patched, where) == value, where
    else:
        assert "patch" not in out
