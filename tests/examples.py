"""The repository's published examples as the tests read them: manifests (``examples/manifests``)
and AdmissionReviews (``examples/admission``), each a fresh copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def manifest(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / "manifests" / name).read_text())
    return doc


def admission_review(name: str) -> dict[str, Any]:
    review: dict[str, Any] = json.loads((EXAMPLES / "admission" / name).read_text())
    return review
