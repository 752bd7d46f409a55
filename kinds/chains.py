"""The admission webhooks' chains: look the kind up in the registry, run what every request of
that webhook goes through, then the kind's own handler (:func:`kinds.validate` and
:func:`kinds.default` call them with the registry; :func:`kinds.convert` picks the converter).

The chains follow the operator's wiring (controller-runtime's custom validator and defaulter
wrappers around the per-kind handlers, and its conversion webhook around the hub and spokes):

* **validate** — sub-resource requests and kinds without rules are allowed; lease-excluded
  namespaces are allowed; on a per-kind path, the GVK guard of the kinds whose handlers have one;
  DELETE/CONNECT allowed; an UPDATE of a terminating object (``deletionTimestamp`` set) allowed;
  then the kind's rules. A handler that raises is answered as upstream's recovered panic.
* **default** — sub-resource requests allowed; core/v1 Pods go to the kind's mutator; DELETE
  allowed; kinds without a defaulter allowed without a patch; an undecodable object → 400; a
  lease-excluded namespace (the object's own ``metadata.namespace``) → allowed; on a per-kind
  path the GVK guard; then the kind's defaults: on the hub directly, in any other version
  through a hub round trip when the kind defaults its spokes (so the answer is in the version
  that was sent), else not at all (v1alpha1 DCDs: upstream registers that webhook with ``matchPolicy:
  Exact`` for v1beta1). ``Decision.patched`` is the complete mutated object, or None when
  nothing changed.
"""

from __future__ import annotations

from defaulting.common import HubRoundTripError, api_version_of, default_via_hub, object_namespace
from domain.admission import AdmissionContext, AdmissionInput, Decision, JSONObject, gvk_mismatch_message
from kinds.registry import Kind, Registry


def _terminating(obj: JSONObject | None) -> bool:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return isinstance(meta, dict) and bool(meta.get("deletionTimestamp"))


def validate(
    registry: Registry, inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False
) -> Decision:
    """Answer one validating admission request (``spec_decodes``: see :func:`kinds.validate`)."""
    kind = registry.get(inp.kind.group, inp.kind.kind)
    if kind is None or kind.validator is None or inp.sub_resource:
        return Decision.allow()
    subject = inp.old_object if inp.operation == "DELETE" else inp.object
    if ctx.namespace_excluded(object_namespace(subject) or inp.namespace):
        return Decision.allow()
    if inp.expected_gvk is not None and kind.gvk_guard and inp.kind != inp.expected_gvk:
        return Decision.deny(gvk_mismatch_message(inp.expected_gvk, inp.kind))
    if inp.operation in ("DELETE", "CONNECT"):
        return Decision.allow()
    if inp.operation == "UPDATE" and _terminating(inp.object):
        return Decision.allow()
    try:
        return kind.validator(inp, ctx, spec_decodes)
    except Exception as exc:  # upstream handlers recover panics and deny with the panic text
        return Decision.deny(f"panic: {exc} [recovered]", code=500, reason="")


def default(registry: Registry, inp: AdmissionInput, ctx: AdmissionContext) -> Decision:
    """Answer one mutating admission request."""
    if inp.sub_resource:
        return Decision.allow()
    kind = registry.get(inp.kind.group, inp.kind.kind)
    if kind is not None and kind.mutator is not None:
        return kind.mutator(inp, ctx)
    if inp.operation == "DELETE" or kind is None or kind.defaulter is None:
        return Decision.allow()
    obj = inp.object
    if not isinstance(obj, dict):
        return Decision.deny("there is no content to decode", code=400, reason="")
    if ctx.namespace_excluded(object_namespace(obj)):
        return Decision.allow()
    if inp.expected_gvk is not None and inp.kind != inp.expected_gvk:
        return Decision.deny(gvk_mismatch_message(inp.expected_gvk, inp.kind))
    return _default_object(kind, inp, obj, ctx)


def _default_object(kind: Kind, inp: AdmissionInput, obj: JSONObject, ctx: AdmissionContext) -> Decision:
    assert kind.defaulter is not None
    settings = ctx.settings
    defaulter = kind.defaulter
    version = api_version_of(obj, inp.kind.api_version)
    if version == kind.api_version(kind.hub):
        defaulted = defaulter(obj, inp.operation, settings)
        return Decision.allow(patched=None if defaulted is obj else defaulted)
    if not kind.default_spokes or kind.converter is None:
        return Decision.allow()
    converter = kind.converter
    try:
        patched = default_via_hub(
            obj, inp.operation, lambda hub, op: defaulter(hub, op, settings), converter.convert
        )
    except HubRoundTripError as exc:
        # The apiserver would fail the request in its own conversion call; an object that
        # cannot be brought to the hub is answered like an undecodable one.
        return Decision.deny(str(exc), code=400, reason="")
    if patched is not None and kind.spoke_answer is not None:
        patched = kind.spoke_answer(patched)
    return Decision.allow(patched=patched)
