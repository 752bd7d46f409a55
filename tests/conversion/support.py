"""Helpers shared by the conversion tests: vendored fixtures and semantic comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "conversion"


def load_vectors(name: str) -> list[dict[str, Any]]:
    with (FIXTURES / name).open() as fh:
        return [json.loads(line) for line in fh if line.strip()]
