"""Session fixtures of the end-to-end suite: one real control plane with the service registered the
way deploy/ registers it, shared by every scenario that does not need a cluster of its own.

Every test under tests/e2e carries the ``e2e`` marker (set in tests/conftest.py; ``scripts/test --quick``
deselects them).
A machine that cannot build the binaries fails these tests with what is missing; nothing skips.
"""

from __future__ import annotations

import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.conftest import E2E_FIGURE
from tests.e2e.cluster import Cluster, Service, ca_bundles, install
from tests.e2e.pod import pod_serve_args
from tests.e2e.testenv import (
    ControlPlane,
    Kubectl,
    TestenvUnavailable,
    binaries,
    control_plane,
    free_port,
    wait_until,
)


@pytest.fixture(scope="session")
def bin_dir() -> Path:
    try:
        return binaries()
    except TestenvUnavailable as err:
        pytest.fail(str(err), pytrace=False)


@pytest.fixture(scope="session")
def cp(bin_dir: Path) -> Iterator[ControlPlane]:
    with control_plane() as plane:
        yield plane


@pytest.fixture(scope="session")
def kubectl(cp: ControlPlane, bin_dir: Path) -> Kubectl:
    return Kubectl(bin_dir / "kubectl", cp.kubeconfig)


def start_cluster(cp: ControlPlane, kubectl: Kubectl, workdir: Path, *args: str) -> Cluster:
    """Install the registration, start ``serve`` against it and wait until every caBundle is in place."""
    port = free_port()
    crds, rest, sa_config = install(cp, kubectl, workdir, port)
    service = Service(workdir, sa_config, args, port=port)
    service.start()
    try:
        service.wait_ready()
        wait_until(lambda: all(ca_bundles(kubectl).values()), 60, "every caBundle injected", 0.5)
    except BaseException:
        print(service.log_tail(200))
        service.stop()
        raise
    return Cluster(cp, kubectl, service, crds, rest)


@pytest.fixture(scope="session")
def cluster(cp: ControlPlane, kubectl: Kubectl) -> Iterator[Cluster]:
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-e2e-serve-") as tmp:
        # The Checkpoint gate on, so that DynamoCheckpoint has an admitted case too.
        # The workers and memory budget the Deployment's pod gives the service (moved into its limit later).
        c = start_cluster(cp, kubectl, Path(tmp), "--feature-checkpoint", *pod_serve_args())
        try:
            yield c
        finally:
            c.service.stop()


#: The figures measured since the last report; each goes out on that report (tests/conftest.py prints
#: them in the session summary, also from the workers of ``pytest -n``).
_FIGURES: list[str] = []


@pytest.fixture(scope="session")
def e2e_figures() -> list[str]:
    """Measurements a scenario reports; printed in the session summary."""
    return _FIGURES


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    report.user_properties.extend((E2E_FIGURE, line) for line in _FIGURES)
    _FIGURES.clear()
    return report
