"""Validating admission rules for the Dynamo kinds. Entry point: :func:`validate`."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

from validation.context import AdmissionContext, AdmissionInput, Decision, JSONObject
from validation.errors import gvk_mismatch_message

__all__ = ["validate"]

GROUP: Final = "nvidia.com"

# kind -> module implementing ``validate(inp, ctx) -> Decision``
_MODULES: Final = {
    "DynamoGraphDeployment": "validation.dgd",
    "DynamoComponentDeployment": "validation.dcd",
    "DynamoGraphDeploymentRequest": "validation.dgdr",
    "DynamoModel": "validation.dynamomodel",
    "DynamoCheckpoint": "validation.dynamocheckpoint",
}
_loaded: dict[str, ModuleType] = {}

# Kinds whose upstream handlers check request.kind against the path's GVK.
_GVK_GUARDED: Final = frozenset(
    {"DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest"}
)


def _namespace_of(obj: JSONObject | None) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns if isinstance(ns, str) else ""


def _terminating(obj: JSONObject | None) -> bool:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return isinstance(meta, dict) and bool(meta.get("deletionTimestamp"))


def validate(inp: AdmissionInput, ctx: AdmissionContext) -> Decision:
    """Answer one validating admission request.

    Order (upstream wrapper chain): sub-resource requests and kinds without rules are
    allowed; lease-excluded namespaces are allowed; the GVK guard of the per-kind paths;
    DELETE/CONNECT allowed; terminating objects (UPDATE with ``deletionTimestamp``)
    allowed; then the kind's rules.
    """
    kind = inp.kind.kind
    module_name = _MODULES.get(kind)
    if inp.kind.group != GROUP or module_name is None or inp.sub_resource:
        return Decision.allow()
    subject = inp.old_object if inp.operation == "DELETE" else inp.object
    if ctx.namespace_excluded(_namespace_of(subject) or inp.namespace):
        return Decision.allow()
    if inp.expected_gvk is not None and kind in _GVK_GUARDED and inp.kind != inp.expected_gvk:
        return Decision.deny(gvk_mismatch_message(inp.expected_gvk, inp.kind))
    if inp.operation in ("DELETE", "CONNECT"):
        return Decision.allow()
    if inp.operation == "UPDATE" and _terminating(inp.object):
        return Decision.allow()
    module = _loaded.get(module_name)
    if module is None:
        module = _loaded[module_name] = importlib.import_module(module_name)
    try:
        decision: Decision = module.validate(inp, ctx)
    except Exception as exc:  # upstream handlers recover panics and deny with the panic text
        return Decision.deny(f"panic: {exc} [recovered]", code=500, reason="")
    return decision
