"""An AdmissionReview's objects as the API server hands them to one webhook (``review --apiserver``):
decoded, pruned, defaulted, validated before a validating webhook, or the API server's refusal in
the words :mod:`apiserver.pipeline` gives ``lint``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver import pipeline
from apiserver.request import NotModelled, prepare
from app.cli.offline import OfflineService
from tests.examples import admission_review

Obj = dict[str, Any]


def _with_port(review: Obj) -> Obj:
    """A container port without ``protocol``, which the schema defaults to TCP."""
    container = review["request"]["object"]["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    container["ports"] = [{"containerPort": 8000, "name": "http"}]
    return review


def test_the_object_is_pruned_and_defaulted_as_a_create_would_be(service: OfflineService) -> None:
    review = _with_port(admission_review("dgd-v1beta1-create.json"))
    review["request"]["object"]["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0][
        "workingDir"
    ] = None
    prepared = prepare(review, validating=False)
    assert prepared.review is not None and prepared.status is None and prepared.warnings == []
    sent = prepared.review["request"]["object"]
    assert sent["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 8000, "name": "http", "protocol": "TCP"}
    ]
    assert "workingDir" not in sent["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]
    # the same steps as the create lint models: the stored object is the one the webhook was sent, mutated
    created = pipeline.create(review["request"]["object"], service)
    assert created.allowed and created.stored is not None
    assert (
        created.stored["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["ports"]
        == (sent["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["ports"])
    )
    assert review["request"]["object"]["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0][
        "ports"
    ] == [{"containerPort": 8000, "name": "http"}], "the review given is left as it is"


@pytest.mark.parametrize("validating", [True, False])
def test_an_unknown_field_is_refused_warned_or_dropped(validating: bool) -> None:
    review = admission_review("dgd-v1beta1-create.json")
    review["request"]["object"]["spec"]["components"][0]["replicsa"] = 1
    refused = prepare(review, validating)
    assert refused.review is None and refused.status is not None
    assert refused.status["code"] == 400 and refused.status["reason"] == "BadRequest"
    assert refused.status["message"] == (
        'DynamoGraphDeployment in version "v1beta1" cannot be handled as a DynamoGraphDeployment: '
        'strict decoding error: unknown field "spec.components[0].replicsa"'
    )
    warned = prepare(review, validating, "warn")
    assert warned.review is not None and warned.warnings == ['unknown field "spec.components[0].replicsa"']
    assert "replicsa" not in warned.review["request"]["object"]["spec"]["components"][0]
    ignored = prepare(review, validating, "ignore")
    assert ignored.review is not None and ignored.warnings == []
    assert "replicsa" not in ignored.review["request"]["object"]["spec"]["components"][0]


def test_the_schema_is_checked_before_a_validating_webhook_only(service: OfflineService) -> None:
    review = admission_review("dgdsa-v1beta1-create.json")
    review["request"]["object"]["spec"]["replicas"] = -1
    refused = prepare(review, validating=True)
    assert refused.review is None and refused.status is not None
    assert refused.status["code"] == 422 and refused.status["reason"] == "Invalid"
    assert refused.status["message"] == (
        'DynamoGraphDeploymentScalingAdapter.nvidia.com "llama-agg-worker" is invalid: [spec.replicas: Invalid '
        "value: -1: spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: "
        "-1: should be a non-negative integer]"
    )
    # the same Status as lint's create gives for the same object
    assert refused.status == pipeline.create(review["request"]["object"], service).status
    # a mutating webhook is called before the API server validates
    mutating = prepare(review, validating=False)
    assert mutating.review is not None and mutating.review["request"]["object"]["spec"]["replicas"] == -1


def test_an_update_decodes_both_objects_the_old_one_as_stored() -> None:
    review = _with_port(admission_review("dgd-v1beta1-update-backend.json"))
    old = review["request"]["oldObject"]
    old["spec"]["removedField"] = (
        True  # a stored object keeps no unknown field: pruned when read, never refused
    )
    old["status"] = {"state": "successful"}
    review["request"]["object"]["status"] = {"state": "made-up"}
    prepared = prepare(review, validating=True)
    assert prepared.review is not None and prepared.status is None
    request = prepared.review["request"]
    assert "removedField" not in request["oldObject"]["spec"]
    assert (
        request["object"]["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["ports"][0][
            "protocol"
        ]
        == "TCP"
    )
    assert request["object"]["status"] == {"state": "successful"}, "an update keeps the stored status"
    review["request"]["object"]["spec"]["backendFramwork"] = "vllm"
    refused = prepare(review, validating=True)
    assert refused.status is not None and refused.status["message"].endswith(
        'strict decoding error: unknown field "spec.backendFramwork"'
    )


def test_the_request_namespace_fills_an_object_without_one() -> None:
    review = admission_review("dgdsa-v1beta1-create.json")
    del review["request"]["object"]["metadata"]["namespace"]
    prepared = prepare(review, validating=True)
    assert prepared.review is not None
    assert prepared.review["request"]["object"]["metadata"]["namespace"] == review["request"]["namespace"]


def test_a_deprecated_version_warns() -> None:
    prepared = prepare(admission_review("dgd-v1alpha1-create.json"), validating=True)
    assert prepared.warnings == [
        "nvidia.com/v1alpha1 DynamoGraphDeployment is deprecated; use nvidia.com/v1beta1 DynamoGraphDeployment"
    ]


@pytest.mark.parametrize(
    ("api_version", "kind", "message"),
    [
        (
            "v1",
            "ConfigMap",
            "request.object is a ConfigMap of v1: --apiserver models the API server for nvidia.com "
            "custom resources only",
        ),
        (
            "nvidia.com/v1beta1",
            "DynamoGraphDeploy",
            "request.object: no vendored CRD serves kind 'DynamoGraphDeploy' "
            "in 'nvidia.com/v1beta1': no such request reaches the API server",
        ),
    ],
)
def test_objects_the_package_does_not_model(api_version: str, kind: str, message: str) -> None:
    review = admission_review("dgdsa-v1beta1-create.json")
    review["request"]["object"].update(apiVersion=api_version, kind=kind)
    with pytest.raises(NotModelled) as raised:
        prepare(review, validating=True)
    assert str(raised.value) == message
    old = copy.deepcopy(review)
    old["request"].update(operation="DELETE", object=None, oldObject=review["request"]["object"])
    with pytest.raises(NotModelled, match=r"request\.oldObject"):
        prepare(old, validating=True)


def test_a_created_objects_status_is_dropped_before_validation() -> None:
    review = admission_review("dgd-v1beta1-create.json")
    review["request"]["object"]["status"] = {"state": 5}  # of the wrong type: never validated on a create
    prepared = prepare(review, validating=True)
    assert prepared.review is not None and "status" not in prepared.review["request"]["object"]


def test_a_malformed_namespace_is_not_found() -> None:
    review = admission_review("dgdsa-v1beta1-create.json")
    del review["request"]["object"]["metadata"]["namespace"]
    review["request"]["namespace"] = "Team_A"
    refused = prepare(review, validating=False)
    assert refused.review is None and refused.status is not None
    assert (refused.status["code"], refused.status["reason"], refused.status["message"]) == (
        404,
        "NotFound",
        'namespaces "Team_A" not found',
    )


def test_metadata_kubectl_cannot_decode() -> None:
    review = admission_review("dgdsa-v1beta1-create.json")
    review["request"]["object"]["metadata"]["labels"] = {"a": 1}
    with pytest.raises(NotModelled, match="kubectl refuses to send it: unable to decode"):
        prepare(review, validating=True)


def test_an_update_runs_the_cel_transition_rules_against_the_old_object() -> None:
    review = admission_review("dgd-v1beta1-update-backend.json")
    for obj, min_available in ((review["request"]["oldObject"], 1), (review["request"]["object"], 2)):
        obj["spec"]["components"][0].update(replicas=3, minAvailable=min_available)
    refused = prepare(review, validating=True)
    assert refused.status is not None
    assert refused.status["code"] == 422
    assert refused.status["message"].endswith(
        "spec.components[0]: Invalid value: minAvailable is immutable after creation"
    )
    # The same change on a create is no transition: it is accepted.
    create = copy.deepcopy(review)
    create["request"]["operation"] = "CREATE"
    del create["request"]["oldObject"]
    assert prepare(create, validating=True).status is None


def test_an_update_leaving_a_failing_value_unchanged_is_warned_about() -> None:
    review = admission_review("dgd-v1beta1-update-backend.json")
    for obj in (review["request"]["oldObject"], review["request"]["object"]):
        obj["spec"]["components"][0].update(
            experimental={"gpuMemoryService": {"mode": "InterPod", "extraClientContainers": ["sidecar"]}}
        )
    prepared = prepare(review, validating=True)
    assert prepared.status is None
    assert (
        "spec.components[0].experimental.gpuMemoryService: Invalid value: extraClientContainers is only "
        "supported with mode=IntraPod"
    ) in prepared.warnings
    review["request"]["oldObject"]["spec"]["components"][0]["experimental"]["gpuMemoryService"]["mode"] = (
        "IntraPod"
    )
    refused = prepare(review, validating=True)
    assert refused.status is not None and refused.status["code"] == 422
