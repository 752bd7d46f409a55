"""Realistic review bodies for the benchmark and the soak tests, built from ``examples/``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((EXAMPLES / name).read_text())
    return doc


def dgd_update() -> dict[str, Any]:
    """An allowed DGD UPDATE: the v1beta1 example with one component's replicas changed."""
    review = _load("admission/dgd-v1beta1-update-backend.json")
    request = review["request"]
    new = copy.deepcopy(request["oldObject"])
    components = new["spec"].get("components") or []
    if components:
        components[-1]["replicas"] = int(components[-1].get("replicas") or 1) + 1
    meta = new.setdefault("metadata", {})
    meta["generation"] = int(meta.get("generation") or 1) + 1
    request["object"] = new
    return review


def dgd_create() -> dict[str, Any]:
    return _load("admission/dgd-v1beta1-create.json")


def dgdr_create() -> dict[str, Any]:
    return _load("admission/dgdr-v1beta1-create.json")


def conversion_review(objects: int = 500) -> dict[str, Any]:
    """A ConversionReview of ``objects`` v1alpha1 DGDs to v1beta1 (as for a large list call)."""
    review = _load("conversion/dgd-to-v1beta1.json")
    sources = review["request"]["objects"]
    out = []
    for i in range(objects):
        obj = copy.deepcopy(sources[i % len(sources)])
        meta = obj.setdefault("metadata", {})
        meta["name"] = f"{meta.get('name', 'dgd')}-{i}"
        meta["uid"] = f"00000000-0000-4000-8000-{i:012d}"
        out.append(obj)
    review["request"]["objects"] = out
    return review


def huge_admission(target_bytes: int) -> dict[str, Any]:
    """A DGD CREATE padded with annotations to about ``target_bytes`` (still a valid review)."""
    review = dgd_create()
    meta = review["request"]["object"].setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    base = len(orjson.dumps(review))
    chunk = "x" * 4000
    i = 0
    while base + i * (len(chunk) + 40) < target_bytes:
        annotations[f"bench.example.com/pad-{i}"] = chunk
        i += 1
    return review


def dump(doc: Any, path: Path) -> Path:
    path.write_bytes(orjson.dumps(doc))
    return path
