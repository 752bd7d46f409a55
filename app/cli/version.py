"""What this installation is: the package version, the build of its rule layer (:mod:`app.server.build`)
and the upstream operator commit its rules, converters and CRD schemas follow.

:data:`OPERATOR_COMMIT` is the one place that commit is named in the code; the test fixtures
taken from that commit (``tests/fixtures``) are checked against it.
"""

from __future__ import annotations

import importlib.metadata

#: The ai-dynamo/dynamo commit whose operator this service matches (admission rules and messages,
#: conversion, the CRD schemas of ``app/review/schemas``).
OPERATOR_COMMIT = "2a6da14c8361"
OPERATOR_REPOSITORY = "ai-dynamo/dynamo"


def package_version() -> str:
    try:
        return importlib.metadata.version("dynamo-webhook")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def version_text() -> str:
    """``dynamo-webhook --version``: one line."""
    from app.server.build import build_kind

    return (
        f"dynamo-webhook {package_version()} ({build_kind()} build), "
        f"matching the operator of {OPERATOR_REPOSITORY} {OPERATOR_COMMIT}"
    )
