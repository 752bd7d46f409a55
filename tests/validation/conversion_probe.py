"""Skips tests that need the nvidia.com conversion for a kind while it is not available."""

from __future__ import annotations

import functools

import pytest

from conversion import ConversionError
from kinds import convert


@functools.cache
def conversion_available(kind: str) -> bool:
    probe = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": kind,
        "metadata": {"name": "probe", "namespace": "default"},
        "spec": {},
    }
    try:
        convert(probe, "nvidia.com/v1alpha1")
    except ConversionError as exc:
        return "unsupported kind" not in str(exc)
    return True


def require_conversion(kind: str) -> None:
    if not conversion_available(kind):
        pytest.skip(f"conversion for {kind} is not available in this checkout")
