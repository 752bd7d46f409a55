"""The RBAC of deploy/ is enough and no more, judged by the API server. The service runs with a
token of the deploy/ ServiceAccount, bound only to deploy/'s roles: the cert loop, the
namespace-scope Lease watcher and the live admission look-ups (ClusterTopologyBinding by name,
InferencePool discovery) all work with it. Taking one rule away makes the failure plain in the
service's log, in ``/readyz`` where readiness depends on it, and in the answer a client gets.
(The ca-injector binding taken away: tests/e2e/test_certs.py.)

The module has a control plane of its own (it edits deploy/'s RBAC)."""

from __future__ import annotations

import copy
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.cluster import NAMESPACE, SECRET, Cluster, Service
from tests.e2e.conftest import start_cluster
from tests.e2e.objects import scope_lease
from tests.e2e.ops import (
    CLUSTER_ROLE,
    SECRET_READER_BINDING,
    SECRET_WRITER_BINDING,
    SERVICE_ACCOUNT_USER,
    example,
    give_back,
    log_messages,
    log_records,
    registered,
    secret_data,
    take_away,
)
from tests.e2e.testenv import Kubectl, Result, control_plane, free_port, wait_until

#: What is judged is deploy/'s RBAC and how the service reports a missing permission: Python in both
#: builds, and a control plane of its own. So: the Python-build run only.
pytestmark = pytest.mark.one_build

NS = "e2e-rbac"
CLAIMED = "e2e-claimed"  # a namespace-restricted operator's namespace (it holds the marker Lease)
TOPOLOGY = "gb200"
INFERENCE_POOL_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    # A *.k8s.io group needs the API-review annotation ("unapproved, …" is accepted, as for test stand-ins).
    "metadata": {
        "name": "inferencepools.inference.networking.k8s.io",
        "annotations": {"api-approved.kubernetes.io": "unapproved, end-to-end test stand-in"},
    },
    "spec": {
        "group": "inference.networking.k8s.io",
        "names": {
            "kind": "InferencePool",
            "listKind": "InferencePoolList",
            "plural": "inferencepools",
            "singular": "inferencepool",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}
FORBIDDEN = 'is forbidden: User "' + SERVICE_ACCOUNT_USER + '" cannot'


@pytest.fixture(scope="module")
def cluster(bin_dir: Path) -> Iterator[Cluster]:
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="dynamo-webhook-e2e-rbac-") as tmp:
        kubectl = Kubectl(bin_dir / "kubectl", cp.kubeconfig)
        # The InferencePool API is served before the service's first (cached) discovery.
        kubectl.apply(INFERENCE_POOL_CRD)
        kubectl(
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/inferencepools.inference.networking.k8s.io",
        )
        wait_until(
            lambda: cp.raw("GET", "/apis/inference.networking.k8s.io")[0] == 200,
            30,
            "InferencePool discovery",
        )
        c = start_cluster(cp, kubectl, Path(tmp), "--feature-grove")
        try:
            for ns in (NS, CLAIMED):
                kubectl("create", "namespace", ns)
            yield c
        finally:
            c.service.stop()


def dry_run(kubectl: Kubectl, obj: dict[str, Any]) -> Result:
    return kubectl(
        "create", "--dry-run=server", "-o", "name", "-f", "-", input=yaml.safe_dump(obj), check=False
    )


def denial(result: Result) -> str:
    """The refusal as kubectl prints it."""
    assert result.returncode == 1, result.stdout
    return result.stderr.strip()


def topology_dgd(name: str = "topo", topology: str = TOPOLOGY, domain: str = "rack") -> dict[str, Any]:
    obj = example("dgd-agg-v1beta1.yaml", NS, name)  # on the Grove pathway (the service runs with Grove on)
    obj["spec"]["topologyConstraint"] = {"clusterTopologyName": topology, "packDomain": domain}
    return obj


def epp_dgd() -> dict[str, Any]:
    obj = example("dgd-agg-v1beta1.yaml", NS, "with-epp")
    epp = copy.deepcopy(obj["spec"]["components"][0])
    config = {
        "plugins": [{"type": "single-profile-handler"}],
        "schedulingProfiles": [
            {"name": "default", "plugins": [{"pluginRef": "single-profile-handler", "weight": 1}]}
        ],
    }
    epp.update(name="Epp", type="epp", replicas=1, eppConfig={"config": config})
    obj["spec"]["components"].append(epp)
    return obj


def outside_grove(namespace: str) -> dict[str, Any]:
    """A DGD the webhook refuses (a priority class needs the Grove pathway, which it opts out of)."""
    obj = example("dgd-agg-v1beta1.yaml", namespace, "priority")
    obj["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    obj["spec"]["priorityClassName"] = "high"
    return obj


def without_rule(cluster: Cluster, api_group: str) -> dict[str, Any]:
    """The deploy/ ClusterRole with its rule for ``api_group`` taken out."""
    role = registered(cluster, *CLUSTER_ROLE)
    rules = [r for r in role["rules"] if api_group not in r["apiGroups"]]
    assert len(rules) == len(role["rules"]) - 1
    role["rules"] = rules
    return role


def can_i(cluster: Cluster, *args: str) -> bool:
    return cluster.sa_kubectl()("auth", "can-i", *args, check=False).returncode == 0


def test_the_service_holds_the_deploy_service_account_and_no_more(cluster: Cluster) -> None:
    whoami = cluster.sa_kubectl()("auth", "whoami", "-o", "json").json()
    assert whoami["status"]["userInfo"]["username"] == SERVICE_ACCOUNT_USER
    # With that token the cert loop created the Secret and injected every caBundle (start_cluster
    # waited for it); what the token may do is what deploy/ grants, by name where deploy/ says so.
    assert set(secret_data(cluster.kubectl)) == {"ca.crt", "ca.key", "tls.crt", "tls.key"}
    allowed = [
        ("get", f"secrets/{SECRET}", "-n", NAMESPACE),
        ("update", f"secrets/{SECRET}", "-n", NAMESPACE),
        ("create", "secrets", "-n", NAMESPACE),
        ("patch", "validatingwebhookconfigurations/dynamo-webhook-validating"),
        ("patch", "customresourcedefinitions/dynamographdeployments.nvidia.com"),
        ("watch", "leases/dynamo-operator-namespace-scope", "-A"),
        ("get", "clustertopologybindings.grove.io/any-name"),
    ]
    refused = [
        ("get", "secrets/other", "-n", NAMESPACE),
        ("list", "secrets", "-n", NAMESPACE),
        ("update", "secrets/other", "-n", NAMESPACE),
        ("patch", "validatingwebhookconfigurations/another-operator"),
        ("patch", "customresourcedefinitions/dynamocheckpoints.nvidia.com"),
        ("list", "leases", "-A"),
        ("list", "clustertopologybindings.grove.io"),
        ("create", "dynamographdeployments.nvidia.com", "-n", NS),
    ]
    assert [a for a in allowed if not can_i(cluster, *a)] == []
    assert [r for r in refused if can_i(cluster, *r)] == []


def test_live_lookups_work_with_the_token_and_say_what_a_missing_rule_breaks(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    kubectl.apply(
        {
            "apiVersion": "grove.io/v1alpha1",
            "kind": "ClusterTopologyBinding",
            "metadata": {"name": TOPOLOGY},
            "spec": {
                "levels": [
                    {"domain": "zone", "key": "topology.kubernetes.io/zone"},
                    {"domain": "rack", "key": "example.com/rack"},
                    {"domain": "host", "key": "kubernetes.io/hostname"},
                ]
            },
        }
    )
    # The ClusterTopologyBinding is read by its name with the token ...
    assert dry_run(kubectl, topology_dgd()).returncode == 0
    assert denial(dry_run(kubectl, topology_dgd(domain="row"))) == (
        'The DynamoGraphDeployment "topo" is invalid: spec.topologyConstraint.packDomain: Invalid value: "row": does not exist in ClusterTopologyBinding '
        f'"{TOPOLOGY}"; available domains: [host rack zone]'
    )
    assert denial(dry_run(kubectl, topology_dgd(topology="missing"))) == (
        'The DynamoGraphDeployment "topo" is invalid: spec.topologyConstraint.clusterTopologyName: Invalid value: "missing": references a ClusterTopologyBinding '
        "resource that was not found"
    )
    # ... and InferencePool discovery (open to every authenticated client) finds the served API.
    epp = dry_run(kubectl, epp_dgd())
    assert epp.returncode == 0, epp.stderr

    # The ClusterTopologyBinding rule taken away: the request is refused with the API server's reason.
    kubectl.apply(without_rule(cluster, "grove.io"), "--server-side", "--force-conflicts")
    reason = (
        f'clustertopologybindings.grove.io "{TOPOLOGY}" {FORBIDDEN} get resource "clustertopologybindings" '
        'in API group "grove.io" at the cluster scope'
    )
    refused = wait_until(
        lambda: (r := dry_run(kubectl, topology_dgd())).returncode == 1 and r,
        15,
        "the look-up to be forbidden",
    )
    assert denial(refused) == (
        'The DynamoGraphDeployment "topo" is invalid: '
        f'spec.topologyConstraint.clusterTopologyName: Invalid value: "{TOPOLOGY}": failed to read '
        f"ClusterTopologyBinding: {reason}"
    )
    warnings = [r for r in log_records(service) if r.get("msg") == "reading ClusterTopologyBinding failed"]
    assert warnings and warnings[-1]["level"] == "warning" and warnings[-1]["binding"] == TOPOLOGY
    assert warnings[-1]["error"] == f"403 Forbidden: {reason}"
    review = [r for r in log_records(service) if r.get("msg") == "review" and r.get("allowed") is False][-1]
    assert reason in review["detail"]
    # A per-request failure: readiness does not depend on it.
    assert service.readyz() == (200, {"status": "ready"})
    give_back(cluster, *CLUSTER_ROLE)
    wait_until(lambda: dry_run(kubectl, topology_dgd()).returncode == 0, 15, "the look-up allowed again")


def test_lease_watcher_works_with_the_token_and_a_missing_rule_keeps_it_unready(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    assert dry_run(kubectl, outside_grove(CLAIMED)).returncode == 1
    kubectl.apply(scope_lease(CLAIMED, duration=300))
    wait_until(
        lambda: dry_run(kubectl, outside_grove(CLAIMED)).returncode == 0,
        15,
        "the claimed namespace left alone",
    )
    assert dry_run(kubectl, outside_grove(NS)).returncode == 1
    kubectl("delete", "lease", "dynamo-operator-namespace-scope", "-n", CLAIMED)
    wait_until(
        lambda: dry_run(kubectl, outside_grove(CLAIMED)).returncode == 1, 15, "the namespace checked again"
    )

    # The Lease rule taken away: a (re)started service cannot list the Leases; it says so and
    # stays unready (it cannot tell which namespaces to leave alone).
    kubectl.apply(without_rule(cluster, "coordination.k8s.io"), "--server-side", "--force-conflicts")
    service.stop()
    service.start()
    reason = (
        '403 Forbidden: leases.coordination.k8s.io "dynamo-operator-namespace-scope" '
        + FORBIDDEN
        + ' list resource "leases" in API group "coordination.k8s.io" at the cluster scope'
    )
    expected = (503, {"status": "not ready", "reasons": [f"namespace-scope Leases not listed yet: {reason}"]})
    wait_until(lambda: service.readyz() == expected, 30, "/readyz naming the forbidden Lease list")
    assert f"watch /apis/coordination.k8s.io/v1/leases failed ({reason}); relisting in" in " ".join(
        log_messages(service, "warning")
    )
    give_back(cluster, *CLUSTER_ROLE)
    started = time.monotonic()
    service.wait_ready(30)
    print(f"ready {time.monotonic() - started:.1f} s after the Lease rule came back")


def test_secret_rules_taken_away(cluster: Cluster, tmp_path: Path) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    service.wait_ready()
    # Without the reader binding the running loop cannot read its Secret. It keeps serving the
    # valid pair it has (ready), and says what is missing on every pass.
    take_away(cluster, *SECRET_READER_BINDING)
    reason = (
        f'403 Forbidden: secrets "{SECRET}" {FORBIDDEN} get resource "secrets" in API group "" '
        f'in the namespace "{NAMESPACE}"'
    )
    kubectl("annotate", "secret", SECRET, "-n", NAMESPACE, "example.com/touched=1")  # a pass now
    wait_until(
        lambda: f"certificate reconcile failed: Kubernetes API: {reason}" in log_messages(service, "warning"),
        15,
        "the reconcile failure in the log",
    )
    assert service.readyz() == (200, {"status": "ready"})
    # A fresh replica (empty cert dir) cannot get a serving pair: it does not listen, and its log
    # says why until the binding is back.
    fresh = Service(tmp_path, service.kubeconfig, port=free_port())
    fresh.start()
    try:

        def waiting() -> bool:
            records = [r for r in log_records(fresh) if r.get("msg") == "waiting for a serving certificate"]
            return bool(records) and records[-1]["errors"] == [f"Kubernetes API: {reason}"]

        wait_until(waiting, 30, "the fresh replica's log naming the forbidden read")
        assert fresh.readyz() == (0, "no ca.crt yet")
        give_back(cluster, *SECRET_READER_BINDING)
        fresh.wait_ready(30)
    finally:
        fresh.stop()

    # Without the writer binding a needed renewal cannot be written; the log says so, the loaded
    # pair keeps serving, and the renewal happens once the binding is back.
    take_away(cluster, *SECRET_WRITER_BINDING)
    kubectl(
        "patch",
        "secret",
        SECRET,
        "-n",
        NAMESPACE,
        "--type=merge",
        "-p",
        json.dumps({"data": {"tls.crt": ""}}),
    )
    update = (
        f'403 Forbidden: secrets "{SECRET}" {FORBIDDEN} update resource "secrets" in API group "" '
        f'in the namespace "{NAMESPACE}"'
    )
    wait_until(
        lambda: f"certificate reconcile failed: Kubernetes API: {update}" in log_messages(service, "warning"),
        15,
        "the failed renewal in the log",
    )
    assert service.readyz() == (200, {"status": "ready"})
    give_back(cluster, *SECRET_WRITER_BINDING)
    wait_until(lambda: secret_data(kubectl).get("tls.crt"), 60, "the serving certificate renewed")
