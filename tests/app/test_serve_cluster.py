"""``serve`` with a Kubernetes API (the in-process fake): the cert loop runs inside the server,
creates the Secret and injects every caBundle, repairs drift within seconds, and a rotated
serving certificate is picked up with zero failed requests under load."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from certs import pki
from tests.app.test_serve import ROOT, Server, traffic
from tests.certs.conftest import (
    CRD_GROUP,
    CRDS,
    NAMESPACE,
    SERVICE,
    all_bundles,
    put_secret,
    secret_data,
    seed,
)
from tests.fakekube.fixtures import fake_kube, kubeconfig_path
from tests.fakekube.server import FakeKube

__all__ = ["fake_kube", "kubeconfig_path"]


def _wait(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def cluster_server(fake_kube: FakeKube, kubeconfig_path: Path, tmp_path: Path) -> Iterator[Server]:
    seed(fake_kube)
    srv = Server(tmp_path / "certs", ("--cert-mode", "auto", "--kubeconfig", str(kubeconfig_path),
                                       "--namespace", NAMESPACE, "--service-name", SERVICE))
    try:
        yield srv
    finally:
        srv.stop()


def _ready(srv: Server) -> bool:
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{srv.port}/readyz", context=srv.context(), timeout=5) as r:
            return bool(json.loads(r.read())["status"] == "ready")
    except Exception:
        return False


def test_loop_in_serve_injects_repairs_and_rotates(cluster_server: Server, fake_kube: FakeKube) -> None:
    srv = cluster_server
    _wait(lambda: _ready(srv), 30, "readiness")
    data = secret_data(fake_kube)
    assert set(data) >= {"tls.crt", "tls.key", "ca.crt", "ca.key"}
    assert (srv.cert_dir / "tls.crt").read_bytes() == data["tls.crt"]
    assert all(data["ca.crt"].strip() in bundle for bundle in all_bundles(fake_kube))

    # Drift: a blanked conversion caBundle is put back by the watch-driven loop.
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[0])
    assert crd is not None
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = ""
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    _wait(lambda: all(data["ca.crt"].strip() in b for b in all_bundles(fake_kube)), 15, "caBundle repair")

    # Rotation under load: a new leaf from the same CA lands in the Secret; the loop writes it
    # into the cert dir and every new connection gets it, with no request failing meanwhile.
    before = srv.peer_cert()
    ca = pki.KeyPair(data["ca.crt"], data["ca.key"])
    fresh = pki.generate_serving_cert(ca, [*pki.service_dns_names(SERVICE, NAMESPACE), "localhost"], ["127.0.0.1"])
    with traffic(srv):
        put_secret(fake_kube, {**data, "tls.crt": fresh.cert_pem, "tls.key": fresh.key_pem})
        _wait(lambda: srv.peer_cert() != before, 15, "the rotated certificate to be served")
        time.sleep(1)
    assert (srv.cert_dir / "tls.crt").read_bytes() == fresh.cert_pem


def test_lease_excluded_namespaces_are_skipped(cluster_server: Server, fake_kube: FakeKube) -> None:
    import datetime as dt

    srv = cluster_server
    _wait(lambda: _ready(srv), 30, "readiness")
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    fake_kube.put("coordination.k8s.io", "leases", {
        "metadata": {"name": "dynamo-operator-namespace-scope", "namespace": "team-a"},
        "spec": {"holderIdentity": "namespace-restricted-operator-1.1.0", "leaseDurationSeconds": 300,
                 "acquireTime": now, "renewTime": now},
    })
    review = json.loads((ROOT / "examples/admission/dgd-v1beta1-create.json").read_text())
    review["request"]["object"]["spec"]["priorityClassName"] = "high"  # denied while Grove is off

    def answer(namespace: str) -> dict[str, object]:
        review["request"]["namespace"] = namespace
        review["request"]["object"]["metadata"]["namespace"] = namespace
        status, doc = srv.post("/validate", json.dumps(review).encode())
        assert status == 200
        response = doc["response"]
        assert isinstance(response, dict)
        return response

    _wait(lambda: answer("team-a")["allowed"] is True, 15, "the lease to exclude team-a")
    assert answer("team-b")["allowed"] is False
    fake_kube.remove("coordination.k8s.io", "leases", "dynamo-operator-namespace-scope", "team-a")
    _wait(lambda: answer("team-a")["allowed"] is False, 15, "the deleted lease to stop excluding team-a")
