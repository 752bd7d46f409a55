"""Loading vendored conversion vectors and comparing objects under their equality rules
(metadata reduced to labels and annotations, as the apiserver takes them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.review.compare import diff_paths, normalize

FIXTURES = Path(__file__).parent.parent / "fixtures" / "conversion"


def load_vectors(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]


def comparable(obj: dict[str, Any]) -> Any:
    obj = dict(obj)
    meta = obj.get("metadata") or {}
    obj["metadata"] = {k: meta[k] for k in ("labels", "annotations") if k in meta}
    return normalize(obj)


def assert_same(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    a, e = comparable(actual), comparable(expected)
    assert a == e, diff_paths(a, e)
