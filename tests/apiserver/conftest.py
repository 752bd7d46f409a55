"""Fixtures of the offline API-server pipeline's tests: the service's own handlers as lint runs them."""

from __future__ import annotations

import pytest

from app.cli.offline import OfflineService
from app.server.settings import Settings


@pytest.fixture(scope="session")
def service() -> OfflineService:
    return OfflineService(Settings(feature_checkpoint=True))
