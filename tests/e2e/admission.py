"""Admission as the API server performs it, computed offline for the end-to-end comparisons: the
AdmissionReview it sends (its schema layer, conversion to the hub for hub-registered webhooks,
``requestKind`` naming the client's version), the service's answer through ``dynamo-webhook review``,
and the Status the API server then returns to clients."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import uuid
from typing import Any

import jsonpatch
import yaml

from tests.e2e.cluster import EXE, Cluster
from tests.e2e.objects import BETA, PLURALS, convert_offline
from tests.e2e.schema_layer import apply_schema
from tests.e2e.testenv import Result

Obj = dict[str, Any]
VALIDATING = {
    "DynamoGraphDeployment": (
        "vdynamographdeployment.kb.io",
        "/validate/nvidia.com/v1beta1/dynamographdeployments",
    ),
    "DynamoComponentDeployment": (
        "vdynamocomponentdeployment.kb.io",
        "/validate/nvidia.com/v1beta1/dynamocomponentdeployments",
    ),
    "DynamoGraphDeploymentRequest": (
        "vdynamographdeploymentrequest.kb.io",
        "/validate-nvidia-com-v1beta1-dynamographdeploymentrequest",
    ),
    "DynamoModel": ("vdynamomodel.kb.io", "/validate-nvidia-com-v1alpha1-dynamomodel"),
    "DynamoCheckpoint": ("vdynamocheckpoint.kb.io", "/validate-nvidia-com-v1alpha1-dynamocheckpoint"),
}
MUTATING = {
    "DynamoGraphDeployment": "/mutate/nvidia.com/v1beta1/dynamographdeployments",
    "DynamoComponentDeployment": "/mutate-nvidia-com-v1beta1-dynamocomponentdeployment",
    "DynamoGraphDeploymentRequest": "/mutate-nvidia-com-v1beta1-dynamographdeploymentrequest",
}
#: Registered for the hub (matchPolicy Equivalent): the API server converts other versions first.
HUB_REGISTERED = {"DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest"}


def offline_review(path: str, obj: Obj, old: Obj | None = None, request_version: str | None = None) -> Obj:
    """``dynamo-webhook review`` of the AdmissionReview the API server sends for ``obj``, with the
    service's settings (the Checkpoint gate on, as the e2e service runs). ``request_version`` is the
    version the client wrote in, when the API server converted the object for the webhook (it then
    sends that as ``requestKind``/``requestResource``)."""
    group, version = obj["apiVersion"].split("/")
    asked = (request_version or obj["apiVersion"]).split("/")[1]
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": obj["kind"]},
            "resource": {"group": group, "version": version, "resource": PLURALS[obj["kind"]]},
            "requestKind": {"group": group, "version": asked, "kind": obj["kind"]},
            "requestResource": {"group": group, "version": asked, "resource": PLURALS[obj["kind"]]},
            "name": obj["metadata"]["name"],
            "namespace": obj["metadata"]["namespace"],
            "operation": "UPDATE" if old is not None else "CREATE",
            "userInfo": {"username": "e2e-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": obj,
            "oldObject": old,
            "dryRun": False,
        },
    }
    proc = subprocess.run(
        [str(EXE), "review", "-", "--path", path, "-o", "json"],
        input=json.dumps(review),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "DYNAMO_WEBHOOK_FEATURE_CHECKPOINT": "true"},
    )
    assert proc.returncode in (0, 1), proc.stderr
    response: Obj = json.loads(proc.stdout)["response"]
    return response


def as_sent(obj: Obj) -> Obj:
    """The object the API server hands to the webhooks: its schema layer, then (hub-registered kinds)
    converted to v1beta1 and put through the v1beta1 schema layer."""
    out = apply_schema(obj)
    out.pop("status", None)
    if obj["kind"] in HUB_REGISTERED and out["apiVersion"] != BETA:
        out = apply_schema(convert_offline([out], BETA)[0])
    return out


def mutated(obj: Obj, request_version: str | None = None) -> Obj:
    """``obj`` after the mutating webhook (if its kind has one) and the schema layer after it."""
    if obj["kind"] not in MUTATING:
        return obj
    response = offline_review(MUTATING[obj["kind"]], obj, request_version=request_version)
    assert response["allowed"], response
    if "patch" not in response:
        return obj
    patch = json.loads(base64.b64decode(response["patch"]))
    out = apply_schema(jsonpatch.apply_patch(obj, patch))
    # The patch writes status as the operator's does ({"state": ""}); the API server resets a
    # created object's status (the status subresource) in the version the client wrote, before
    # validation and storage; an object written in another version comes back through the
    # conversion, which writes the status Go writes.
    if request_version is None or request_version == obj["apiVersion"]:
        out.pop("status", None)
        return out
    written = convert_offline([out], request_version)[0]
    written.pop("status", None)
    return apply_schema(convert_offline([written], obj["apiVersion"])[0])


def expected_denial(obj: Obj) -> Obj:
    """The Status the API server returns when the validating webhook refuses ``obj``: the service's
    (computed offline), its message prefixed with the webhook's name, as the API server does."""
    sent = mutated(as_sent(obj), obj["apiVersion"])
    webhook, path = VALIDATING[obj["kind"]]
    response = offline_review(path, sent, request_version=obj["apiVersion"])
    assert not response["allowed"], f"expected a denial offline for {obj['metadata']['name']}"
    status: Obj = response["status"]
    return {**status, "message": f'admission webhook "{webhook}" denied the request: {status["message"]}'}


def create_raw(cluster: Cluster, obj: Obj) -> tuple[int, Obj]:
    """POST ``obj`` straight to the API server: (HTTP status, the Status or object it answers)."""
    group, version = obj["apiVersion"].split("/")
    code, body = cluster.cp.raw(
        "POST",
        f"/apis/{group}/{version}/namespaces/{obj['metadata']['namespace']}/{PLURALS[obj['kind']]}",
        obj,
    )
    return code, json.loads(body)


def assert_refused(cluster: Cluster, obj: Obj) -> None:
    """Refused by the API server with exactly the service's Status, and shown by kubectl field by field."""
    expected = expected_denial(obj)
    code, status = create_raw(cluster, obj)
    assert code == expected["code"], status
    assert status["message"] == expected["message"]
    assert status.get("reason") == expected.get("reason")
    causes = (expected.get("details") or {}).get("causes") or []
    assert (status.get("details") or {}).get("causes", []) == causes
    result = create(cluster, obj)
    assert result.returncode != 0
    for cause in causes:
        assert f"{cause['field']}: {cause['message']}" in result.stderr, result.stderr


def create(cluster: Cluster, obj: Obj, *extra: str) -> Result:
    return cluster.kubectl("create", "-f", "-", *extra, input=yaml.safe_dump(obj), check=False)
