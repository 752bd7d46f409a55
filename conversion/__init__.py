"""nvidia.com v1alpha1 <-> v1beta1 conversion (hub = v1beta1).

Public entry point: :func:`convert` (plain dict in, new plain dict out; the input is never
mutated). Raises :class:`ConversionError` with the review failure message.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from conversion.errors import ConversionError
from gocompat.jsonvalue import deep_copy

__all__ = ["ConversionError", "convert"]

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
_VERSIONS = (ALPHA, BETA)
_MODULES = {
    "DynamoGraphDeployment": "dgd",
    "DynamoComponentDeployment": "dcd",
    "DynamoGraphDeploymentRequest": "dgdr",
    "DynamoGraphDeploymentScalingAdapter": "dgdsa",
}
# Converter modules by kind, imported on first use.
_LOADED: dict[str, ModuleType] = {}
# Upstream's text when a converter panics; the original exception is kept as __cause__.
INTERNAL_ERROR = "internal error occurred during conversion"


def convert(obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
    """Convert one object to ``desired_api_version`` (a new dict; ``obj`` is not mutated)."""
    if not isinstance(obj, dict):
        raise ConversionError(f"cannot convert a {type(obj).__name__}: expected a JSON object")
    kind = obj.get("kind")
    version = obj.get("apiVersion")
    if desired_api_version not in _VERSIONS:
        raise ConversionError(
            f"unsupported desired apiVersion {desired_api_version!r} for kind {kind!r}"
            f" (supported: {', '.join(_VERSIONS)})"
        )
    if not isinstance(kind, str) or kind not in _MODULES:
        raise ConversionError(f"unsupported kind {kind!r} for conversion to {desired_api_version}")
    if version not in _VERSIONS:
        raise ConversionError(
            f"unsupported apiVersion {version!r} for kind {kind} (supported: {', '.join(_VERSIONS)})"
        )
    if version == desired_api_version:
        # The apiserver never sends such objects; they pass through unchanged.
        return deep_copy(obj)  # type: ignore[no-any-return]
    module = _LOADED.get(kind)
    if module is None:
        name = f"conversion.{_MODULES[kind]}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            raise ConversionError(f"conversion of kind {kind} is not available") from exc
        _LOADED[kind] = module
    fn = module.alpha_to_beta if desired_api_version == BETA else module.beta_to_alpha
    try:
        out = fn(obj)
    except ConversionError:
        raise
    except Exception as exc:
        raise ConversionError(INTERNAL_ERROR) from exc
    out["apiVersion"] = desired_api_version
    out["kind"] = kind
    return out  # type: ignore[no-any-return]
