"""An override value must decode into the Grove type of its target (exact messages from
the pinned upstream code, Grove operator/api v0.1.0-alpha.12-rc1)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.validation.assertions import assert_allowed, assert_invalid
from tests.validation.dgd_builders import component, dgd
from tests.validation.test_dgd_create import C0, KIND, run
from validation.provider_override import validate_value

JSON = dict[str, Any]
GROVE = "grove.io/v1alpha1"


def override(target: str, value: Any) -> JSON:
    return {"apiVersion": GROVE, "target": target, "value": value}


def multinode(role: str, value: Any) -> JSON:
    return component(
        multinode={"nodeCount": 2, role: {"providerOverride": override("PodCliqueTemplateSpec", value)}}
    )


def test_root_override_value_that_does_not_decode_into_a_pod_clique_set() -> None:
    value = {"spec": {"replicas": "x", "template": {"topologyConstraint": {}}}}
    d = run(dgd(provider="grove", providerOverride=override("PodCliqueSet", value)))
    assert_invalid(
        d,
        KIND,
        "graph",
        [
            "spec.providerOverride.value: Invalid value: null: does not match the registered PodCliqueSet schema: "
            "json: cannot unmarshal string into Go struct field PodCliqueSetSpec.spec.replicas of type int32"
        ],
    )


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_multinode_role_override_value_must_decode_into_a_pod_clique_template(role: str) -> None:
    d = run(dgd([multinode(role, {"topologyConstraint": {"packDomain": 5}})], provider="grove"))
    assert_invalid(
        d,
        KIND,
        "graph",
        [
            f"{C0}.multinode.{role}.providerOverride.value: Invalid value: null: does not match the registered "
            "PodCliqueTemplateSpec schema: json: cannot unmarshal number into Go struct field "
            "TopologyConstraint.topologyConstraint.packDomain of type v1alpha1.TopologyDomain"
        ],
    )


def test_scaling_group_override_value_must_decode_before_ownership_is_checked() -> None:
    comp = component(
        multinode={"nodeCount": 2},
        providerOverride=override("PodCliqueScalingGroupConfig", {"topologyConstraint": {}, "replicas": "1"}),
    )
    assert_invalid(
        run(dgd([comp], provider="grove")),
        KIND,
        "graph",
        [
            f"{C0}.providerOverride.value: Invalid value: null: does not match the registered "
            "PodCliqueScalingGroupConfig schema: json: cannot unmarshal string into Go struct field "
            "PodCliqueScalingGroupConfig.replicas of type int32"
        ],
    )


@pytest.mark.parametrize(
    ("target", "value", "detail"),
    [
        (
            "PodCliqueSet",
            {"spec": {"template": {"topologyConstraint": {}, "terminationDelay": "soon"}}},
            'time: invalid duration "soon"',
        ),
        (
            "PodCliqueSet",
            {"spec": {"replicas": 2**40, "template": {"topologyConstraint": {}}}, "status": {}},
            "json: cannot unmarshal number 1099511627776 into Go struct field PodCliqueSetSpec.spec.replicas "
            "of type int32",
        ),
        (
            "PodCliqueSet",
            {"Spec": {"Template": {"TopologyConstraint": {"PackDomain": 7}}}},
            "json: cannot unmarshal number into Go struct field "
            "TopologyConstraint.spec.template.topologyConstraint.packDomain of type v1alpha1.TopologyDomain",
        ),
    ],
)
def test_decode_errors_carry_gos_text(target: str, value: JSON, detail: str) -> None:
    assert validate_value(target, value) == [
        ("", f"does not match the registered {target} schema: {detail}", False)
    ]


def test_unknown_fields_are_not_a_decode_error() -> None:
    # encoding/json, not a strict decode: a newer Grove field inside the delegated subtree passes.
    assert (
        validate_value(
            "PodCliqueTemplateSpec", {"topologyConstraint": {"newField": 1, "pack": {"required": "r"}}}
        )
        == []
    )
    assert_allowed(run(dgd([multinode("leader", {"topologyConstraint": {"newField": 1}})], provider="grove")))


@settings(max_examples=200)
@given(
    st.sampled_from(["PodCliqueSet", "PodCliqueTemplateSpec", "PodCliqueScalingGroupConfig"]),
    st.sampled_from(["replicas", "packDomain", "topologyConstraint", "cliques", "name", "minAvailable"]),
    st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=3), st.just([]), st.just({})
    ),
)
def test_a_failed_decode_is_the_only_error(target: str, key: str, leaf: Any) -> None:
    value: JSON = {key: leaf, "topologyConstraint": {"packDomain": leaf}}
    if target == "PodCliqueSet":
        value = {"spec": {key: leaf, "template": value}}
    errors = validate_value(target, value)
    decode = [e for e in errors if e[1].startswith(f"does not match the registered {target} schema: ")]
    assert not decode or errors == decode
    assert len(decode) <= 1
