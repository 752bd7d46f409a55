"""Suite-wide test configuration: hypothesis profiles, the ``e2e`` marker, the build under test.

``default`` runs 300 random examples per property; ``ci`` (what ``.ci/run`` passes) runs the same
number from a seed fixed per test, so that CI judges a change and not a draw, while every local run
keeps looking for new counter-examples; ``deep`` runs 5000: ``pytest --hypothesis-profile=deep``.
Properties rely on the profile's ``max_examples`` rather than fixing their own count, so the deep
profile reaches every law.

``DYNAMO_WEBHOOK_EXPECT_BUILD=compiled`` (or ``python``) makes the run refuse to start unless the
rule layer is that build (``app/server/build.py``): ``scripts/test`` sets it when it runs the suite from
the compiled tree, so a missing extension cannot pass as a compiled run. Tests marked ``one_build``
check what is the same in both builds (the chart and manifests, the packaging, the image's replay,
which compiles its own wheel): the compiled run skips them, saying so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

E2E = Path(__file__).parent / "e2e"
#: The chart and the manifests of deploy/ (``one_build`` throughout).
DEPLOY = Path(__file__).parent / "deploy"

settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True, database=None)
settings.register_profile("deep", parent=settings.get_profile("default"), max_examples=5000)
settings.load_profile("default")


def pytest_configure(config: pytest.Config) -> None:
    expected = os.environ.get("DYNAMO_WEBHOOK_EXPECT_BUILD")
    if not expected:
        return
    from app.server.build import build_kind, source_modules

    running = build_kind()
    if running != expected:
        raise pytest.UsageError(
            f"DYNAMO_WEBHOOK_EXPECT_BUILD={expected}, but the rule layer imported from here is the "
            f"{running} build (from source: {', '.join(source_modules()) or 'none'})"
        )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/e2e is marked ``e2e`` (before ``-m`` selection runs); ``one_build``
    tests are skipped in the compiled run."""
    compiled = os.environ.get("DYNAMO_WEBHOOK_EXPECT_BUILD") == "compiled"
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)
        if DEPLOY in item.path.parents:
            item.add_marker(pytest.mark.one_build)
        if compiled and item.get_closest_marker("one_build"):
            item.add_marker(pytest.mark.skip(reason="the same in both builds: the Python-build run has checked it"))
