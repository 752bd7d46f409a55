"""DynamoGraphDeploymentRequest validation: create rules, operations, image tags, semantic equality."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.admission import AdmissionSettings
from tests.validation.dgdr_builders import (
    HARDWARE,
    KIND,
    NO_DISCOVERY,
    OVERRIDE,
    PREFIX,
    SEARCH,
    base,
    obj,
    run,
)
from validation import dgdr

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
