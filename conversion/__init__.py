"""nvidia.com conversion between the versions of each Dynamo kind (hub = v1beta1).

Public entry point: :func:`convert` (plain dict in, new plain dict out; the input is never
mutated). Raises :class:`ConversionError` with the review failure message. Each kind's converter
(:class:`conversion.hub.KindConverter`) is in :data:`CONVERTERS`.
"""

from __future__ import annotations

from typing import Any

from conversion import dcd, dgd, dgdr, dgdsa, hub
from conversion.errors import ConversionError
from conversion.hub import KindConverter

__all__ = ["ConversionError", "convert"]

#: the converter of each kind
CONVERTERS: dict[str, KindConverter] = {
    dgd.CONVERTER.kind: dgd.CONVERTER,
    dcd.CONVERTER.kind: dcd.CONVERTER,
    dgdr.CONVERTER.kind: dgdr.CONVERTER,
    dgdsa.CONVERTER.kind: dgdsa.CONVERTER,
}
# Every apiVersion of any kind (named when an object's kind has no converter).
_API_VERSIONS = tuple(dict.fromkeys(v for c in CONVERTERS.values() for v in c.api_versions))


def convert(obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
    """Convert one object to ``desired_api_version`` (a new dict; ``obj`` is not mutated)."""
    kind = hub.require_object(obj).get("kind")
    converter = CONVERTERS.get(kind) if isinstance(kind, str) else None
    if converter is None:
        raise hub.unsupported(kind, desired_api_version, _API_VERSIONS)
    return hub.convert(converter, obj, desired_api_version)
