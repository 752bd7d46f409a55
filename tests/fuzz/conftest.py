"""Long fuzzing runs (``--hypothesis-profile=deep``) may take longer than the suite's per-test
timeout; give them an hour each."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--hypothesis-profile", default=None) != "deep":
        return
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.timeout(3600))
