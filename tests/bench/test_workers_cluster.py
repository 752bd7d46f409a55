"""``serve --workers 2`` with a Kubernetes API (the in-process fake): the supervisor runs the
cert loop once, and every worker reports ready only once the loop has put the certificates in
place (readiness shared from the supervisor)."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.server.test_serve import Server, auto_mode_workers
from tests.certs.conftest import all_bundles, secret_data
from tests.fakekube.fixtures import fake_kube, kubeconfig_path
from tests.fakekube.server import FakeKube

__all__ = ["fake_kube", "kubeconfig_path"]


@pytest.fixture
def cluster_workers(fake_kube: FakeKube, kubeconfig_path: Path, tmp_path: Path) -> Iterator[Server]:
    srv = auto_mode_workers(fake_kube, kubeconfig_path, tmp_path / "certs")
    try:
        yield srv
    finally:
        srv.stop()


def _readyz(srv: Server) -> str:
    try:
        with urllib.request.urlopen(
            f"https://127.0.0.1:{srv.port}/readyz", context=srv.context(), timeout=5
        ) as r:
            return str(json.loads(r.read())["status"])
    except Exception as exc:
        return repr(exc)


def test_workers_share_the_supervisors_cert_loop(cluster_workers: Server, fake_kube: FakeKube) -> None:
    srv = cluster_workers
    # Each worker turns ready on its own once the loop has put the certificates in place: wait until
    # twelve new connections in a row (either worker) answer ready, the other worker having caught up.
    deadline = time.monotonic() + 60
    answers: list[str] = []
    while answers[-12:] != ["ready"] * 12:
        assert time.monotonic() < deadline, (answers[-24:], srv.log_path.read_text()[-3000:])
        answers.append(_readyz(srv))
        if answers[-1] != "ready":
            time.sleep(0.2)
    data = secret_data(fake_kube)
    assert (srv.cert_dir / "tls.crt").read_bytes() == data["tls.crt"]
    assert all(data["ca.crt"].strip() in bundle for bundle in all_bundles(fake_kube))
    body = (Path(__file__).resolve().parents[2] / "examples/admission/dgd-v1beta1-create.json").read_bytes()
    for _ in range(6):
        status, doc = srv.post("/validate", body)
        assert status == 200 and doc["response"]["allowed"] is True
