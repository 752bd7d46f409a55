"""Admission and conversion through the real app: AdmissionReview v1 and v1beta1 envelopes
for every kind, patches that apply to what was sent, reinvocation, and ConversionReviews of
1, 50 and 500 mixed-version objects."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from starlette.testclient import TestClient

import kinds
from tests.app.conftest import JSON_HEADERS, admission_review, conversion_review

ROOT = Path(__file__).resolve().parents[3]
MANIFESTS = {
    p.stem: yaml.safe_load(p.read_text()) for p in sorted((ROOT / "examples/manifests").glob("*.yaml"))
}
ENVELOPES = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]


def _post(client: TestClient, path: str, doc: Any) -> Any:
    resp = client.post(path, content=json.dumps(doc), headers=JSON_HEADERS)
    assert resp.status_code == 200, resp.text
    return resp.json()


def _mutate(client: TestClient, obj: dict[str, Any], api_version: str) -> tuple[dict[str, Any], Any]:
    out = _post(client, "/mutate", admission_review(obj, api_version=api_version, uid="m-1"))
    assert out["apiVersion"] == api_version
    resp = out["response"]
    assert resp["uid"] == "m-1" and resp["allowed"] is True
    if "patch" not in resp:
        assert "patchType" not in resp
        return obj, resp
    assert resp["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(resp["patch"]))
    assert ops and all(op["op"] in ("add", "replace", "copy", "move", "test") for op in ops)
    return jsonpatch.apply_patch(obj, ops), resp


@pytest.mark.parametrize("api_version", ENVELOPES)
@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_every_kind_mutates_then_validates(client: TestClient, name: str, api_version: str) -> None:
    obj = MANIFESTS[name]
    mutated, _ = _mutate(client, obj, api_version)
    assert mutated["apiVersion"] == obj["apiVersion"] and mutated["kind"] == obj["kind"]
    # Reinvocation: defaulting what was already defaulted changes nothing.
    again, resp = _mutate(client, mutated, api_version)
    assert "patch" not in resp, f"second pass patched {name}"
    assert again == mutated
    out = _post(client, "/validate", admission_review(mutated, api_version=api_version, uid="v-1"))
    assert out["apiVersion"] == api_version
    resp = out["response"]
    assert resp["uid"] == "v-1"
    assert "patch" not in resp
    assert resp["allowed"] is True, resp


@pytest.mark.parametrize("api_version", ENVELOPES)
def test_update_of_an_immutable_field_is_denied_with_warning(client: TestClient, api_version: str) -> None:
    review = json.loads((ROOT / "examples/admission/dgd-v1beta1-update-backend.json").read_text())
    review["apiVersion"] = api_version
    out = _post(client, "/validate", review)
    resp = out["response"]
    assert out["apiVersion"] == api_version
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 422
    assert resp["status"]["message"].startswith('DynamoGraphDeployment.nvidia.com "llama-agg" is invalid: ')
    assert "spec.backendFramework" in resp["status"]["message"]
    assert resp["warnings"]


def test_delete_is_allowed_without_checks(client: TestClient) -> None:
    obj = MANIFESTS["dgd-agg-v1beta1"]
    review = admission_review(None, operation="DELETE")
    review["request"]["kind"] = {"group": "nvidia.com", "version": "v1beta1", "kind": "DynamoGraphDeployment"}
    review["request"]["oldObject"] = obj
    review["request"]["object"] = None
    for path in ("/validate", "/mutate"):
        resp = _post(client, path, review)["response"]
        assert resp["allowed"] is True and "patch" not in resp


# ------------------------------------------------------------------ conversion batches


def _mixed_objects(count: int) -> list[dict[str, Any]]:
    convertible = [m for m in MANIFESTS.values() if m["kind"] != "DynamoModel"]
    objects = []
    for i in range(count):
        obj = copy.deepcopy(convertible[i % len(convertible)])
        obj["metadata"] = {
            **obj["metadata"],
            "name": f"{obj['metadata']['name']}-{i}",
            "uid": f"uid-{i}",
            "resourceVersion": str(1000 + i),
            "generation": 1,
        }
        objects.append(obj)
    return objects


@pytest.mark.parametrize("desired", ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"])
@pytest.mark.parametrize("count", [1, 50, 500])
def test_conversion_batches(client: TestClient, count: int, desired: str) -> None:
    objects = _mixed_objects(count)
    resp = _post(client, "/convert", conversion_review(objects, desired))["response"]
    assert resp["result"] == {"status": "Success"}
    converted = resp["convertedObjects"]
    assert len(converted) == count
    for src, dst in zip(objects, converted, strict=True):
        assert dst["apiVersion"] == desired and dst["kind"] == src["kind"]
        meta_src = {k: v for k, v in src["metadata"].items() if k not in ("labels", "annotations")}
        meta_dst = {k: v for k, v in dst["metadata"].items() if k not in ("labels", "annotations")}
        assert meta_src == meta_dst
        expected = src if src["apiVersion"] == desired else kinds.convert(src, desired)
        assert dst == expected


def test_one_bad_object_fails_the_whole_batch(client: TestClient) -> None:
    objects = _mixed_objects(50)
    objects[37] = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "dup", "namespace": "ns"},
        "spec": {"components": [{"name": "a"}, {"name": "a"}]},
    }
    resp = _post(client, "/convert", conversion_review(objects, "nvidia.com/v1alpha1"))["response"]
    assert resp["result"]["status"] == "Failure"
    assert resp["result"]["message"].startswith('duplicate component name "a" in spec.components')
    assert "objects[37] DynamoGraphDeployment ns/dup" in resp["result"]["message"]
    assert not resp.get("convertedObjects")
