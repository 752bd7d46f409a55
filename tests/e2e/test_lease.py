"""The namespace-scope Lease through the API server: while a valid ``dynamo-operator-namespace-scope``
Lease marks a namespace as owned by a namespace-restricted operator, requests there pass the service
untouched (no defaults, no refusal); deleting the Lease restores checking."""

from __future__ import annotations

from typing import Any

import yaml

from tests.e2e.admission import assert_refused
from tests.e2e.cluster import Cluster
from tests.e2e.objects import LEASE_NAME, in_namespace, namespace, scope_lease, user_view
from tests.e2e.schema_layer import apply_schema
from tests.e2e.testenv import ROOT, wait_until

Obj = dict[str, Any]
REFUSED = (
    ROOT
    / "tests"
    / "fixtures"
    / "conversion"
    / "manifests"
    / "v1beta1__DynamoGraphDeployment__vllm-agg__vllm-agg.yaml"
)


def _obj(ns: str, name: str) -> Obj:
    return in_namespace(yaml.safe_load(REFUSED.read_text()), ns, name)


def test_a_valid_lease_leaves_its_namespace_alone_until_deleted(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    ns = namespace(kubectl, "e2e-restricted")
    # This manifest is refused (runtimeVersionOverride rules) in an ordinary namespace, with exactly
    # the service's Status, as in the admission scenarios.
    assert_refused(cluster, _obj(ns, "before"))
    kubectl.apply(scope_lease(ns))
    # The watcher sees the Lease within moments: the same object is then admitted untouched.
    wait_until(
        lambda: (
            kubectl("create", "-f", "-", input=yaml.safe_dump(_obj(ns, "owned")), check=False).returncode == 0
        ),
        30,
        "the Lease to exclude the namespace",
        0.5,
    )
    stored = kubectl.get("dynamographdeployments.v1beta1.nvidia.com", "owned", ns)
    assert user_view(stored) == user_view(apply_schema(_obj(ns, "owned"))), (
        "defaulting ran in an excluded namespace"
    )

    kubectl("delete", "lease", LEASE_NAME, "-n", ns)
    wait_until(
        lambda: (
            kubectl("create", "-f", "-", input=yaml.safe_dump(_obj(ns, "after")), check=False).returncode != 0
        ),
        30,
        "checking to come back",
        0.5,
    )
    assert_refused(cluster, _obj(ns, "after"))
