"""DGD CREATE rules on hub objects: one row per rule, exact messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from domain.admission import AdmissionContext, AdmissionSettings
from kinds import validate
from tests.admission_helpers import make_input
from tests.validation.assertions import assert_allowed, assert_invalid
from tests.validation.dgd_builders import component, container, dgd

KIND = "DynamoGraphDeployment"
ANN = "metadata.annotations"
C0 = "spec.components[0]"
GROVE_COMPONENT = 'requires the Grove pathway, but workload provider "component" is selected'
JSON = dict[str, Any]


def run(obj: JSON, ctx: AdmissionContext | None = None) -> Any:
    return validate(make_input("nvidia.com/v1beta1", KIND, "CREATE", obj), ctx or AdmissionContext())


def test_typical_dgd_allowed() -> None:
    obj = dgd([component("Frontend", "frontend"), component("worker", gpus="1")])
    assert_allowed(run(obj))


CASES: list[tuple[str, Callable[[], JSON], list[str]]] = [
    (
        "origin version not semver",
        lambda: dgd(annotations={"nvidia.com/dynamo-operator-origin-version": "one"}),
        [f'{ANN}[nvidia.com/dynamo-operator-origin-version]: Invalid value: "one": must be valid semver'],
    ),
    (
        "origin version lenient semver",
        lambda: dgd(annotations={"nvidia.com/dynamo-operator-origin-version": "v1.2"}),
        [],
    ),
    (
        "vllm backend annotation",
        lambda: dgd(annotations={"nvidia.com/vllm-distributed-executor-backend": "Thread"}),
        [
            f'{ANN}[nvidia.com/vllm-distributed-executor-backend]: Invalid value: "Thread": must be "mp" or "ray"'
        ],
    ),
    (
        "vllm backend annotation, case-insensitive",
        lambda: dgd(annotations={"nvidia.com/vllm-distributed-executor-backend": "RAY"}),
        [],
    ),
    (
        "grove update strategy",
        lambda: dgd(annotations={"nvidia.com/grove-update-strategy": "rollingrecreate"}),
        [
            f'{ANN}[nvidia.com/grove-update-strategy]: Unsupported value: "rollingrecreate": '
            'supported values: "RollingRecreate", "OnDelete"'
        ],
    ),
    (
        "discovery mode",
        lambda: dgd(annotations={"nvidia.com/dynamo-kube-discovery-mode": "Pod"}),
        [
            f'{ANN}[nvidia.com/dynamo-kube-discovery-mode]: Unsupported value: "Pod": supported values: "pod", "container"'
        ],
    ),
    (
        "provider value",
        lambda: dgd(provider="lws"),
        [
            f'{ANN}[nvidia.com/workload-provider]: Unsupported value: "lws": supported values: "component", "grove"'
        ],
    ),
    (
        "priorityClassName needs grove",
        lambda: dgd(priorityClassName="high"),
        [f"spec.priorityClassName: Forbidden: {GROVE_COMPONENT}"],
    ),
    (
        "priorityClassName, unsupported provider text",
        lambda: dgd(provider="x", priorityClassName="high"),
        [
            f'{ANN}[nvidia.com/workload-provider]: Unsupported value: "x": supported values: "component", "grove"',
            'spec.priorityClassName: Forbidden: requires the Grove pathway, but annotation "nvidia.com/workload-provider" '
            'has unsupported value "x"',
        ],
    ),
    (
        "priorityClassName, provider absent, grove gate off",
        lambda: dgd(provider=None, priorityClassName="high"),
        [
            "spec.priorityClassName: Forbidden: requires the Grove pathway, but Grove is disabled in the operator "
            "configuration"
        ],
    ),
    ("priorityClassName on the grove provider", lambda: dgd(provider="grove", priorityClassName="high"), []),
    (
        "no components",
        lambda: dgd([]),
        ["spec.components: Required value: must have at least one component"],
    ),
    (
        "minAvailable off grove",
        lambda: dgd([component(minAvailable=1)]),
        [
            f"{C0}.minAvailable: Forbidden: is currently supported only for Grove-backed DynamoGraphDeployment components"
        ],
    ),
    (
        "negative shared memory",
        lambda: dgd([component(sharedMemorySize="-1Gi")]),
        [f'{C0}.sharedMemorySize: Invalid value: "-1Gi": must be non-negative'],
    ),
    (
        "epp multinode, replicas and eppConfig",
        lambda: dgd([component("epp", "epp", replicas=2, multinode={"nodeCount": 2})]),
        [
            f"{C0}.multinode: Forbidden: EPP component cannot be multinode",
            f"{C0}.replicas: Invalid value: 2: EPP component must have exactly 1 replica",
            f"{C0}.eppConfig: Required value: is required for EPP components",
        ],
    ),
    (
        "eppConfig configMapRef name",
        lambda: dgd([component("epp", "epp", eppConfig={"configMapRef": {"name": ""}})]),
        [f"{C0}.eppConfig.configMapRef.name: Required value: is required"],
    ),
    (
        "frontendSidecar empty",
        lambda: dgd([component(frontendSidecar="")]),
        [f'{C0}.frontendSidecar: Invalid value: "": must not be empty'],
    ),
    (
        "frontendSidecar unknown container",
        lambda: dgd([component(frontendSidecar="side")]),
        [f'{C0}.frontendSidecar: Invalid value: "side": must match a podTemplate.spec.containers name'],
    ),
    (
        "GMS on frontend without GPU",
        lambda: dgd(
            [component("fe", "frontend", experimental={"gpuMemoryService": {}})],
            annotations={},
        ),
        [
            f"{C0}.experimental.gpuMemoryService: Forbidden: GPU memory service is only supported for worker, prefill, "
            "or decode components",
            f"{C0}.experimental.gpuMemoryService: Forbidden: GPU memory service requires "
            "podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1",
        ],
    ),
    (
        "GMS extra clients",
        lambda: dgd(
            [
                component(
                    containers=[container(gpus="1"), container("side")],
                    experimental={"gpuMemoryService": {"extraClientContainers": ["side", "side", "nope"]}},
                )
            ]
        ),
        [
            f'{C0}.experimental.gpuMemoryService.extraClientContainers[1]: Duplicate value: "side"',
            f'{C0}.experimental.gpuMemoryService.extraClientContainers[2]: Invalid value: "nope": does not name a '
            "container in podTemplate.spec.containers",
        ],
    ),
    (
        "GMS fractional GPU",
        lambda: dgd([component(gpus="500m", experimental={"gpuMemoryService": {}})]),
        [
            f"{C0}.experimental.gpuMemoryService: Forbidden: GPU memory service requires "
            "podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"
        ],
    ),
    (
        "inter-pod GMS on component pathway, non-vllm",
        lambda: dgd(
            [component(gpus="1", experimental={"gpuMemoryService": {"mode": "InterPod"}})],
            backendFramework="sglang",
        ),
        [
            f"{C0}.experimental.gpuMemoryService.mode: Forbidden: {GROVE_COMPONENT}",
            f'{C0}.experimental.gpuMemoryService.mode: Invalid value: "InterPod": the inter-pod GMS layout is currently '
            "supported only for vLLM (detected backend: sglang)",
        ],
    ),
    (
        "inter-pod GMS, unset backend",
        lambda: dgd(
            [component(gpus="1", experimental={"gpuMemoryService": {"mode": "InterPod"}})],
            provider="grove",
            backendFramework="",
        ),
        [
            f'{C0}.experimental.gpuMemoryService.mode: Invalid value: "InterPod": the inter-pod GMS layout is currently '
            "supported only for vLLM (detected backend: <unset>)"
        ],
    ),
    (
        "forceScalingGroup off grove",
        lambda: dgd([component(experimental={"grove": {"forceScalingGroup": True}})]),
        [
            f"{C0}.experimental.grove.forceScalingGroup: Forbidden: is currently supported only for Grove-backed "
            "DynamoGraphDeployment components"
        ],
    ),
    (
        "forceScalingGroup false is fine",
        lambda: dgd([component(experimental={"grove": {"forceScalingGroup": False}})]),
        [],
    ),
    (
        "checkpoint gate off and snapshot compatibility",
        lambda: dgd(
            [
                component(
                    gpus="1",
                    experimental={
                        "checkpoint": {"enabled": True},
                        "gpuMemoryService": {"mode": "InterPod"},
                        "failover": {"mode": "InterPod"},
                    },
                )
            ],
            provider="grove",
        ),
        [
            f"{C0}.experimental.checkpoint: Forbidden: checkpoint functionality is disabled in the operator configuration",
            f"{C0}.experimental.checkpoint: Forbidden: Snapshot with gpuMemoryService.mode=InterPod is unsupported",
            f"{C0}.experimental.checkpoint: Forbidden: Snapshot with active/passive failover is temporarily unsupported",
        ],
    ),
    (
        "checkpoint gms clients without GMS",
        lambda: dgd([component(experimental={"checkpoint": {"job": {"gmsClientContainers": ["main"]}}})]),
        [
            f"{C0}.experimental.checkpoint.job.gmsClientContainers: Forbidden: requires gpuMemoryService to be set"
        ],
    ),
    (
        "checkpoint gms clients with inter-pod GMS",
        lambda: dgd(
            [
                component(
                    gpus="1",
                    experimental={
                        "gpuMemoryService": {"mode": "InterPod"},
                        "checkpoint": {"job": {"gmsClientContainers": ["main"]}},
                    },
                )
            ],
            provider="grove",
        ),
        [
            f"{C0}.experimental.checkpoint.job.gmsClientContainers: Forbidden: is only supported with "
            "gpuMemoryService.mode=IntraPod"
        ],
    ),
    (
        "power limit not integer",
        lambda: dgd([component(pod_annotations={"dynamo.nvidia.com/gpu-power-limit": "300W"})]),
        [
            f'{C0}.podTemplate.metadata.annotations[dynamo.nvidia.com/gpu-power-limit]: Invalid value: "300W": must be a '
            "decimal integer"
        ],
    ),
    (
        "power limit zero",
        lambda: dgd([component(pod_annotations={"dynamo.nvidia.com/gpu-power-limit": "0"})]),
        [
            f'{C0}.podTemplate.metadata.annotations[dynamo.nvidia.com/gpu-power-limit]: Invalid value: "0": must be '
            "greater than zero"
        ],
    ),
    (
        "power limit with DRA claims",
        lambda: dgd(
            [
                component(
                    pod_annotations={"dynamo.nvidia.com/gpu-power-limit": "300"},
                    containers=[container("side", resources={"claims": [{"name": "gpu"}]}), container()],
                )
            ]
        ),
        [
            f"{C0}.podTemplate.spec.containers[0].resources.claims: Forbidden: cannot be combined with annotation "
            '"dynamo.nvidia.com/gpu-power-limit": power-aware planning does not support DRA-backed device allocation'
        ],
    ),
    (
        "elastic EP without command",
        lambda: dgd(
            [component(containers=[container(args=["--enable-elastic-ep --data-parallel-backend=ray"])])]
        ),
        [
            f"{C0}.podTemplate.spec.containers[0].command: Required value: elastic expert parallelism "
            "(--enable-elastic-ep with --data-parallel-backend ray) requires an explicit container command; the operator "
            "starts the single-pod Ray head by wrapping that command and cannot start it from the image ENTRYPOINT"
        ],
    ),
    (
        "elastic EP, -dpb separate form",
        lambda: dgd([component(containers=[container(args=["--enable-elastic-ep", "-dpb", "ray"])])]),
        [
            f"{C0}.podTemplate.spec.containers[0].command: Required value: elastic expert parallelism "
            "(--enable-elastic-ep with --data-parallel-backend ray) requires an explicit container command; the operator "
            "starts the single-pod Ray head by wrapping that command and cannot start it from the image ENTRYPOINT"
        ],
    ),
    (
        "elastic EP, explicit command is fine",
        lambda: dgd(
            [
                component(
                    containers=[container(command=["python3"], args=["--enable-elastic-ep", "-dpb", "ray"])]
                )
            ]
        ),
        [],
    ),
    (
        "restart order with parallel strategy",
        lambda: dgd(restart={"strategy": {"type": "Parallel", "order": ["worker"]}}),
        ["spec.restart.strategy.order: Forbidden: cannot be specified when strategy is parallel"],
    ),
    (
        "restart order duplicates and unknown components",
        lambda: dgd(
            [component("a"), component("b")],
            restart={"strategy": {"type": "Sequential", "order": ["a", "a", "c"]}},
        ),
        [
            'spec.restart.strategy.order: Invalid value: ["a","a","c"]: must be unique',
            'spec.restart.strategy.order[2]: Unsupported value: "c": supported values: "a", "b"',
        ],
    ),
    (
        "restart order missing a component",
        lambda: dgd([component("a"), component("b")], restart={"strategy": {"order": ["b"]}}),
        [
            'spec.restart.strategy.order: Invalid value: ["b"]: must have the same number of unique components as the '
            "deployment"
        ],
    ),
    (
        "component constraint without spec constraint",
        lambda: dgd([component(topologyConstraint={"packDomain": "rack"})]),
        [
            "spec.topologyConstraint: Required value: is required when any component topology constraint is set"
        ],
    ),
    (
        "spec constraint without packDomain",
        lambda: dgd(topologyConstraint={"clusterTopologyName": "t"}),
        [
            "spec.topologyConstraint.packDomain: Required value: is required when no component topologyConstraint is set"
        ],
    ),
    (
        "spec packDomain satisfied by a component",
        lambda: dgd(
            [component(topologyConstraint={"packDomain": "rack"})],
            topologyConstraint={"clusterTopologyName": "t"},
        ),
        [],
    ),
    (
        "kv policy",
        lambda: dgd(experimental={"kvTransferPolicy": {"clusterTopologyName": "Bad_Name", "domain": "zone"}}),
        [
            'spec.experimental.kvTransferPolicy.clusterTopologyName: Invalid value: "Bad_Name": a lowercase RFC 1123 '
            "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            f"spec.experimental.kvTransferPolicy.clusterTopologyName: Forbidden: {GROVE_COMPONENT}",
        ],
    ),
    (
        "schema layer: topology domain pattern",
        lambda: dgd(topologyConstraint={"packDomain": "Rack"}, priorityClassName="p"),
        [
            'spec.topologyConstraint.packDomain: Invalid value: "Rack": spec.topologyConstraint.packDomain in body '
            "should match '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'"
        ],
    ),
    (
        "runtime version: missing main container",
        lambda: dgd([component(containers=[container("side")])]),
        [f"{C0}.podTemplate.spec.containers: Required value: is required"],
    ),
    (
        "runtime version: empty image",
        lambda: dgd([component(image=None)]),
        [f"{C0}.podTemplate.spec.containers[0].image: Required value: is required"],
    ),
    (
        "runtime version: non-semver tag",
        lambda: dgd([component(image="registry.example/runtime:custom")]),
        [
            f"{C0}.runtimeVersionOverride: Required value: is required when the specified main container image has no "
            "parseable semantic-version tag"
        ],
    ),
    (
        "runtime version: override given",
        lambda: dgd([component(image="registry.example/runtime:custom", runtimeVersionOverride="1.1.0")]),
        [],
    ),
    (
        "provider override without provider annotation",
        lambda: dgd(provider=None, providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {}}),
        [
            'spec.providerOverride: Forbidden: requires controller-owned annotation "nvidia.com/workload-provider" to be '
            "materialized; wait for controller adoption and retry"
        ],
    ),
    (
        "provider override on component provider",
        lambda: dgd([component(providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {}})]),
        [
            f'{C0}.providerOverride: Forbidden: requires workload provider "grove", but "component" is selected'
        ],
    ),
    (
        "provider override apiVersion",
        lambda: dgd(provider="grove", providerOverride={"apiVersion": "grove.io/v1", "value": {}}),
        [
            'spec.providerOverride.apiVersion: Unsupported value: "grove.io/v1": supported values: "grove.io/v1alpha1"'
        ],
    ),
    (
        "provider override target missing / leader scope on single node",
        lambda: dgd(
            [
                component(
                    multinode={
                        "nodeCount": 1,
                        "leader": {"providerOverride": {"apiVersion": "grove.io/v1alpha1"}},
                    }
                )
            ],
            provider="grove",
            providerOverride={"apiVersion": "grove.io/v1alpha1", "value": {}},
        ),
        [
            "spec.providerOverride.target: Required value: must be defaulted from the provider context",
            f'{C0}.multinode.leader.providerOverride: Forbidden: scope "multinode.leader" requires a multinode component',
        ],
    ),
    (
        "provider override wrong target and ownership",
        lambda: dgd(
            [
                component(
                    providerOverride={
                        "apiVersion": "grove.io/v1alpha1",
                        "target": "PodCliqueTemplateSpec",
                        "value": {"topologyConstraint": {}, "spec": {}, "labels": {}},
                    }
                )
            ],
            provider="grove",
            providerOverride={
                "apiVersion": "grove.io/v1alpha1",
                "target": "PodCliqueScalingGroupConfig",
                "value": {},
            },
        ),
        [
            'spec.providerOverride.target: Invalid value: "PodCliqueScalingGroupConfig": must match the provider-context '
            'target "PodCliqueSet"',
            f"{C0}.providerOverride.value.labels: Forbidden: is Dynamo-owned or not enabled for provider override",
            f"{C0}.providerOverride.value.spec: Forbidden: is Dynamo-owned or not enabled for provider override",
        ],
    ),
    (
        "provider override missing delegated subtree",
        lambda: dgd(
            provider="grove",
            providerOverride={
                "apiVersion": "grove.io/v1alpha1",
                "target": "PodCliqueSet",
                "value": {"spec": {}},
            },
        ),
        ["spec.providerOverride.value.spec.template: Invalid value: null: is required"],
    ),
    (
        "grove topology via override and typed topology",
        lambda: dgd(
            [component(topologyConstraint={"packDomain": "rack"})],
            provider="grove",
            topologyConstraint={"clusterTopologyName": "t"},
            providerOverride={
                "apiVersion": "grove.io/v1alpha1",
                "target": "PodCliqueSet",
                "value": {"spec": {"template": {"topologyConstraint": {}}}},
            },
        ),
        [
            "spec.providerOverride.value: Forbidden: cannot be combined with spec.topologyConstraint or "
            "components[].topologyConstraint; use either the typed topology API or provider-native Grove topology "
            "overrides"
        ],
    ),
]


@pytest.mark.parametrize(("label", "build", "errors"), CASES, ids=[c[0] for c in CASES])
def test_create_rule(label: str, build: Callable[[], JSON], errors: list[str]) -> None:
    d = run(build())
    if errors:
        assert_invalid(d, KIND, "graph", errors)
    else:
        assert_allowed(d)


def test_sh11_no_pod_template_full_list() -> None:
    d = run(dgd([{"name": "fe", "type": "frontend", "replicas": 1, "frontendSidecar": "x"}]))
    assert_invalid(
        d,
        KIND,
        "graph",
        [
            f"{C0}.podTemplate.spec.containers: Required value: is required when frontendSidecar is set",
            f"{C0}.podTemplate.spec.containers: Required value: is required",
        ],
    )


def test_grove_gate_and_enable_grove_annotation() -> None:
    ctx = AdmissionContext(AdmissionSettings(grove=True))
    assert_allowed(run(dgd(provider=None, priorityClassName="p"), ctx))
    d = run(dgd(provider=None, priorityClassName="p", annotations={"nvidia.com/enable-grove": "FALSE"}), ctx)
    assert_invalid(
        d,
        KIND,
        "graph",
        [
            "spec.priorityClassName: Forbidden: requires the Grove pathway; remove or unset annotation "
            '"nvidia.com/enable-grove" (currently "FALSE")'
        ],
    )


def test_checkpoint_gate_on_allows_checkpoint() -> None:
    ctx = AdmissionContext(AdmissionSettings(checkpoint=True))
    assert_allowed(run(dgd([component(experimental={"checkpoint": {"enabled": True}})]), ctx))


def test_name_length_boundary_on_grove_pathway() -> None:
    name = "test-graph-" + "x" * 50
    ok = dgd([component("frontend", "frontend"), component("a" * 37)], name=name, provider="grove")
    assert_allowed(run(ok))
    bad = dgd([component("frontend", "frontend"), component("a" * 38)], name=name, provider="grove")
    d = run(bad)
    assert not d.allowed
    assert (
        f'spec.components[1].name: Invalid value: "{"a" * 38}": combined resource name length 46 exceeds the '
        "45-character pod-name limit (PCS name + component name); shorten DynamoGraphDeployment name "
        f'"{name}" or component name "{"a" * 38}"'
    ) in d.message


def test_name_length_scaling_group_detail() -> None:
    comp = component("w" * 20, multinode={"nodeCount": 2})
    d = run(dgd([comp], name="g" * 30, provider="grove"))
    assert not d.allowed
    assert 'PCS name + PCSG name + longest PodClique name "' + "w" * 20 + '-ldr"' in d.message


def test_m6_intra_pod_failover_needs_container_discovery() -> None:
    comp = component(gpus="1", experimental={"gpuMemoryService": {}, "failover": {}})
    d = run(dgd([comp]))
    if d.code == 403:
        pytest.skip("the v1alpha1 compatibility view needs the DGD conversion")
    assert_invalid(
        d,
        KIND,
        "graph",
        [
            f'{ANN}[nvidia.com/dynamo-kube-discovery-mode]: Invalid value: "": must be "container" when intra-pod '
            "failover is configured"
        ],
    )


def test_image_tag_semver_variants() -> None:
    for image in ("repo:1.0.0@sha256:abc", "r/x:v1.2.3-cuda12", "r:1.5.0-nemotron-3.5-lightning-dev.1"):
        assert_allowed(run(dgd([component(image=image)])))
    for image in ("r:latest", "r@sha256:abc", "r/x:1.02.0", "host:5000/r"):
        assert not run(dgd([component(image=image)])).allowed, image
