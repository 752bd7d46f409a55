from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from app.server.routes import AppState, create_app
from app.server.settings import Settings
from domain.admission import AdmissionContext

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / name).read_text())


def make_client(**overrides: Any) -> TestClient:
    settings = Settings(**overrides)
    state = AppState(settings=settings, admission=AdmissionContext(settings=settings.admission_settings()))
    return TestClient(create_app(state))


@pytest.fixture
def client() -> Iterator[TestClient]:
    with make_client() as c:
        yield c


def admission_review(
    obj: dict[str, Any] | None = None,
    *,
    operation: str = "CREATE",
    uid: str = "uid-1",
    api_version: str = "admission.k8s.io/v1",
    old: dict[str, Any] | None = None,
) -> dict[str, Any]:
    obj = (
        copy.deepcopy(obj)
        if obj is not None
        else {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": {"name": "a", "namespace": "ns"},
            "spec": {"replicas": 1, "dgdRef": {"name": "g", "componentName": "w"}},
        }
    )
    group, _, version = str(obj.get("apiVersion", "nvidia.com/v1beta1")).rpartition("/")
    gvk = {"group": group, "version": version, "kind": obj.get("kind", "")}
    return {
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": gvk,
            "resource": {"group": group, "version": version, "resource": "x"},
            "name": "a",
            "namespace": "ns",
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "object": obj,
            "oldObject": old,
        },
    }


def conversion_review(
    objects: list[Any], desired: str = "nvidia.com/v1beta1", uid: str = "cuid"
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
    }


JSON_HEADERS = {"Content-Type": "application/json"}
