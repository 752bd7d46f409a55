"""The schema layer of the real API server: what the CRD schema refuses (patterns, CEL rules) is refused
by the API server itself, before the validating webhook; where the service emulates a schema rule for
offline use (the topology-domain pattern, for ``lint``/``review``), its message agrees with the API
server's."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.e2e.admission import create_raw, offline_review
from tests.e2e.cluster import Cluster
from tests.e2e.objects import in_namespace, namespace
from tests.e2e.testenv import ROOT

NS = "e2e-schema"
Obj = dict[str, Any]
VALIDATE_DGD = "/validate/nvidia.com/v1beta1/dynamographdeployments"


@pytest.fixture(scope="module")
def ns(cluster: Cluster) -> str:
    return namespace(cluster.kubectl, NS)


def _dgd(name: str) -> Obj:
    obj: Obj = yaml.safe_load((ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text())
    return in_namespace(obj, NS, name)


def test_topology_domain_pattern_is_the_api_servers_and_the_service_says_the_same(cluster: Cluster, ns: str) -> None:
    obj = _dgd("bad-domain")
    obj["spec"]["topologyConstraint"] = {"clusterTopologyName": "default", "packDomain": "Rack_1"}
    code, status = create_raw(cluster, obj)
    assert code == 422, status
    assert not status["message"].startswith("admission webhook"), "the validating webhook was reached"
    assert status["details"]["causes"] == [{
        "reason": "FieldValueInvalid",
        "message": "Invalid value: \"Rack_1\": spec.topologyConstraint.packDomain in body should match "
                   "'^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'",
        "field": "spec.topologyConstraint.packDomain",
    }]
    # The service's own check (what `dynamo-webhook lint` reports for the same manifest) agrees.
    offline = offline_review(VALIDATE_DGD, obj)
    assert not offline["allowed"]
    assert offline["status"]["message"] == status["message"]


def test_cel_rule_is_enforced_before_the_webhook(cluster: Cluster, ns: str) -> None:
    obj = in_namespace(yaml.safe_load((ROOT / "examples" / "manifests" / "dgd-agg-v1alpha1.yaml").read_text()), NS, "cel")
    obj["spec"]["pvcs"] = [{"name": "model-cache", "create": True}]
    code, status = create_raw(cluster, obj)
    assert code == 422, status
    assert not status["message"].startswith("admission webhook")
    assert "When create is true, size, storageClass, and volumeAccessMode are required" in status["message"]
    fixed = copy.deepcopy(obj)
    fixed["spec"]["pvcs"] = [{"name": "model-cache", "create": True, "size": "10Gi", "storageClass": "standard",
                              "volumeAccessMode": "ReadWriteOnce"}]
    code, status = create_raw(cluster, fixed)
    assert code == 201, status


def test_wrong_json_type_is_refused_by_the_defaulter_before_the_schema(cluster: Cluster, ns: str) -> None:
    """The API server calls the mutating webhooks before it validates against the schema, so a value of the
    wrong JSON type reaches the defaulter, whose typed decode refuses it (400, naming the field) as the
    operator's does; the schema's own message is never seen. Offline, ``review`` says the same."""
    obj = _dgd("wrong-type")
    obj["spec"]["components"][0]["replicas"] = "two"
    code, status = create_raw(cluster, obj)
    assert code == 400, status
    offline = offline_review("/mutate/nvidia.com/v1beta1/dynamographdeployments", obj)
    assert not offline["allowed"]
    assert status["message"] == (
        f'admission webhook "mdynamographdeployment.kb.io" denied the request: {offline["status"]["message"]}'
    )
    assert "spec.components[0].replicas" in status["message"]
