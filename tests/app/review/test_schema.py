"""Type check against the CRD skeletons, and its use when a handler cannot process an object."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

import kinds
from app.review.schema import first_type_error, skeleton_for
from domain.admission import AdmissionContext, AdmissionInput, Decision
from tests.app.conftest import JSON_HEADERS, admission_review, conversion_review

B1 = "nvidia.com/v1beta1"


def dgd(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": B1, "kind": "DynamoGraphDeployment", "metadata": {"name": "g"}, "spec": spec}


def test_skeletons_exist_for_every_served_kind_and_version() -> None:
    for kind in (
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
    ):
        for version in ("v1alpha1", "v1beta1"):
            assert skeleton_for(f"nvidia.com/{version}", kind) is not None
    assert skeleton_for("nvidia.com/v1alpha1", "DynamoModel") is not None
    assert skeleton_for("nvidia.com/v1", "Nope") is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"components": [{"name": "w", "replicas": "two"}]},
            "spec.components[0].replicas: expected integer, got string",
        ),
        ({"components": {"w": {}}}, "spec.components: expected array, got object"),
        ({"components": [{"name": 5}]}, "spec.components[0].name: expected string, got integer"),
        (
            {
                "components": [
                    {"name": "w", "podTemplate": {"spec": {"containers": [{"name": "main", "env": "x"}]}}}
                ]
            },
            "spec.components[0].podTemplate.spec.containers[0].env: expected array, got string",
        ),
    ],
)
def test_wrong_types_are_named(spec: dict[str, Any], expected: str) -> None:
    assert first_type_error(dgd(**spec), B1, "DynamoGraphDeployment") == expected


def test_valid_objects_pass() -> None:
    obj = dgd(
        components=[
            {
                "name": "w",
                "replicas": 2,
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "resources": {"limits": {"nvidia.com/gpu": "1", "cpu": 2}},
                                "ports": [{"containerPort": 8000}],
                            }
                        ]
                    }
                },
            }
        ]
    )
    assert first_type_error(obj, B1, "DynamoGraphDeployment") is None
    assert first_type_error(dgd(components=None), B1, "DynamoGraphDeployment") is None  # null is fine
    assert first_type_error(dgd(unknownField={"x": 1}), B1, "DynamoGraphDeployment") is None


@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_a_mistyped_object_is_a_400_before_any_rule_runs(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    def never(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
        raise AssertionError("rules must not see an object that fails typed decoding")

    monkeypatch.setattr(kinds, "validate", never)
    review = admission_review(dgd(components=[{"name": "w", "replicas": "two"}]))
    out = client.post(path, content=json.dumps(review), headers=JSON_HEADERS).json()["response"]
    assert out["allowed"] is False
    assert out["status"]["code"] == 400
    assert (
        out["status"]["message"] == "request.object.spec.components[0].replicas: expected integer, got string"
    )


def test_old_object_is_examined_when_a_handler_fails(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def crash(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
        calls.append(inp.operation)
        raise TypeError("bool is not an int")

    monkeypatch.setattr(kinds, "validate", crash)
    review = admission_review(
        dgd(components=[{"name": "w"}]),
        operation="UPDATE",
        old=dgd(components=[{"name": "w", "replicas": True}]),
    )
    out = client.post("/validate", content=json.dumps(review), headers=JSON_HEADERS).json()["response"]
    assert calls == ["UPDATE"]  # the stored object is not checked up front
    assert out["status"]["code"] == 400
    assert (
        out["status"]["message"]
        == "request.oldObject.spec.components[0].replicas: expected integer, got boolean"
    )


def test_per_kind_path_guard_answers_before_the_type_check(client: TestClient) -> None:
    obj = dgd(components=[{"name": "w", "replicas": "two"}])
    obj["apiVersion"] = "nvidia.com/v1alpha1"
    review = admission_review(obj)
    out = client.post(
        "/validate/nvidia.com/v1beta1/dynamographdeployments",
        content=json.dumps(review),
        headers=JSON_HEADERS,
    ).json()["response"]
    assert out["allowed"] is False
    assert "admission requires nvidia.com/v1beta1" in out["status"]["message"]


def test_conversion_of_a_mistyped_object_fails_naming_object_and_field(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        raise AssertionError("a converter must not see an object that fails typed decoding")

    monkeypatch.setattr(kinds, "convert", never)
    bad = dgd(components=[{"name": "w", "replicas": []}])
    out = client.post(
        "/convert", content=json.dumps(conversion_review([bad], "nvidia.com/v1alpha1")), headers=JSON_HEADERS
    ).json()["response"]
    assert out["result"]["status"] == "Failure"
    assert out["result"]["message"] == (
        "spec.components[0].replicas: expected integer, got array (objects[0] DynamoGraphDeployment g)"
    )
