"""Real DGDR and DynamoModel manifests through the admission chain (defaulting, then validation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml

import kinds
from conversion.errors import ConversionError
from domain.admission import AdmissionContext, AdmissionSettings, Decision, Operation
from tests.admission_helpers import make_input
from validation import dgdr, dynamomodel

MANIFESTS = Path(__file__).resolve().parents[1] / "fixtures" / "admission" / "manifests"
CTX = AdmissionContext(AdmissionSettings(operator_version="1.1.0"))


def manifest(relative: str) -> dict[str, Any]:
    with (MANIFESTS / relative).open() as fh:
        doc = yaml.safe_load(fh)
    assert isinstance(doc, dict)
    doc["metadata"].setdefault("namespace", "default")
    return doc


def chain(
    obj: dict[str, Any], operation: Operation = "CREATE", old: dict[str, Any] | None = None
) -> tuple[Decision, Decision]:
    """Mutate, apply the patch as the apiserver would, then validate the result."""
    api, kind = obj["apiVersion"], obj["kind"]
    mutated = kinds.default(make_input(api, kind, operation, obj, old), CTX)
    stored = obj
    if mutated.patched is not None:
        ops = [op for op in jsonpatch.make_patch(obj, mutated.patched).patch if op["op"] != "remove"]
        stored = jsonpatch.apply_patch(obj, ops)
    validator = dgdr.validate if kind == "DynamoGraphDeploymentRequest" else dynamomodel.validate
    return mutated, validator(make_input(api, kind, operation, stored, old), CTX)


def test_v1beta1_dgdr_planner_example() -> None:
    obj = manifest("v1beta1/DynamoGraphDeploymentRequest/qwen-planner.yaml")
    mutated, validated = chain(obj)
    assert mutated.patched is not None
    assert mutated.patched["spec"]["image"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.1.0"
    assert {k: v for k, v in mutated.patched["spec"].items() if k != "image"} == obj["spec"]
    assert validated.allowed and validated.warnings == []


def test_v1beta1_dgdr_planner_example_locked_once_deployed() -> None:
    obj = manifest("v1beta1/DynamoGraphDeploymentRequest/qwen-planner.yaml")
    old = {**obj, "status": {"phase": "Deployed"}}
    new = {**obj, "spec": {**obj["spec"], "sla": {"ttft": 400, "itl": 50}}}
    _, validated = chain(new, "UPDATE", old)
    assert validated.message == (
        'DynamoGraphDeploymentRequest.nvidia.com "qwen-planner" is invalid: spec: Forbidden: updates are '
        'forbidden while the resource is in phase "Deployed"; delete and recreate the resource to change its spec'
    )


def alpha_dgdr() -> dict[str, Any]:
    obj = manifest("v1alpha1/DynamoGraphDeploymentRequest/sla-online__profiler-profile_sla_dgdr.yaml")
    try:
        kinds.convert(obj, "nvidia.com/v1beta1")
    except ConversionError:
        pytest.skip("v1alpha1 DGDR conversion is not available")
    return obj


def test_v1alpha1_dgdr_profiler_example_needs_a_runtime_version() -> None:
    # The profiler image tag "my-tag" becomes spec.image on the hub: the runtime-version rule rejects it.
    obj = alpha_dgdr()
    mutated, validated = chain(obj)
    assert mutated.allowed and mutated.patched is None
    assert validated.message == (
        'DynamoGraphDeploymentRequest.nvidia.com "sla-online" is invalid: spec.runtimeVersionOverride: '
        "Required value: is required when spec.image has no parseable semantic-version tag"
    )


def test_v1alpha1_dgdr_profiler_example_with_override() -> None:
    obj = alpha_dgdr()
    obj["spec"]["runtimeVersionOverride"] = "1.1.0"
    _, validated = chain(obj)
    assert validated.allowed, validated.message


def test_v1alpha1_dgdr_without_images_gets_the_default_in_profiler_image() -> None:
    obj = alpha_dgdr()
    del obj["spec"]["profilingConfig"]["profilerImage"]
    del obj["spec"]["deploymentOverrides"]
    mutated, validated = chain(obj)
    assert mutated.patched is not None and mutated.patched["apiVersion"] == "nvidia.com/v1alpha1"
    assert (
        mutated.patched["spec"]["profilingConfig"]["profilerImage"]
        == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.1.0"
    )
    assert validated.allowed, validated.message
    # The answer defaults to itself.
    again = kinds.default(make_input(obj["apiVersion"], obj["kind"], "CREATE", mutated.patched), CTX)
    assert again.patched is None


def test_dynamomodel_lora_example() -> None:
    obj = manifest("v1alpha1/DynamoModel/codelion-recovery-lora.yaml")
    mutated, validated = chain(obj)
    assert mutated.patched is None
    assert validated.allowed and validated.warnings == []
    renamed = {**obj, "spec": {**obj["spec"], "baseModelName": "Qwen/Qwen3-8B"}}
    _, update = chain(renamed, "UPDATE", obj)
    assert update.warnings == ["Changing spec.baseModelName will break endpoint discovery"]
    assert update.message == (
        'DynamoModel.nvidia.com "codelion-recovery-lora" is invalid: spec.baseModelName: Invalid value: '
        '"Qwen/Qwen3-8B": is immutable and cannot be changed after creation'
    )
