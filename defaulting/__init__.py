"""Defaulting (mutating) admission rules for the Dynamo kinds. Entry point: :func:`default`.

Dispatch follows the operator's webhook wiring:

* DynamoGraphDeployment (CREATE and UPDATE), DynamoComponentDeployment and
  DynamoGraphDeploymentRequest (CREATE only) are defaulted on the v1beta1 hub. A v1alpha1
  DGD or DGDR is converted to the hub, defaulted, and converted back, so the answer is in
  the version that was sent. v1alpha1 DCDs are not defaulted (upstream registers that
  webhook with ``matchPolicy: Exact`` for v1beta1).
* core/v1 Pods go to the checkpoint-restore mutator (:mod:`defaulting.pod`).
* Every other kind (DynamoModel, DynamoCheckpoint, the scaling adapter, unknown kinds) is
  allowed without a patch.

Common behaviour, in the order controller-runtime's custom defaulter applies it: DELETE →
allowed without a patch; an undecodable object → 400; a lease-excluded namespace (the
object's own ``metadata.namespace``) → allowed without a patch; on a per-kind path the GVK
guard; then the kind's defaults. ``Decision.patched`` is the complete mutated object, or
None when nothing changed; defaults only ever add or replace values, and defaulting an
already defaulted object changes nothing.
"""

from __future__ import annotations

from defaulting import dcd, dgd, dgdr, pod
from defaulting.common import (
    GROUP,
    HUB_API_VERSION,
    HubDefaulter,
    HubRoundTripError,
    api_version_of,
    default_via_hub,
    object_namespace,
    with_main_container_marshal_fields,
)
from validation.context import AdmissionContext, AdmissionInput, Decision, JSONObject
from validation.errors import gvk_mismatch_message

__all__ = ["default"]

KIND_DGD = "DynamoGraphDeployment"
KIND_DCD = "DynamoComponentDeployment"
KIND_DGDR = "DynamoGraphDeploymentRequest"


def _hub_defaulter(kind: str, ctx: AdmissionContext) -> HubDefaulter | None:
    settings = ctx.settings
    if kind == KIND_DGD:
        return lambda obj, op: dgd.default_hub(obj, op, settings)
    if kind == KIND_DCD:
        return dcd.default_hub
    if kind == KIND_DGDR:
        return lambda obj, op: dgdr.default_hub(obj, op, settings)
    return None


def _default_object(inp: AdmissionInput, obj: JSONObject, hub_default: HubDefaulter) -> Decision:
    kind, operation = inp.kind.kind, inp.operation
    version = api_version_of(obj, inp.kind.api_version)
    if version == HUB_API_VERSION:
        defaulted = hub_default(obj, operation)
        return Decision.allow(patched=None if defaulted is obj else defaulted)
    if kind == KIND_DCD:
        # The DCD defaulter only ever sees v1beta1 objects.
        return Decision.allow()
    try:
        patched = default_via_hub(obj, operation, hub_default)
    except HubRoundTripError as exc:
        # The apiserver would fail the request in its own conversion call; an object that
        # cannot be brought to the hub is answered like an undecodable one.
        return Decision.deny(str(exc), code=400, reason="")
    if patched is not None and kind == KIND_DGD:
        patched = with_main_container_marshal_fields(patched)
    return Decision.allow(patched=patched)


def default(inp: AdmissionInput, ctx: AdmissionContext) -> Decision:
    """Answer one mutating admission request."""
    if inp.sub_resource:
        return Decision.allow()
    if inp.kind.group == "" and inp.kind.kind == "Pod":
        return pod.mutate(inp, ctx)
    if inp.operation == "DELETE":
        return Decision.allow()
    if inp.kind.group != GROUP:
        return Decision.allow()
    hub_default = _hub_defaulter(inp.kind.kind, ctx)
    if hub_default is None:
        return Decision.allow()
    obj = inp.object
    if not isinstance(obj, dict):
        return Decision.deny("there is no content to decode", code=400, reason="")
    if ctx.namespace_excluded(object_namespace(obj)):
        return Decision.allow()
    if inp.expected_gvk is not None and inp.kind != inp.expected_gvk:
        return Decision.deny(gvk_mismatch_message(inp.expected_gvk, inp.kind))
    return _default_object(inp, obj, hub_default)
