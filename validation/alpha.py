"""The v1alpha1 compatibility pass (A-*): rules and warnings for fields that only exist in
v1alpha1, evaluated on the v1alpha1 view of the hub object (upstream rebuilds that view with
the hub -> v1alpha1 conversion, so fields preserved in conversion annotations are seen too)."""

from __future__ import annotations

from typing import Final

from conversion import ConversionError
from conversion.hub import KindConverter
from domain.constants import (
    ALPHA_API_VERSION,
    ANN_VLLM_BACKEND,
    FRONTEND_SIDECAR_CONTAINER,
    HUB_API_VERSION,
    MAIN_CONTAINER,
)
from gocompat.gotext import go_quote
from validation import runtime_version
from validation.errors import FieldError, Path, forbidden, invalid, required
from validation.objects import (
    JSON,
    annotations_of,
    boolean,
    containers,
    integer,
    lst,
    present,
    string,
    string_map,
    sub,
)

GLOBAL_DYNAMO_NAMESPACE: Final = "dynamo"
_AUTOSCALING_WARNING: Final = (
    "{path}.autoscaling is deprecated and ignored. Use DynamoGraphDeploymentScalingAdapter with HPA, KEDA, "
    "or Planner for autoscaling instead. See docs/kubernetes/autoscaling.md"
)


class CompatibilityViewError(Exception):
    """The v1alpha1 view of the object could not be rebuilt (a plain 403 upstream)."""


NIL_POINTER_PANIC: Final = "runtime error: invalid memory address or nil pointer dereference"


class HandlerPanic(Exception):
    """Upstream dereferences a nil pointer here; its webhook recovers and answers HTTP 500."""


def to_hub(obj: JSON, converter: KindConverter) -> JSON:
    return converter.convert(obj, HUB_API_VERSION)


def alpha_view(hub: JSON, converter: KindConverter) -> JSON:
    try:
        return converter.convert(hub, ALPHA_API_VERSION)
    except ConversionError as exc:
        raise CompatibilityViewError(f"failed to reconstruct compatibility view: {exc}") from exc


# --- cheap hub-side pre-filters ---------------------------------------------------------------
# The v1alpha1 view can only carry a compatibility field when the hub object has a conversion
# save annotation or one of the hub fields that convert into such a field. Checking these first
# avoids rebuilding the view for ordinary v1beta1 objects.


def _component_may_carry_alpha_fields(component: JSON, shared_memory: bool) -> bool:
    if any(present(component, k) for k in ("eppConfig", "frontendSidecar", "compilationCache")):
        return True
    if shared_memory and present(component, "sharedMemorySize"):
        return True
    if present(sub(component, "experimental"), "failover"):
        return True
    for c in containers(sub(component, "podTemplate")):
        if string(c, "name") == MAIN_CONTAINER and lst(c, "volumeMounts"):
            return True
    return False


def dgd_may_carry_alpha_fields(hub: JSON) -> bool:
    if "nvidia.com/dgd-spec" in annotations_of(hub):
        return True
    comps = lst(sub(hub, "spec"), "components")
    return any(isinstance(c, dict) and _component_may_carry_alpha_fields(c, True) for c in comps)


def dcd_may_carry_alpha_fields(hub: JSON) -> bool:
    if "nvidia.com/dcd-spec" in annotations_of(hub):
        return True
    spec = sub(hub, "spec")
    return spec is not None and _component_may_carry_alpha_fields(spec, False)


# --- compatibility-field predicates (on the v1alpha1 view) --------------------------------------


def _service_has_compat_fields(service: JSON) -> bool:
    gms = sub(service, "gpuMemoryService")
    return (
        present(service, "ingress")
        or bool(string_map(service, "annotations"))
        or present(service, "dynamoNamespace")
        or present(service, "autoscaling")
        or bool(lst(service, "volumeMounts"))
        or present(service, "sharedMemory")
        or present(service, "eppConfig")
        or present(service, "frontendSidecar")
        or present(service, "failover")
        or (gms is not None and not boolean(gms, "enabled"))
    )


def dgd_has_compat_fields(alpha: JSON) -> bool:
    spec = sub(alpha, "spec")
    if lst(spec, "pvcs"):
        return True
    services = sub(spec, "services") or {}
    return any(not isinstance(s, dict) or _service_has_compat_fields(s) for s in services.values())


def dcd_has_compat_fields(alpha: JSON) -> bool:
    spec = sub(alpha, "spec") or {}
    return (
        bool(string_map(spec, "annotations"))
        or present(spec, "dynamoNamespace")
        or present(spec, "autoscaling")
        or present(spec, "ingress")
        or bool(lst(spec, "volumeMounts"))
        or present(spec, "eppConfig")
        or present(spec, "frontendSidecar")
        or present(spec, "failover")
    )


def dynamo_namespace(global_ns: bool, namespace: str, owner_name: str) -> str:
    if global_ns:
        return GLOBAL_DYNAMO_NAMESPACE
    return f"{namespace}-{owner_name.replace('.', '-')}"


def invalid_vllm_backend(annotations: dict[str, object]) -> str | None:
    """The annotation value when present and not mp/ray (case-insensitive)."""
    if ANN_VLLM_BACKEND not in annotations:
        return None
    v = annotations[ANN_VLLM_BACKEND]
    value = v if isinstance(v, str) else ""
    return None if value.lower() in ("mp", "ray") else value


def service_errors(
    service: JSON,
    path: Path,
    dyn_namespace: str,
    warnings: list[str],
    *,
    runtime_version_rules: bool,
    allow_missing_override: bool,
) -> list[FieldError]:
    """Upstream ``validateDynamoComponentDeploymentSharedSpecV1alpha1`` (shared_v1alpha1.go), in its
    order: the vLLM backend annotation, the deprecation warnings, ``validateVolumeMountV1alpha1``,
    ``validateIngressSpecV1alpha1``, ``validateEPPConfigV1alpha1``, the frontend-sidecar name clash,
    ``validateFailoverSpecV1alpha1``, the runtime version."""
    out: list[FieldError] = []
    bad = invalid_vllm_backend(string_map(service, "annotations"))
    if bad is not None:
        out.append(invalid(path.child("annotations").key(ANN_VLLM_BACKEND), bad, 'must be "mp" or "ray"'))
    dns = service.get("dynamoNamespace")
    if isinstance(dns, str) and dns:
        warnings.append(
            f"{path}.dynamoNamespace is deprecated and ignored. Value {go_quote(dns)} will be replaced with "
            f"{go_quote(dyn_namespace)}. Remove this field from your configuration"
        )
    if present(service, "autoscaling"):
        warnings.append(_AUTOSCALING_WARNING.format(path=path))
    vm_path = path.child("volumeMounts")
    for i, vm in enumerate(lst(service, "volumeMounts")):
        vm = vm if isinstance(vm, dict) else {}
        if not boolean(vm, "useAsCompilationCache") and not string(vm, "mountPoint"):
            out.append(
                required(
                    vm_path.index(i).child("mountPoint"), "is required when useAsCompilationCache is false"
                )
            )
    ingress = sub(service, "ingress")
    if ingress is not None and boolean(ingress, "enabled") and not string(ingress, "host"):
        out.append(required(path.child("ingress", "host"), "is required when ingress is enabled"))
    epp = sub(service, "eppConfig")
    if epp is not None and present(epp, "configMapRef") == present(epp, "config"):
        out.append(forbidden(path.child("eppConfig"), "exactly one of configMapRef or config is required"))
    eps = sub(service, "extraPodSpec")
    if (
        present(service, "frontendSidecar")
        and eps is not None
        and any(
            isinstance(c, dict) and string(c, "name") == FRONTEND_SIDECAR_CONTAINER
            for c in lst(eps, "containers")
        )
    ):
        out.append(
            forbidden(
                path.child("frontendSidecar"),
                f"cannot inject frontend sidecar: a container named {go_quote(FRONTEND_SIDECAR_CONTAINER)} "
                "already exists in extraPodSpec.containers",
            )
        )
    fo = sub(service, "failover")
    if fo is not None and boolean(fo, "enabled") and string(fo, "mode") == "intraPod":
        n = integer(fo, "numShadows")
        if n not in (0, 1):
            out.append(
                invalid(
                    path.child("failover", "numShadows"),
                    n,
                    'is invalid for mode="intraPod": intraPod uses a fixed 1 primary + 1 shadow sidecar; '
                    'use failover.mode="interPod" to configure numShadows',
                )
            )
    if runtime_version_rules:
        out.extend(runtime_version.alpha_create(service, path, allow_missing_override))
    return out


def dgd_errors(alpha: JSON, warnings: list[str], *, alpha_source: bool) -> list[FieldError]:
    """``validateDynamoGraphDeploymentV1alpha1`` (runs when the source is v1alpha1 or compat fields exist)."""
    if not alpha_source and not dgd_has_compat_fields(alpha):
        return []
    spec = sub(alpha, "spec") or {}
    meta = sub(alpha, "metadata")
    name, namespace = string(meta, "name"), string(meta, "namespace")
    out: list[FieldError] = []
    sp = Path("spec")
    for i, pvc in enumerate(lst(spec, "pvcs")):
        if not string(pvc if isinstance(pvc, dict) else None, "name"):
            out.append(required(sp.child("pvcs").index(i).child("name"), "is required"))
    services = sub(spec, "services") or {}
    for svc_name in sorted(services):
        service = services[svc_name]
        if not isinstance(service, dict):
            # Quirk: a null service is a nil pointer that upstream dereferences while computing
            # its dynamo namespace; the recovered panic becomes the answer.
            raise HandlerPanic(NIL_POINTER_PANIC)
        out.extend(
            service_errors(
                service,
                sp.child("services").key(svc_name),
                dynamo_namespace(boolean(service, "globalDynamoNamespace"), namespace, name),
                warnings,
                runtime_version_rules=alpha_source,
                allow_missing_override=False,
            )
        )
    return out


def dgd_update_errors(new_alpha: JSON, old_alpha: JSON) -> list[FieldError]:
    """Runtime-version ratchet for a v1alpha1 source, per service present in both states."""
    new_services = sub(sub(new_alpha, "spec"), "services") or {}
    old_services = sub(sub(old_alpha, "spec"), "services") or {}
    out: list[FieldError] = []
    sp = Path("spec", "services")
    for svc_name in sorted(new_services):
        if svc_name not in old_services:
            continue
        ns, os_ = new_services[svc_name], old_services[svc_name]
        out.extend(
            runtime_version.alpha_update(
                ns if isinstance(ns, dict) else {},
                os_ if isinstance(os_, dict) else {},
                sp.key(svc_name),
                False,
            )
        )
    return out


def dcd_owner_name(alpha: JSON) -> str:
    for ref in lst(sub(alpha, "metadata"), "ownerReferences"):
        if isinstance(ref, dict) and string(ref, "kind") == "DynamoGraphDeployment":
            return string(ref, "name")
    return ""


def dcd_errors(alpha: JSON, warnings: list[str], *, alpha_source: bool) -> list[FieldError]:
    if not alpha_source and not dcd_has_compat_fields(alpha):
        return []
    spec = sub(alpha, "spec") or {}
    namespace = string(sub(alpha, "metadata"), "namespace")
    dyn_ns = dynamo_namespace(boolean(spec, "globalDynamoNamespace"), namespace, dcd_owner_name(alpha))
    return service_errors(
        spec, Path("spec"), dyn_ns, warnings, runtime_version_rules=alpha_source, allow_missing_override=True
    )


def dcd_update_errors(new_alpha: JSON, old_alpha: JSON) -> list[FieldError]:
    return runtime_version.alpha_update(
        sub(new_alpha, "spec") or {}, sub(old_alpha, "spec") or {}, Path("spec"), True
    )
