"""Live look-ups against the Kubernetes API (the in-process fake): ClusterTopologyBinding reads,
InferencePool discovery, and their effect on admission (EPP components need the
InferencePool API) once serve has an API."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import kinds
from app.server.cluster_services import INFERENCE_POOL_GROUP, LiveLookups, build_cluster_services
from app.server.settings import Settings
from certs.kube import ApiError, Kube, load_api_client
from domain.admission import LookupNotFound
from tests.admission_helpers import make_input
from tests.fakekube.fixtures import fake_kube, kubeconfig_path
from tests.fakekube.server import FakeKube

__all__ = ["fake_kube", "kubeconfig_path"]

EPP_DGD = (
    Path(__file__).resolve().parents[2] / "fixtures/conversion/manifests/"
    "v1alpha1__DynamoGraphDeployment__qwen3-0-6b-agg.yaml"
)


@pytest.fixture
def lookups(kubeconfig_path: Path) -> LiveLookups:
    return LiveLookups(Kube(load_api_client(str(kubeconfig_path))), discovery_ttl=0)


def test_cluster_topology_binding_read(lookups: LiveLookups, fake_kube: FakeKube) -> None:
    with pytest.raises(LookupNotFound):
        lookups.cluster_topology("gb200")
    fake_kube.put(
        "grove.io",
        "clustertopologybindings",
        {
            "metadata": {"name": "gb200"},
            "spec": {
                "levels": [
                    {"domain": "zone", "key": "topology.kubernetes.io/zone"},
                    {"domain": "rack", "key": "example.com/rack"},
                    {"domain": "host", "key": "kubernetes.io/hostname"},
                ]
            },
        },
    )
    assert lookups.cluster_topology("gb200") == ("zone", "rack", "host")


def test_failed_reads_show_the_api_servers_message(
    lookups: LiveLookups, fake_kube: FakeKube, caplog: pytest.LogCaptureFixture
) -> None:
    # A denial shows what the API server said (client-go's error text), not the HTTP status line.
    fake_kube.faults.error_status = 403
    fake_kube.faults.fail_next = 1

    class Forbidden:
        def request(self, method: str, path: str) -> None:
            raise ApiError(403, "Forbidden", f"{path} is forbidden: User cannot get path")

    with caplog.at_level("WARNING", logger="dynamo_webhook.cluster"):
        with pytest.raises(RuntimeError) as err:
            lookups.cluster_topology("gb200")
        assert str(err.value) == "injected fault"
        with pytest.raises(RuntimeError) as err:
            LiveLookups(Forbidden()).inference_pool_available()
        assert str(err.value) == "/apis/inference.networking.k8s.io is forbidden: User cannot get path"
    assert [r.getMessage() for r in caplog.records] == [
        "reading ClusterTopologyBinding failed",
        "InferencePool API discovery failed",
    ]


def test_inference_pool_discovery(lookups: LiveLookups, fake_kube: FakeKube) -> None:
    assert lookups.inference_pool_available() is False
    fake_kube.extra_groups.add(INFERENCE_POOL_GROUP)
    assert lookups.inference_pool_available() is True


def test_discovery_is_cached(kubeconfig_path: Path, fake_kube: FakeKube) -> None:
    cached = LiveLookups(Kube(load_api_client(str(kubeconfig_path))), discovery_ttl=300)
    assert cached.inference_pool_available() is False
    fake_kube.extra_groups.add(INFERENCE_POOL_GROUP)
    assert cached.inference_pool_available() is False


def test_epp_components_need_the_inference_pool_api_in_a_cluster(
    kubeconfig_path: Path, fake_kube: FakeKube, tmp_path: Path
) -> None:
    services = build_cluster_services(
        Settings(kubeconfig=kubeconfig_path, cert_mode="dev", cert_dir=tmp_path)
    )
    assert services.lookups is not None
    services.lookups.discovery_ttl = 0
    ctx = services.admission_context(Settings(cert_mode="dev"))
    assert ctx.settings.cluster_lookups is True
    obj = yaml.safe_load(EPP_DGD.read_text())
    inp = make_input(obj["apiVersion"], obj["kind"], "CREATE", obj)
    denied = kinds.validate(inp, ctx)
    assert denied.allowed is False
    assert (
        "Forbidden: cannot deploy EPP component: InferencePool API group (inference.networking.k8s.io) is "
        "not available in the cluster"
    ) in denied.message
    fake_kube.extra_groups.add(INFERENCE_POOL_GROUP)
    assert "InferencePool" not in kinds.validate(inp, ctx).message
    # Offline (no API), the look-up is skipped as upstream does without a cluster.
    offline = Settings(cert_mode="dev").admission_settings()
    assert offline.cluster_lookups is False
