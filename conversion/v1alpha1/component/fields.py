"""Component fields of the same or a similar shape in both versions (provider override,
multinode, model reference, EPP config, checkpoint, GPU memory service, failover) and the
component type (α ``componentType``/``subComponentType`` ⇄ β ``type``)."""

from __future__ import annotations

from conversion.v1alpha1.component.schemas import J
from gocompat.jsonvalue import deep_copy

_GMS_TO_HUB = {"intraPod": "IntraPod", "interPod": "InterPod"}
_GMS_FROM_HUB = {"IntraPod": "intraPod", "InterPod": "interPod"}
_PROMOTED = ("prefill", "decode")


def provider(src: J) -> J:
    out: J = {"apiVersion": src.get("apiVersion", "")}
    if src.get("target"):
        out["target"] = src["target"]
    out["value"] = deep_copy(src.get("value"))
    return out


def _multinode(src: J) -> J:
    out: J = {"nodeCount": src.get("nodeCount", 0)}
    for role in ("leader", "worker"):
        r = src.get(role)
        if r is not None:
            out[role] = (
                {"providerOverride": provider(r["providerOverride"])} if "providerOverride" in r else {}
            )
    return out


def _model_ref(src: J) -> J:
    out: J = {"name": src.get("name", "")}
    if src.get("revision"):
        out["revision"] = src["revision"]
    return out


def _epp(src: J) -> J:
    # Not copied: both fields are Kubernetes-typed, which the encoder writes as fresh typed views.
    return {k: src[k] for k in ("configMapRef", "config") if k in src}


def _identity(src: J) -> J:
    out: J = {"model": src.get("model", ""), "backendFramework": src.get("backendFramework", "")}
    for k in ("dynamoVersion", "tensorParallelSize", "pipelineParallelSize", "dtype", "maxModelLen"):
        if src.get(k):
            out[k] = src[k]
    if src.get("extraParameters"):
        out["extraParameters"] = dict(src["extraParameters"])
    return out


def checkpoint_conv(src: J, enabled_always: bool) -> J:
    out: J = {}
    if enabled_always or src.get("enabled"):
        out["enabled"] = bool(src.get("enabled", False))
    for k in ("mode", "startupPolicy", "deletionPolicy"):
        if src.get(k):
            out[k] = src[k]
    if "checkpointRef" in src:
        out["checkpointRef"] = src["checkpointRef"]
    if "identity" in src:
        out["identity"] = _identity(src["identity"])
    if src.get("targetContainerName"):
        out["targetContainerName"] = src["targetContainerName"]
    if "job" in src:
        job: J = {}
        if src["job"].get("gmsClientContainers"):
            job["gmsClientContainers"] = list(src["job"]["gmsClientContainers"])
        if "podTemplate" in src["job"]:
            job["podTemplate"] = deep_copy(src["job"]["podTemplate"])
        out["job"] = job
    return out


def gms_conv(src: J, to_hub_dir: bool) -> J:
    out: J = {} if to_hub_dir else {"enabled": True}
    mode = src.get("mode", "")
    if mode:
        out["mode"] = (_GMS_TO_HUB if to_hub_dir else _GMS_FROM_HUB).get(mode, mode)
    if src.get("deviceClassName"):
        out["deviceClassName"] = src["deviceClassName"]
    if src.get("extraClientContainers"):
        out["extraClientContainers"] = list(src["extraClientContainers"])
    pods = src.get("extraClientPods")
    if pods:
        out["extraClientPods"] = [
            {"name": (p or {}).get("name", ""), "podTemplate": deep_copy((p or {}).get("podTemplate", {}))}
            for p in pods
        ]
    return out


def failover_conv(src: J, to_hub_dir: bool) -> J:
    out: J = {} if to_hub_dir else {"enabled": True}
    mode = src.get("mode", "")
    if mode:
        out["mode"] = (_GMS_TO_HUB if to_hub_dir else _GMS_FROM_HUB).get(mode, mode)
    if src.get("numShadows"):
        out["numShadows"] = src["numShadows"]
    return out


def promotes(src: J) -> bool:
    return src.get("componentType") == "worker" and src.get("subComponentType") in _PROMOTED


def copy_same_shape_fields(src: J, dst: J) -> None:
    """The component fields with the same name and shape in both versions (order kept)."""
    if src.get("globalDynamoNamespace"):
        dst["globalDynamoNamespace"] = True
    for k in ("replicas", "minAvailable"):
        if k in src:
            dst[k] = src[k]
    if "multinode" in src:
        dst["multinode"] = _multinode(src["multinode"])
    if "modelRef" in src:
        dst["modelRef"] = _model_ref(src["modelRef"])
    if "topologyConstraint" in src:
        dst["topologyConstraint"] = {"packDomain": src["topologyConstraint"].get("packDomain", "")}
    if "eppConfig" in src:
        dst["eppConfig"] = _epp(src["eppConfig"])


def type_to_hub(src: J) -> str:
    if promotes(src):
        return str(src["subComponentType"])
    return str(src.get("componentType", ""))


def type_from_hub(t: str) -> tuple[str, str]:
    if t in _PROMOTED:
        return "worker", t
    return t, ""


def experimental_is_hub_only_shape(exp: J | None) -> bool:
    return exp is not None and not any(k in exp for k in ("gpuMemoryService", "failover", "checkpoint"))
