"""Conversion as ``/convert`` does it, one object at a time, and the round-trip check built on it.

Shared by ``convert --check`` and ``audit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.review.compare import diff_paths, normalize
from app.review.dispatch import convert_objects
from domain.constants import ALPHA_API_VERSION, HUB_API_VERSION
from kinds import REGISTRY

#: Kinds with more than one served version, and the apiVersions conversion works between.
CONVERTIBLE = frozenset(k.kind for k in REGISTRY if k.convertible)
VERSIONS = (ALPHA_API_VERSION, HUB_API_VERSION)


def convert_one(body: dict[str, Any], to: str) -> dict[str, Any]:
    """Convert exactly as ``/convert`` does (same function, same metadata rules)."""
    converted, _ = convert_objects([body], to)
    return converted[0]


def other_version(api_version: str) -> str:
    return VERSIONS[1] if api_version == VERSIONS[0] else VERSIONS[0]


def roundtrip_problems(
    body: dict[str, Any],
    convert: Callable[[dict[str, Any], str], dict[str, Any]] = convert_one,
    *,
    added: bool = True,
) -> list[str]:
    """Field paths that do not survive a trip through the other version and back (``convert`` is
    :func:`convert_one` or a caching equivalent); without ``added``, only fields of ``body`` lost or
    changed, not those the trip adds."""
    own = str(body["apiVersion"])
    back = convert(convert(body, other_version(own)), own)
    if "status" not in body:
        # A manifest carries no status; the status a converter initialises (DGDR's Pending
        # phase) is not something the manifest could lose.
        back = {k: v for k, v in back.items() if k != "status"}
    if back == body:
        return []
    # EPP plugins come back with their Go zero values, omitempty fields without theirs: neither is
    # a loss (compare.normalize)
    problems: list[str] = diff_paths(
        normalize(body, epp_zero=True, omitted_zero=True),
        normalize(back, epp_zero=True, omitted_zero=True),
        added=added,
    )
    return problems
