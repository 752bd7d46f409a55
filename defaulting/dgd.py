"""DynamoGraphDeployment defaulting on the v1beta1 hub.

Mirrors the operator's ``DGDDefaulter.Default`` (with ``defaultWorkloadProvider``, in
deploy/operator/internal/webhook/defaulting/dynamographdeployment_handler.go):

* CREATE: ``metadata.annotations[nvidia.com/workload-provider]`` is always (re)written:
  ``grove`` when the Grove gate is on and ``nvidia.com/enable-grove`` is not ``false``
  (case-insensitive), else ``component``. A user-supplied value is ignored.
* UPDATE: the provider is the existing annotation value when the key is present (even an
  empty or unsupported value); otherwise the DGD stays unselected and nothing provider
  specific is defaulted.
* providerOverride targets (root, component, multinode leader/worker) are filled only when
  the context resolves to one registered Grove target.
* every component without ``replicas`` gets ``replicas: 1``; on the Grove provider every
  component without ``minAvailable`` gets ``minAvailable: 1`` (also when replicas is 0).
* CREATE: ``nvidia.com/dynamo-operator-origin-version`` is stamped when the key is absent.
* when anything changed, the answer is the object as the operator's encoder writes it
  (:func:`defaulting.common.as_go_writes`): its patch also adds ``status`` (``{"state":
  ""}`` on a CREATE without one), ``podTemplate.spec`` of an empty pod template, the EPP plugins'
  ``name``/``parameters``, and re-writes quantities canonically (``1.5Gi`` → ``1536Mi``, ``1`` →
  ``"1"``). The API server drops a CREATE's status (the status subresource), so that operation is
  inert; it is reproduced so that the answer is the operator's.
"""

from __future__ import annotations

from typing import Any

from conversion.v1alpha1.dgd import BETA_SPEC, BETA_STATUS
from defaulting.common import as_dict, as_go_writes, go_string
from domain.admission import AdmissionSettings, JSONObject, Operation
from domain.constants import (
    ANN_ENABLE_GROVE,
    ANN_ORIGIN_VERSION,
    ANN_WORKLOAD_PROVIDER,
    PROVIDER_COMPONENT,
    PROVIDER_GROVE,
    SCOPE_COMPONENT,
    SCOPE_LEADER,
    SCOPE_ROOT,
    SCOPE_WORKER,
)
from validation.provider_override import expected_target

__all__ = ["default_hub", "expected_override_target", "select_provider"]


def select_provider(annotations: JSONObject | None, operation: Operation, grove_gate: bool) -> str | None:
    """The workload provider the defaulter works with, or None when unselected (UPDATE only)."""
    if operation != "CREATE":
        if annotations is not None and ANN_WORKLOAD_PROVIDER in annotations:
            return go_string(annotations[ANN_WORKLOAD_PROVIDER])
        return None
    opt = go_string(annotations.get(ANN_ENABLE_GROVE)) if annotations is not None else ""
    if grove_gate and opt.lower() != "false":
        return PROVIDER_GROVE
    return PROVIDER_COMPONENT


def expected_override_target(
    provider: str | None, api_version: str, scope: str, component: JSONObject | None
) -> str | None:
    """The one registered target of a provider-override context, or None when it has none (the
    validator's ``provideroverride.ExpectedTarget``; the upstream defaulter asks the same registry)."""
    target, error = expected_target(provider or "", api_version, scope, component)
    return None if error is not None else target


def _default_override(
    override: Any, provider: str | None, scope: str, component: JSONObject | None
) -> JSONObject | None:
    """A copy of ``override`` with its target filled, or None when it stays as it is."""
    if not isinstance(override, dict) or go_string(override.get("target")):
        return None
    target = expected_override_target(provider, go_string(override.get("apiVersion")), scope, component)
    if target is None:
        return None
    return {**override, "target": target}


def _default_role(multinode: JSONObject, role: str, provider: str | None, component: JSONObject) -> bool:
    """Fill ``multinode.<role>.providerOverride.target`` in ``multinode`` (a private copy)."""
    spec = as_dict(multinode.get(role))
    if spec is None:
        return False
    scope = SCOPE_LEADER if role == "leader" else SCOPE_WORKER
    new_override = _default_override(spec.get("providerOverride"), provider, scope, component)
    if new_override is None:
        return False
    multinode[role] = {**spec, "providerOverride": new_override}
    return True


def _default_component(component: JSONObject, provider: str | None) -> JSONObject:
    changes: JSONObject = {}
    if component.get("replicas") is None:
        changes["replicas"] = 1
    if provider == PROVIDER_GROVE and component.get("minAvailable") is None:
        changes["minAvailable"] = 1
    # The target depends on the component's shape, which the defaults above never touch.
    new_override = _default_override(component.get("providerOverride"), provider, SCOPE_COMPONENT, component)
    if new_override is not None:
        changes["providerOverride"] = new_override
    multinode = as_dict(component.get("multinode"))
    if multinode is not None:
        new_multinode = dict(multinode)
        leader = _default_role(new_multinode, "leader", provider, component)
        worker = _default_role(new_multinode, "worker", provider, component)
        if leader or worker:
            changes["multinode"] = new_multinode
    if not changes:
        return component
    return {**component, **changes}


def default_hub(obj: JSONObject, operation: Operation, settings: AdmissionSettings) -> JSONObject:
    """Default a v1beta1 DGD; returns ``obj`` itself when nothing changes."""
    meta = as_dict(obj.get("metadata"))
    annotations = as_dict(meta.get("annotations")) if meta is not None else None
    provider = select_provider(annotations, operation, settings.grove)

    new_annotations: JSONObject | None = None
    if operation == "CREATE":
        new_annotations = dict(annotations) if annotations is not None else {}
        new_annotations[ANN_WORKLOAD_PROVIDER] = provider
        if ANN_ORIGIN_VERSION not in new_annotations:
            new_annotations[ANN_ORIGIN_VERSION] = settings.operator_version
        if new_annotations == annotations:
            new_annotations = None

    spec = as_dict(obj.get("spec"))
    new_spec: JSONObject | None = None
    if spec is not None:
        changes: JSONObject = {}
        root_override = _default_override(spec.get("providerOverride"), provider, SCOPE_ROOT, None)
        if root_override is not None:
            changes["providerOverride"] = root_override
        components = spec.get("components")
        if isinstance(components, list):
            # A null list entry decodes as an empty component, which is defaulted like any other
            # (the API server refuses such a list before any webhook sees it).
            new_components = [
                _default_component({} if c is None else c, provider)
                if isinstance(c, dict) or c is None
                else c
                for c in components
            ]
            if any(n is not o for n, o in zip(new_components, components, strict=True)):
                changes["components"] = new_components
        if changes:
            new_spec = {**spec, **changes}

    if new_annotations is None and new_spec is None:
        return obj
    out = dict(obj)
    if new_annotations is not None:
        out["metadata"] = {**(meta or {}), "annotations": new_annotations}
    if new_spec is not None:
        out["spec"] = new_spec
    # The operator answers with its encoding of the object it decoded and defaulted (only when
    # a default changed something: an unchanged object gets no patch at all).
    return as_go_writes(out, BETA_SPEC, BETA_STATUS)
