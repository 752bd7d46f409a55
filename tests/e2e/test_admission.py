"""Admission by the API server: the webhooks as the API server calls them (after its schema layer,
through conversion for v1alpha1 requests, mutating before validating), with what ``kubectl`` shows.

Expected decisions are computed offline with ``dynamo-webhook review`` on the AdmissionReview the API
server sends (the object after the schema layer, converted to v1beta1 where the webhook is registered
for the hub, mutated first), so each test also proves that the API server sends what the service
expects. The immutable-field message is upstream's literal text.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from tests.e2e.admission import as_sent, assert_refused, create, expected_denial, mutated
from tests.e2e.cluster import Cluster
from tests.e2e.objects import ALPHA, in_namespace, namespace, user_view
from tests.e2e.testenv import ROOT

NS = "e2e-admission"
Obj = dict[str, Any]
FIXTURES = ROOT / "tests" / "fixtures" / "conversion"


def load(path: str, name: str | None = None) -> Obj:
    obj: Obj = yaml.safe_load((ROOT / path).read_text())
    return in_namespace(obj, NS, name)


@pytest.fixture(scope="module")
def ns(cluster: Cluster) -> str:
    return namespace(cluster.kubectl, NS)


def test_create_stores_the_defaults(cluster: Cluster, ns: str) -> None:
    obj = load("examples/manifests/dgd-agg-v1beta1.yaml", "defaults")
    result = create(cluster, obj)
    assert result.returncode == 0, result.stderr
    stored = cluster.kubectl.get("dynamographdeployments.v1beta1.nvidia.com", "defaults", NS)
    expected = mutated(as_sent(obj))
    assert user_view(stored) == user_view(expected)
    assert user_view(stored) != user_view(as_sent(obj)), "the mutating webhook added nothing"
    # Idempotent: the stored object, sent again as an UPDATE, is not changed by defaulting (the API
    # server then skips the write, so the resourceVersion stays).
    again = cluster.kubectl("replace", "-f", "-", "-o", "json", input=json.dumps(stored)).json()
    assert again["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


def test_immutable_field_update_is_refused_with_upstream_message_and_warning(
    cluster: Cluster, ns: str
) -> None:
    obj = load("examples/manifests/dgd-agg-v1beta1.yaml", "immutable")
    assert create(cluster, obj).returncode == 0
    patch = '{"spec":{"backendFramework":"sglang"}}'
    code, body = cluster.cp.raw(
        "PATCH",
        f"/apis/nvidia.com/v1beta1/namespaces/{NS}/dynamographdeployments/immutable",
        patch.encode(),
        content_type="application/merge-patch+json",
    )
    status = json.loads(body)
    assert code == 422
    assert status["message"] == (
        'admission webhook "vdynamographdeployment.kb.io" denied the request: DynamoGraphDeployment.nvidia.com '
        '"immutable" is invalid: spec.backendFramework: Invalid value: "sglang": is immutable and cannot be '
        "changed after creation"
    )
    result = cluster.kubectl(
        "patch",
        "dynamographdeployments.v1beta1.nvidia.com",
        "immutable",
        "-n",
        NS,
        "--type=merge",
        "-p",
        patch,
        check=False,
    )
    assert result.returncode != 0
    assert result.stderr.splitlines() == [
        "Warning: Changing spec.backendFramework may cause unexpected behavior",
        'The DynamoGraphDeployment "immutable" is invalid: spec.backendFramework: Invalid value: "sglang": '
        "is immutable and cannot be changed after creation",
    ]


def test_v1alpha1_create_goes_through_conversion_and_the_hub_webhooks(cluster: Cluster, ns: str) -> None:
    allowed = load("examples/manifests/dgd-agg-v1alpha1.yaml", "alpha-ok")
    result = create(cluster, allowed)
    assert result.returncode == 0, result.stderr
    # The API server's deprecation warning for the served-but-deprecated version reaches kubectl too.
    assert "Warning: nvidia.com/v1alpha1 DynamoGraphDeployment is deprecated" in result.stderr
    stored = cluster.kubectl.get("dynamographdeployments.v1beta1.nvidia.com", "alpha-ok", NS)
    assert user_view(stored) == user_view(mutated(as_sent(allowed), ALPHA))

    refused = load(
        str(
            FIXTURES.relative_to(ROOT)
            / "manifests"
            / "v1alpha1__DynamoGraphDeployment__trtllm-disagg-planner.yaml"
        ),
        "alpha-refused",
    )
    # The hub-registered webhook judges the converted object; the v1alpha1 compatibility pass names
    # the fields as the v1alpha1 client wrote them (services[<name>]), as the operator does.
    assert_refused(cluster, refused)
    assert "spec.services[Frontend].runtimeVersionOverride" in expected_denial(refused)["message"]


DGDR_REFUSED = str(
    (FIXTURES / "dgdr-manifests" / "v1alpha1__sla-online__profiler-profile_sla_dgdr.yaml").relative_to(ROOT)
)


def _checkpoint(gms: bool) -> Obj:
    container = {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.0"}
    spec: Obj = {
        "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
        "job": {"podTemplateSpec": {"spec": {"containers": [container]}}},
    }
    if gms:  # GMS without its wiring: no shared volume, no server sidecar, no claim
        spec["gpuMemoryService"] = {"enabled": True}
    return {
        "apiVersion": ALPHA,
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "ckpt-gms" if gms else "ckpt", "namespace": NS},
        "spec": spec,
    }


def _model(uri: str, name: str) -> Obj:
    obj = load("examples/manifests/dynamomodel-lora.yaml", name)
    obj["spec"]["source"]["uri"] = uri
    return obj


def _dcd_refused() -> Obj:
    """Failover without the GPU memory service it needs."""
    obj = load("examples/manifests/dcd-v1beta1.yaml", "dcd-refused")
    obj["spec"]["experimental"] = {"failover": {"mode": "IntraPod"}}
    return obj


CASES = {
    "DynamoGraphDeploymentRequest": (
        lambda: load("examples/manifests/dgdr-v1beta1.yaml", "dgdr-ok"),
        lambda: load(DGDR_REFUSED, "dgdr-refused"),
    ),
    "DynamoComponentDeployment": (
        lambda: load("examples/manifests/dcd-v1beta1.yaml", "dcd-ok"),
        _dcd_refused,
    ),
    "DynamoModel": (
        lambda: _model("s3://acme-loras/qwen3-0.6b-support-lora", "model-ok"),
        lambda: _model("", "model-refused"),
    ),
    "DynamoCheckpoint": (lambda: _checkpoint(False), lambda: _checkpoint(True)),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_kind_has_an_admitted_and_a_refused_case(cluster: Cluster, ns: str, kind: str) -> None:
    make_ok, make_refused = CASES[kind]
    ok = make_ok()
    result = create(cluster, ok)
    assert result.returncode == 0, result.stderr
    assert_refused(cluster, make_refused())


def test_mutating_twice_under_reinvocation_gives_the_same_object(cluster: Cluster, ns: str) -> None:
    """A second registration of the DGD defaulter with ``reinvocationPolicy: IfNeeded`` after deploy/'s:
    the API server calls the defaulter on its own output (and again if anything changed); the stored
    object must equal one defaulting pass."""
    kubectl = cluster.kubectl
    config = copy.deepcopy(
        next(o for o in cluster.registration if o["kind"] == "MutatingWebhookConfiguration")
    )
    hook = next(h for h in config["webhooks"] if h["name"] == "mdynamographdeployment.kb.io")
    hook = {**hook, "name": "reinvoke.mdynamographdeployment.e2e", "reinvocationPolicy": "IfNeeded"}
    bundle = kubectl.get("mutatingwebhookconfiguration", config["metadata"]["name"])["webhooks"][0][
        "clientConfig"
    ]
    hook["clientConfig"] = {**hook["clientConfig"], "caBundle": bundle["caBundle"]}
    second = {
        "apiVersion": config["apiVersion"],
        "kind": config["kind"],
        "metadata": {"name": "e2e-reinvoke"},
        "webhooks": [hook],
    }
    kubectl.apply(second)
    try:
        obj = load("examples/manifests/dgd-agg-v1beta1.yaml", "reinvoked")
        result = create(cluster, obj)
        assert result.returncode == 0, result.stderr
        stored = kubectl.get("dynamographdeployments.v1beta1.nvidia.com", "reinvoked", NS)
        assert user_view(stored) == user_view(mutated(as_sent(obj)))
    finally:
        kubectl("delete", "mutatingwebhookconfiguration", "e2e-reinvoke")


def test_an_epp_profile_plugin_without_weight_is_refused_after_the_patch(cluster: Cluster, ns: str) -> None:
    """The operator's patch writes an EPP scheduling-profile plugin's ``weight`` at Go's zero value,
    null (a ``*int`` without omitempty), and the API server's schema, which wants an integer, then
    refuses the object: reproduced, so that such a manifest fails here as it fails with the
    operator (every published EPP example gives each plugin its weight)."""
    obj = load("examples/manifests/dgd-agg-v1beta1.yaml", "epp-no-weight")
    epp = copy.deepcopy(obj["spec"]["components"][0])
    config = {
        "plugins": [{"type": "single-profile-handler"}],
        "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "single-profile-handler"}]}],
    }
    epp.update(name="Epp", type="epp", replicas=1, eppConfig={"config": config})
    obj["spec"]["components"].append(epp)
    result = create(cluster, obj)
    assert result.returncode != 0
    assert (
        "eppConfig.config.schedulingProfiles[0].plugins[0].weight in body must be of type integer"
        in result.stderr
    )
    obj["spec"]["components"][-1]["eppConfig"]["config"]["schedulingProfiles"][0]["plugins"][0]["weight"] = 1
    patched = mutated(as_sent(obj))
    plugins = patched["spec"]["components"][-1]["eppConfig"]["config"]["plugins"]
    assert plugins == [{"type": "single-profile-handler", "name": ""}]  # parameters: null is pruned
