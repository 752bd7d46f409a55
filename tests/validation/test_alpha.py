"""The v1alpha1 compatibility pass (upstream ``validateDynamoGraphDeploymentV1alpha1``) and v1alpha1
requests (converted to the hub)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from domain.admission import AdmissionContext
from kinds import validate
from tests.admission_helpers import make_input
from tests.validation.assertions import assert_allowed, assert_invalid
from tests.validation.conversion_probe import require_conversion
from tests.validation.dgd_builders import IMAGE, component, dgd

JSON = dict[str, Any]
DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"
OVERRIDE = "is required when the specified main container image has no parseable semantic-version tag"


@pytest.fixture(autouse=True)
def _conversion() -> None:
    require_conversion(DGD)
    require_conversion(DCD)


def svc(**kw: Any) -> JSON:
    s: JSON = {"componentType": "worker", "replicas": 1, "extraPodSpec": {"mainContainer": {"image": IMAGE}}}
    s.update(kw)
    return s


def adgd(services: dict[str, Any], **spec: Any) -> JSON:
    s: JSON = {"backendFramework": "vllm", "services": services}
    s.update(spec)
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": DGD,
        "metadata": {
            "name": "g.x",
            "namespace": "ns",
            "annotations": {
                "nvidia.com/workload-provider": "component",
                "nvidia.com/dynamo-operator-origin-version": "1.1.0",
            },
        },
        "spec": s,
    }


def adcd(**spec: Any) -> JSON:
    s = svc()
    s.update(spec)
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": DCD,
        "metadata": {
            "name": "c",
            "namespace": "ns",
            "ownerReferences": [
                {"apiVersion": "nvidia.com/v1beta1", "kind": DGD, "name": "my.graph", "uid": "u"}
            ],
        },
        "spec": s,
    }


def create(obj: JSON) -> Any:
    return validate(make_input(obj["apiVersion"], obj["kind"], "CREATE", obj), AdmissionContext())


def update(new: JSON, old: JSON) -> Any:
    return validate(make_input(new["apiVersion"], new["kind"], "UPDATE", new, old), AdmissionContext())


W = "spec.services[w]"
ALPHA_CASES: list[tuple[str, JSON, list[str]]] = [
    (
        "service vllm backend annotation",
        adgd({"w": svc(annotations={"nvidia.com/vllm-distributed-executor-backend": "x"})}),
        [
            f'{W}.annotations[nvidia.com/vllm-distributed-executor-backend]: Invalid value: "x": must be "mp" or "ray"'
        ],
    ),
    (
        "volume mount point",
        adgd({"w": svc(volumeMounts=[{"name": "v"}])}),
        [f"{W}.volumeMounts[0].mountPoint: Required value: is required when useAsCompilationCache is false"],
    ),
    (
        "compilation cache needs no mount point",
        adgd({"w": svc(volumeMounts=[{"name": "v", "useAsCompilationCache": True}])}),
        [],
    ),
    (
        "ingress host",
        adgd({"w": svc(ingress={"enabled": True})}),
        [f"{W}.ingress.host: Required value: is required when ingress is enabled"],
    ),
    (
        "eppConfig exactly one",
        adgd({"w": svc(componentType="epp", eppConfig={})}),
        [f"{W}.eppConfig: Forbidden: exactly one of configMapRef or config is required"],
    ),
    (
        "frontend sidecar clash",
        adgd(
            {
                "w": svc(
                    frontendSidecar={"image": "x:1.0.0"},
                    extraPodSpec={
                        "mainContainer": {"image": IMAGE},
                        "containers": [{"name": "sidecar-frontend", "image": "y"}],
                    },
                )
            }
        ),
        [
            f'{W}.frontendSidecar: Forbidden: cannot inject frontend sidecar: a container named "sidecar-frontend" '
            "already exists in extraPodSpec.containers"
        ],
    ),
    (
        "intra-pod numShadows (and the hub's discovery-mode rule)",
        adgd(
            {
                "w": svc(
                    failover={"enabled": True, "mode": "intraPod", "numShadows": 2},
                    gpuMemoryService={"enabled": True},
                    resources={"limits": {"gpu": "1"}},
                )
            }
        ),
        [
            'metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: Invalid value: "": must be "container" when '
            "intra-pod failover is configured",
            f'{W}.failover.numShadows: Invalid value: 2: is invalid for mode="intraPod": intraPod uses a fixed 1 primary + '
            '1 shadow sidecar; use failover.mode="interPod" to configure numShadows',
        ],
    ),
    (
        "pvc name",
        adgd({"w": svc()}, pvcs=[{"name": ""}]),
        ["spec.pvcs[0].name: Required value: is required"],
    ),
    (
        "runtime version at source paths, services in name order",
        adgd({"b": svc(extraPodSpec={}), "a": svc(extraPodSpec={"mainContainer": {"image": "r:latest"}})}),
        [
            f"spec.services[a].runtimeVersionOverride: Required value: {OVERRIDE}",
            "spec.services[b].extraPodSpec.mainContainer.image: Required value: is required",
        ],
    ),
    (
        "hub rules report hub paths",
        adgd({"w": svc(failover={"enabled": True}, resources={"limits": {"gpu": "1"}})}),
        [
            'metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: Invalid value: "": must be "container" when '
            "intra-pod failover is configured",
            "spec.components[0].experimental.failover: Forbidden: gpuMemoryService is required when failover mode is "
            '"IntraPod"',
        ],
    ),
    (
        "alpha GMS disabled is dormant",
        adgd({"w": svc(gpuMemoryService={"enabled": False}, failover={"enabled": False})}),
        [],
    ),
]


@pytest.mark.parametrize(("label", "obj", "errors"), ALPHA_CASES, ids=[c[0] for c in ALPHA_CASES])
def test_alpha_dgd_create(label: str, obj: JSON, errors: list[str]) -> None:
    d = create(obj)
    if errors:
        assert_invalid(d, DGD, "g.x", errors)
    else:
        assert_allowed(d)


def test_alpha_warnings() -> None:
    d = create(
        adgd({"w": svc(dynamoNamespace="old", autoscaling={"enabled": True}), "v": svc(dynamoNamespace="")})
    )
    assert_allowed(
        d,
        [
            'spec.services[w].dynamoNamespace is deprecated and ignored. Value "old" will be replaced with "ns-g-x". '
            "Remove this field from your configuration",
            "spec.services[w].autoscaling is deprecated and ignored. Use DynamoGraphDeploymentScalingAdapter with HPA, "
            "KEDA, or Planner for autoscaling instead. See docs/kubernetes/autoscaling.md",
        ],
    )


def test_alpha_warnings_come_with_errors() -> None:
    d = create(adgd({"w": svc(dynamoNamespace="old", globalDynamoNamespace=True, ingress={"enabled": True})}))
    assert_invalid(d, DGD, "g.x", [f"{W}.ingress.host: Required value: is required when ingress is enabled"])
    assert d.warnings == [
        'spec.services[w].dynamoNamespace is deprecated and ignored. Value "old" will be replaced with "dynamo". '
        "Remove this field from your configuration"
    ]


def test_null_service_reproduces_the_recovered_panic() -> None:
    d = create(adgd({"w": svc(), "x": None}))
    assert not d.allowed
    assert d.status == {
        "code": 500,
        "message": "panic: runtime error: invalid memory address or nil pointer dereference [recovered]",
    }


def test_native_hub_objects_reach_the_pass_through_converted_fields() -> None:
    comp = component(
        "w",
        gpus="1",
        experimental={"gpuMemoryService": {}, "failover": {"mode": "IntraPod", "numShadows": 2}},
    )
    obj = dgd([comp], annotations={"nvidia.com/dynamo-kube-discovery-mode": "container"})
    assert_invalid(
        create(obj),
        DGD,
        "graph",
        [
            f'{W}.failover.numShadows: Invalid value: 2: is invalid for mode="intraPod": intraPod uses a fixed 1 primary + '
            '1 shadow sidecar; use failover.mode="interPod" to configure numShadows'
        ],
    )
    comp = component("w")
    comp["podTemplate"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "v", "mountPath": ""}]
    assert_invalid(
        create(dgd([comp])),
        DGD,
        "graph",
        [f"{W}.volumeMounts[0].mountPoint: Required value: is required when useAsCompilationCache is false"],
    )


def test_alpha_update_ratchet_and_components_index() -> None:
    old = adgd({"b": svc(), "a": svc(extraPodSpec={"mainContainer": {"image": "r:latest"}})})
    # Unchanged legacy pair: ratcheted.
    assert_allowed(update(copy.deepcopy(old), old))
    new = copy.deepcopy(old)
    new["spec"]["services"]["b"]["extraPodSpec"] = {"mainContainer": {"image": "r:custom"}}
    assert_invalid(
        update(new, old), DGD, "g.x", [f"spec.services[b].runtimeVersionOverride: Required value: {OVERRIDE}"]
    )
    new = copy.deepcopy(old)
    new["spec"]["services"]["b"]["multinode"] = {"nodeCount": 2}
    d = update(new, old)
    assert not d.allowed
    # services sort to [a, b] in the hub list, so b is components[1].
    assert "spec.components[1].multinode: Invalid value: " in d.message


def test_alpha_update_warnings_dropped_when_update_rules_fail() -> None:
    old = adgd({"w": svc(dynamoNamespace="old")})
    same = copy.deepcopy(old)
    d = update(same, old)
    assert d.allowed
    assert len(d.warnings) == 1
    changed = copy.deepcopy(old)
    changed["spec"]["backendFramework"] = "sglang"
    d = update(changed, old)
    assert not d.allowed
    assert d.warnings == ["Changing spec.backendFramework may cause unexpected behavior"]


def test_alpha_dcd_warnings_and_image() -> None:
    d = create(adcd(dynamoNamespace="x", autoscaling={}))
    assert_allowed(
        d,
        [
            'spec.dynamoNamespace is deprecated and ignored. Value "x" will be replaced with "ns-my-graph". Remove this '
            "field from your configuration",
            "spec.autoscaling is deprecated and ignored. Use DynamoGraphDeploymentScalingAdapter with HPA, KEDA, or "
            "Planner for autoscaling instead. See docs/kubernetes/autoscaling.md",
        ],
    )
    assert_invalid(
        create(adcd(extraPodSpec={})),
        DCD,
        "c",
        ["spec.extraPodSpec.mainContainer.image: Required value: is required"],
    )
    # A DCD never requires runtimeVersionOverride, whatever the tag.
    assert_allowed(create(adcd(extraPodSpec={"mainContainer": {"image": "r:latest"}})))


def test_alpha_dcd_update_image_ratchet() -> None:
    old = adcd()
    new = adcd(extraPodSpec={"mainContainer": {"command": ["x"]}})
    assert_invalid(
        update(new, old), DCD, "c", ["spec.extraPodSpec.mainContainer.image: Required value: is required"]
    )
    assert_allowed(update(copy.deepcopy(new), new))


def test_the_rules_read_a_v1alpha1_object_converted_without_its_managed_fields() -> None:
    from conversion.dgd import CONVERTER
    from conversion.hub import convert
    from validation.alpha import to_hub

    obj = adgd({"w": svc(dynamoNamespace="x")})
    obj["metadata"]["managedFields"] = [
        {"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}
    ]
    sent = copy.deepcopy(obj)
    hub = to_hub(obj, CONVERTER)
    assert obj == sent  # the request's object is not touched
    full = convert(CONVERTER, obj, "nvidia.com/v1beta1")
    assert full["metadata"].pop("managedFields") == sent["metadata"]["managedFields"]
    assert hub == full
    # The answers are those of the object without them.
    bare = copy.deepcopy(obj)
    del bare["metadata"]["managedFields"]
    old = copy.deepcopy(obj)
    old["spec"]["services"]["w"]["replicas"] = 2
    bare_old = copy.deepcopy(old)
    del bare_old["metadata"]["managedFields"]
    assert update(obj, old) == update(bare, bare_old)
    assert create(obj) == create(bare)
