"""Validating admission rules for the Dynamo kinds. Entry point: :func:`validate`."""

from __future__ import annotations

from validation.context import AdmissionContext, AdmissionInput, Decision

__all__ = ["validate"]


def validate(inp: AdmissionInput, ctx: AdmissionContext) -> Decision:
    return Decision.allow()
