"""DynamoGraphDeploymentRequest validation on UPDATE: ratcheted rules, the phase lock, the update rules' properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.admission import AdmissionSettings, Operation
from tests.defaulting.shapes import DGDR_SPEC, members
from tests.validation.dgdr_builders import (
    HARDWARE,
    NO_DISCOVERY,
    OVERRIDE,
    PREFIX,
    SEARCH,
    base,
    forbidden_in,
    obj,
    run,
)
from validation import dgdr

# --- UPDATE: ratchets ------------------------------------------------------------------------


def test_update_runs_only_update_rules_hardware_ratchet() -> None:
    # Already missing hardware before: not newly required.
    assert run("UPDATE", obj(base(model="b")), obj(base()), NO_DISCOVERY).allowed
    # Hardware removed: newly required.
    d = run("UPDATE", obj(base()), obj(base(hardware={"gpuSku": "h100_sxm"})), NO_DISCOVERY)
    assert d.message == PREFIX + HARDWARE


def test_search_ratchet() -> None:
    bad = base(backend="auto", searchStrategy="thorough")
    assert run("UPDATE", obj({**bad, "model": "other"}), obj(bad)).allowed
    d = run("UPDATE", obj(bad), obj(base(backend="auto", searchStrategy="rapid")))
    assert d.message == PREFIX + SEARCH


UPDATE_OVERRIDE_CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("unchanged legacy image", base(image="p:my-tag", model="x"), base(image="p:my-tag"), True),
    ("image changed to another legacy tag", base(image="p:other"), base(image="p:my-tag"), False),
    ("image newly set", base(image="p:my-tag"), base(), False),
    (
        "override removed",
        base(image="p:my-tag"),
        base(image="p:my-tag", runtimeVersionOverride="1.0.0"),
        False,
    ),
    ("override added", base(image="p:my-tag", runtimeVersionOverride="1.0.0"), base(image="p:my-tag"), True),
    (
        "autoApply activated",
        base(image="p:my-tag", autoApply=True),
        base(image="p:my-tag", autoApply=False),
        False,
    ),
    ("autoApply unset after false", base(image="p:my-tag"), base(image="p:my-tag", autoApply=False), False),
    (
        "autoApply stays false",
        base(image="p:my-tag", autoApply=False, model="y"),
        base(image="p:my-tag", autoApply=False),
        True,
    ),
    ("autoApply set from unset", base(image="p:my-tag", autoApply=True), base(image="p:my-tag"), True),
    ("semver image change", base(image="p:1.2.0"), base(image="p:my-tag"), True),
]


@pytest.mark.parametrize(
    ("new", "old", "allowed"),
    [c[1:] for c in UPDATE_OVERRIDE_CASES],
    ids=[c[0] for c in UPDATE_OVERRIDE_CASES],
)
def test_runtime_version_override_ratchet(new: dict[str, Any], old: dict[str, Any], allowed: bool) -> None:
    d = run("UPDATE", obj(new, phase="Pending"), obj(old, phase="Pending"))
    assert d.allowed is allowed
    if not allowed:
        assert d.message == PREFIX + OVERRIDE


# --- UPDATE: phase lock ----------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["Profiling", "Ready", "Deploying", "Deployed"])
def test_phase_lock_forbids_spec_changes(phase: str) -> None:
    d = run("UPDATE", obj(base(model="other"), phase=phase), obj(base(), phase=phase))
    assert d.message == PREFIX + forbidden_in(phase)
    assert d.status["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": forbidden_in(phase).removeprefix("spec: "),
            "field": "spec",
        }
    ]


@pytest.mark.parametrize("phase", ["Pending", "Failed", "", None, "Unknown"])
def test_mutable_phases(phase: str | None) -> None:
    assert run("UPDATE", obj(base(model="other")), obj(base(), phase=phase)).allowed


def test_phase_comes_from_old_object() -> None:
    # The new object's status is irrelevant.
    assert run("UPDATE", obj(base(model="x"), phase="Deployed"), obj(base(), phase="Pending")).allowed
    assert not run("UPDATE", obj(base(model="x"), phase="Pending"), obj(base(), phase="Deployed")).allowed


@pytest.mark.parametrize("phase", ["Profiling", "Deployed"])
def test_phase_lock_allows_metadata_and_status_only_updates(phase: str) -> None:
    new = obj(base(), phase="Failed", labels={"a": "b"})
    assert run("UPDATE", new, obj(base(), phase=phase)).allowed


SEMANTIC_CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("empty string equals absent", base(image=""), base(), True),
    ("null equals absent", base(autoApply=None, hardware=None), base(), True),
    ("unknown fields are ignored", base(unknownField=1), base(), True),
    ("int equals float", base(hardware={"vramMb": 80}), base(hardware={"vramMb": 80.0}), True),
    ("empty pointer struct differs from absent", base(hardware={}), base(), False),
    ("pointer to zero differs from absent", base(hardware={"rdma": False}), base(hardware={}), False),
    (
        "mocker enabled false equals absent",
        base(features={"mocker": {"enabled": False}}),
        base(features={"mocker": {}}),
        True,
    ),
    ("modelCache empty strings", base(modelCache={"pvcName": ""}), base(modelCache={}), True),
    (
        "opaque planner bool vs number",
        base(features={"planner": {"a": True}}),
        base(features={"planner": {"a": 1}}),
        False,
    ),
    (
        "opaque dgd key order",
        base(overrides={"dgd": {"a": 1, "b": 2}}),
        base(overrides={"dgd": {"b": 2, "a": 1}}),
        True,
    ),
    ("opaque dgd null equals absent", base(overrides={"dgd": None}), base(overrides={}), True),
    (
        "profiling job empty containers",
        base(overrides={"profilingJob": {"template": {"spec": {"containers": []}}}}),
        base(overrides={"profilingJob": {}}),
        True,
    ),
    (
        "profiling job change",
        base(overrides={"profilingJob": {"backoffLimit": 1}}),
        base(overrides={"profilingJob": {"backoffLimit": 2}}),
        False,
    ),
    ("sla optimizationType empty pointer", base(sla={"optimizationType": ""}), base(sla={}), False),
    ("searchStrategy change", base(searchStrategy="thorough"), base(searchStrategy="rapid"), False),
]


@pytest.mark.parametrize(
    ("new", "old", "allowed"), [c[1:] for c in SEMANTIC_CASES], ids=[c[0] for c in SEMANTIC_CASES]
)
def test_phase_lock_uses_semantic_equality(new: dict[str, Any], old: dict[str, Any], allowed: bool) -> None:
    d = run("UPDATE", obj(new, phase="Deployed"), obj(old, phase="Deployed"))
    assert d.allowed is allowed, d.message


DEFERRED_CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], bool]] = [
    (
        "Ready: choose override",
        "Ready",
        base(autoApply=False, runtimeVersionOverride="1.2.0"),
        base(autoApply=False),
        True,
    ),
    ("Ready: activate autoApply", "Ready", base(autoApply=True), base(autoApply=False), True),
    ("Ready: unset autoApply", "Ready", base(), base(autoApply=False), True),
    (
        "Ready: override and activation",
        "Ready",
        base(autoApply=True, runtimeVersionOverride="1.2.0"),
        base(autoApply=False, runtimeVersionOverride="1.0.0"),
        True,
    ),
    (
        "Ready: clear override",
        "Ready",
        base(autoApply=False),
        base(autoApply=False, runtimeVersionOverride="1.0.0"),
        True,
    ),
    ("Ready: other field too", "Ready", base(autoApply=True, model="m2"), base(autoApply=False), False),
    (
        "Profiling: choose override",
        "Profiling",
        base(autoApply=False, runtimeVersionOverride="1.2.0"),
        base(autoApply=False),
        True,
    ),
    ("Profiling: activate autoApply", "Profiling", base(autoApply=True), base(autoApply=False), False),
    ("Profiling: unset autoApply", "Profiling", base(), base(autoApply=False), False),
    (
        "Deploying: choose override",
        "Deploying",
        base(autoApply=False, runtimeVersionOverride="1.2.0"),
        base(autoApply=False),
        False,
    ),
    (
        "Deployed: choose override",
        "Deployed",
        base(autoApply=False, runtimeVersionOverride="1.2.0"),
        base(autoApply=False),
        False,
    ),
    ("old autoApply unset", "Ready", base(runtimeVersionOverride="1.2.0"), base(), False),
    (
        "old autoApply true",
        "Ready",
        base(autoApply=True, runtimeVersionOverride="1.2.0"),
        base(autoApply=True),
        False,
    ),
    ("Ready: deactivate is a change", "Ready", base(autoApply=False), base(autoApply=True), False),
]


@pytest.mark.parametrize(
    ("phase", "new", "old", "allowed"), [c[1:] for c in DEFERRED_CASES], ids=[c[0] for c in DEFERRED_CASES]
)
def test_deferred_update_exception(
    phase: str, new: dict[str, Any], old: dict[str, Any], allowed: bool
) -> None:
    d = run("UPDATE", obj(new, phase=phase), obj(old, phase=phase))
    assert d.allowed is allowed, d.message
    if not allowed:
        assert d.message == PREFIX + forbidden_in(phase)


def test_deferred_activation_still_ratchets_the_image_rule() -> None:
    old = obj(base(image="p:my-tag", autoApply=False), phase="Ready")
    new = obj(base(image="p:my-tag", autoApply=True), phase="Ready")
    assert run("UPDATE", new, old).message == PREFIX + OVERRIDE
    fixed = obj(base(image="p:my-tag", autoApply=True, runtimeVersionOverride="1.1.0"), phase="Ready")
    assert run("UPDATE", fixed, old).allowed


def test_update_error_order() -> None:
    old = obj(base(hardware={"gpuSku": "h100_sxm"}, image="p:1.0.0"), phase="Deployed")
    new = obj(base(backend="auto", searchStrategy="thorough", image="p:my-tag"), phase="Deployed")
    d = run("UPDATE", new, old, NO_DISCOVERY)
    assert d.message == PREFIX + "[" + ", ".join([HARDWARE, SEARCH, OVERRIDE, forbidden_in("Deployed")]) + "]"


# --- properties of the update rules ---------------------------------------------------------------

specs = st.fixed_dictionaries(
    {},
    optional={
        "model": st.sampled_from(["", "m", "Qwen/Qwen3-0.6B"]),
        "backend": st.sampled_from(["", "auto", "vllm", "sglang"]),
        "searchStrategy": st.sampled_from(["", "rapid", "thorough"]),
        "image": st.sampled_from(["", "p:1.0.0", "p:my-tag", "p"]),
        "runtimeVersionOverride": st.sampled_from(["", "1.0.0"]),
        "autoApply": st.none() | st.booleans(),
        "hardware": st.none()
        | st.fixed_dictionaries({}, optional={"gpuSku": st.just("h100_sxm"), "totalGpus": st.just(8)}),
        "sla": st.fixed_dictionaries({}, optional={"ttft": st.sampled_from([100, 100.0, 200])}),
    },
)
phases = st.sampled_from(["", "Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed"])
gates = st.sampled_from([AdmissionSettings(), NO_DISCOVERY])


@given(specs, phases, gates)
def test_unchanged_spec_is_always_updatable(
    spec: dict[str, Any], phase: str, settings: AdmissionSettings
) -> None:
    d = run("UPDATE", obj(spec, labels={"new": "label"}), obj(dict(spec), phase=phase), settings)
    assert d.allowed, d.message


@given(specs, specs, phases, gates)
def test_update_errors_are_ratcheted_create_errors(
    new: dict[str, Any], old: dict[str, Any], phase: str, settings: AdmissionSettings
) -> None:
    create = {str(e) for e in dgdr.create_errors(new, settings)}
    update = [str(e) for e in dgdr.update_errors(new, old, phase, settings)]
    lock = forbidden_in(phase)
    # Every update error other than the phase lock is also a create error of the new spec.
    assert {e for e in update if e != lock} <= create
    # Starting from a clean spec, the ratchets report exactly the create errors of the new spec.
    if not dgdr.create_errors(old, settings):
        assert [e for e in update if e != lock] == [str(e) for e in dgdr.create_errors(new, settings)]
    # The phase lock only ever fires in an immutable phase.
    if lock in update:
        assert phase in dgdr.IMMUTABLE_PHASES


@given(members(DGDR_SPEC), members(DGDR_SPEC), st.sampled_from(["CREATE", "UPDATE"]), phases, gates)
def test_any_shape_is_answered(
    new: dict[str, Any], old: dict[str, Any], operation: Operation, phase: str, settings: AdmissionSettings
) -> None:
    d = run(operation, obj(new), obj(old, phase=phase) if operation == "UPDATE" else None, settings)
    assert d.allowed or (d.code == 422 and d.message.startswith(PREFIX))
