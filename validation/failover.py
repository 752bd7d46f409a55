"""Experimental component features: GPU memory service (GMS), failover, Grove scaling groups and
checkpoints (upstream ``validateExperimentalSpec`` and its callees in
deploy/operator/internal/webhook/validation/shared_v1beta1.go) and their update-time toggles
(``validateExperimentalSpecUpdate``)."""

from __future__ import annotations

from typing import Final

from domain.constants import GMS_INTER_POD, GMS_INTRA_POD
from gocompat.fielderrors import FieldError, GoJSON, Path, duplicate, forbidden, invalid
from gocompat.gotext import go_quote
from validation.objects import JSON, effective_mode, gpu_count, integer, is_inter_pod, lst, string, sub

_GMS_COMPONENT_TYPES: Final = frozenset({"worker", "prefill", "decode"})
_FAILOVER_UNSUPPORTED_TYPES: Final = frozenset({"epp", "frontend", "planner"})


def _has_container(containers: list[JSON], name: str) -> bool:
    return any(string(c, "name") == name for c in containers)


def gms_errors(
    gms: JSON, path: Path, component_type: str, resources: JSON, containers: list[JSON]
) -> list[FieldError]:
    """Upstream ``validateGPUMemoryServiceSpec``."""
    out: list[FieldError] = []
    if component_type not in _GMS_COMPONENT_TYPES:
        out.append(
            forbidden(path, "GPU memory service is only supported for worker, prefill, or decode components")
        )
    count, err = gpu_count(resources)
    if err is not None or count < 1:
        out.append(
            forbidden(
                path,
                "GPU memory service requires podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1",
            )
        )
    if effective_mode(string(gms, "mode")) != GMS_INTRA_POD:
        return out
    seen: set[str] = set()
    clients_path = path.child("extraClientContainers")
    for i, name in enumerate(lst(gms, "extraClientContainers")):
        name = name if isinstance(name, str) else ""
        p = clients_path.index(i)
        if name in seen:
            out.append(duplicate(p, name))
            continue
        seen.add(name)
        if not _has_container(containers, name):
            out.append(invalid(p, name, "does not name a container in podTemplate.spec.containers"))
    return out


def failover_errors(
    failover: JSON, path: Path, gms: JSON | None, component_type: str, resources: JSON
) -> list[FieldError]:
    """Upstream ``validateFailoverSpec``."""
    out: list[FieldError] = []
    mode = effective_mode(string(failover, "mode"))
    if gms is None:
        out.append(forbidden(path, f"gpuMemoryService is required when failover mode is {go_quote(mode)}"))
    elif effective_mode(string(gms, "mode")) != mode:
        # Both values are shown as sent (an empty mode stays empty).
        out.append(
            invalid(
                path.child("mode"),
                GoJSON(string(failover, "mode")),
                f"must match gpuMemoryService.mode {go_quote(string(gms, 'mode'))}",
            )
        )
    if mode == GMS_INTER_POD:
        count, err = gpu_count(resources)
        if err is not None:
            out.append(forbidden(path, f"failed to read main-container GPU limit: {err}"))
        elif count < 1:
            out.append(
                forbidden(
                    path,
                    "GMS failover requires at least 1 GPU in podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu",
                )
            )
        if component_type in _FAILOVER_UNSUPPORTED_TYPES:
            out.append(
                forbidden(
                    path, f"GMS failover is not supported for component type {go_quote(component_type)}"
                )
            )
    return out


def experimental_errors(
    exp: JSON,
    path: Path,
    *,
    component_type: str,
    resources: JSON,
    containers: list[JSON],
    grove_pathway: bool,
    checkpoint_enabled: bool,
) -> list[FieldError]:
    """``validateExperimentalSpec``: GMS, failover, grove, checkpoint, snapshot compatibility."""
    out: list[FieldError] = []
    gms = sub(exp, "gpuMemoryService")
    if gms is not None:
        out.extend(gms_errors(gms, path.child("gpuMemoryService"), component_type, resources, containers))
    failover = sub(exp, "failover")
    if failover is not None:
        out.extend(failover_errors(failover, path.child("failover"), gms, component_type, resources))
    grove = sub(exp, "grove")
    if grove is not None and grove.get("forceScalingGroup") is True and not grove_pathway:
        out.append(
            forbidden(
                path.child("grove", "forceScalingGroup"),
                "is currently supported only for Grove-backed DynamoGraphDeployment components",
            )
        )
    checkpoint = sub(exp, "checkpoint")
    checkpoint_path = path.child("checkpoint")
    if checkpoint is not None:
        if checkpoint.get("enabled") is True and not checkpoint_enabled:
            out.append(
                forbidden(
                    checkpoint_path, "checkpoint functionality is disabled in the operator configuration"
                )
            )
        job = sub(checkpoint, "job")
        if job is not None and lst(job, "gmsClientContainers"):
            clients_path = checkpoint_path.child("job", "gmsClientContainers")
            if gms is None:
                out.append(forbidden(clients_path, "requires gpuMemoryService to be set"))
            elif is_inter_pod(gms):
                out.append(forbidden(clients_path, "is only supported with gpuMemoryService.mode=IntraPod"))
        if checkpoint.get("enabled") is True:
            # Snapshot compatibility compares the GMS mode literally (an empty mode is not InterPod).
            if gms is not None and string(gms, "mode") == GMS_INTER_POD:
                out.append(
                    forbidden(checkpoint_path, "Snapshot with gpuMemoryService.mode=InterPod is unsupported")
                )
            if failover is not None:
                out.append(
                    forbidden(
                        checkpoint_path, "Snapshot with active/passive failover is temporarily unsupported"
                    )
                )
    return out


def failover_json(failover: JSON | None) -> GoJSON | None:
    """A FailoverSpec pointer as Go renders it (``{"mode":…,"numShadows":…}``, omitempty)."""
    if failover is None:
        return None
    out: JSON = {}
    if string(failover, "mode"):
        out["mode"] = string(failover, "mode")
    if integer(failover, "numShadows"):
        out["numShadows"] = integer(failover, "numShadows")
    return GoJSON(out)


def _effective_num_shadows(failover: JSON) -> int:
    n = integer(failover, "numShadows")
    return 1 if n < 1 else n


def gms_new_state_errors(
    new_exp: JSON | None, path: Path, component_type: str, resources: JSON, containers: list[JSON]
) -> list[FieldError]:
    """The part of :func:`experimental_update_errors` that reads the new state alone (with
    ``validate_gms_new_state``): ``experimental.gpuMemoryService`` checked as on create."""
    new_gms = sub(new_exp, "gpuMemoryService")
    if new_gms is None:
        return []
    return gms_errors(new_gms, path.child("gpuMemoryService"), component_type, resources, containers)


def experimental_update_errors(
    new_exp: JSON | None,
    old_exp: JSON | None,
    path: Path,
    *,
    owner_kind: str,
    component_type: str,
    resources: JSON,
    containers: list[JSON],
    validate_gms_new_state: bool,
) -> list[FieldError]:
    """Upstream ``validateExperimentalSpecUpdate``, and the branch of
    ``validateDynamoComponentDeploymentSharedSpecUpdate`` for a removed ``experimental``."""
    out: list[FieldError] = []
    old_gms = sub(old_exp, "gpuMemoryService")
    old_failover = sub(old_exp, "failover")
    old_grove = sub(old_exp, "grove")
    gms_msg = (
        f"the inter-pod GMS layout cannot be toggled after creation; delete and recreate the {owner_kind}"
    )
    failover_msg = (
        f"inter-pod GMS failover cannot be toggled after creation; delete and recreate the {owner_kind}"
    )
    grove_msg = f"cannot be toggled after creation; delete and recreate the {owner_kind} to change it"
    if new_exp is None:
        if old_exp is None:
            return out
        if is_inter_pod(old_gms):
            out.append(invalid(path.child("gpuMemoryService", "mode"), None, gms_msg))
        if is_inter_pod(old_failover):
            out.append(invalid(path.child("failover"), None, failover_msg))
        if old_grove is not None and old_grove.get("forceScalingGroup") is True:
            out.append(invalid(path.child("grove", "forceScalingGroup"), None, grove_msg))
        return out
    new_gms = sub(new_exp, "gpuMemoryService")
    if validate_gms_new_state:
        out.extend(gms_new_state_errors(new_exp, path, component_type, resources, containers))
    if is_inter_pod(new_gms) != is_inter_pod(old_gms):
        out.append(invalid(path.child("gpuMemoryService", "mode"), GoJSON(string(new_gms, "mode")), gms_msg))
    new_failover = sub(new_exp, "failover")
    if is_inter_pod(new_failover) != is_inter_pod(old_failover):
        out.append(invalid(path.child("failover"), failover_json(new_failover), failover_msg))
    if (
        new_failover is not None
        and old_failover is not None
        and is_inter_pod(new_failover)
        and is_inter_pod(old_failover)
        and _effective_num_shadows(new_failover) != _effective_num_shadows(old_failover)
    ):
        out.append(
            invalid(
                path.child("failover", "numShadows"),
                integer(new_failover, "numShadows"),
                f"is immutable for inter-pod GMS failover; delete and recreate the {owner_kind} to change it",
            )
        )
    new_grove = sub(new_exp, "grove")
    old_forced = old_grove is not None and old_grove.get("forceScalingGroup") is True
    if new_grove is not None:
        new_forced = new_grove.get("forceScalingGroup") is True
        if new_forced != old_forced:
            out.append(invalid(path.child("grove", "forceScalingGroup"), new_forced, grove_msg))
    elif old_forced:
        out.append(invalid(path.child("grove", "forceScalingGroup"), None, grove_msg))
    return out


__all__ = [
    "experimental_errors",
    "experimental_update_errors",
    "failover_errors",
    "failover_json",
    "gms_errors",
    "gms_new_state_errors",
]
