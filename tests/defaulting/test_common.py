"""Helpers shared by the defaulters."""

from __future__ import annotations

import copy
from typing import Any

from defaulting.common import object_namespace, with_main_container_marshal_fields


def alpha(services: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "spec": {"services": services},
    }


def test_main_container_marshal_fields() -> None:
    obj = alpha(
        {
            "A": {"extraPodSpec": {"mainContainer": {"image": "i"}}},
            "B": {"extraPodSpec": {"mainContainer": {"name": "x", "resources": {"limits": {"cpu": "1"}}}}},
            "C": {"extraPodSpec": {}},
            "D": None,
            "E": {"replicas": 1},
        }
    )
    before = copy.deepcopy(obj)
    out = with_main_container_marshal_fields(obj)
    assert obj == before
    assert out["spec"]["services"]["A"]["extraPodSpec"]["mainContainer"] == {
        "image": "i",
        "name": "",
        "resources": {},
    }
    for name in "BCDE":
        assert out["spec"]["services"][name] is obj["spec"]["services"][name]
    assert with_main_container_marshal_fields(out) is out


def test_main_container_marshal_fields_without_services() -> None:
    for obj in ({"spec": {}}, {}, alpha(None), alpha([])):
        assert with_main_container_marshal_fields(obj) is obj


def test_object_namespace() -> None:
    assert object_namespace({"metadata": {"namespace": "a"}}) == "a"
    assert object_namespace({"metadata": {"namespace": None}}) == ""
    assert object_namespace({"metadata": None}) == ""
    assert object_namespace(None) == ""
