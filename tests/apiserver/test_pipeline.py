"""The API server's create, offline: each step's answer in the API server's own words (the texts
below were read off kube-apiserver v1.36.3 with the pinned CRDs and the service registered)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver import pipeline
from app.cli.offline import OfflineService
from tests.examples import manifest

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


def _message(service: OfflineService, doc: Obj) -> str:
    out = pipeline.create(doc, service, "f.yaml")
    assert not out.allowed
    if out.client_error is not None:
        return out.client_error
    assert out.status is not None
    return str(out.status["message"])


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples" / "manifests").glob("*.yaml")))
def test_every_example_is_accepted(service: OfflineService, name: str) -> None:
    for doc in yaml.safe_load_all((ROOT / "examples" / "manifests" / name).read_text()):
        out = pipeline.create(doc, service)
        assert out.allowed, out.status


def test_a_misspelt_field_is_an_unknown_field(service: OfflineService) -> None:
    doc = manifest("dgd-agg-v1beta1.yaml")
    doc["spec"]["components"][0]["replicsa"] = doc["spec"]["components"][0].pop("replicas")
    assert _message(service, doc) == (
        'DynamoGraphDeployment in version "v1beta1" cannot be handled as a DynamoGraphDeployment: '
        'strict decoding error: unknown field "spec.components[0].replicsa"'
    )
    warned = pipeline.create(doc, service, validation="warn")
    assert warned.allowed and 'unknown field "spec.components[0].replicsa"' in warned.warnings
    ignored = pipeline.create(doc, service, validation="ignore")
    assert ignored.allowed and ignored.pruned == ["spec.components[0].replicsa"] and not ignored.warnings


def test_an_enum_value_blocks_the_cel_rules(service: OfflineService) -> None:
    doc = manifest("dgd-agg-v1beta1.yaml")
    doc["spec"]["components"][1]["type"] = "wrker"
    assert _message(service, doc) == (
        'DynamoGraphDeployment.nvidia.com "llama-agg" is invalid: [spec.components[1].type: Unsupported value: '
        '"wrker": supported values: "frontend", "worker", "prefill", "decode", "planner", "epp", <nil>: Invalid '
        "value: null: some validation rules were not checked because the object was invalid; correct the "
        "existing errors to complete validation]"
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"replicas": -1},
            "[spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal "
            "to 0, .spec.replicas: Invalid value: -1: should be a non-negative integer]",
        ),
        (
            {"replicas": 1.5},
            '[spec.replicas: Invalid value: "float64": spec.replicas in body must be of type int32: '
            '"float64", <nil>: Invalid value: "": Checked value must be of type integer with format '
            "int32 in spec.replicas, .spec.replicas: Invalid value: 0: .spec.replicas accessor error: "
            "1.5 is of the type float64, expected int64]",
        ),
        (
            {"replicas": "2"},
            '[spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: '
            '"string", .spec.replicas: Invalid value: 0: .spec.replicas accessor error: 2 is of the '
            "type string, expected int64]",
        ),
        (
            {"replicas": 3000000000},
            '[<nil>: Invalid value: "": Checked value must be of type integer with format int32 '
            "in spec.replicas, .spec.replicas: Invalid value: 3000000000: should be less than or "
            "equal to 2147483647]",
        ),
    ],
)
def test_schema_and_scale_errors_of_a_scaling_adapter(
    service: OfflineService, change: Obj, expected: str
) -> None:
    doc = manifest("dgdsa-v1beta1.yaml")
    doc["spec"].update(change)
    assert _message(service, doc) == (
        f'DynamoGraphDeploymentScalingAdapter.nvidia.com "llama-agg-worker" is invalid: {expected}'
    )


def test_metadata(service: OfflineService) -> None:
    doc = manifest("dgdsa-v1beta1.yaml")
    bad = copy.deepcopy(doc)
    bad["metadata"]["name"] = "Llama_Agg"
    assert _message(service, bad).endswith(
        'metadata.name: Invalid value: "Llama_Agg": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
        "[a-z0-9])?)*')"
    )
    unnamed = copy.deepcopy(doc)
    del unnamed["metadata"]["name"]
    assert _message(service, unnamed) == (
        'DynamoGraphDeploymentScalingAdapter.nvidia.com "" is invalid: '
        "metadata.name: Required value: name or generateName is required"
    )
    typed = copy.deepcopy(doc)
    typed["metadata"]["labels"] = {"a": 1}
    assert _message(service, typed) == (
        'unable to decode "f.yaml": json: cannot unmarshal number into Go struct '
        "field ObjectMeta.metadata.labels of type string"
    )
    extra = copy.deepcopy(doc)
    extra["metadata"]["foo"] = 1
    assert _message(service, extra).endswith('strict decoding error: unknown field "metadata.foo"')


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (
            {"app": "v" * 64},
            'metadata.labels: Invalid value: "' + "v" * 64 + '": must be no more than 63 bytes',
        ),
        (
            {"example.com/" + "k" * 64: "v"},
            'metadata.labels: Invalid value: "example.com/'
            + "k" * 64
            + '": name part must be no more than 63 bytes',
        ),
        (
            {"a/b/c": "v"},
            'metadata.labels: Invalid value: "a/b/c": a valid label key must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
            "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ),
    ],
)
def test_label_keys_and_values_are_measured_in_bytes(
    service: OfflineService, labels: dict[str, str], expected: str
) -> None:
    """apimachinery's ``content`` validators (label keys and values, since v1.34) count bytes and call a
    key of three parts a label key; names keep ``util/validation``'s characters."""
    doc = manifest("dgdsa-v1beta1.yaml")
    doc["metadata"]["labels"] = labels
    assert (
        _message(service, doc)
        == f'DynamoGraphDeploymentScalingAdapter.nvidia.com "llama-agg-worker" is invalid: {expected}'
    )
    doc["metadata"]["name"] = "x" * 254
    del doc["metadata"]["labels"]
    assert _message(service, doc).startswith(
        'DynamoGraphDeploymentScalingAdapter.nvidia.com "'
        + "x" * 254
        + '" is invalid: metadata.name: Invalid value: "'
        + "x" * 254
        + '": must be no more than 253 characters'
    )


def test_an_unknown_kind_is_kubectls_no_match(service: OfflineService) -> None:
    doc = manifest("dgdsa-v1beta1.yaml")
    doc["kind"] = "DynamoGraphDeploy"
    assert _message(service, doc) == (
        'resource mapping not found for name: "llama-agg-worker" namespace: "inference" from "f.yaml": no matches '
        'for kind "DynamoGraphDeploy" in version "nvidia.com/v1beta1"\nensure CRDs are installed first'
    )


def test_a_listmap_key_given_twice(service: OfflineService) -> None:
    doc = manifest("dcd-v1beta1.yaml")
    containers = doc["spec"]["podTemplate"]["spec"]["containers"]
    containers.append(copy.deepcopy(containers[0]))
    assert 'spec.podTemplate.spec.containers[1]: Duplicate value: {"name":"main"}' in _message(service, doc)


def test_defaults_of_the_schema_are_applied(service: OfflineService) -> None:
    out = pipeline.create(manifest("dgdr-v1beta1.yaml"), service)
    assert out.allowed and out.stored is not None


def test_a_webhook_denial_names_the_webhook(service: OfflineService) -> None:
    doc = manifest("dgd-agg-v1beta1.yaml")
    doc["spec"]["components"][1]["replicas"] = "two"
    message = _message(service, doc)
    assert message.startswith('admission webhook "mdynamographdeployment.kb.io" denied the request: ')


def test_an_epp_component_reports_the_cluster_lookup_as_skipped(service: OfflineService) -> None:
    doc = manifest("dgd-agg-v1beta1.yaml")
    doc["spec"]["components"][0]["type"] = "epp"
    out = pipeline.create(doc, service)
    assert any("InferencePool" in s for s in out.skipped)


def test_a_kind_in_lower_case_is_mapped_by_kubectl(service: OfflineService) -> None:
    """kubectl's RESTMapper knows each kind in lower case too, so the object is sent as written; the
    API server's decoder then neither prunes nor defaults it (its kind is not the CRD's), each webhook
    gets it with the CRD's kind, which a patch keeps; without a patch the validation refuses the kind,
    and the conversion webhook refuses a kind it does not know."""
    dgd = manifest("dgd-agg-v1beta1.yaml")
    dgd["kind"] = "dynamographdeployment"
    dgd["spec"]["bogus"] = 1
    out = pipeline.create(dgd, service)
    assert out.allowed and out.stored is not None
    assert out.stored["kind"] == "DynamoGraphDeployment" and "bogus" not in out.stored["spec"]
    dcd = manifest("dcd-v1beta1.yaml")
    dcd["kind"] = "dynamocomponentdeployment"
    assert _message(service, dcd) == (
        'dynamocomponentdeployment.nvidia.com "decode-worker" is invalid: kind: '
        'Invalid value: "dynamocomponentdeployment": must be DynamoComponentDeployment'
    )
    alpha = manifest("dgd-agg-v1alpha1.yaml")
    alpha["kind"] = "dynamographdeployment"
    assert _message(service, alpha).startswith(
        "Internal error occurred: Internal error occurred: conversion webhook for nvidia.com/v1alpha1, "
        "Kind=dynamographdeployment failed: unsupported kind 'dynamographdeployment'"
    )
    mixed = manifest("dgd-agg-v1beta1.yaml")
    mixed["kind"] = "dynamoGraphDeployment"
    assert _message(service, mixed).startswith("resource mapping not found")


def test_a_null_the_mutating_webhook_writes_is_validated_not_dropped(service: OfflineService) -> None:
    """The defaulter writes the object whole (``containers: null`` for a pod spec without containers);
    the API server decodes and defaults the patched object without dropping nulls, so the schema
    refuses it."""
    doc = manifest("dgd-agg-v1beta1.yaml")
    del doc["spec"]["components"][0]["podTemplate"]["spec"]["containers"]
    assert _message(service, doc) == (
        'DynamoGraphDeployment.nvidia.com "llama-agg" is invalid: [spec.components[0].podTemplate.spec.containers: '
        'Invalid value: "null": spec.components[0].podTemplate.spec.containers in body must be of type array: '
        '"null", <nil>: Invalid value: null: some validation rules were not checked because the object was '
        "invalid; correct the existing errors to complete validation]"
    )


def test_webhooks_get_the_object_with_its_keys_sorted(service: OfflineService) -> None:
    """The API server encodes the object it sends with every map's keys sorted; a webhook that names only
    the first problem it meets (the defaulter's typed decode) names the first in that order."""
    doc = manifest("dcd-v1beta1.yaml")
    container = doc["spec"]["podTemplate"]["spec"]["containers"][0]
    container["name"], container["image"] = 1, 2
    assert _message(service, doc).endswith(
        "request.object.spec.podTemplate.spec.containers[0].image: expected string, got integer"
    )


def test_metadata_the_conversion_changes_is_validated_by_the_conversion(service: OfflineService) -> None:
    """The API server validates the labels and annotations a conversion webhook returns when they changed
    (``restoreObjectMeta``, with the path ``metadata.annotation``): an invalid annotation key of a v1alpha1
    object fails its conversion for the hub-registered mutating webhook (500), before any validation."""
    doc = manifest("dgd-agg-v1alpha1.yaml")
    doc["metadata"]["annotations"] = {"-x/y": "v"}
    out = pipeline.create(doc, service)
    assert out.status is not None and out.status["code"] == 500
    assert out.status["message"] == (
        "Internal error occurred: Internal error occurred: conversion webhook for nvidia.com/v1alpha1, "
        'Kind=DynamoGraphDeployment returned invalid metadata: metadata.annotation: Invalid value: "-x/y": '
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )


def test_kubectl_decodes_metadata_before_it_looks_the_kind_up(service: OfflineService) -> None:
    doc = manifest("dcd-v1beta1.yaml")
    doc["apiVersion"] = "nvidia.com/v2alpha1"
    doc["metadata"]["annotations"] = {"a": True}
    assert _message(service, doc) == (
        'unable to decode "f.yaml": json: cannot unmarshal bool into Go struct '
        "field ObjectMeta.metadata.annotations of type string"
    )


def test_a_conversion_in_admission_keeps_its_nulls(service: OfflineService) -> None:
    """Admission converts with the request's plain converter (no pruning, no defaulting, no null
    dropping): a null the conversion writes back reaches the validation, which refuses it."""
    doc: Obj = yaml.safe_load(
        (
            ROOT
            / "tests"
            / "fixtures"
            / "admission"
            / "manifests"
            / "v1alpha1"
            / "DynamoGraphDeployment"
            / "qwen3-0-6b-agg.yaml"
        ).read_text()
    )
    doc["spec"]["services"]["Epp"]["eppConfig"]["config"]["plugins"] = None
    assert _message(service, doc).startswith(
        f'DynamoGraphDeployment.nvidia.com "{doc["metadata"]["name"]}" is invalid: '
        '[spec.services.Epp.eppConfig.config.plugins: Invalid value: "null": '
        'spec.services.Epp.eppConfig.config.plugins in body must be of type array: "null", '
    )


def test_a_kind_in_lower_case_reports_the_cluster_lookups_and_unknown_fields_as_written(
    service: OfflineService,
) -> None:
    dgd = manifest("dgd-agg-v1beta1.yaml")
    dgd["kind"] = "dynamographdeployment"
    dgd["spec"]["components"][0]["type"] = "epp"
    assert any("InferencePool" in s for s in pipeline.create(dgd, service).skipped)
    dgd["metadata"]["bogus"] = 1
    assert _message(service, dgd) == (
        'dynamographdeployment in version "v1beta1" cannot be handled as a dynamographdeployment: strict decoding '
        'error: unknown field "metadata.bogus"'
    )


def test_aliases_are_expanded_so_each_place_reports_its_own_unknown_field(
    service: OfflineService, tmp_path: Path
) -> None:
    """A YAML alias is a copy in each place it is used, as go-yaml decodes it: a mistyped key in an
    anchored value is an unknown field everywhere the anchor is used."""
    from apiserver import lint

    path = tmp_path / "aliases.yaml"
    path.write_text(
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: x, namespace: default}\n"
        "spec:\n  services:\n    A:\n      componentType: frontend\n      envs: &envs\n      - {name: X, valu: '1'}\n"
        "    B:\n      componentType: frontend\n      envs: *envs\n"
    )
    [result] = lint.check_files([str(path)], service)
    assert result.outcome is not None and result.outcome.status is not None
    assert result.outcome.status["message"].endswith(
        'strict decoding error: unknown field "spec.services.A.envs[0].valu", unknown field "spec.services.B.envs[0].valu"'
    )
