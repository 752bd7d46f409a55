"""Live look-ups (the ClusterTopologyBinding of a topology constraint and of a KV transfer policy,
InferencePool discovery for EPP components) through the AdmissionContext hooks."""

from __future__ import annotations

from typing import Any

import pytest

from domain.admission import AdmissionContext, AdmissionSettings, LookupNotFound
from kinds import validate
from tests.admission_helpers import make_input
from tests.validation.assertions import assert_allowed, assert_invalid
from tests.validation.dgd_builders import component, dgd

KIND = "DynamoGraphDeployment"
JSON = dict[str, Any]
LEVELS = {"grove-topology": ("zone", "block", "rack", "host")}


def read(name: str) -> tuple[str, ...]:
    if name == "broken":
        raise RuntimeError("connection refused")
    if name not in LEVELS:
        raise LookupNotFound(name)
    return LEVELS[name]


def ctx(*, lookups: bool = True, pool: bool | None = True) -> AdmissionContext:
    def probe() -> bool:
        if pool is None:
            raise RuntimeError("discovery failed")
        return pool

    return AdmissionContext(
        AdmissionSettings(cluster_lookups=lookups), cluster_topology=read, inference_pool_available=probe
    )


def run(obj: JSON, context: AdmissionContext) -> Any:
    return validate(make_input("nvidia.com/v1beta1", KIND, "CREATE", obj), context)


def topo(
    name: str, pack: str, comp_pack: str | None = None, generation: int = 1, provider: str = "grove"
) -> JSON:
    comp = component(topologyConstraint={"packDomain": comp_pack}) if comp_pack else component()
    obj = dgd([comp], provider=provider, topologyConstraint={"clusterTopologyName": name, "packDomain": pack})
    obj["metadata"]["generation"] = generation
    return obj


def test_known_topology_allowed() -> None:
    assert_allowed(run(topo("grove-topology", "block", "rack"), ctx()))


@pytest.mark.parametrize(
    ("obj", "errors"),
    [
        (
            topo("missing", "rack"),
            [
                'spec.topologyConstraint.clusterTopologyName: Invalid value: "missing": references a ClusterTopologyBinding '
                "resource that was not found"
            ],
        ),
        (
            topo("broken", "rack"),
            [
                'spec.topologyConstraint.clusterTopologyName: Invalid value: "broken": failed to read ClusterTopologyBinding: '
                "connection refused"
            ],
        ),
        (
            topo("grove-topology", "row"),
            [
                'spec.topologyConstraint.packDomain: Invalid value: "row": does not exist in ClusterTopologyBinding '
                '"grove-topology"; available domains: [block host rack zone]'
            ],
        ),
        (
            topo("grove-topology", "rack", "row"),
            [
                'spec.components[0].topologyConstraint.packDomain: Invalid value: "row": does not exist in ClusterTopology '
                '"grove-topology"; available domains: [block host rack zone]'
            ],
        ),
        (
            topo("grove-topology", "rack", "zone"),
            [
                'spec.components[0].topologyConstraint.packDomain: Invalid value: "zone": must be equal to or narrower than '
                'the deployment-level domain "rack"'
            ],
        ),
    ],
)
def test_topology_lookup_errors(obj: JSON, errors: list[str]) -> None:
    assert_invalid(run(obj, ctx()), KIND, "graph", errors)


def test_topology_lookup_skipped_when_off_after_first_generation_or_off_grove() -> None:
    assert_allowed(run(topo("missing", "rack"), ctx(lookups=False)))
    assert_allowed(run(topo("missing", "rack", generation=2), ctx()))
    assert_allowed(run(topo("missing", "rack", provider="component"), ctx()))


def kv(name: str, domain: str) -> JSON:
    return dgd(
        provider="grove", experimental={"kvTransferPolicy": {"clusterTopologyName": name, "domain": domain}}
    )


def test_kv_policy_lookup() -> None:
    assert_allowed(run(kv("grove-topology", "rack"), ctx()))
    assert_invalid(
        run(kv("grove-topology", "row"), ctx()),
        KIND,
        "graph",
        [
            'spec.experimental.kvTransferPolicy.domain: Invalid value: "row": does not exist in ClusterTopologyBinding '
            '"grove-topology"; available domains: [block host rack zone]'
        ],
    )
    assert_invalid(
        run(kv("missing", "rack"), ctx()),
        KIND,
        "graph",
        [
            'spec.experimental.kvTransferPolicy.clusterTopologyName: Invalid value: "missing": references a '
            "ClusterTopologyBinding resource that was not found"
        ],
    )


def epp() -> JSON:
    return dgd([component("epp", "epp", eppConfig={"config": {}})])


def test_inference_pool_probe() -> None:
    assert_allowed(run(epp(), ctx(pool=True)))
    assert_allowed(run(epp(), ctx(lookups=False, pool=False)))
    assert_invalid(
        run(epp(), ctx(pool=False)),
        KIND,
        "graph",
        [
            "spec.components[0].type: Forbidden: cannot deploy EPP component: InferencePool API group "
            "(inference.networking.k8s.io) is not available in the cluster; install the Gateway API Inference Extension "
            "before deploying EPP components"
        ],
    )
    assert_invalid(
        run(epp(), ctx(pool=None)),
        KIND,
        "graph",
        [
            "spec.components[0].type: Forbidden: cannot deploy EPP component: detect InferencePool API availability: "
            "discovery failed"
        ],
    )
