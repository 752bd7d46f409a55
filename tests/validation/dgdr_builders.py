"""Hub (v1beta1) DGDR objects, the validating call and the rules' messages, for the DGDR validation tests."""

from __future__ import annotations

from typing import Any

from domain.admission import AdmissionContext, AdmissionSettings, Decision, Operation
from tests.admission_helpers import make_input
from validation import dgdr

HUB = "nvidia.com/v1beta1"
KIND = "DynamoGraphDeploymentRequest"
PREFIX = 'DynamoGraphDeploymentRequest.nvidia.com "req" is invalid: '

HARDWARE = (
    "spec.hardware: Required value: GPU hardware configuration is required when GPU discovery is disabled"
)
SEARCH = (
    'spec.searchStrategy: Invalid value: "thorough": is incompatible with spec.backend "auto"; '
    "set spec.backend to a specific backend (sglang, trtllm, or vllm)"
)
OVERRIDE = (
    "spec.runtimeVersionOverride: Required value: is required when spec.image has no parseable "
    "semantic-version tag"
)
NO_DISCOVERY = AdmissionSettings(gpu_discovery=False)


def obj(
    spec: dict[str, Any], phase: str | None = None, deleting: bool = False, **meta: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "req", "namespace": "default", **meta}
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    out: dict[str, Any] = {"apiVersion": HUB, "kind": KIND, "metadata": metadata, "spec": spec}
    if phase is not None:
        out["status"] = {"phase": phase}
    return out


def run(
    operation: Operation,
    new: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
    settings: AdmissionSettings | None = None,
) -> Decision:
    ctx = AdmissionContext(settings or AdmissionSettings())
    return dgdr.validate(make_input(HUB, KIND, operation, new, old), ctx)


def base(**extra: Any) -> dict[str, Any]:
    return {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", **extra}


def forbidden_in(phase: str) -> str:
    return (
        f'spec: Forbidden: updates are forbidden while the resource is in phase "{phase}"; '
        "delete and recreate the resource to change its spec"
    )
