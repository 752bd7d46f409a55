"""Hypothesis strategies for objects of roughly the right shape with arbitrary leaf types.

A shape is ``None`` (any leaf), ``[shape]`` (a list of that shape) or a dict of member
shapes; every member is optional and every node may also be replaced by an arbitrary leaf,
so the strategies reach the type confusions a hand-written request can contain.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Shape = Any

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.text(max_size=4)
    | st.sampled_from(
        [
            "lora",
            "interPod",
            "intraPod",
            "InterPod",
            "main",
            "gms-server",
            "thorough",
            "auto",
            "grove.io/v1alpha1",
        ]
    )
    | st.sampled_from(["Ready", "p:1.0.0", "p:tag", "s3://a", "1.0.0", "grove", "component", "false"])
    | st.just([])
    | st.just({})
)


def shape(s: Shape) -> st.SearchStrategy[Any]:
    if s is None:
        return LEAVES
    if isinstance(s, list):
        return LEAVES | st.lists(shape(s[0]), max_size=3)
    return LEAVES | members(s)


def members(s: dict[str, Shape]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={k: shape(v) for k, v in s.items()})


CONTAINER: Shape = {
    "name": None,
    "image": None,
    "env": [{"name": None, "value": None}],
    "resources": {"claims": [{"name": None}], "limits": None},
    "volumeMounts": [{"name": None, "mountPath": None}],
}
OVERRIDE: Shape = {"apiVersion": None, "target": None, "value": None}
DGD_SPEC: Shape = {
    "providerOverride": OVERRIDE,
    "components": [
        {
            "name": None,
            "replicas": None,
            "minAvailable": None,
            "providerOverride": OVERRIDE,
            "multinode": {
                "nodeCount": None,
                "leader": {"providerOverride": OVERRIDE},
                "worker": {"providerOverride": OVERRIDE},
            },
            "experimental": {"gpuMemoryService": {"mode": None}, "grove": {"forceScalingGroup": None}},
        }
    ],
}
DCD_SPEC: Shape = {"name": None, "type": None}
DGDR_SPEC: Shape = {
    "model": None,
    "backend": None,
    "image": None,
    "runtimeVersionOverride": None,
    "hardware": {"gpuSku": None, "vramMb": None, "numGpusPerNode": None, "totalGpus": None, "rdma": None},
    "searchStrategy": None,
    "autoApply": None,
    "overrides": {"profilingJob": {"template": None}, "dgd": None},
    "features": {"planner": None, "mocker": {"enabled": None}},
    "modelCache": {"pvcName": None},
    "sla": {"ttft": None, "optimizationType": None},
    "workload": {"isl": None},
}
DYNAMO_MODEL_SPEC: Shape = {
    "modelName": None,
    "baseModelName": None,
    "modelType": None,
    "source": {"uri": None},
}
CHECKPOINT_SPEC: Shape = {
    "gpuMemoryService": {"enabled": None, "mode": None, "extraClientContainers": [None]},
    "job": {
        "targetContainerName": None,
        "podTemplateSpec": {
            "spec": {
                "containers": [CONTAINER],
                "initContainers": [CONTAINER],
                "volumes": [{"name": None}],
                "resourceClaims": [{"name": None}],
            }
        },
    },
}
ANNOTATIONS = st.dictionaries(
    st.sampled_from(
        [
            "nvidia.com/workload-provider",
            "nvidia.com/enable-grove",
            "nvidia.com/dynamo-operator-origin-version",
        ]
    ),
    st.sampled_from(["grove", "component", "false", "", "1.0.0"]),
)
