"""Soak, fault and multi-process tests against real ``dynamo-webhook serve`` subprocesses.

Tests marked ``slow`` (10-minute soak, long fault runs) are deselected unless the marker is
asked for explicitly: ``pytest -m slow tests/bench``. The default run keeps the short versions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.harness import ensure_certs

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "slow" in (config.getoption("-m") or ""):
        return
    slow = [
        item for item in items if item.get_closest_marker("slow") and HERE in Path(str(item.path)).parents
    ]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item not in slow]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(cert_dir, ca_file) of a dev CA and serving pair for one module's servers."""
    cert_dir = tmp_path_factory.mktemp("bench-certs") / "serving-certs"
    yield cert_dir, ensure_certs(cert_dir)
