"""DynamoGraphDeploymentRequest validation: create rules, ratcheted update rules, phase lock."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kinds
from conversion.errors import ConversionError
from domain.admission import AdmissionContext, AdmissionSettings, Decision, Operation
from tests.admission_helpers import make_input
from tests.defaulting.shapes import DGDR_SPEC, members
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


# --- CREATE --------------------------------------------------------------------------------

CREATE_CASES: list[tuple[str, dict[str, Any], AdmissionSettings, list[str]]] = [
    ("minimal", base(), AdmissionSettings(), []),
    ("empty spec", {}, AdmissionSettings(), []),
    ("discovery off without hardware", base(), NO_DISCOVERY, [HARDWARE]),
    ("discovery off, hardware null", base(hardware=None), NO_DISCOVERY, [HARDWARE]),
    ("discovery off, empty hardware", base(hardware={}), NO_DISCOVERY, [HARDWARE]),
    ("discovery off, empty gpuSku", base(hardware={"gpuSku": ""}), NO_DISCOVERY, [HARDWARE]),
    ("discovery off, totalGpus only", base(hardware={"totalGpus": 8}), NO_DISCOVERY, [HARDWARE]),
    ("discovery off, gpuSku", base(hardware={"gpuSku": "h100_sxm"}), NO_DISCOVERY, []),
    ("discovery off, vramMb zero", base(hardware={"vramMb": 0}), NO_DISCOVERY, []),
    ("discovery off, numGpusPerNode", base(hardware={"numGpusPerNode": 8}), NO_DISCOVERY, []),
    ("discovery on ignores hardware", base(), AdmissionSettings(gpu_discovery=True), []),
    ("thorough with auto", base(backend="auto", searchStrategy="thorough"), AdmissionSettings(), [SEARCH]),
    ("thorough with vllm", base(searchStrategy="thorough"), AdmissionSettings(), []),
    ("thorough without backend", {"model": "m", "searchStrategy": "thorough"}, AdmissionSettings(), []),
    ("rapid with auto", base(backend="auto", searchStrategy="rapid"), AdmissionSettings(), []),
    ("non-semver image", base(image="nvcr.io/x/planner:my-tag"), AdmissionSettings(), [OVERRIDE]),
    ("latest image", base(image="planner:latest"), AdmissionSettings(), [OVERRIDE]),
    ("untagged image", base(image="nvcr.io/x/planner"), AdmissionSettings(), [OVERRIDE]),
    ("digest-only image", base(image="planner@sha256:abcd"), AdmissionSettings(), [OVERRIDE]),
    (
        "non-semver image with override",
        base(image="p:my-tag", runtimeVersionOverride="1.1.0"),
        AdmissionSettings(),
        [],
    ),
    ("semver image", base(image="nvcr.io/x/planner:1.1.0"), AdmissionSettings(), []),
    ("v-prefixed semver image", base(image="planner:v1.2.3-cuda12"), AdmissionSettings(), []),
    ("semver image with digest", base(image="planner:1.0.0@sha256:abcd"), AdmissionSettings(), []),
    ("no image", base(), AdmissionSettings(), []),
    (
        "all three, in order",
        base(backend="auto", searchStrategy="thorough", image="p:my-tag"),
        NO_DISCOVERY,
        [HARDWARE, SEARCH, OVERRIDE],
    ),
]


@pytest.mark.parametrize(
    ("spec", "settings", "errors"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES]
)
def test_create_rules(spec: dict[str, Any], settings: AdmissionSettings, errors: list[str]) -> None:
    d = run("CREATE", obj(spec), settings=settings)
    assert d.warnings == []
    if not errors:
        assert d.allowed, d.message
        assert d.status == {"code": 200}
        return
    assert not d.allowed
    expected = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    assert d.message == PREFIX + expected
    assert d.code == 422
    assert d.status["reason"] == "Invalid"
    assert d.status["details"]["kind"] == KIND
    assert d.status["details"]["group"] == "nvidia.com"
    assert [f"{c['field']}: {c['message']}" for c in d.status["details"]["causes"]] == errors


def test_create_causes_carry_reasons() -> None:
    d = run("CREATE", obj(base(backend="auto", searchStrategy="thorough")), settings=NO_DISCOVERY)
    assert [c["reason"] for c in d.status["details"]["causes"]] == ["FieldValueRequired", "FieldValueInvalid"]


def test_search_strategy_value_is_rendered_through_json() -> None:
    d = run("CREATE", obj({"model": "m", "backend": "auto", "searchStrategy": "thorough"}))
    assert 'spec.searchStrategy: Invalid value: "thorough":' in d.message


def test_origin_version_annotation_is_ignored() -> None:
    new = obj(base(), annotations={"nvidia.com/dynamo-operator-origin-version": "not-semver"})
    assert run("CREATE", new).allowed


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


def forbidden_in(phase: str) -> str:
    return (
        f'spec: Forbidden: updates are forbidden while the resource is in phase "{phase}"; '
        "delete and recreate the resource to change its spec"
    )


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


# --- operations and envelopes ----------------------------------------------------------------


def test_terminating_update_is_not_validated() -> None:
    new = obj(base(backend="auto", searchStrategy="thorough", model="x"), phase="Deployed", deleting=True)
    d = run("UPDATE", new, obj(base(), phase="Deployed"), NO_DISCOVERY)
    assert d.allowed and d.warnings == [] and d.status == {"code": 200}


def test_terminating_create_is_still_validated() -> None:
    # Upstream only skips terminating objects on UPDATE.
    assert not run("CREATE", obj(base(backend="auto", searchStrategy="thorough"), deleting=True)).allowed


def test_delete_is_allowed() -> None:
    assert run("DELETE", None, obj(base(backend="auto", searchStrategy="thorough"))).allowed


def test_update_without_old_object_is_a_bad_request() -> None:
    d = run("UPDATE", obj(base()), None)
    assert not d.allowed and d.code == 400


# --- image tags --------------------------------------------------------------------------------

TAGS = [
    ("repo:1.1.0", True),
    ("repo:v1.2.3-cuda12", True),
    ("repo:V1.2.3", True),
    ("repo:1.5.0-nemotron-3.5-lightning-dev.1", True),
    ("repo:1.0.0+build.5", True),
    ("repo:1.0.0@sha256:abc", True),
    ("registry.example:5000/runtime:1.0.0", True),
    ("  repo:1.0.0  ", True),
    ("repo: 1.0.0", True),
    ("registry.example:5000/runtime", False),
    ("registry.example/runtime:custom", False),
    ("repo:latest", False),
    ("repo:my-tag", False),
    ("repo:sha-123", False),
    ("repo@sha256:abc", False),
    ("repo:1.0", False),
    ("repo:01.0.0", False),
    ("repo:1.0.0-01", False),
    ("repo:1.0.0-", False),
    ("repo:vv1.0.0", False),
    ("repo:1.0.0\n", True),
    ("repo:1.0.0\x1c", False),
    ("repo:18446744073709551615.0.0", True),
    ("repo:18446744073709551616.0.0", False),
    ("repo:", False),
    ("", False),
    ("repo:1.0.0@sha256:a@b", True),
    ("a@b:1.0.0", False),
]


@pytest.mark.parametrize(("image", "ok"), TAGS)
def test_image_tag_parsing(image: str, ok: bool) -> None:
    assert dgdr.image_has_semver_tag(image) is ok


@given(
    st.tuples(*[st.integers(0, 10**6)] * 3),
    st.sampled_from(["", "v", "V"]),
    st.sampled_from(["", "-rc.1", "-cuda12", "+b.1", "-alpha+sha.5"]),
    st.lists(st.text("abxyz019.-", min_size=1, max_size=6), min_size=1, max_size=3).map("/".join),
)
def test_semver_tags_parse(nums: tuple[int, int, int], prefix: str, suffix: str, repo: str) -> None:
    tag = prefix + ".".join(map(str, nums)) + suffix
    assert dgdr.image_has_semver_tag(f"{repo}:{tag}")
    assert dgdr.image_has_semver_tag(f"{repo}:{tag}@sha256:0123")
    # Without the tag separator the version becomes part of the repository name.
    assert not dgdr.image_has_semver_tag(f"{repo}:{tag}/x")


@given(st.sampled_from("abcxyzABCXYZ_"), st.text("abcvV019_.-", max_size=12))
def test_word_tags_do_not_parse(first: str, rest: str) -> None:
    # A tag that starts with anything but a digit or v/V is never a version.
    assert not dgdr.image_has_semver_tag(f"nvcr.io/x/y:{first}{rest}")


# --- semantic equality helper -------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False) | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)


@given(json_values, json_values)
def test_json_equal_laws(a: Any, b: Any) -> None:
    assert dgdr.json_equal(a, a)
    assert dgdr.json_equal(a, b) == dgdr.json_equal(b, a)
    # Never looser than Python equality (which also equates booleans and numbers).
    if dgdr.json_equal(a, b):
        assert a == b


@given(json_values)
def test_semantic_spec_is_idempotent(value: Any) -> None:
    spec = {"model": "m", "features": {"planner": value}, "overrides": {"profilingJob": {"x": value}}}
    once = dgdr.semantic_spec(spec)
    assert dgdr.json_equal(dgdr.semantic_spec(once), once)


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
