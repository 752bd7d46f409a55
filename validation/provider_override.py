"""Provider overrides: Grove-native patches on DGD components (upstream ``validateProviderOverride``
and ``validateProviderOverrideUpdate`` in deploy/operator/internal/webhook/validation/shared_v1beta1.go,
``providerOverrideWritesGroveTopology`` in dynamographdeployment.go, and the ``provideroverride``
package they call).

An override ``value`` is checked in three steps, as ``provideroverride.ValidateValue`` does:
it must be a JSON object; it must decode into the Grove Go type of its target (``PodCliqueSet``,
``PodCliqueTemplateSpec`` or ``PodCliqueScalingGroupConfig`` of Grove's ``operator/api`` at the
version the operator requires, table :mod:`gocompat.tables_grove`); then every key outside the
delegated subtree is Dynamo-owned. A failed decode is the only error reported:
``….value: Invalid value: null: does not match the registered <Target> schema: <Go's decoder
text>``.

Upstream quirks reproduced: the typed decode is plain ``encoding/json``, not a strict decode —
unknown fields are ignored (they are caught by the ownership check outside the delegated
subtree, and accepted inside it, so a newer Grove field survives) and field names match
case-insensitively; the first type mismatch in document order is reported, unless a field
with its own decoder (a quantity, a time, a duration, an int-or-string) fails, which wins; an
integer written with a fraction or an exponent (``1.0``) does not decode into an integer field.
"""

from __future__ import annotations

from typing import Any, Final

from domain.constants import (
    ANN_WORKLOAD_PROVIDER,
    GROVE_API_VERSION,
    PROVIDER_GROVE,
    SCOPE_COMPONENT,
    SCOPE_LEADER,
    SCOPE_ROOT,
    SCOPE_WORKER,
    TARGET_PCLQ_TEMPLATE,
    TARGET_PCS,
    TARGET_PCSG_CONFIG,
)
from gocompat import nodes, tables_grove
from gocompat.decode import decode_error
from gocompat.fielderrors import FieldError, Path, forbidden, invalid, not_supported, required
from gocompat.gotext import go_quote
from gocompat.jsonvalue import json_type
from validation.objects import JSON, is_inter_pod_gms_literal, is_multinode, string, uses_pcsg

_OWNERSHIP: Final = "is Dynamo-owned or not enabled for provider override"
_MISSING: Final = object()

nodes.register(tables_grove)
# The Grove Go type each target's value decodes into (validateKnownGroveShape).
_GROVE_TYPES: Final = {
    TARGET_PCS: "grove/core/v1alpha1.PodCliqueSet",
    TARGET_PCLQ_TEMPLATE: "grove/core/v1alpha1.PodCliqueTemplateSpec",
    TARGET_PCSG_CONFIG: "grove/core/v1alpha1.PodCliqueScalingGroupConfig",
}


def expected_target(
    provider: str, api_version: str, scope: str, component: JSON | None
) -> tuple[str, str | None]:
    """``provideroverride.ExpectedTarget``: (target, error text)."""
    if provider != PROVIDER_GROVE:
        return "", f"workload provider {go_quote(provider)} does not support provider overrides"
    if api_version != GROVE_API_VERSION:
        return "", (
            f"unsupported Grove apiVersion {go_quote(api_version)}; supported value is {go_quote(GROVE_API_VERSION)}"
        )
    if scope == SCOPE_ROOT:
        return TARGET_PCS, None
    if scope == SCOPE_COMPONENT:
        if component is None:
            return "", f"component context is required for scope {go_quote(scope)}"
        return (TARGET_PCSG_CONFIG if uses_pcsg(component) else TARGET_PCLQ_TEMPLATE), None
    if scope in (SCOPE_LEADER, SCOPE_WORKER):
        if component is None or not is_multinode(component):
            return "", f"scope {go_quote(scope)} requires a multinode component"
        if is_inter_pod_gms_literal(component):
            return "", f"scope {go_quote(scope)} is not supported for inter-pod GMS components"
        return TARGET_PCLQ_TEMPLATE, None
    return "", f"unsupported provider override scope {go_quote(scope)}"


def _decode_object(raw: Any, path: str) -> tuple[JSON | None, tuple[str, str] | None]:
    """``decodeObject``: the object, or a (path, detail) error."""
    if raw is _MISSING or raw is None:
        # An absent value has empty Raw bytes; JSON null decodes into a nil map.
        return None, (path, "must be a JSON object")
    if isinstance(raw, dict):
        return raw, None
    return None, (
        path,
        f"must be a JSON object: json: cannot unmarshal {json_type(raw, go=True)} "
        "into Go value of type map[string]json.RawMessage",
    )


def _join(parent: str, child: str) -> str:
    return child if not parent else f"{parent}.{child}"


def _reject_unknown(root: JSON, path: str, allowed: str) -> list[tuple[str, str, bool]]:
    return [(_join(path, k), _OWNERSHIP, True) for k in sorted(root) if k != allowed]


def _required_object(root: JSON, key: str, path: str) -> tuple[JSON | None, tuple[str, str, bool] | None]:
    if key not in root:
        return None, (path, "is required", False)
    o, err = _decode_object(root[key], path)
    if err is not None:
        return None, (err[0], err[1], False)
    return o, None


def _topology_owner(root: JSON, path: str) -> list[tuple[str, str, bool]]:
    errs = _reject_unknown(root, path, "topologyConstraint")
    _, err = _required_object(root, "topologyConstraint", _join(path, "topologyConstraint"))
    if err is not None:
        errs.append(err)
    return errs


def _known_grove_shape(target: str, value: JSON) -> str | None:
    """``validateKnownGroveShape``: the error detail when the value does not decode into the
    Grove type of ``target`` (None for a target without one)."""
    grove_type = _GROVE_TYPES.get(target)
    if grove_type is None:
        return None
    err = decode_error(grove_type, value)
    return None if err is None else f"does not match the registered {target} schema: {err}"


def validate_value(target: str, raw: Any) -> list[tuple[str, str, bool]]:
    """``provideroverride.ValidateValue``: (dotted path, detail, ownership violation)."""
    root, err = _decode_object(raw, "")
    if err is not None:
        return [(err[0], err[1], False)]
    assert root is not None
    shape = _known_grove_shape(target, root)
    if shape is not None:
        return [("", shape, False)]
    if target == TARGET_PCS:
        errs = _reject_unknown(root, "", "spec")
        spec, e = _required_object(root, "spec", "spec")
        if e is not None:
            return [*errs, e]
        assert spec is not None
        errs.extend(_reject_unknown(spec, "spec", "template"))
        template, e = _required_object(spec, "template", "spec.template")
        if e is not None:
            return [*errs, e]
        assert template is not None
        errs.extend(_topology_owner(template, "spec.template"))
        return errs
    if target in (TARGET_PCLQ_TEMPLATE, TARGET_PCSG_CONFIG):
        return _topology_owner(root, "")
    return [("", f"target {go_quote(target)} has no registered ownership policy", False)]


def writes_grove_topology(target: str, raw: Any) -> bool:
    if not isinstance(raw, dict):
        return False
    if target == TARGET_PCS:
        spec = raw.get("spec")
        template = spec.get("template") if isinstance(spec, dict) else None
        return isinstance(template, dict) and "topologyConstraint" in template
    if target in (TARGET_PCLQ_TEMPLATE, TARGET_PCSG_CONFIG):
        return "topologyConstraint" in raw
    return False


def validate_override(
    override: JSON,
    path: Path,
    *,
    supported: bool,
    provider: str,
    scope: str,
    component: JSON | None,
) -> list[FieldError]:
    """Upstream ``validateProviderOverride`` for one override (the first failing check wins)."""
    if not supported:
        return [
            forbidden(
                path,
                "provider overrides are supported only for components embedded in a DynamoGraphDeployment",
            )
        ]
    if not provider:
        return [
            forbidden(
                path,
                f"requires controller-owned annotation {go_quote(ANN_WORKLOAD_PROVIDER)} to be materialized; "
                "wait for controller adoption and retry",
            )
        ]
    if provider != PROVIDER_GROVE:
        return [
            forbidden(
                path,
                f"requires workload provider {go_quote(PROVIDER_GROVE)}, but {go_quote(provider)} is selected",
            )
        ]
    api_version = string(override, "apiVersion")
    if not api_version:
        return [required(path.child("apiVersion"), "is required")]
    if api_version != GROVE_API_VERSION:
        return [not_supported(path.child("apiVersion"), api_version, [GROVE_API_VERSION])]
    expected, err = expected_target(provider, api_version, scope, component)
    if err is not None:
        return [forbidden(path, err)]
    target = string(override, "target")
    if not target:
        return [required(path.child("target"), "must be defaulted from the provider context")]
    if target != expected:
        return [
            invalid(
                path.child("target"), target, f"must match the provider-context target {go_quote(expected)}"
            )
        ]
    value_path = path.child("value")
    out: list[FieldError] = []
    for p, detail, ownership in validate_value(target, override.get("value", _MISSING)):
        err_path = value_path.child(*p.split(".")) if p else value_path
        out.append(forbidden(err_path, detail) if ownership else invalid(err_path, None, detail))
    return out


def override_writes_topology(
    override: JSON | None, provider: str, scope: str, component: JSON | None
) -> bool:
    if override is None:
        return False
    target = string(override, "target")
    if not target:
        target, err = expected_target(provider, string(override, "apiVersion"), scope, component)
        if err is not None:
            return False
    return writes_grove_topology(target, override.get("value"))


def update_errors(new: JSON, old: JSON, path: Path) -> list[FieldError]:
    """Upstream ``validateProviderOverrideUpdate``: apiVersion / target of an override present in both
    states are immutable."""
    out: list[FieldError] = []
    for key in ("apiVersion", "target"):
        nv, ov = string(new, key), string(old, key)
        if nv != ov:
            out.append(invalid(path.child(key), nv, "field is immutable"))
    return out
