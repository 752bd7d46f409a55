"""DynamoComponentDeployment rules on hub objects."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from domain.admission import AdmissionContext, AdmissionSettings
from kinds import validate
from tests.admission_helpers import make_input
from tests.validation.assertions import assert_allowed, assert_invalid
from tests.validation.dgd_builders import container, dcd

KIND = "DynamoComponentDeployment"
JSON = dict[str, Any]
GROVE_ONLY = "is currently supported only for Grove-backed DynamoGraphDeployment components"


def create(obj: JSON, ctx: AdmissionContext | None = None) -> Any:
    return validate(make_input("nvidia.com/v1beta1", KIND, "CREATE", obj), ctx or AdmissionContext())


def update(new: JSON, old: JSON) -> Any:
    return validate(make_input("nvidia.com/v1beta1", KIND, "UPDATE", new, old), AdmissionContext())


def test_typical_dcd_allowed() -> None:
    assert_allowed(create(dcd(gpus="1")))


def test_non_semver_image_needs_no_override_on_a_dcd() -> None:
    assert_allowed(create(dcd(image="registry.example/runtime:custom")))
    assert_allowed(create(dcd(ctype="epp", image="r:latest", eppConfig={"config": {}})))


CREATE_CASES: list[tuple[str, JSON, list[str]]] = [
    (
        "missing main image",
        dcd(image=None),
        ["spec.podTemplate.spec.containers[0].image: Required value: is required"],
    ),
    (
        "grove-only fields are always forbidden",
        dcd(minAvailable=1, experimental={"grove": {"forceScalingGroup": True}}),
        [
            f"spec.minAvailable: Forbidden: {GROVE_ONLY}",
            f"spec.experimental.grove.forceScalingGroup: Forbidden: {GROVE_ONLY}",
        ],
    ),
    (
        "provider overrides are forbidden",
        dcd(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {}}),
        [
            "spec.providerOverride: Forbidden: provider overrides are supported only for components embedded in a "
            "DynamoGraphDeployment"
        ],
    ),
    (
        "elastic EP with the DCD's own backend",
        dcd(
            backendFramework="vllm",
            podTemplate={
                "spec": {
                    "containers": [container(args=["--enable-elastic-ep", "--data-parallel-backend", "ray"])]
                }
            },
        ),
        [
            "spec.podTemplate.spec.containers[0].command: Required value: elastic expert parallelism "
            "(--enable-elastic-ep with --data-parallel-backend ray) requires an explicit container command; the operator "
            "starts the single-pod Ray head by wrapping that command and cannot start it from the image ENTRYPOINT"
        ],
    ),
    (
        "epp without eppConfig, multinode and replicas",
        dcd(ctype="epp", replicas=0, multinode={"nodeCount": 2}),
        [
            "spec.multinode: Forbidden: EPP component cannot be multinode",
            "spec.replicas: Invalid value: 0: EPP component must have exactly 1 replica",
            "spec.eppConfig: Required value: is required for EPP components",
        ],
    ),
    (
        "inter-pod GMS on a frontend",
        dcd(ctype="frontend", experimental={"gpuMemoryService": {"mode": "InterPod"}}),
        [
            "spec.experimental.gpuMemoryService: Forbidden: GPU memory service is only supported for worker, prefill, or "
            "decode components",
            "spec.experimental.gpuMemoryService: Forbidden: GPU memory service requires "
            "podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1",
        ],
    ),
    (
        "schema layer: topology domain",
        dcd(topologyConstraint={"packDomain": "-x"}),
        [
            'spec.topologyConstraint.packDomain: Invalid value: "-x": spec.topologyConstraint.packDomain in body should '
            "match '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'"
        ],
    ),
]


@pytest.mark.parametrize(("label", "obj", "errors"), CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_create_rule(label: str, obj: JSON, errors: list[str]) -> None:
    assert_invalid(create(obj), KIND, "dcd", errors)


def test_checkpoint_gate() -> None:
    obj = dcd(experimental={"checkpoint": {"enabled": True}})
    assert_invalid(
        create(obj),
        KIND,
        "dcd",
        [
            "spec.experimental.checkpoint: Forbidden: checkpoint functionality is disabled in the operator configuration"
        ],
    )
    assert_allowed(create(obj, AdmissionContext(AdmissionSettings(checkpoint=True))))


def _with(base: JSON, **spec: Any) -> JSON:
    out = copy.deepcopy(base)
    out["spec"].update(spec)
    return out


BASE = dcd(gpus="1", backendFramework="vllm")


def test_update_aggregates_all_rules_and_warns() -> None:
    new = _with(BASE, backendFramework="trtllm", minAvailable=1, topologyConstraint={"packDomain": "rack"})
    d = update(new, BASE)
    assert_invalid(
        d,
        KIND,
        "dcd",
        [
            f"spec.minAvailable: Forbidden: {GROVE_ONLY}",
            'spec.backendFramework: Invalid value: "trtllm": is immutable and cannot be changed after creation',
            'spec.topologyConstraint: Invalid value: {"packDomain":"rack"}: is immutable and cannot be added, removed, or '
            "changed after creation; delete and recreate the DynamoComponentDeployment to change topology constraints",
        ],
    )
    assert d.warnings == ["Changing spec.backendFramework may cause unexpected behavior"]


def test_update_replicas_always_modifiable() -> None:
    old = _with(BASE, scalingAdapter={})
    assert_allowed(update(_with(old, replicas=7), old))


def test_update_inter_pod_toggle_and_multinode_switch() -> None:
    old = _with(BASE, experimental={"gpuMemoryService": {"mode": "InterPod"}})
    new = _with(BASE, experimental={"gpuMemoryService": {"mode": "IntraPod"}}, multinode={"nodeCount": 2})
    assert_invalid(
        update(new, old),
        KIND,
        "dcd",
        [
            'spec.multinode: Invalid value: {"nodeCount":2}: cannot change node topology between single-node and '
            "multi-node after creation",
            'spec.experimental.gpuMemoryService.mode: Invalid value: "IntraPod": the inter-pod GMS layout cannot be '
            "toggled after creation; delete and recreate the DynamoComponentDeployment",
        ],
    )


def test_update_image_ratchet() -> None:
    old = copy.deepcopy(BASE)
    new = copy.deepcopy(BASE)
    del new["spec"]["podTemplate"]["spec"]["containers"][0]["image"]
    assert_invalid(
        update(new, old),
        KIND,
        "dcd",
        ["spec.podTemplate.spec.containers[0].image: Required value: is required"],
    )
    # An object stored without an image stays updatable.
    assert_allowed(update(_with(new, replicas=2), new))
