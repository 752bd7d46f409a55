"""Defaulting (mutating) admission rules for the Dynamo kinds. Entry point: :func:`default`."""

from __future__ import annotations

from validation.context import AdmissionContext, AdmissionInput, Decision

__all__ = ["default"]


def default(inp: AdmissionInput, ctx: AdmissionContext) -> Decision:
    return Decision.allow()
