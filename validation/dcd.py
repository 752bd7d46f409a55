"""DynamoComponentDeployment validation (upstream ``DynamoComponentDeploymentValidator`` in
deploy/operator/internal/webhook/validation/dynamocomponentdeployment.go)."""

from __future__ import annotations

from typing import Final

from conversion.dcd import CONVERTER
from domain.admission import AdmissionContext, AdmissionInput, Decision
from domain.constants import KIND_DCD
from gocompat.fielderrors import FieldError, Path, invalid, to_decision
from validation import alpha, compat_view, shared, topology
from validation.dgd import PlainError
from validation.dgd_components import elastic_ep_errors
from validation.hub_request import prepare
from validation.objects import JSON, string, sub

_BACKEND_CHANGE_WARNING: Final = "Changing spec.backendFramework may cause unexpected behavior"


def _hub_errors(hub: JSON, ctx: AdmissionContext, rv_hub: bool) -> list[FieldError]:
    spec = sub(hub, "spec") or {}
    sp = Path("spec")
    out = elastic_ep_errors(string(spec, "backendFramework"), spec, sp)
    opts = shared.SharedOptions(
        grove_pathway=False,
        provider_overrides_supported=False,
        provider="",
        checkpoint_enabled=ctx.settings.checkpoint,
        runtime_version=rv_hub,
        # A standalone DCD never requires runtimeVersionOverride.
        allow_missing_override=True,
    )
    out.extend(shared.component_errors(spec, sp, opts))
    return out


def _view(views: compat_view.Views, hub: JSON, which: str = "") -> compat_view.ComponentView:
    try:
        return views.component(hub)
    except compat_view.CompatibilityViewError as exc:
        raise PlainError(f"cannot validate {which}preserved v1alpha1 {KIND_DCD} fields: {exc}") from exc


def _alpha_pass(
    views: compat_view.Views, hub: JSON, warnings: list[str], alpha_source: bool, spec_decodes: bool
) -> list[FieldError]:
    if not alpha_source and not alpha.dcd_view_needed(hub, spec_decodes=spec_decodes):
        return []
    return alpha.dcd_errors(_view(views, hub), warnings, alpha_source=alpha_source)


def validate_hub(
    operation: str,
    new: JSON,
    old: JSON | None,
    ctx: AdmissionContext,
    rv_source: str,
    *,
    converted: bool = False,
    spec_decodes: bool = False,
) -> Decision:
    """Validate a DCD in hub form (``converted``: see :class:`validation.compat_view.Views`;
    ``spec_decodes``: whether ``new``'s spec decodes as it is, see :func:`validate`)."""
    name = string(sub(new, "metadata"), "name")
    warnings: list[str] = []
    views = compat_view.Views(converted)
    try:
        if operation == "CREATE" or old is None:
            errs = _hub_errors(new, ctx, rv_source == "v1beta1")
            alpha_errs = _alpha_pass(views, new, warnings, rv_source == "v1alpha1", spec_decodes)
            return to_decision(KIND_DCD, name, [*errs, *alpha_errs], warnings)
        errs = _hub_errors(new, ctx, False)
        errs.extend(_alpha_pass(views, new, warnings, False, spec_decodes))
        if rv_source == "v1alpha1":
            errs.extend(alpha.dcd_update_errors(_view(views, new), _view(views, old, "old ")))
        new_spec, old_spec = sub(new, "spec") or {}, sub(old, "spec") or {}
        sp = Path("spec")
        if string(new_spec, "backendFramework") != string(old_spec, "backendFramework"):
            warnings.append(_BACKEND_CHANGE_WARNING)
            errs.append(
                invalid(
                    sp.child("backendFramework"),
                    string(new_spec, "backendFramework"),
                    "is immutable and cannot be changed after creation",
                )
            )
        errs.extend(
            shared.component_update_errors(
                new_spec,
                old_spec,
                sp,
                can_modify_replicas=True,
                owner_kind=KIND_DCD,
                validate_gms_new_state=False,
                runtime_version_ratchet=rv_source == "v1beta1",
                allow_missing_override=True,
            )
        )
        return to_decision(KIND_DCD, name, errs, warnings)
    except PlainError as exc:
        return Decision.deny(str(exc))


def validate(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
    """Validate one DCD request (``spec_decodes``: whether ``inp.object``'s spec decodes as it is,
    as the review's type check tells; False: unknown)."""
    prepared = prepare(inp, KIND_DCD, lambda o, _alpha: topology.schema_errors_dcd(o), CONVERTER)
    if isinstance(prepared, Decision):
        return prepared
    new, old, rv_source, converted = prepared
    # ``spec_decodes`` tells of the object as sent: not of this service's conversion of it.
    return validate_hub(
        inp.operation,
        new,
        old,
        ctx,
        rv_source,
        converted=converted,
        spec_decodes=spec_decodes and not converted,
    )
