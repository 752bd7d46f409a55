"""The shared component spec types of both versions (json tags of the pinned Go types): the
v1alpha1 ``DynamoComponentDeploymentSharedSpec`` (DGD ``services.<n>``, DCD ``spec``), the v1beta1
one (DGD ``components[i]``, DCD ``spec``) and the v1alpha1 ``ServiceReplicaStatus``.

The v1alpha1 ``ExtraPodSpec`` is a Dynamo type (an inlined ``*corev1.PodSpec`` plus
``mainContainer``); its own ``MarshalJSON`` writes ``containers`` with ``omitempty``, which the Go
type :data:`EXTRA_POD_SPEC` reproduces with a shadowing ``containers`` field.
"""

from __future__ import annotations

from typing import Any

from conversion.podtemplate import (
    ENV_LIST,
    POD_TEMPLATE,
    PROBE,
)
from gocompat import nodes
from gocompat.decoding import decode_struct
from gocompat.typed import Field, Go, ListOf, Ptr, Struct

J = dict[str, Any]

#: the v1alpha1 ``ExtraPodSpec`` as a Go type of the tables
EXTRA_POD_SPEC = nodes.define(
    "dynamo/v1alpha1.ExtraPodSpec",
    "v1alpha1",
    (
        ("", "*core/v1.PodSpec", "inline", "PodSpec"),
        ("containers", "[]core/v1.Container", "omitempty", "Containers"),
        ("mainContainer", "*core/v1.Container", "omitempty", "MainContainer"),
    ),
)


#: The Go type of an EPP component's ``eppConfig.config``.
EPP_CONFIG = "*gie/apix/config/v1alpha1.EndpointPickerConfig"

PROVIDER_OVERRIDE = Struct(
    (Field("apiVersion", "string", False), Field("target", "string"), Field("value", "any", False))
)
_ROLE = Struct((Field("providerOverride", Ptr(PROVIDER_OVERRIDE)),))
_MULTINODE = Struct(
    (Field("nodeCount", "int32", False), Field("leader", Ptr(_ROLE)), Field("worker", Ptr(_ROLE)))
)
_MODEL_REF = Struct((Field("name", "string", False), Field("revision", "string")))
_TOPOLOGY = Struct((Field("packDomain", "string", False),))
_EPP = Struct(
    (
        # Quirk: written whole, as the operator writes them (plugins[].name "", .parameters null,
        # schedulingProfiles[].plugins[].weight null), although a manifest leaves them out
        Field("configMapRef", Go("*core/v1.ConfigMapKeySelector", full=True)),
        Field("config", Go(EPP_CONFIG, full=True)),
    )
)
_IDENTITY = Struct(
    (
        Field("model", "string", False),
        Field("backendFramework", "string", False),
        Field("dynamoVersion", "string"),
        Field("tensorParallelSize", "int32"),
        Field("pipelineParallelSize", "int32"),
        Field("dtype", "string"),
        Field("maxModelLen", "int32"),
        Field("extraParameters", "stringmap"),
    )
)
_CKPT_JOB = Struct(
    (Field("gmsClientContainers", ListOf("string")), Field("podTemplate", Go("*" + POD_TEMPLATE)))
)


def _checkpoint(enabled_omitempty: bool) -> Struct:
    return Struct(
        (
            Field("enabled", "bool", enabled_omitempty),
            Field("mode", "string"),
            Field("startupPolicy", "string"),
            Field("deletionPolicy", "string"),
            Field("checkpointRef", Ptr("string")),
            Field("identity", Ptr(_IDENTITY)),
            Field("targetContainerName", "string"),
            Field("job", Ptr(_CKPT_JOB)),
        )
    )


_GMS_POD = Struct((Field("name", "string", False), Field("podTemplate", Go(POD_TEMPLATE), False)))


def _gms(alpha: bool) -> Struct:
    fields = [
        Field("mode", "string"),
        Field("deviceClassName", "string"),
        Field("extraClientContainers", ListOf("string")),
        Field("extraClientPods", ListOf(_GMS_POD)),
    ]
    if alpha:
        fields.insert(0, Field("enabled", "bool", False))
    return Struct(tuple(fields))


def _failover(alpha: bool) -> Struct:
    fields = [Field("mode", "string"), Field("numShadows", "int32")]
    if alpha:
        fields.insert(0, Field("enabled", "bool", False))
    return Struct(tuple(fields))


_RESOURCE_ITEM = Struct(
    (
        Field("cpu", "string"),
        Field("memory", "string"),
        Field("gpu", "string"),
        Field("gpuType", "string"),
        Field("custom", "stringmap"),
    )
)
_RESOURCES = Struct(
    (
        Field("requests", Ptr(_RESOURCE_ITEM)),
        Field("limits", Ptr(_RESOURCE_ITEM)),
        Field("claims", Go("[]core/v1.ResourceClaim")),
    )
)
_AUTOSCALING = Struct(
    (
        Field("enabled", "bool"),
        Field("minReplicas", "int"),
        Field("maxReplicas", "int"),
        Field("behavior", Go("*autoscaling/v2.HorizontalPodAutoscalerBehavior")),
        Field("metrics", Go("[]autoscaling/v2.MetricSpec")),
    )
)
_INGRESS = Struct(
    (
        Field("enabled", "bool"),
        Field("host", "string"),
        Field("useVirtualService", "bool"),
        Field("virtualServiceGateway", Ptr("string")),
        Field("hostPrefix", Ptr("string")),
        Field("annotations", "stringmap"),
        Field("labels", "stringmap"),
        Field("tls", Ptr(Struct((Field("secretName", "string"),)))),
        Field("hostSuffix", Ptr("string")),
        Field("ingressControllerClassName", Ptr("string")),
    )
)
_VOLUME_MOUNT = Struct(
    (Field("name", "string"), Field("mountPoint", "string"), Field("useAsCompilationCache", "bool"))
)
_SHARED_MEMORY = Struct((Field("disabled", "bool"), Field("size", "quantity")))
_EXTRA_POD_METADATA = Struct((Field("annotations", "stringmap"), Field("labels", "stringmap")))
_FRONTEND_SIDECAR = Struct(
    (
        Field("image", "string", False),
        Field("args", ListOf("string")),
        Field("envFromSecret", Ptr("string")),
        Field("envs", Go(ENV_LIST)),
    )
)
ALPHA_SHARED = Struct(
    (
        Field("providerOverride", Ptr(PROVIDER_OVERRIDE)),
        Field("annotations", "stringmap"),
        Field("labels", "stringmap"),
        Field("serviceName", "string"),
        Field("componentType", "string"),
        Field("subComponentType", "string"),
        Field("runtimeVersionOverride", "string"),
        Field("dynamoNamespace", Ptr("string")),
        Field("globalDynamoNamespace", "bool"),
        Field("resources", Ptr(_RESOURCES)),
        Field("autoscaling", Ptr(_AUTOSCALING)),
        Field("envs", Go(ENV_LIST)),
        Field("envFromSecret", Ptr("string")),
        Field("volumeMounts", ListOf(_VOLUME_MOUNT)),
        Field("ingress", Ptr(_INGRESS)),
        Field("modelRef", Ptr(_MODEL_REF)),
        Field("sharedMemory", Ptr(_SHARED_MEMORY)),
        Field("extraPodMetadata", Ptr(_EXTRA_POD_METADATA)),
        Field("extraPodSpec", Go("*" + EXTRA_POD_SPEC)),
        Field("livenessProbe", Go(PROBE)),
        Field("readinessProbe", Go(PROBE)),
        Field("replicas", Ptr("int32")),
        Field("minAvailable", Ptr("int32")),
        Field("multinode", Ptr(_MULTINODE)),
        Field("scalingAdapter", Ptr(Struct((Field("enabled", "bool"),)))),
        Field("eppConfig", Ptr(_EPP)),
        Field("frontendSidecar", Ptr(_FRONTEND_SIDECAR)),
        Field("checkpoint", Ptr(_checkpoint(True))),
        Field("topologyConstraint", Ptr(_TOPOLOGY)),
        Field("gpuMemoryService", Ptr(_gms(True))),
        Field("failover", Ptr(_failover(True))),
    )
)


# v1alpha1 ServiceReplicaStatus: DGD status.services values and the DCD status.service.
REPLICA_STATUS_ALPHA = Struct(
    (
        Field("componentKind", "string", False),
        Field("componentName", "string", False),
        Field("componentNames", ListOf("string")),
        Field("runtimeNamespace", "string"),
        Field("replicas", "int32", False),
        Field("updatedReplicas", "int32", False),
        Field("readyReplicas", Ptr("int32")),
        Field("availableReplicas", Ptr("int32")),
        Field("scheduledReplicas", Ptr("int32")),
    )
)
_EXPERIMENTAL = Struct(
    (
        Field("gpuMemoryService", Ptr(_gms(False))),
        Field("failover", Ptr(_failover(False))),
        Field("grove", Ptr(Struct((Field("forceScalingGroup", "bool"),)))),
        Field("checkpoint", Ptr(_checkpoint(False))),
    )
)
BETA_SHARED = Struct(
    (
        Field("providerOverride", Ptr(PROVIDER_OVERRIDE)),
        Field("name", "string", False),
        Field("type", "string"),
        Field("runtimeVersionOverride", "string"),
        Field("globalDynamoNamespace", "bool"),
        Field("podTemplate", Go("*" + POD_TEMPLATE)),
        Field("replicas", Ptr("int32")),
        Field("minAvailable", Ptr("int32")),
        Field("multinode", Ptr(_MULTINODE)),
        Field("sharedMemorySize", Ptr("quantity")),
        Field("modelRef", Ptr(_MODEL_REF)),
        Field("scalingAdapter", Ptr(Struct(()))),
        Field("eppConfig", Ptr(_EPP)),
        Field("frontendSidecar", Ptr("string")),
        Field(
            "compilationCache",
            Ptr(Struct((Field("pvcName", "string", False), Field("mountPath", "string")))),
        ),
        Field("topologyConstraint", Ptr(_TOPOLOGY)),
        Field("experimental", Ptr(_EXPERIMENTAL)),
    )
)


def canon_alpha_shared(spec: J) -> J:
    """Typed view of an α shared spec."""
    return decode_struct(spec, ALPHA_SHARED)


def canon_beta_shared(spec: J) -> J:
    """Typed view of a β shared spec."""
    return decode_struct(spec, BETA_SHARED)
