"""DynamoGraphDeployment validation (upstream ``DynamoGraphDeploymentValidator`` in
deploy/operator/internal/webhook/validation/dynamographdeployment.go): metadata, spec,
per-component and update rules, in upstream order. The rules about one component (Grove names,
power limit, elastic EP) and the Grove pathway are in :mod:`validation.dgd_components`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from conversion.dgd import CONVERTER
from domain.admission import AdmissionContext, AdmissionInput, Decision
from domain.constants import (
    ANN_DISCOVERY_MODE,
    ANN_GROVE_UPDATE_STRATEGY,
    ANN_ORIGIN_VERSION,
    ANN_VLLM_BACKEND,
    ANN_WORKLOAD_PROVIDER,
    GMS_INTRA_POD,
    GPU_NVIDIA,
    KIND_DGD,
    MAIN_CONTAINER,
    PROVIDER_COMPONENT,
    PROVIDER_GROVE,
    SCOPE_ROOT,
)
from gocompat.fielderrors import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    to_decision,
)
from validation import alpha, compat_view, provider_override, shared, topology
from validation.dgd_components import (
    elastic_ep_errors,
    grove_pathway,
    name_length_error,
    pcs_name,
    power_errors,
    power_limit,
    power_path,
    str_or_empty,
)
from validation.hub_request import prepare
from validation.objects import (
    JSON,
    annotations_of,
    containers,
    effective_mode,
    failover_of,
    gms_of,
    integer,
    is_inter_pod,
    lst,
    node_count,
    quantity_text,
    string,
    sub,
)
from validation.runtime_version import is_lenient_semver

SOURCE_V1BETA1: Final = "v1beta1"
SOURCE_V1ALPHA1: Final = "v1alpha1"
SOURCE_DISABLED: Final = "disabled"

_SA_PREFIX: Final = "system:serviceaccount:"
_BACKEND_CHANGE_WARNING: Final = "Changing spec.backendFramework may cause unexpected behavior"


class PlainError(Exception):
    """A non-field error: upstream answers it with a plain 403 ``Forbidden`` status."""


@dataclass(slots=True, init=False)
class Result:
    """Errors and warnings found so far (``__init__`` written out for the compiled build, as at
    :mod:`domain.admission`)."""

    errors: list[FieldError]
    warnings: list[str]

    def __init__(self, errors: list[FieldError] | None = None, warnings: list[str] | None = None) -> None:
        self.errors = [] if errors is None else errors
        self.warnings = [] if warnings is None else warnings


# --- metadata (DGD-M*) -------------------------------------------------------------------------------------


def has_intra_pod_failover(components: list[JSON]) -> bool:
    return any(
        (fo := failover_of(c)) is not None and effective_mode(string(fo, "mode")) == GMS_INTRA_POD
        for c in components
    )


def metadata_errors(annotations: dict[str, Any], components: list[JSON]) -> list[FieldError]:
    out: list[FieldError] = []
    ap = Path("metadata", "annotations")
    if ANN_ORIGIN_VERSION in annotations:
        v = str_or_empty(annotations[ANN_ORIGIN_VERSION])
        if not is_lenient_semver(v):
            out.append(invalid(ap.key(ANN_ORIGIN_VERSION), v, "must be valid semver"))
    bad = alpha.invalid_vllm_backend(annotations)
    if bad is not None:
        out.append(invalid(ap.key(ANN_VLLM_BACKEND), bad, 'must be "mp" or "ray"'))
    if ANN_GROVE_UPDATE_STRATEGY in annotations:
        v = str_or_empty(annotations[ANN_GROVE_UPDATE_STRATEGY])
        if v not in ("RollingRecreate", "OnDelete"):
            out.append(not_supported(ap.key(ANN_GROVE_UPDATE_STRATEGY), v, ["RollingRecreate", "OnDelete"]))
    if ANN_DISCOVERY_MODE in annotations:
        v = str_or_empty(annotations[ANN_DISCOVERY_MODE])
        if v not in ("pod", "container"):
            out.append(not_supported(ap.key(ANN_DISCOVERY_MODE), v, ["pod", "container"]))
    if ANN_WORKLOAD_PROVIDER in annotations:
        v = str_or_empty(annotations[ANN_WORKLOAD_PROVIDER])
        if v not in (PROVIDER_COMPONENT, PROVIDER_GROVE):
            out.append(not_supported(ap.key(ANN_WORKLOAD_PROVIDER), v, [PROVIDER_COMPONENT, PROVIDER_GROVE]))
    if (
        has_intra_pod_failover(components)
        and str_or_empty(annotations.get(ANN_DISCOVERY_MODE)) != "container"
    ):
        out.append(
            invalid(
                ap.key(ANN_DISCOVERY_MODE),
                str_or_empty(annotations.get(ANN_DISCOVERY_MODE)),
                'must be "container" when intra-pod failover is configured',
            )
        )
    return out


# --- restart (DGD-R*) -------------------------------------------------------------------------------------


def restart_errors(spec: JSON, names: set[str], path: Path) -> list[FieldError]:
    strategy = sub(sub(spec, "restart"), "strategy")
    if strategy is None:
        return []
    order = [o if isinstance(o, str) else "" for o in lst(strategy, "order")]
    if not order:
        return []
    op = path.child("restart", "strategy", "order")
    if string(strategy, "type") == "Parallel":
        return [forbidden(op, "cannot be specified when strategy is parallel")]
    out: list[FieldError] = []
    unique = list(dict.fromkeys(order))
    if len(unique) != len(order):
        out.append(invalid(op, order, "must be unique"))
    if len(unique) != len(names):
        out.append(invalid(op, order, "must have the same number of unique components as the deployment"))
    sorted_names = sorted(names)
    for i, n in enumerate(order):
        if n not in names:
            out.append(not_supported(op.index(i), n, sorted_names))
    return out


# --- create-time (stateless) rules ------------------------------------------------------------------------


def _components(spec: JSON | None) -> list[JSON]:
    return [c if isinstance(c, dict) else {} for c in lst(spec, "components")]


def spec_errors(hub: JSON, ctx: AdmissionContext, rv_source: str) -> list[FieldError]:
    """``validateDynamoGraphDeployment``: metadata then spec, in upstream order."""
    settings = ctx.settings
    meta = sub(hub, "metadata")
    annotations = annotations_of(hub)
    spec = sub(hub, "spec") or {}
    components = _components(spec)
    out = metadata_errors(annotations, components)
    pathway, requirement = grove_pathway(annotations, settings.grove)
    provider = str_or_empty(annotations.get(ANN_WORKLOAD_PROVIDER))
    dgd_name = string(meta, "name")
    sp = Path("spec")
    root_po = sub(spec, "providerOverride")
    if root_po is not None:
        out.extend(
            provider_override.validate_override(
                root_po,
                sp.child("providerOverride"),
                supported=True,
                provider=provider,
                scope=SCOPE_ROOT,
                component=None,
            )
        )
    if string(spec, "priorityClassName") and not pathway:
        out.append(forbidden(sp.child("priorityClassName"), requirement))
    cp = sp.child("components")
    if not components:
        out.append(required(cp, "must have at least one component"))
    backend = string(spec, "backendFramework")
    opts = shared.SharedOptions(
        grove_pathway=pathway,
        provider_overrides_supported=True,
        provider=provider,
        checkpoint_enabled=settings.checkpoint,
        runtime_version=rv_source == SOURCE_V1BETA1,
        allow_missing_override=False,
        inference_pool=ctx.inference_pool_available if settings.cluster_lookups else None,
    )
    for i, comp in enumerate(components):
        path = cp.index(i)
        if pathway:
            e = name_length_error(dgd_name, components, comp, path)
            if e is not None:
                out.append(e)
        gms = gms_of(comp)
        if is_inter_pod(gms):
            mode_path = path.child("experimental", "gpuMemoryService", "mode")
            if not pathway:
                out.append(forbidden(mode_path, requirement))
            if backend != "vllm":
                out.append(
                    invalid(
                        mode_path,
                        GoJSON(string(gms, "mode")),
                        "the inter-pod GMS layout is currently supported only for vLLM "
                        f"(detected backend: {backend or '<unset>'})",
                    )
                )
        out.extend(power_errors(comp, path))
        out.extend(elastic_ep_errors(backend, comp, path))
        out.extend(shared.component_errors(comp, path, opts))
    out.extend(restart_errors(spec, {string(c, "name") for c in components}, sp))
    reader = ctx.cluster_topology if settings.cluster_lookups else None
    generation = integer(meta, "generation")
    out.extend(
        topology.topology_errors(
            spec, components, provider, sp, generation=generation, grove_pathway=pathway, reader=reader
        )
    )
    out.extend(
        topology.kv_policy_errors(spec, sp, pathway, requirement, generation=generation, reader=reader)
    )
    return out


def _view(views: compat_view.Views, hub: JSON, which: str = "") -> compat_view.GraphView:
    try:
        return views.graph(hub)
    except compat_view.CompatibilityViewError as exc:
        raise PlainError(f"cannot validate {which}preserved v1alpha1 {KIND_DGD} fields: {exc}") from exc


def stateless(
    hub: JSON,
    ctx: AdmissionContext,
    rv_source: str,
    views: compat_view.Views | None = None,
    *,
    spec_decodes: bool = False,
) -> Result:
    """``Validate``: hub rules then the v1alpha1 compatibility pass (``spec_decodes``: whether
    ``hub``'s spec decodes as it is, see :func:`validate`). Raises PlainError."""
    res = Result(spec_errors(hub, ctx, rv_source))
    alpha_source = rv_source == SOURCE_V1ALPHA1
    if alpha_source or alpha.dgd_view_needed(hub, spec_decodes=spec_decodes):
        view = _view(views or compat_view.Views(), hub)
        res.errors.extend(alpha.dgd_errors(view, res.warnings, alpha_source=alpha_source))
    return res


# --- update rules (upstream validateDynamoGraphDeploymentUpdate) --------------------------------------------


def can_modify_replicas(principal: str, planner_service_account: str, username: str) -> bool:
    """Whether ``username`` may change the replicas of a component with a scaling adapter: the
    operator's own service account (``principal``, matched exactly), or the planner's service
    account matched by name only, in any namespace (the operator creates it, with that name, in
    every namespace with a DynamoGraphDeployment). An empty name matches no user. Mirrors upstream
    ``CanModifyDGDReplicas`` in internal/webhook/common.go, whose planner name is
    ``consts.PlannerServiceAccountName``."""
    if not username.startswith(_SA_PREFIX):
        return False
    if principal and username == principal:
        return True
    parts = username.split(":")
    return bool(planner_service_account) and len(parts) == 4 and parts[3] == planner_service_account


def _metadata_update_errors(new: JSON, old: JSON, principal: str, username: str) -> list[FieldError]:
    out: list[FieldError] = []
    path = Path("metadata", "annotations").key(ANN_WORKLOAD_PROVIDER)
    new_ann, old_ann = annotations_of(new), annotations_of(old)
    new_has, old_has = ANN_WORKLOAD_PROVIDER in new_ann, ANN_WORKLOAD_PROVIDER in old_ann
    if not old_has and new_has and principal and username != principal:
        out.append(forbidden(path, "may only be materialized by the Dynamo operator"))
    if old_has and (
        not new_has
        or str_or_empty(new_ann[ANN_WORKLOAD_PROVIDER]) != str_or_empty(old_ann[ANN_WORKLOAD_PROVIDER])
    ):
        out.append(
            invalid(
                path, str_or_empty(new_ann[ANN_WORKLOAD_PROVIDER]) if new_has else None, "field is immutable"
            )
        )
    return out


def _effective_gpus(component: JSON, path: Path) -> tuple[str | None, Path]:
    """(quantity string or None when absent, path) of the main container's nvidia.com/gpu."""
    cpath = path.child("podTemplate", "spec", "containers")
    if sub(component, "podTemplate") is None:
        return None, cpath
    for i, c in enumerate(containers(sub(component, "podTemplate"))):
        if string(c, "name") != MAIN_CONTAINER:
            continue
        rpath = cpath.index(i).child("resources")
        res = sub(c, "resources")
        for key in ("limits", "requests"):
            rl = sub(res, key)
            if rl is not None and GPU_NVIDIA in rl:
                return quantity_text(rl[GPU_NVIDIA]) or str_or_empty(rl[GPU_NVIDIA]), rpath.child(key).key(
                    GPU_NVIDIA
                )
        return None, rpath
    return None, cpath


def _power_update_errors(new: JSON, old: JSON, path: Path) -> list[FieldError]:
    """Upstream ``validateDynamoGraphDeploymentSharedSpecUpdate``: the power-limit annotation is immutable
    and, once set, so are the component's GPU count and node count."""
    out: list[FieldError] = []
    new_v, new_has = power_limit(new)
    old_v, old_has = power_limit(old)
    if new_has != old_has or (new_has and new_v != old_v):
        out.append(invalid(power_path(path), new_v if new_has else None, "field is immutable"))
    if old_has:
        new_gpus, new_path = _effective_gpus(new, path)
        old_gpus, _ = _effective_gpus(old, path)
        if new_gpus != old_gpus:
            out.append(invalid(new_path, new_gpus, "field is immutable"))
        if node_count(new) != node_count(old):
            out.append(invalid(path.child("multinode", "nodeCount"), node_count(new), "field is immutable"))
    return out


def update_errors(
    new: JSON,
    old: JSON,
    ctx: AdmissionContext,
    username: str,
    rv_source: str,
    views: compat_view.Views | None = None,
) -> Result:
    """``ValidateUpdate``: metadata, spec and restart-id rules (after a clean stateless pass)."""
    res = Result()
    principal = ctx.settings.operator_principal
    out = res.errors
    out.extend(_metadata_update_errors(new, old, principal, username))
    new_spec, old_spec = sub(new, "spec") or {}, sub(old, "spec") or {}
    sp = Path("spec")
    npo, opo = sub(new_spec, "providerOverride"), sub(old_spec, "providerOverride")
    if npo is not None and opo is not None:
        out.extend(provider_override.update_errors(npo, opo, sp.child("providerOverride")))
    new_components, old_components = _components(new_spec), _components(old_spec)
    old_by_name: dict[str, JSON] = {}
    for c in old_components:
        old_by_name[string(c, "name")] = c
    new_names = {string(c, "name") for c in new_components}
    added = sorted(new_names - old_by_name.keys())
    removed = sorted(old_by_name.keys() - new_names)
    if added or removed:
        detail = "component topology is immutable and cannot be modified after creation"
        if added and removed:
            detail += f": components added: [{' '.join(added)}], components removed: [{' '.join(removed)}]"
        elif added:
            detail += f": components added: [{' '.join(added)}]"
        else:
            detail += f": components removed: [{' '.join(removed)}]"
        out.append(forbidden(sp.child("components"), detail))
    may_scale = can_modify_replicas(principal, ctx.settings.planner_service_account, username)
    cp = sp.child("components")
    for i, comp in enumerate(new_components):
        old_comp = old_by_name.get(string(comp, "name"))
        if old_comp is None:
            continue
        path = cp.index(i)
        out.extend(
            shared.component_update_errors(
                comp,
                old_comp,
                path,
                can_modify_replicas=may_scale,
                owner_kind=KIND_DGD,
                validate_gms_new_state=True,
                runtime_version_ratchet=rv_source == SOURCE_V1BETA1,
                allow_missing_override=False,
            )
        )
        out.extend(_power_update_errors(comp, old_comp, path))
    if string(new_spec, "backendFramework") != string(old_spec, "backendFramework"):
        res.warnings.append(_BACKEND_CHANGE_WARNING)
        out.append(
            invalid(
                sp.child("backendFramework"),
                string(new_spec, "backendFramework"),
                "is immutable and cannot be changed after creation",
            )
        )
    out.extend(topology.spec_topology_update_errors(new_spec, old_spec, sp))
    out.extend(topology.kv_policy_update_errors(new_spec, old_spec, sp))
    rolling = sub(sub(old, "status"), "rollingUpdate")
    if rolling is not None:
        phase = string(rolling, "phase")
        if phase in ("Pending", "InProgress"):
            new_id = string(sub(new_spec, "restart"), "id")
            if new_id != string(sub(old_spec, "restart"), "id"):
                out.append(
                    invalid(
                        sp.child("restart", "id"),
                        new_id,
                        f"cannot be changed while a rolling update is {phase}",
                    )
                )
    if rv_source == SOURCE_V1ALPHA1:
        views = views or compat_view.Views()
        new_view = _view(views, new)
        out.extend(alpha.dgd_update_errors(new_view, _view(views, old, "old ")))
    return res


# --- entry point ---------------------------------------------------------------------------------------------


def validate_hub(
    operation: str,
    new: JSON,
    old: JSON | None,
    ctx: AdmissionContext,
    rv_source: str,
    username: str,
    name: str,
    *,
    converted: bool = False,
    spec_decodes: bool = False,
) -> Decision:
    """Validate a DGD already in hub form (errors in upstream order, warnings as upstream returns them;
    ``converted``: see :class:`validation.compat_view.Views`; ``spec_decodes``: whether
    ``new``'s spec decodes as it is, see :func:`validate`)."""
    views = compat_view.Views(converted)
    try:
        if operation == "CREATE" or old is None:
            res = stateless(new, ctx, rv_source, views, spec_decodes=spec_decodes)
            return _decision(name, res.errors, res.warnings)
        first = stateless(new, ctx, SOURCE_DISABLED, views, spec_decodes=spec_decodes)
        if first.errors:
            return _decision(name, first.errors, first.warnings)
        upd = update_errors(new, old, ctx, username, rv_source, views)
        if upd.errors:
            # Quirk: on an update-rule failure only the update warnings are returned.
            return _decision(name, upd.errors, upd.warnings)
        return Decision.allow([*first.warnings, *upd.warnings])
    except PlainError as exc:
        return Decision.deny(str(exc))
    except alpha.HandlerPanic as panic:
        # controller-runtime's panic recovery: HTTP 500 with the panic text, warnings dropped.
        return Decision.deny(f"panic: {panic} [recovered]", code=500, reason="")


def _decision(name: str, errs: list[FieldError], warnings: list[str]) -> Decision:
    return to_decision(KIND_DGD, name, errs, warnings)


def validate(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
    """Validate one DGD request (pre-checks of ``kinds.validate`` already applied; ``spec_decodes``:
    whether ``inp.object``'s spec decodes as it is, as the review's type check tells; False:
    unknown, the compatibility pass then decodes it itself)."""
    prepared = prepare(inp, KIND_DGD, topology.schema_errors_dgd, CONVERTER)
    if isinstance(prepared, Decision):
        return prepared
    new, old, rv_source, converted = prepared
    return validate_hub(
        inp.operation,
        new,
        old,
        ctx,
        rv_source,
        inp.user.username,
        string(sub(new, "metadata"), "name"),
        converted=converted,
        # ``spec_decodes`` tells of the object as sent: not of this service's conversion of it.
        spec_decodes=spec_decodes and not converted,
    )


__all__ = ["KIND_DGD", "grove_pathway", "pcs_name", "validate", "validate_hub"]
