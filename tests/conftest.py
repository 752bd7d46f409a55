"""Suite-wide test configuration: hypothesis profiles and the ``e2e`` marker.

``default`` (CI) runs 300 examples per property; ``deep`` runs 5000:
``pytest --hypothesis-profile=deep``. Properties rely on the profile's ``max_examples``
rather than fixing their own count, so the deep profile reaches every law.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

E2E = Path(__file__).parent / "e2e"

settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("deep", parent=settings.get_profile("default"), max_examples=5000)
settings.load_profile("default")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/e2e is marked ``e2e`` (before ``-m`` selection runs)."""
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)
