"""DynamoComponentDeployment defaulting on the v1beta1 hub (upstream ``DCDDefaulter.Default`` in
deploy/operator/internal/webhook/defaulting/dynamocomponentdeployment_handler.go).

On CREATE a standalone DCD without ``spec.name`` takes ``metadata.name``. UPDATE requests
are admitted unchanged (renaming an existing component would rewrite user intent). The
upstream registration is v1beta1 only with ``matchPolicy: Exact``, so v1alpha1 DCDs are
never defaulted. A defaulted DCD is answered as the operator's encoder writes it
(:func:`defaulting.common.as_go_writes`: ``podTemplate: {}`` gains its ``spec``, quantities are
canonical …).
"""

from __future__ import annotations

from conversion.v1alpha1.dcd import BETA_SPEC
from defaulting.common import as_dict, as_go_writes, go_string
from domain.admission import AdmissionSettings, JSONObject, Operation
from gocompat.typed import Struct

__all__ = ["default_hub"]


def default_hub(
    obj: JSONObject, operation: Operation, settings: AdmissionSettings | None = None
) -> JSONObject:
    """Default a v1beta1 DCD; returns ``obj`` itself when nothing changes (no setting is involved)."""
    if operation != "CREATE":
        return obj
    meta = as_dict(obj.get("metadata"))
    name = go_string(meta.get("name")) if meta is not None else ""
    spec = as_dict(obj.get("spec"))
    if not name or (spec is not None and go_string(spec.get("name"))):
        return obj
    return as_go_writes({**obj, "spec": {**(spec or {}), "name": name}}, BETA_SPEC, _NO_STATUS)


# The v1beta1 DCD status: every field omitempty, so an unset status is never written.
_NO_STATUS = Struct(())
