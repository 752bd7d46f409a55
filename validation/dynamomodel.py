"""DynamoModel validation (v1alpha1 only, ungated, no GVK guard): upstream ``validateDynamoModelSpec``
with ``validateModelSource``, and ``validateDynamoModelSpecUpdate``
(deploy/operator/internal/webhook/validation/dynamomodel.go).

UPDATE runs the create rules on the new object, then the immutability rules; each
immutability violation adds its warning as well as its error (warnings accompany the
denial). ``modelName`` and the source URI may change; a non-LoRA model's source is not
checked. The LoRA type match is exact (``lora``), as in the validator, although the
controller's ``IsLoRA`` compares case-insensitively.
"""

from __future__ import annotations

from typing import Any, Final

from domain.admission import AdmissionContext, AdmissionInput, Decision, JSONObject
from domain.constants import KIND_MODEL
from gocompat.fielderrors import FieldError, Path, invalid, required, to_decision
from validation.objects import name_of

__all__ = ["KIND_MODEL", "create_errors", "update_errors", "validate"]

MODEL_TYPE_LORA: Final = "lora"
# The URI may carry credentials or signed query strings: it is never echoed.
REDACTED_URI: Final = "<redacted>"
SUPPORTED_SCHEMES: Final = ("s3://", "hf://", "file:///")

WARN_BASE_MODEL: Final = "Changing spec.baseModelName will break endpoint discovery"
WARN_MODEL_TYPE: Final = "Changing spec.modelType may cause unexpected behavior"

_SPEC: Final = Path("spec")
_IMMUTABLE: Final = "is immutable and cannot be changed after creation"


def _obj(value: Any) -> JSONObject | None:
    return value if isinstance(value, dict) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def create_errors(spec: JSONObject) -> list[FieldError]:
    errs: list[FieldError] = []
    if not _str(spec.get("modelName")):
        errs.append(required(_SPEC.child("modelName"), "must not be empty"))
    if not _str(spec.get("baseModelName")):
        errs.append(required(_SPEC.child("baseModelName"), "must not be empty"))
    if _str(spec.get("modelType")) == MODEL_TYPE_LORA:
        source = _obj(spec.get("source"))
        source_path = _SPEC.child("source")
        if source is None:
            errs.append(required(source_path, 'is required when spec.modelType is "lora"'))
        else:
            uri = _str(source.get("uri"))
            uri_path = source_path.child("uri")
            if not uri:
                errs.append(required(uri_path, 'must be specified when spec.modelType is "lora"'))
            elif not uri.startswith(SUPPORTED_SCHEMES):
                errs.append(
                    invalid(uri_path, REDACTED_URI, 'must start with "s3://", "hf://", or "file:///"')
                )
    return errs


def update_errors(new: JSONObject, old: JSONObject, warnings: list[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    new_base = _str(new.get("baseModelName"))
    if new_base != _str(old.get("baseModelName")):
        warnings.append(WARN_BASE_MODEL)
        errs.append(invalid(_SPEC.child("baseModelName"), new_base, _IMMUTABLE))
    new_type = _str(new.get("modelType"))
    if new_type != _str(old.get("modelType")):
        warnings.append(WARN_MODEL_TYPE)
        errs.append(invalid(_SPEC.child("modelType"), new_type, _IMMUTABLE))
    return errs


def validate(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
    """Validate one DynamoModel CREATE or UPDATE (other operations are allowed without checks)."""
    obj = inp.object
    if inp.operation not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
        return Decision.allow()
    spec = _obj(obj.get("spec")) or {}
    if inp.operation == "CREATE":
        return to_decision(KIND_MODEL, name_of(obj), create_errors(spec))
    meta = _obj(obj.get("metadata"))
    if meta is not None and meta.get("deletionTimestamp"):
        return Decision.allow()
    old = inp.old_object
    if not isinstance(old, dict):
        return Decision.deny("there is no content to decode", code=400, reason="")
    warnings: list[str] = []
    errs = create_errors(spec)
    errs += update_errors(spec, _obj(old.get("spec")) or {}, warnings)
    return to_decision(KIND_MODEL, name_of(obj), errs, warnings)
