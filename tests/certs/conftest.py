from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s_client

from certs import pki
from certs.config import CertConfig
from certs.kube import Backoff
from certs.loop import Reconciler
from tests.fakekube.fixtures import fake_kube, kube_api_client, kubeconfig_path
from tests.fakekube.server import FakeKube

__all__ = ["fake_kube", "kube_api_client", "kubeconfig_path"]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "certs"
NAMESPACE = "dynamo-system"
SERVICE = "dynamo-operator-webhook-service"
SECRET = "webhook-server-cert"
ADMISSION = "admissionregistration.k8s.io"
CRD_GROUP = "apiextensions.k8s.io"
OWNED = {
    ("validatingwebhookconfigurations", "dynamo-operator-validating"),
    ("mutatingwebhookconfigurations", "dynamo-operator-mutating"),
}
UNOWNED = {
    ("validatingwebhookconfigurations", "dynamo-operator-validating-other-ns"),
    ("mutatingwebhookconfigurations", "unrelated-mutating"),
}
CRDS = [
    "dynamographdeploymentrequests.nvidia.com",
    "dynamographdeployments.nvidia.com",
    "dynamocomponentdeployments.nvidia.com",
    "dynamographdeploymentscalingadapters.nvidia.com",
]
FAST = Backoff(attempts=8, base=0.001, cap=0.01)


@pytest.fixture(autouse=True)
def small_test_keys(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """RSA-1024 keys make test key generation ~10x cheaper; nothing in the loop depends on the key size.
    Tests marked ``full_size_keys`` keep the production size."""
    if request.node.get_closest_marker("full_size_keys") is None:
        monkeypatch.setattr(pki, "RSA_KEY_SIZE", 1024)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "full_size_keys: generate RSA keys at the production size (2048 bits)")


def load_fixture(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((FIXTURES / name).read_text()) if d]


def seed(fake: FakeKube, *, crds: bool = True, configs: bool = True) -> None:
    if crds:
        for crd in load_fixture("crds.yaml"):
            fake.put(CRD_GROUP, "customresourcedefinitions", crd)
    if configs:
        for cfg in load_fixture("webhook-configurations.yaml"):
            plural = cfg["kind"].lower() + "s"
            fake.put(ADMISSION, plural, cfg)


def secret_data(fake: FakeKube) -> dict[str, bytes]:
    secret = fake.get("", "secrets", SECRET, NAMESPACE)
    assert secret is not None
    return {k: base64.b64decode(v) for k, v in secret["data"].items()}


def config_bundles(fake: FakeKube, plural: str, name: str) -> list[bytes]:
    obj = fake.get(ADMISSION, plural, name)
    assert obj is not None
    return [base64.b64decode(w["clientConfig"].get("caBundle", "")) for w in obj["webhooks"]]


def crd_bundle(fake: FakeKube, name: str) -> bytes:
    obj = fake.get(CRD_GROUP, "customresourcedefinitions", name)
    assert obj is not None
    return base64.b64decode(obj["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle", ""))


def all_bundles(fake: FakeKube, crds: list[str] = CRDS) -> list[bytes]:
    out: list[bytes] = []
    for plural, name in sorted(OWNED):
        out += config_bundles(fake, plural, name)
    return out + [crd_bundle(fake, n) for n in crds]


def put_secret(fake: FakeKube, data: dict[str, bytes], type_: str = "kubernetes.io/tls") -> None:
    fake.put(
        "",
        "secrets",
        {
            "metadata": {"name": SECRET, "namespace": NAMESPACE},
            "type": type_,
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
        },
    )


def leaf_names() -> list[str]:
    return pki.service_dns_names(SERVICE, NAMESPACE)


@pytest.fixture
def make_reconciler(
    kube_api_client: k8s_client.ApiClient, kubeconfig_path: Path
) -> Iterator[Callable[..., Reconciler]]:
    made: list[Reconciler] = []
    clients: list[k8s_client.ApiClient] = []

    def factory(*, own_client: bool = False, clock: Any = None, **overrides: Any) -> Reconciler:
        settings: dict[str, Any] = {"mode": "auto", "namespace": NAMESPACE, "service_name": SERVICE}
        settings.update(overrides)
        api = kube_api_client
        if own_client:
            from certs.kube import load_api_client

            api = load_api_client(str(kubeconfig_path))
            clients.append(api)
        rec = Reconciler(
            CertConfig(**settings), api, clock=clock, backoff=Backoff(attempts=8, base=0.001, cap=0.01)
        )
        made.append(rec)
        return rec

    yield factory
    for rec in made:
        rec.stop()
    for api in clients:
        api.close()
