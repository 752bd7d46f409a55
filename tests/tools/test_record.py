"""tools/record/record.py: how an operator's answer becomes a vector's expected value (the parts
that need no Go; tests/tools/test_repin.py runs the recorder itself)."""

from __future__ import annotations

from typing import Any

from tools.record.record import denial_fragments, expected_object, patch_members, split_cause


def test_a_field_error_with_a_printable_value_is_kept_whole() -> None:
    assert split_cause("spec.backendFramework", 'Invalid value: "trtllm": is immutable') == [
        'spec.backendFramework: Invalid value: "trtllm": is immutable'
    ]
    assert split_cause("spec.replicas", "Invalid value: -1: must be positive") == [
        "spec.replicas: Invalid value: -1: must be positive"
    ]
    assert split_cause("spec.components", "Forbidden: components added: [a]") == [
        "spec.components: Forbidden: components added: [a]"
    ]


def test_a_value_go_prints_as_a_struct_is_left_out() -> None:
    message = (
        "Invalid value: v1beta1.MultinodeSpec{NodeCount:2, Leader:(*v1beta1.Role)(0xc0001)}: cannot change"
    )
    assert split_cause("spec.components[0].multinode", message) == [
        "spec.components[0].multinode: Invalid value",
        "cannot change",
    ]
    braces = 'Invalid value: map[string]string{"a: b":"c"}: no'
    assert split_cause("spec.x", braces) == ["spec.x: Invalid value", "no"]


def test_a_denial_keeps_its_first_three_field_errors() -> None:
    causes = [{"field": f"spec.f{i}", "message": "Required value: is required"} for i in range(5)]
    assert denial_fragments({"message": "x", "details": {"causes": causes}}) == [
        f"spec.f{i}: Required value: is required" for i in range(3)
    ]
    assert denial_fragments({"message": "not a field error"}) == ["not a field error"]


def test_patch_members_leave_out_status_structures_and_the_origin_version() -> None:
    patch: list[dict[str, Any]] = [
        {"op": "add", "path": "/status", "value": {"state": ""}},
        {
            "op": "add",
            "path": "/metadata/annotations/nvidia.com~1dynamo-operator-origin-version",
            "value": "1.1.0",
        },
        {"op": "add", "path": "/metadata/annotations/nvidia.com~1workload-provider", "value": "component"},
        {"op": "add", "path": "/spec/x/resources", "value": {}},
        {"op": "remove", "path": "/spec/y"},
        {"op": "replace", "path": "/spec/image", "value": "i"},
    ]
    assert patch_members(patch) == {
        "/metadata/annotations/nvidia.com~1workload-provider": "component",
        "/spec/image": "i",
    }


def test_a_converted_object_is_kept_without_go_artefacts_metadata_last() -> None:
    converted = {
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "apiVersion": "nvidia.com/v1beta1",
        "metadata": {"name": "a", "creationTimestamp": None, "generation": 1},
        "spec": {"replicas": 1, "dgdRef": {"name": "g", "componentName": "c"}},
        "status": {"replicas": 0, "selector": "app=x"},
    }
    out = expected_object(converted)
    assert list(out) == ["apiVersion", "kind", "spec", "status", "metadata"]
    assert out["spec"] == {"dgdRef": {"componentName": "c", "name": "g"}, "replicas": 1}
    assert list(out["spec"]["dgdRef"]) == ["componentName", "name"]
    assert out["status"] == {"selector": "app=x"}  # v1beta1 DGDSA status.replicas 0: a Go artefact
    assert out["metadata"] == {"generation": 1, "name": "a"}
