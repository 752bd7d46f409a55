"""nvidia.com v1alpha1 <-> v1beta1 conversion (hub = v1beta1).

Public entry point: :func:`convert` (plain dict in, new plain dict out; the input is never
mutated). Raises :class:`ConversionError` with the review failure message.
"""

from __future__ import annotations

from typing import Any

from conversion.errors import ConversionError

__all__ = ["ConversionError", "convert"]


def convert(obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
    kind = obj.get("kind") if isinstance(obj, dict) else None
    raise ConversionError(f"unsupported kind {kind!r} for conversion to {desired_api_version}")
