"""DynamoComponentDeployment defaulting on the v1beta1 hub (upstream ``DCDDefaulter.Default`` in
deploy/operator/internal/webhook/defaulting/dynamocomponentdeployment_handler.go).

On CREATE a standalone DCD without ``spec.name`` takes ``metadata.name``. UPDATE requests
are admitted unchanged (renaming an existing component would rewrite user intent). The
upstream registration is v1beta1 only with ``matchPolicy: Exact``, so v1alpha1 DCDs are
never defaulted.
"""

from __future__ import annotations

from defaulting.common import as_dict, go_string
from domain.admission import AdmissionSettings, JSONObject, Operation

__all__ = ["default_hub"]


def default_hub(obj: JSONObject, operation: Operation, settings: AdmissionSettings | None = None) -> JSONObject:
    """Default a v1beta1 DCD; returns ``obj`` itself when nothing changes (no setting is involved)."""
    if operation != "CREATE":
        return obj
    meta = as_dict(obj.get("metadata"))
    name = go_string(meta.get("name")) if meta is not None else ""
    spec = as_dict(obj.get("spec"))
    if not name or (spec is not None and go_string(spec.get("name"))):
        return obj
    return {**obj, "spec": {**(spec or {}), "name": name}}
