"""The in-process fake API server (tests/fakekube) for the cluster tools' tests that go through the real
client."""

from tests.fakekube.fixtures import fake_kube, kubeconfig_path  # noqa: F401
