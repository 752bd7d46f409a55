from __future__ import annotations

import pytest

from tests.deploy.manifests import OVERLAYS, Build, build
from tests.fakekube.fixtures import fake_kube, kube_api_client, kubeconfig_path

__all__ = ["fake_kube", "kube_api_client", "kubeconfig_path"]


@pytest.fixture(params=OVERLAYS)
def built(request: pytest.FixtureRequest) -> Build:
    """One built overlay (the tests run once per overlay)."""
    return build(request.param)
