"""The core/v1 Pod checkpoint-restore mutator (``/mutate-core-v1-pod-checkpoint-restore``).

Upstream rewrites a restore-candidate pod only after reading its Ready DynamoCheckpoint
through the operator's client. This service has no such client, so a pod is never rewritten;
what remains is the operator's sequence of early exits, each answered ``allowed`` with the
same status message the operator sends (controller-runtime's ``admission.Allowed(reason)``).
"""

from __future__ import annotations

from defaulting.common import as_dict, go_string
from domain.admission import AdmissionContext, AdmissionInput, Decision, JSONObject
from domain.constants import (
    ANN_CHECKPOINT_NAME,
    ANN_RESTORE_CANDIDATE,
    LABEL_CHECKPOINT_ID,
    LABEL_CHECKPOINT_SOURCE,
    LABEL_DYNAMO_COMPONENT,
    LABEL_DYNAMO_NAMESPACE,
    LABEL_DYNAMO_SELECTOR,
)

__all__ = ["mutate"]


def _allowed(reason: str) -> Decision:
    return Decision(True, {"code": 200, "message": reason})


def _string_map(meta: JSONObject | None, key: str) -> JSONObject:
    value = as_dict(meta.get(key)) if meta is not None else None
    return value if value is not None else {}


def mutate(inp: AdmissionInput, ctx: AdmissionContext) -> Decision:
    """Answer one Pod admission request; never produces a patch."""
    if inp.operation != "CREATE":
        return _allowed("not a pod create")
    if not ctx.settings.checkpoint:
        return _allowed("checkpoint disabled")
    # The pod mutator checks the request namespace (the custom-resource defaulters check the
    # object's own namespace).
    if ctx.namespace_excluded(inp.namespace):
        return _allowed("namespace excluded")
    if not ctx.settings.cluster_lookups:
        # Upstream answers this way when its client is unavailable.
        return _allowed("checkpoint restore mutator unavailable")
    pod = inp.object if isinstance(inp.object, dict) else {}
    meta = as_dict(pod.get("metadata"))
    labels = _string_map(meta, "labels")
    annotations = _string_map(meta, "annotations")
    if go_string(labels.get(LABEL_CHECKPOINT_ID)) or go_string(labels.get(LABEL_CHECKPOINT_SOURCE)):
        return _allowed("pod is already checkpoint-shaped")
    if go_string(annotations.get(ANN_RESTORE_CANDIDATE)) != "true":
        return _allowed("pod is not a checkpoint restore candidate")
    if not go_string(annotations.get(ANN_CHECKPOINT_NAME)):
        return _allowed("restore candidate has no checkpoint name")
    if not all(
        go_string(labels.get(k))
        for k in (LABEL_DYNAMO_COMPONENT, LABEL_DYNAMO_NAMESPACE, LABEL_DYNAMO_SELECTOR)
    ):
        return _allowed("restore candidate is not operator-stamped")
    # Reading the named DynamoCheckpoint needs the operator's client; without it the
    # checkpoint counts as unavailable, which upstream answers without a patch.
    return _allowed("checkpoint not available")
