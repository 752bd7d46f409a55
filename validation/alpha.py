"""The v1alpha1 compatibility pass (A-*): rules and warnings for fields that only exist in
v1alpha1, evaluated on the v1alpha1 view of the hub object (upstream rebuilds that view with
the hub -> v1alpha1 conversion, so fields preserved in conversion annotations are seen too).
The rules read the view through :mod:`validation.compat_view`."""

from __future__ import annotations

from typing import Final

from conversion.hub import KindConverter, Reuse, without_managed_fields
from domain.constants import (
    ANN_DCD_SPEC,
    ANN_DGD_SPEC,
    ANN_VLLM_BACKEND,
    FRONTEND_SIDECAR_CONTAINER,
    HUB_API_VERSION,
    MAIN_CONTAINER,
)
from gocompat.fielderrors import FieldError, Path, forbidden, invalid, required
from gocompat.gotext import go_quote
from validation import compat_plain, runtime_version
from validation.compat_view import EMPTY_SERVICE, ComponentView, GraphView, ServiceView
from validation.objects import (
    JSON,
    annotations_of,
    containers,
    lst,
    present,
    string,
    sub,
)

GLOBAL_DYNAMO_NAMESPACE: Final = "dynamo"
_AUTOSCALING_WARNING: Final = (
    "{path}.autoscaling is deprecated and ignored. Use DynamoGraphDeploymentScalingAdapter with HPA, KEDA, "
    "or Planner for autoscaling instead. See docs/kubernetes/autoscaling.md"
)


NIL_POINTER_PANIC: Final = "runtime error: invalid memory address or nil pointer dereference"


class HandlerPanic(Exception):
    """Upstream dereferences a nil pointer here; its webhook recovers and answers HTTP 500."""


def to_hub(obj: JSON, converter: KindConverter, reuse: Reuse | None = None) -> JSON:
    """``obj`` in the hub version, for the rules to read. No rule reads ``metadata.managedFields``:
    it is left out rather than copied with the rest of the metadata. ``reuse``: shared by the
    conversions of one request's objects (an UPDATE's new and old object mostly hold the same
    services and status)."""
    return converter.convert(without_managed_fields(obj), HUB_API_VERSION, reuse)


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
    if ANN_DGD_SPEC in annotations_of(hub):
        return True
    comps = lst(sub(hub, "spec"), "components")
    return any(isinstance(c, dict) and _component_may_carry_alpha_fields(c, True) for c in comps)


def dcd_may_carry_alpha_fields(hub: JSON) -> bool:
    if ANN_DCD_SPEC in annotations_of(hub):
        return True
    spec = sub(hub, "spec")
    return spec is not None and _component_may_carry_alpha_fields(spec, False)


# Whether the pass must build the view of a v1beta1 source: only when the object may carry a
# compatibility field, and then not when the object's spec decodes as it is (``spec_decodes``:
# the structural type check found that out), its components carry no such field and its view is
# known to build taking nothing from the save (:mod:`validation.compat_plain`).


def dgd_view_needed(hub: JSON, *, spec_decodes: bool) -> bool:
    if not dgd_may_carry_alpha_fields(hub):
        return False
    if not spec_decodes:
        return True
    comps = lst(sub(hub, "spec"), "components")
    if any(isinstance(c, dict) and _component_may_carry_alpha_fields(c, True) for c in comps):
        return True
    return not compat_plain.graph_builds_plain(hub)


def dcd_view_needed(hub: JSON, *, spec_decodes: bool) -> bool:
    if not dcd_may_carry_alpha_fields(hub):
        return False
    if not spec_decodes:
        return True
    spec = sub(hub, "spec")
    return (spec is not None and _component_may_carry_alpha_fields(spec, False)) or not (
        compat_plain.component_builds_plain(hub)
    )


# --- compatibility-field predicates (on the v1alpha1 view) --------------------------------------
# ``volumeMounts`` come last: on a lazy view they may need the whole service.


def _service_has_compat_fields(service: ServiceView) -> bool:
    gms = service.gpu_memory_service()
    return (
        service.ingress() is not None
        or bool(service.annotations())
        or service.dynamo_namespace() is not None
        or service.has_autoscaling()
        or service.has_shared_memory()
        or service.epp_config() is not None
        or service.has_frontend_sidecar()
        or service.failover() is not None
        or (gms is not None and not gms)
        or bool(service.volume_mounts())
    )


def dgd_has_compat_fields(view: GraphView) -> bool:
    if view.pvc_names:
        return True
    return any(s is None or _service_has_compat_fields(s) for s in view.services.values())


def dcd_has_compat_fields(spec: ServiceView) -> bool:
    return (
        bool(spec.annotations())
        or spec.dynamo_namespace() is not None
        or spec.has_autoscaling()
        or spec.ingress() is not None
        or spec.epp_config() is not None
        or spec.has_frontend_sidecar()
        or spec.failover() is not None
        or bool(spec.volume_mounts())
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
    service: ServiceView,
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
    bad = invalid_vllm_backend(service.annotations())
    if bad is not None:
        out.append(invalid(path.child("annotations").key(ANN_VLLM_BACKEND), bad, 'must be "mp" or "ray"'))
    dns = service.dynamo_namespace()
    if isinstance(dns, str) and dns:
        warnings.append(
            f"{path}.dynamoNamespace is deprecated and ignored. Value {go_quote(dns)} will be replaced with "
            f"{go_quote(dyn_namespace)}. Remove this field from your configuration"
        )
    if service.has_autoscaling():
        warnings.append(_AUTOSCALING_WARNING.format(path=path))
    vm_path = path.child("volumeMounts")
    for i, vm in enumerate(service.volume_mounts()):
        if not vm.use_as_compilation_cache and not vm.mount_point:
            out.append(
                required(
                    vm_path.index(i).child("mountPoint"), "is required when useAsCompilationCache is false"
                )
            )
    ingress = service.ingress()
    if ingress is not None and ingress.enabled and not ingress.host:
        out.append(required(path.child("ingress", "host"), "is required when ingress is enabled"))
    epp = service.epp_config()
    if epp is not None and epp.has_config_map_ref == epp.has_config:
        out.append(forbidden(path.child("eppConfig"), "exactly one of configMapRef or config is required"))
    if service.has_frontend_sidecar():
        names = service.container_names()
        if names is not None and FRONTEND_SIDECAR_CONTAINER in names:
            out.append(
                forbidden(
                    path.child("frontendSidecar"),
                    f"cannot inject frontend sidecar: a container named {go_quote(FRONTEND_SIDECAR_CONTAINER)} "
                    "already exists in extraPodSpec.containers",
                )
            )
    fo = service.failover()
    if fo is not None and fo.enabled and fo.mode == "intraPod" and fo.num_shadows not in (0, 1):
        out.append(
            invalid(
                path.child("failover", "numShadows"),
                fo.num_shadows,
                'is invalid for mode="intraPod": intraPod uses a fixed 1 primary + 1 shadow sidecar; '
                'use failover.mode="interPod" to configure numShadows',
            )
        )
    if runtime_version_rules:
        out.extend(
            runtime_version.alpha_create(
                service.main_image(), service.runtime_version_override(), path, allow_missing_override
            )
        )
    return out


def dgd_errors(view: GraphView, warnings: list[str], *, alpha_source: bool) -> list[FieldError]:
    """``validateDynamoGraphDeploymentV1alpha1`` (runs when the source is v1alpha1 or compat fields exist)."""
    if not alpha_source and not dgd_has_compat_fields(view):
        return []
    out: list[FieldError] = []
    sp = Path("spec")
    for i, pvc_name in enumerate(view.pvc_names):
        if not pvc_name:
            out.append(required(sp.child("pvcs").index(i).child("name"), "is required"))
    for svc_name in sorted(view.services):
        service = view.services[svc_name]
        if service is None:
            # Quirk: a null service is a nil pointer that upstream dereferences while computing
            # its dynamo namespace; the recovered panic becomes the answer.
            raise HandlerPanic(NIL_POINTER_PANIC)
        out.extend(
            service_errors(
                service,
                sp.child("services").key(svc_name),
                dynamo_namespace(service.global_dynamo_namespace(), view.namespace, view.name),
                warnings,
                runtime_version_rules=alpha_source,
                allow_missing_override=False,
            )
        )
    return out


def _update_errors(
    new: ServiceView, old: ServiceView, path: Path, allow_missing_override: bool
) -> list[FieldError]:
    return runtime_version.alpha_update(
        new.main_image(),
        new.runtime_version_override(),
        old.main_image(),
        old.runtime_version_override(),
        path,
        allow_missing_override,
    )


def dgd_update_errors(new: GraphView, old: GraphView) -> list[FieldError]:
    """Runtime-version ratchet for a v1alpha1 source, per service present in both states."""
    out: list[FieldError] = []
    sp = Path("spec", "services")
    for svc_name in sorted(new.services):
        if svc_name not in old.services:
            continue
        out.extend(
            _update_errors(
                new.services[svc_name] or EMPTY_SERVICE,
                old.services[svc_name] or EMPTY_SERVICE,
                sp.key(svc_name),
                False,
            )
        )
    return out


def dcd_errors(view: ComponentView, warnings: list[str], *, alpha_source: bool) -> list[FieldError]:
    if not alpha_source and not dcd_has_compat_fields(view.spec):
        return []
    dyn_ns = dynamo_namespace(view.spec.global_dynamo_namespace(), view.namespace, view.owner_name)
    return service_errors(
        view.spec,
        Path("spec"),
        dyn_ns,
        warnings,
        runtime_version_rules=alpha_source,
        allow_missing_override=True,
    )


def dcd_update_errors(new: ComponentView, old: ComponentView) -> list[FieldError]:
    return _update_errors(new.spec, old.spec, Path("spec"), True)
