"""The CRDs' CEL rules offline (apiserver/cel.py): every pinned rule compiles, each one refuses what it
says with the API server's message, evaluation errors are cel-go's in the API server's wording,
transition rules run only on update, and unchanged values ratchet. The same messages are compared
with the real API server in tests/e2e/test_schema.py."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver import cel, crds, pipeline
from apiserver.crds import Schema
from tests.examples import manifest

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


BETA = crds.lookup("nvidia.com/v1beta1", "DynamoGraphDeployment")
ALPHA = crds.lookup("nvidia.com/v1alpha1", "DynamoGraphDeployment")
DCD = crds.lookup("nvidia.com/v1beta1", "DynamoComponentDeployment")
assert BETA is not None and ALPHA is not None and DCD is not None


def _nodes(schema: Schema) -> list[Schema]:
    found = [schema]
    children = [*schema.properties.values(), *schema.all_of]
    children += [c for c in (schema.additional, schema.items) if c is not None]
    for child in children:
        found += _nodes(child)
    return found


def _all_rules() -> list[tuple[str, Schema]]:
    out = []
    for kind in (
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
        "DynamoModel",
    ):
        for api_version in ("nvidia.com/v1alpha1", "nvidia.com/v1beta1"):
            version = crds.lookup(api_version, kind)
            if version is not None:
                out += [(f"{kind}/{version.name}", n) for n in _nodes(version.schema) if n.rules]
    return out


def test_every_pinned_rule_compiles() -> None:
    nodes = _all_rules()
    assert sum(len(n.rules) for _, n in nodes) >= 40
    for _, node in nodes:
        assert len(cel.rules_of(node)) == len(node.rules)


def _errors(obj: Obj, version: crds.Version) -> list[str]:
    return [str(e) for e in cel.validate(obj, version.schema).errors]


def _beta(edit: Any) -> list[str]:
    obj = manifest("dgd-agg-v1beta1.yaml")
    edit(obj["spec"])
    return _errors(obj, BETA)


def _alpha(edit: Any) -> list[str]:
    obj = manifest("dgd-agg-v1alpha1.yaml")
    edit(next(iter(obj["spec"]["services"].values())))
    return _errors(obj, ALPHA)


def test_the_published_examples_pass_every_rule() -> None:
    for path in sorted((ROOT / "examples" / "manifests").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            version = crds.lookup(doc["apiVersion"], doc["kind"])
            if version is not None:
                assert _errors(doc, version) == [], path.name


def test_a_false_rule_on_an_object_shows_no_value() -> None:
    assert _beta(lambda s: s.update(restart={"id": "now"})) == [
        "spec: Invalid value: spec.restart must be unset on create; set spec.restart.id after creation to "
        "request a restart"
    ]


def test_a_false_rule_on_a_string_shows_the_value() -> None:
    key = "a" * 254 + "/zone"
    assert _beta(lambda s: s.update(experimental={"kvTransferPolicy": {"labelKey": key}})) == [
        f'spec.experimental.kvTransferPolicy.labelKey: Invalid value: "{key}": labelKey prefix must be 253 '
        "characters or less"
    ]


def test_list_rules_and_item_rules() -> None:
    def twice(s: Obj) -> None:
        s["components"].append({**s["components"][0], "name": s["components"][0]["name"].upper()})

    assert _beta(twice) == [
        "spec.components: Invalid value: component names must be unique case-insensitively"
    ]

    def two_epps(s: Obj) -> None:
        s["components"] = [{"name": "a", "type": "epp"}, {"name": "b", "type": "epp"}]

    assert _beta(two_epps) == ["spec.components: Invalid value: at most one component may have type epp"]
    assert _beta(lambda s: s["components"][0].update(replicas=1, minAvailable=3)) == [
        "spec.components[0]: Invalid value: minAvailable must be less than or equal to replicas unless replicas is 0"
    ]
    assert _beta(lambda s: s["components"][0].update(replicas=0, minAvailable=3)) == []


def test_map_keys_appear_in_the_path_and_annotations_are_read_by_key() -> None:
    backend = "nvidia.com/vllm-distributed-executor-backend"
    assert _alpha(lambda s: s.update(extraPodMetadata={"annotations": {backend: "RAY"}})) == []
    assert (
        _beta(
            lambda s: s["components"][0].update(podTemplate={"metadata": {"annotations": {backend: "Ray"}}})
        )
        == []
    )
    assert _beta(
        lambda s: s["components"][0].update(podTemplate={"metadata": {"annotations": {backend: "x"}}})
    ) == [
        "spec.components[0].podTemplate.metadata.annotations: Invalid value: podTemplate backend annotation must "
        "be mp or ray, case-insensitively"
    ]
    assert _alpha(lambda s: s.update(sharedMemory={"disabled": False})) == [
        "spec.services[Frontend].sharedMemory: Invalid value: size is required when disabled is false"
    ]


def test_quantities_are_compared_exactly() -> None:
    assert _alpha(lambda s: s.update(sharedMemory={"size": "1n"})) == []
    assert _alpha(lambda s: s.update(sharedMemory={"size": "0.0000000001"})) == []  # rounds up to 1n
    assert _alpha(lambda s: s.update(sharedMemory={"size": "0Gi"})) == [
        "spec.services[Frontend].sharedMemory: Invalid value: size is required when disabled is false"
    ]
    assert _alpha(lambda s: s.update(sharedMemory={"size": "-1"})) != []


def test_evaluation_errors_are_cel_gos_in_the_api_servers_words() -> None:
    rule = "size is required when disabled is false"
    assert _alpha(lambda s: s.update(sharedMemory={"size": 1})) == [
        "spec.services[Frontend].sharedMemory: Invalid value: \"object\": 'no such overload': call arguments did "
        f"not match a supported operator, function or macro signature for rule: {rule}"
    ]
    assert _alpha(lambda s: s.update(sharedMemory={"size": "1Gb"})) == [
        'spec.services[Frontend].sharedMemory: Invalid value: "object": quantities must match the regular '
        f"expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: {rule}"
    ]
    # `mode` is defaulted by the schema before validation; without it, the rule reads a missing key.
    assert _beta(
        lambda s: s["components"][0].update(
            experimental={"gpuMemoryService": {"extraClientContainers": ["a"]}}
        )
    ) == [
        'spec.components[0].experimental.gpuMemoryService: Invalid value: "object": no such key: mode '
        "evaluating rule: extraClientContainers is only supported with mode=IntraPod"
    ]


def test_a_rule_without_a_message_says_which_rule_failed() -> None:
    node = Schema(type="object", rules=({"rule": "self.a == 1"},))
    assert [e.body() for e in cel.validate({"a": 2}, node).errors] == [
        "Invalid value: failed rule: self.a == 1"
    ]


def test_numbers_of_type_number_are_doubles() -> None:
    node = Schema(type="object", properties={"x": Schema(type="number")}, rules=({"rule": "self.x == 1.0"},))
    assert cel.validate({"x": 1}, node).errors == []


def test_transition_rules_run_on_update_only() -> None:
    obj = manifest("dgd-agg-v1beta1.yaml")
    obj["spec"]["components"][0].update(replicas=3, minAvailable=2)
    assert _errors(obj, BETA) == []
    old = copy.deepcopy(obj)
    old["spec"]["components"][0]["minAvailable"] = 1
    result = cel.validate(obj, BETA.schema, old)
    assert [str(e) for e in result.errors] == [
        "spec.components[0]: Invalid value: minAvailable is immutable after creation"
    ]
    # A component renamed does not correlate with the old one (a listType=map list, keyed by name).
    renamed = copy.deepcopy(obj)
    renamed["spec"]["components"][0]["name"] = "other"
    assert cel.validate(renamed, BETA.schema, old).errors == []


def test_an_optional_old_self_rule_runs_on_create_and_on_update() -> None:
    obj = manifest("dgd-agg-v1beta1.yaml")
    obj["spec"]["restart"] = {"id": "now"}
    assert len(_errors(obj, BETA)) == 1
    old = copy.deepcopy(obj)
    del old["spec"]["restart"]
    assert cel.validate(obj, BETA.schema, old).errors == []


def test_an_unchanged_failing_value_ratchets_to_a_warning_on_update() -> None:
    obj = manifest("dgd-agg-v1alpha1.yaml")
    next(iter(obj["spec"]["services"].values()))["sharedMemory"] = {"disabled": False}
    result = cel.validate(obj, ALPHA.schema, copy.deepcopy(obj))
    assert result.errors == []
    assert result.warnings == [
        "spec.services[Frontend].sharedMemory: Invalid value: size is required when disabled is false"
    ]


def test_a_blocking_schema_error_keeps_the_rules_from_running(service: Any) -> None:
    obj = manifest("dgd-agg-v1beta1.yaml")
    obj["metadata"]["namespace"] = "default"
    obj["spec"]["restart"] = {"id": "now"}
    obj["spec"]["components"][0]["type"] = "wrker"
    errs = [str(e) for e in pipeline.validation_errors(obj, BETA)]
    assert errs[-1] == str(pipeline.BLOCKED)
    assert not any("restart" in e for e in errs)


@pytest.mark.parametrize("ref", ["c", ""])
def test_dcd_checkpoint_rule(ref: str) -> None:
    obj: Obj = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "x"},
        "spec": {"experimental": {"checkpoint": {"job": {}, "checkpointRef": ref}}},
    }
    expected = "spec.experimental.checkpoint: Invalid value: checkpoint.job cannot be set when checkpointRef is specified"
    assert _errors(obj, DCD) == ([expected] if ref else [])


def test_reason_field_path_and_message_expression() -> None:
    """What the pinned CRDs do not use yet but the API server honours: a rule's ``reason`` picks the
    error's type, ``fieldPath`` points below the node, ``messageExpression`` writes the message (the
    ``message`` when it gives nothing usable)."""
    child = Schema(type="integer")
    node = Schema(
        type="object",
        properties={"replicas": child, "labels": Schema(type="object")},
        rules=(
            {
                "rule": "self.replicas < 3",
                "reason": "FieldValueForbidden",
                "fieldPath": ".replicas",
                "messageExpression": "'replicas ' + string(self.replicas) + ' is too many'",
            },
            {
                "rule": "self.replicas < 3",
                "reason": "FieldValueRequired",
                "fieldPath": ".labels['a.b']",
                "message": "fallback",
                "messageExpression": "''",
            },
            {"rule": "self.replicas < 3", "reason": "FieldValueDuplicate"},
            {"rule": "self.replicas < 3", "message": "m", "messageExpression": "1"},
        ),
    )
    errors = [str(e) for e in cel.validate({"replicas": 5, "labels": {}}, node).errors]
    assert errors == [
        "replicas: Forbidden: replicas 5 is too many",
        "labels[a.b]: Required value: fallback",
        ": Duplicate value",  # an object's value is not shown
        ": Invalid value: m",
    ]
    assert cel.relative_field_path(".spec.containers['a\\'b']") == "spec.containers[a'b]"
