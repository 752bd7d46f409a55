"""DGD UPDATE rules: immutability, replica lock, warnings with denials."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from domain.admission import AdmissionContext, AdmissionSettings, UserInfo
from kinds import validate
from tests.admission_helpers import make_input
from tests.validation.assertions import assert_allowed, assert_invalid
from tests.validation.dgd_builders import component, dgd

KIND = "DynamoGraphDeployment"
C0 = "spec.components[0]"
JSON = dict[str, Any]
OPERATOR = UserInfo(username="system:serviceaccount:dynamo-system:dynamo-operator")
PLANNER = UserInfo(username="system:serviceaccount:team-a:planner-serviceaccount")
OTHER_SA = UserInfo(username="system:serviceaccount:team-a:builder")


def run(new: JSON, old: JSON, user: UserInfo | None = None, ctx: AdmissionContext | None = None) -> Any:
    kwargs = {"user": user} if user is not None else {}
    return validate(
        make_input("nvidia.com/v1beta1", KIND, "UPDATE", new, old, **kwargs), ctx or AdmissionContext()
    )


def changed(base: JSON, mutate: Callable[[JSON], None]) -> JSON:
    out = copy.deepcopy(base)
    mutate(out)
    return out


def comp0(o: JSON) -> JSON:
    c: JSON = o["spec"]["components"][0]
    return c


BASE = dgd([component("worker", gpus="1")])


def test_unchanged_update_allowed() -> None:
    assert_allowed(run(copy.deepcopy(BASE), copy.deepcopy(BASE)))


UPDATE_CASES: list[tuple[str, JSON, JSON, list[str]]] = [
    (
        "provider changed",
        changed(
            BASE, lambda o: o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"})
        ),
        BASE,
        ['metadata.annotations[nvidia.com/workload-provider]: Invalid value: "grove": field is immutable'],
    ),
    (
        "provider removed",
        changed(BASE, lambda o: o["metadata"]["annotations"].pop("nvidia.com/workload-provider")),
        BASE,
        ["metadata.annotations[nvidia.com/workload-provider]: Invalid value: null: field is immutable"],
    ),
    (
        "provider materialized by a user",
        BASE,
        changed(BASE, lambda o: o["metadata"]["annotations"].pop("nvidia.com/workload-provider")),
        [
            "metadata.annotations[nvidia.com/workload-provider]: Forbidden: may only be materialized by the Dynamo operator"
        ],
    ),
    (
        "components added and removed",
        changed(BASE, lambda o: o["spec"]["components"].extend([component("b"), component("a")])),
        changed(BASE, lambda o: o["spec"]["components"].append(component("x"))),
        [
            "spec.components: Forbidden: component topology is immutable and cannot be modified after creation: "
            "components added: [a b], components removed: [x]"
        ],
    ),
    (
        "single node to multinode",
        changed(BASE, lambda o: comp0(o).update({"multinode": {"nodeCount": 2}})),
        BASE,
        [
            f'{C0}.multinode: Invalid value: {{"nodeCount":2}}: cannot change node topology between single-node and '
            "multi-node after creation"
        ],
    ),
    (
        "multinode to single node",
        BASE,
        changed(BASE, lambda o: comp0(o).update({"multinode": {"nodeCount": 3}})),
        [
            f"{C0}.multinode: Invalid value: null: cannot change node topology between single-node and multi-node after "
            "creation"
        ],
    ),
    (
        "replicas with scaling adapter",
        changed(BASE, lambda o: comp0(o).update({"replicas": 3, "scalingAdapter": {}})),
        changed(BASE, lambda o: comp0(o).update({"scalingAdapter": {}})),
        [
            f"{C0}.replicas: Forbidden: cannot be modified directly when scaling adapter is enabled; scale or update the "
            "related DynamoGraphDeploymentScalingAdapter instead"
        ],
    ),
    (
        "scaling adapter only in old, nil replicas counts as 1",
        changed(BASE, lambda o: comp0(o).update({"replicas": 2})),
        changed(BASE, lambda o: (comp0(o).pop("replicas"), comp0(o).update({"scalingAdapter": {}}))),
        [
            f"{C0}.replicas: Forbidden: cannot be modified directly when scaling adapter is enabled; scale or update the "
            "related DynamoGraphDeploymentScalingAdapter instead"
        ],
    ),
    (
        "component topology added",
        changed(
            BASE,
            lambda o: (
                comp0(o).update({"topologyConstraint": {"packDomain": "rack"}}),
                o["spec"].update({"topologyConstraint": {"clusterTopologyName": "t", "packDomain": "zone"}}),
            ),
        ),
        changed(
            BASE,
            lambda o: o["spec"].update(
                {"topologyConstraint": {"clusterTopologyName": "t", "packDomain": "zone"}}
            ),
        ),
        [
            f'{C0}.topologyConstraint: Invalid value: {{"packDomain":"rack"}}: is immutable and cannot be added, '
            "removed, or changed after creation; delete and recreate the DynamoGraphDeployment to change topology "
            "constraints",
        ],
    ),
    (
        "spec topology changed",
        changed(
            BASE,
            lambda o: o["spec"].update(
                {"topologyConstraint": {"clusterTopologyName": "t", "packDomain": "rack"}}
            ),
        ),
        changed(
            BASE,
            lambda o: o["spec"].update(
                {"topologyConstraint": {"clusterTopologyName": "t", "packDomain": "zone"}}
            ),
        ),
        [
            'spec.topologyConstraint: Invalid value: {"clusterTopologyName":"t","packDomain":"rack"}: is immutable and '
            "cannot be added, removed, or changed after creation; delete and recreate the DynamoGraphDeployment to change "
            "topology constraints"
        ],
    ),
    (
        "inter-pod GMS toggled on",
        changed(
            BASE,
            lambda o: (
                o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"}),
                comp0(o).update({"experimental": {"gpuMemoryService": {"mode": "InterPod"}}}),
            ),
        ),
        changed(
            BASE,
            lambda o: (
                o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"}),
                comp0(o).update({"experimental": {"gpuMemoryService": {}}}),
            ),
        ),
        [
            f'{C0}.experimental.gpuMemoryService.mode: Invalid value: "InterPod": the inter-pod GMS layout cannot be '
            "toggled after creation; delete and recreate the DynamoGraphDeployment"
        ],
    ),
    (
        "experimental removed",
        changed(
            BASE, lambda o: o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"})
        ),
        changed(
            BASE,
            lambda o: (
                o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"}),
                comp0(o).update(
                    {
                        "experimental": {
                            "gpuMemoryService": {"mode": "InterPod"},
                            "grove": {"forceScalingGroup": True},
                        }
                    }
                ),
            ),
        ),
        [
            f"{C0}.experimental.gpuMemoryService.mode: Invalid value: null: the inter-pod GMS layout cannot be toggled "
            "after creation; delete and recreate the DynamoGraphDeployment",
            f"{C0}.experimental.grove.forceScalingGroup: Invalid value: null: cannot be toggled after creation; delete and "
            "recreate the DynamoGraphDeployment to change it",
        ],
    ),
    (
        "forceScalingGroup explicit false equals unset",
        changed(
            BASE,
            lambda o: (
                o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"}),
                comp0(o).update({"experimental": {"grove": {"forceScalingGroup": False}}}),
            ),
        ),
        changed(
            BASE, lambda o: o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"})
        ),
        [],
    ),
    (
        "power annotation added",
        changed(
            BASE,
            lambda o: comp0(o)["podTemplate"].update(
                {"metadata": {"annotations": {"dynamo.nvidia.com/gpu-power-limit": "300"}}}
            ),
        ),
        BASE,
        [
            f'{C0}.podTemplate.metadata.annotations[dynamo.nvidia.com/gpu-power-limit]: Invalid value: "300": field is '
            "immutable"
        ],
    ),
    (
        "GPU count and node count locked by the power annotation",
        changed(
            BASE,
            lambda o: (
                comp0(o)["podTemplate"].update(
                    {"metadata": {"annotations": {"dynamo.nvidia.com/gpu-power-limit": "300"}}}
                ),
                comp0(o)["podTemplate"]["spec"]["containers"][0]["resources"]["limits"].update(
                    {"nvidia.com/gpu": "2"}
                ),
            ),
        ),
        changed(
            BASE,
            lambda o: comp0(o)["podTemplate"].update(
                {"metadata": {"annotations": {"dynamo.nvidia.com/gpu-power-limit": "300"}}}
            ),
        ),
        [
            f'{C0}.podTemplate.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "2": field is immutable'
        ],
    ),
    (
        "kv policy changed (empty enforcement equals required)",
        changed(
            BASE,
            lambda o: o["spec"].update(
                {
                    "experimental": {
                        "kvTransferPolicy": {"labelKey": "topology.kubernetes.io/zone", "domain": "rack"}
                    }
                }
            ),
        ),
        changed(
            BASE,
            lambda o: o["spec"].update(
                {
                    "experimental": {
                        "kvTransferPolicy": {
                            "labelKey": "topology.kubernetes.io/zone",
                            "domain": "zone",
                            "enforcement": "required",
                        }
                    }
                }
            ),
        ),
        [
            'spec.experimental.kvTransferPolicy: Invalid value: {"labelKey":"topology.kubernetes.io/zone","domain":"rack"}: '
            "is immutable and cannot be added, removed, or changed after creation; delete and recreate the "
            "DynamoGraphDeployment to change the KV transfer policy"
        ],
    ),
    (
        "restart id during rolling update",
        changed(BASE, lambda o: o["spec"].update({"restart": {"id": "r2"}})),
        changed(
            BASE,
            lambda o: (
                o["spec"].update({"restart": {"id": "r1"}}),
                o.update({"status": {"rollingUpdate": {"phase": "InProgress"}}}),
            ),
        ),
        ['spec.restart.id: Invalid value: "r2": cannot be changed while a rolling update is InProgress'],
    ),
    (
        "runtime-version ratchet: new violation",
        changed(
            BASE, lambda o: comp0(o)["podTemplate"]["spec"]["containers"][0].update({"image": "r:latest"})
        ),
        BASE,
        [
            f"{C0}.runtimeVersionOverride: Required value: is required when the specified main container image has no "
            "parseable semantic-version tag"
        ],
    ),
    (
        "component override target changed",
        changed(
            BASE,
            lambda o: (
                o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"}),
                comp0(o).update(
                    {
                        "providerOverride": {
                            "apiVersion": "grove.io/v1alpha1",
                            "target": "PodCliqueTemplateSpec",
                            "value": {"topologyConstraint": {}},
                        }
                    }
                ),
            ),
        ),
        changed(
            BASE,
            lambda o: (
                o["metadata"]["annotations"].update({"nvidia.com/workload-provider": "grove"}),
                comp0(o).update(
                    {
                        "providerOverride": {
                            "apiVersion": "grove.io/v1alpha1",
                            "target": "PodCliqueScalingGroupConfig",
                            "value": {"topologyConstraint": {}},
                        }
                    }
                ),
            ),
        ),
        [f'{C0}.providerOverride.target: Invalid value: "PodCliqueTemplateSpec": field is immutable'],
    ),
]


@pytest.mark.parametrize(("label", "new", "old", "errors"), UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_update_rule(label: str, new: JSON, old: JSON, errors: list[str]) -> None:
    d = run(new, old)
    if errors:
        assert_invalid(d, KIND, "graph", errors)
    else:
        assert_allowed(d)


def test_legacy_image_is_ratcheted() -> None:
    legacy = changed(
        BASE, lambda o: comp0(o)["podTemplate"]["spec"]["containers"][0].update({"image": "r:latest"})
    )
    new = changed(legacy, lambda o: comp0(o).update({"replicas": 4}))
    # The stateless pass runs with the runtime-version rules off, so an unchanged legacy pair passes.
    assert_allowed(run(new, legacy))


def test_image_removed_is_reported() -> None:
    new = changed(BASE, lambda o: comp0(o)["podTemplate"]["spec"]["containers"][0].pop("image"))
    assert_invalid(
        run(new, BASE),
        KIND,
        "graph",
        [f"{C0}.podTemplate.spec.containers[0].image: Required value: is required"],
    )


def test_backend_change_warning_with_denial() -> None:
    new = changed(BASE, lambda o: o["spec"].update({"backendFramework": "sglang"}))
    d = run(new, BASE)
    assert_invalid(
        d,
        KIND,
        "graph",
        ['spec.backendFramework: Invalid value: "sglang": is immutable and cannot be changed after creation'],
    )
    assert d.warnings == ["Changing spec.backendFramework may cause unexpected behavior"]


def test_stateless_errors_short_circuit_update_rules() -> None:
    new = changed(BASE, lambda o: o["spec"].update({"backendFramework": "sglang", "priorityClassName": "p"}))
    d = run(new, BASE)
    assert_invalid(
        d,
        KIND,
        "graph",
        [
            'spec.priorityClassName: Forbidden: requires the Grove pathway, but workload provider "component" is selected'
        ],
    )
    assert d.warnings == []


@pytest.mark.parametrize(
    ("user", "allowed"),
    [
        (OPERATOR, True),
        (PLANNER, True),
        (OTHER_SA, False),
        (UserInfo(username="kubernetes-admin"), False),
        (UserInfo(), False),
    ],
)
def test_scaling_adapter_replica_exemptions(user: UserInfo, allowed: bool) -> None:
    old = changed(BASE, lambda o: comp0(o).update({"scalingAdapter": {}}))
    new = changed(old, lambda o: comp0(o).update({"replicas": 5}))
    assert run(new, old, user).allowed is allowed


@pytest.mark.parametrize(
    ("user", "allowed"),
    [
        (UserInfo(username="system:serviceaccount:team-a:autoscaler"), True),
        (UserInfo(username="system:serviceaccount:other-team:autoscaler"), True),  # any namespace
        (PLANNER, False),  # the default name is no longer exempt
        (OPERATOR, True),
        (UserInfo(username="autoscaler"), False),  # a user, not a service account
        (UserInfo(username="system:serviceaccount:autoscaler"), False),  # no namespace
    ],
)
def test_the_planner_service_account_is_a_setting(user: UserInfo, allowed: bool) -> None:
    ctx = AdmissionContext(settings=AdmissionSettings(planner_service_account="autoscaler"))
    old = changed(BASE, lambda o: comp0(o).update({"scalingAdapter": {}}))
    new = changed(old, lambda o: comp0(o).update({"replicas": 5}))
    assert run(new, old, user, ctx).allowed is allowed


def test_an_empty_planner_service_account_exempts_nobody() -> None:
    ctx = AdmissionContext(settings=AdmissionSettings(planner_service_account=""))
    old = changed(BASE, lambda o: comp0(o).update({"scalingAdapter": {}}))
    new = changed(old, lambda o: comp0(o).update({"replicas": 5}))
    assert not run(new, old, UserInfo(username="system:serviceaccount:team-a:"), ctx).allowed
    assert not run(new, old, PLANNER, ctx).allowed
    assert run(new, old, OPERATOR, ctx).allowed


def test_operator_may_materialize_provider() -> None:
    old = changed(BASE, lambda o: o["metadata"]["annotations"].pop("nvidia.com/workload-provider"))
    assert_allowed(run(BASE, old, OPERATOR))


def test_node_count_change_alone_is_allowed() -> None:
    old = changed(BASE, lambda o: comp0(o).update({"multinode": {"nodeCount": 2}}))
    new = changed(BASE, lambda o: comp0(o).update({"multinode": {"nodeCount": 4}}))
    assert_allowed(run(new, old))
