"""DynamoComponentDeployment defaulting: spec.name from metadata.name on CREATE only."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from defaulting import dcd
from domain.admission import Operation


def component(spec: dict[str, Any] | None, name: str | None = "frontend") -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": "default"}
    if name is not None:
        meta["name"] = name
    out: dict[str, Any] = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": meta,
    }
    if spec is not None:
        out["spec"] = spec
    return out


@pytest.mark.parametrize(
    ("obj", "operation", "expected_name"),
    [
        (component({"type": "frontend"}), "CREATE", "frontend"),
        (component({"name": "", "type": "frontend"}), "CREATE", "frontend"),
        (component({"name": None}), "CREATE", "frontend"),
        (component(None), "CREATE", "frontend"),
        (component({"name": "Frontend"}), "CREATE", "Frontend"),
        (component({"type": "frontend"}, name=""), "CREATE", None),
        (component({"type": "frontend"}, name=None), "CREATE", None),
        (component({"type": "frontend"}), "UPDATE", None),
    ],
)
def test_spec_name_defaulting(obj: dict[str, Any], operation: Operation, expected_name: str | None) -> None:
    before = copy.deepcopy(obj)
    out = dcd.default_hub(obj, operation)
    assert obj == before
    if expected_name is None or (obj.get("spec") or {}).get("name") == expected_name:
        assert out is obj
    else:
        assert out["spec"]["name"] == expected_name
        assert {k: v for k, v in out["spec"].items() if k != "name"} == {
            k: v for k, v in (obj.get("spec") or {}).items() if k != "name"
        }
        assert dcd.default_hub(out, operation) is out
