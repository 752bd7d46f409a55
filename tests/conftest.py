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
which compiles its own wheel, the end-to-end certificate, service-down, audit, storage-migrate and
RBAC scenarios, whose code is Python in both): the compiled run skips them, saying so.

``pytest -n 2`` (pytest-xdist; ``scripts/test`` runs so) hands whole files to the workers, and the
end-to-end suite as one unit, first: its session fixtures (one control plane, one service) are made
once, and one worker works through it while the other runs the rest.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

E2E = Path(__file__).parent / "e2e"
#: The chart and the manifests of deploy/ (``one_build`` throughout).
DEPLOY = Path(__file__).parent / "deploy"
#: The user property that carries a figure an end-to-end scenario measured, on its test's report.
E2E_FIGURE = "e2e figure"
_FIGURES: list[str] = []

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
    # pytest -n: the end-to-end unit first (pytest_collection_modifyitems), not the file with the most tests.
    if getattr(config.option, "dist", None) == "load":
        config.option.loadscopereorder = False
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
            item.add_marker(
                pytest.mark.skip(reason="the same in both builds: the Python-build run has checked it")
            )
    if hasattr(config, "workerinput"):  # a worker of pytest -n: the longest unit first
        items[:] = sorted(items, key=lambda item: not _in_e2e(item.nodeid))


def _in_e2e(nodeid: str) -> bool:
    return nodeid.startswith("tests/e2e/")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Work units for ``pytest -n`` (unless another ``--dist`` is asked for): a file (its module
    fixtures are made once), or all of tests/e2e."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "tests/e2e" if _in_e2e(nodeid) else nodeid.split("::", 1)[0]

    return ByFile(config, log)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the figures end-to-end scenarios measured (tests/e2e/conftest.py) for the summary; with
    ``pytest -n`` the reports come here from the workers."""
    _FIGURES.extend(value for name, value in report.user_properties if name == E2E_FIGURE)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _FIGURES:
        terminalreporter.section("end-to-end figures")
        for line in _FIGURES:
            terminalreporter.write_line(line)
