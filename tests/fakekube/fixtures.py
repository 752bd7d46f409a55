"""pytest fixtures around :class:`FakeKube`; import them from a ``conftest.py``::

from tests.fakekube.fixtures import fake_kube, kube_api_client, kubeconfig_path  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from tests.fakekube.server import FakeKube


@pytest.fixture
def fake_kube() -> Iterator[FakeKube]:
    """A started fake API server, stopped after the test."""
    server = FakeKube().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def kubeconfig_path(fake_kube: FakeKube, tmp_path: Path) -> Path:
    """A kubeconfig file pointing at ``fake_kube``."""
    return fake_kube.kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def kube_api_client(kubeconfig_path: Path) -> Iterator[k8s_client.ApiClient]:
    """A real ``kubernetes`` ``ApiClient`` talking to ``fake_kube``."""
    configuration = k8s_client.Configuration()
    k8s_config.load_kube_config(config_file=str(kubeconfig_path), client_configuration=configuration)
    api = k8s_client.ApiClient(configuration)
    try:
        yield api
    finally:
        api.close()
