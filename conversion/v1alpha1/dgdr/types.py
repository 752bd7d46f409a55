"""The DynamoGraphDeploymentRequest types of both versions, as Go values (:mod:`gocompat.typed`).

The upstream converter decodes every object into typed Go structs, converts, and marshals the
result again; the schemas here reproduce the observable effects of that round trip with the Go
value codec: payload annotations are decoded like ``encoding/json`` does
(:data:`gocompat.typed.GO_PAYLOAD`), root objects like the apiserver serializer does
(:data:`gocompat.typed.GO_LIVE`), and encoding writes the zero value of non-``omitempty`` fields
(``"model":""``, ``"profilerImage":""``, ``"state":""``, ``"containers":null`` …).

Kubernetes types (``batchv1.JobSpec``, ``corev1.PodSpec``, ``corev1.Container``…) are modelled
here only as far as conversion looks into them; every other field of theirs takes the Go type of
the generated table: unknown keys dropped, ``omitempty`` zero values (``readOnly: false``,
``hostNetwork: false``…) left out, pointers to empty structs kept.
"""

from __future__ import annotations

from typing import Any

from gocompat.typed import Field, Go, ListOf, MapOf, Ptr, Struct

__all__ = [
    "ALPHA_SPEC",
    "ALPHA_STATUS",
    "BETA_SPEC",
    "BETA_STATUS",
    "CONTAINER",
    "JOB_SPEC",
    "RESOURCES",
    "Obj",
]

Obj = dict[str, Any]

# ----------------------------------------------------------------- Kubernetes subset

RESOURCES = Struct(
    [
        Field("limits", MapOf("quantity")),
        Field("requests", MapOf("quantity")),
        Field("claims", Go("[]core/v1.ResourceClaim")),
    ],
    go="core/v1.ResourceRequirements",
)
TOLERATION = Struct(
    [
        Field("key", "string"),
        Field("operator", "string"),
        Field("value", "string"),
        Field("effect", "string"),
        Field("tolerationSeconds", Ptr("int64")),
    ]
)
CONTAINER = Struct(
    [Field("name", "string", omitempty=False), Field("resources", RESOURCES)], go="core/v1.Container"
)
_POD_SPEC = Struct(
    [
        Field("initContainers", ListOf(CONTAINER)),
        Field("containers", ListOf(CONTAINER), omitempty=False),
        Field(
            "ephemeralContainers",
            ListOf(
                Struct(
                    [Field("name", "string", omitempty=False), Field("resources", RESOURCES)],
                    go="core/v1.EphemeralContainer",
                )
            ),
        ),
        Field("nodeSelector", MapOf("string")),
        Field("tolerations", ListOf(TOLERATION)),
        Field("overhead", MapOf("quantity")),
        Field("resources", Ptr(RESOURCES)),
    ],
    go="core/v1.PodSpec",
)
_OBJECT_META = Struct([], go="meta/v1.ObjectMeta")
_POD_TEMPLATE = Struct([Field("metadata", _OBJECT_META), Field("spec", _POD_SPEC)])
JOB_SPEC = Struct([Field("template", _POD_TEMPLATE, omitempty=False)], go="batch/v1.JobSpec")
_CONDITION = Struct(
    [
        Field("type", "string", omitempty=False),
        Field("status", "string", omitempty=False),
        Field("observedGeneration", "int64"),
        Field("lastTransitionTime", "time", omitempty=False),
        Field("reason", "string", omitempty=False),
        Field("message", "string", omitempty=False),
    ]
)

# ---------------------------------------------------------------------- v1beta1 DGDR

BETA_SPEC = Struct(
    [
        Field("model", "string", omitempty=False),
        Field("backend", "string"),
        Field("image", "string"),
        Field("runtimeVersionOverride", "string"),
        Field(
            "modelCache",
            Ptr(
                Struct(
                    [
                        Field("pvcName", "string"),
                        Field("pvcModelPath", "string"),
                        Field("pvcMountPath", "string"),
                    ]
                )
            ),
        ),
        Field(
            "hardware",
            Ptr(
                Struct(
                    [
                        Field("gpuSku", "string"),
                        Field("vramMb", Ptr("float")),
                        Field("totalGpus", Ptr("int32")),
                        Field("numGpusPerNode", Ptr("int32")),
                        Field("interconnect", "string"),
                        Field("rdma", Ptr("bool")),
                    ]
                )
            ),
        ),
        Field(
            "workload",
            Ptr(
                Struct(
                    [
                        Field("isl", Ptr("int32")),
                        Field("osl", Ptr("int32")),
                        Field("concurrency", Ptr("float")),
                        Field("requestRate", Ptr("float")),
                    ]
                )
            ),
        ),
        Field(
            "sla",
            Ptr(
                Struct(
                    [
                        Field("ttft", Ptr("float")),
                        Field("itl", Ptr("float")),
                        Field("e2eLatency", Ptr("float")),
                        Field("optimizationType", Ptr("string")),
                    ]
                )
            ),
        ),
        Field("overrides", Ptr(Struct([Field("profilingJob", Ptr(JOB_SPEC)), Field("dgd", Ptr("any"))]))),
        Field(
            "features",
            Ptr(
                Struct(
                    [Field("planner", Ptr("any")), Field("mocker", Ptr(Struct([Field("enabled", "bool")])))]
                )
            ),
        ),
        Field("searchStrategy", "string"),
        Field("autoApply", Ptr("bool")),
    ]
)

BETA_STATUS = Struct(
    [
        Field("phase", "string"),
        Field("profilingPhase", "string"),
        Field("dgdName", "string"),
        Field("profilingJobName", "string"),
        Field("conditions", ListOf(_CONDITION)),
        Field(
            "profilingResults",
            Ptr(
                Struct(
                    [
                        Field("pareto", ListOf(Struct([Field("config", "any", omitempty=False)]))),
                        Field("selectedConfig", Ptr("any")),
                    ]
                )
            ),
        ),
        Field(
            "deploymentInfo",
            Ptr(Struct([Field("replicas", Ptr("int32")), Field("availableReplicas", Ptr("int32"))])),
        ),
        Field("observedGeneration", "int64"),
    ]
)

# --------------------------------------------------------------------- v1alpha1 DGDR

ALPHA_SPEC = Struct(
    [
        Field("model", "string", omitempty=False),
        Field("backend", "string", omitempty=False),
        Field("useMocker", "bool"),
        Field(
            "profilingConfig",
            Struct(
                [
                    Field("config", Ptr("any")),
                    Field(
                        "configMapRef",
                        Ptr(Struct([Field("name", "string", omitempty=False), Field("key", "string")])),
                    ),
                    Field("profilerImage", "string", omitempty=False),
                    Field("outputPVC", "string"),
                    Field("resources", Ptr(RESOURCES)),
                    Field("tolerations", ListOf(TOLERATION)),
                    Field("nodeSelector", MapOf("string")),
                ]
            ),
            omitempty=False,
        ),
        Field("runtimeVersionOverride", "string"),
        Field("enableGpuDiscovery", Ptr("bool")),
        Field("autoApply", "bool"),
        Field(
            "deploymentOverrides",
            Ptr(
                Struct(
                    [
                        Field("name", "string"),
                        Field("namespace", "string"),
                        Field("labels", MapOf("string")),
                        Field("annotations", MapOf("string")),
                        Field("workersImage", "string"),
                    ]
                )
            ),
        ),
    ]
)

ALPHA_STATUS = Struct(
    [
        Field("state", "string", omitempty=False),
        Field("backend", "string"),
        Field("observedGeneration", "int64"),
        Field("conditions", ListOf(_CONDITION)),
        Field("profilingResults", "string"),
        Field("generatedDeployment", Ptr("any")),
        Field(
            "deployment",
            Ptr(
                Struct(
                    [
                        Field("name", "string"),
                        Field("namespace", "string"),
                        Field("state", "string", omitempty=False),
                        Field("created", "bool"),
                    ]
                )
            ),
        ),
    ]
)
