"""DynamoGraphDeploymentRequest validation of v1alpha1 requests, through the hub."""

from __future__ import annotations

from typing import Any

import pytest

import kinds
from conversion.errors import ConversionError
from domain.admission import AdmissionContext, AdmissionSettings, Decision, Operation
from tests.admission_helpers import make_input
from tests.validation.dgdr_builders import (
    HARDWARE,
    HUB,
    KIND,
    NO_DISCOVERY,
    OVERRIDE,
    PREFIX,
    SEARCH,
    base,
    forbidden_in,
    obj,
)
from validation import dgdr

# --- v1alpha1 requests go through the hub -------------------------------------------------------

ALPHA = "nvidia.com/v1alpha1"


def alpha(spec: dict[str, Any], state: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": ALPHA,
        "kind": KIND,
        "metadata": {"name": "req", "namespace": "default"},
    }
    out["spec"] = spec
    if state is not None:
        out["status"] = {"state": state}
    return out


def alpha_run(operation: Operation, new: dict[str, Any], old: dict[str, Any] | None = None) -> Decision:
    try:
        kinds.convert(new, HUB)
    except ConversionError:
        pytest.skip("v1alpha1 DGDR conversion is not available")
    return dgdr.validate(make_input(ALPHA, KIND, operation, new, old), AdmissionContext(AdmissionSettings()))


def test_v1alpha1_profiler_image_is_the_hub_image() -> None:
    legacy = {"model": "m", "backend": "vllm", "profilingConfig": {"profilerImage": "p:my-tag"}}
    assert alpha_run("CREATE", alpha(legacy)).message == PREFIX + OVERRIDE
    assert alpha_run("CREATE", alpha({**legacy, "runtimeVersionOverride": "1.0.0"})).allowed
    semver = {"model": "m", "backend": "vllm", "profilingConfig": {"profilerImage": "p:1.0.0"}}
    assert alpha_run("CREATE", alpha(semver)).allowed


def test_v1alpha1_workers_image_is_the_fallback_hub_image() -> None:
    spec = {"model": "m", "backend": "vllm", "deploymentOverrides": {"workersImage": "w:latest"}}
    assert alpha_run("CREATE", alpha(spec)).message == PREFIX + OVERRIDE


def test_v1alpha1_hardware_rule() -> None:
    spec = {"model": "m", "backend": "vllm", "profilingConfig": {"profilerImage": "p:1.0.0"}}
    d = dgdr.validate(make_input(ALPHA, KIND, "CREATE", alpha(spec)), AdmissionContext(NO_DISCOVERY))
    assert d.message == PREFIX + HARDWARE
    assert alpha_run("CREATE", alpha(spec)).allowed


def test_v1alpha1_hub_only_fields_from_the_preservation_annotation() -> None:
    # Stored hub-only fields (searchStrategy, hardware) travel in the v1alpha1 object's
    # preservation annotation; the rules see them after conversion.
    hub = obj(base(backend="auto", searchStrategy="thorough", hardware={"gpuSku": "h100_sxm"}))
    as_alpha = kinds.convert(hub, ALPHA)
    assert as_alpha["spec"].get("searchStrategy") is None
    assert alpha_run("CREATE", as_alpha).message == PREFIX + SEARCH
    d = dgdr.validate(make_input(ALPHA, KIND, "CREATE", as_alpha), AdmissionContext(NO_DISCOVERY))
    assert d.message == PREFIX + SEARCH


def test_v1alpha1_deferred_update() -> None:
    old = alpha({"model": "m", "backend": "vllm", "autoApply": False}, "Ready")
    new = alpha(
        {"model": "m", "backend": "vllm", "autoApply": False, "runtimeVersionOverride": "1.2.0"}, "Ready"
    )
    assert alpha_run("UPDATE", new, old).allowed
    changed = alpha({"model": "m2", "backend": "vllm", "autoApply": False}, "Ready")
    assert alpha_run("UPDATE", changed, old).message == PREFIX + forbidden_in("Ready")


def test_v1alpha1_phase_lock_uses_the_converted_phase() -> None:
    old_spec = {"model": "m", "backend": "vllm"}
    new_spec = {"model": "other", "backend": "vllm"}
    assert alpha_run(
        "UPDATE", alpha(new_spec), alpha(old_spec, "Profiling")
    ).message == PREFIX + forbidden_in("Profiling")
    assert alpha_run("UPDATE", alpha(new_spec), alpha(old_spec, "Pending")).allowed


def test_conversion_failure_is_a_bad_request() -> None:
    # profilingConfig.config must decode as a JSON object: the conversion fails on a number.
    bad = alpha({"model": "m", "profilingConfig": {"config": 5}})
    with pytest.raises(ConversionError) as info:
        kinds.convert(bad, HUB)
    d = dgdr.validate(make_input(ALPHA, KIND, "CREATE", bad), AdmissionContext())
    assert d.status == {"code": 400, "message": str(info.value)}
    assert str(info.value).startswith("failed to parse ProfilingConfig.Config: ")
    # Hub objects never go through the converter.
    assert dgdr.validate(make_input(HUB, KIND, "CREATE", obj({"model": "m"})), AdmissionContext()).allowed
