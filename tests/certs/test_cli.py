from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from app.cli.tool_args import register_certs
from certs import pki
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
from tests.fakekube.server import FakeKube


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="dynamo-webhook")
    register_certs(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


def common(kubeconfig: Path) -> list[str]:
    return ["--kubeconfig", str(kubeconfig), "--namespace", NAMESPACE, "--service-name", SERVICE]


def test_ensure_once_then_status(
    fake_kube: FakeKube, kubeconfig_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(fake_kube)
    assert run(["certs", "status", *common(kubeconfig_path)]) == 1
    assert "MISSING" in capsys.readouterr().out
    assert (
        run(["certs", "ensure", "--once", *common(kubeconfig_path), "--cert-dir", str(tmp_path / "d")]) == 0
    )
    out = capsys.readouterr().out
    assert "changed: created Secret dynamo-system/webhook-server-cert" in out
    assert "in place" in out
    data = secret_data(fake_kube)
    assert (tmp_path / "d" / "tls.crt").read_bytes() == data["tls.crt"]
    assert all(b == data["ca.crt"] for b in all_bundles(fake_kube))

    assert run(["certs", "status", *common(kubeconfig_path)]) == 0
    text = capsys.readouterr().out
    ca_fp = pki.fingerprint(pki.load_cert(data["ca.crt"]))
    assert f"CA (signing): O=NVIDIA,CN=Dynamo-Webhook-CA  sha256:{ca_fp}" in text
    assert f"SANs: {SERVICE}.{NAMESPACE}.svc, {SERVICE}, {SERVICE}.{NAMESPACE}" in text
    assert text.count(f"up to date             sha256:{ca_fp}") == 5 + 4
    assert "Everything is up to date." in text

    assert run(["certs", "status", *common(kubeconfig_path), "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["out_of_date"] == []
    assert {t["kind"] for t in report["targets"]} == {
        "validatingwebhookconfiguration",
        "mutatingwebhookconfiguration",
        "crd",
    }

    # Drift shows up in status and is repaired by the next ensure.
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[0])
    assert crd is not None
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = ""
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    assert run(["certs", "status", *common(kubeconfig_path)]) == 1
    assert f"CRD {CRDS[0]}: conversion caBundle empty" in capsys.readouterr().out
    fake_kube.clear_calls()
    assert run(["certs", "ensure", "--once", *common(kubeconfig_path)]) == 0
    assert [(c.resource, c.name) for c in fake_kube.writes()] == [("customresourcedefinitions", CRDS[0])]


def test_ensure_once_reports_failures(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(fake_kube)
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[3])
    assert crd is not None
    del crd["spec"]["conversion"]
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    assert run(["certs", "ensure", "--once", *common(kubeconfig_path)]) == 1
    assert f"error: CRD {CRDS[3]} is missing conversion webhook configuration" in capsys.readouterr().err
    # Manual mode without a Secret: non-zero, and nothing created.
    fake_kube.remove("", "secrets", "webhook-server-cert", NAMESPACE)
    fake_kube.clear_calls()
    assert run(["certs", "ensure", "--once", "--mode", "manual", *common(kubeconfig_path)]) == 1
    assert "Secret not found" in capsys.readouterr().err
    assert fake_kube.writes() == []


def test_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    missing = tmp_path / "nope"
    assert run(["certs", "ensure", "--once", "--service-name", "s", "--kubeconfig", str(missing)]) == 2
    assert "no Kubernetes API configuration" in capsys.readouterr().err
    assert (
        run(["certs", "status", "--namespace", "n", "--service-name", "s", "--kubeconfig", str(missing)]) == 2
    )
    assert "no Kubernetes API configuration" in capsys.readouterr().err
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert run(["certs", "status"]) == 2
    assert (
        f"no kubeconfig found (looked in $KUBECONFIG: not set; {tmp_path}/.kube/config: no such file; in-cluster: "
        in capsys.readouterr().err
    )


def test_ensure_loop_runs_until_signalled(fake_kube: FakeKube, kubeconfig_path: Path) -> None:
    seed(fake_kube)
    codes: list[int] = []
    # Signal handlers can only be installed from the main thread: run the loop here, signal from a thread.

    def stop_when_ready() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            secret = fake_kube.get("", "secrets", "webhook-server-cert", NAMESPACE)
            if secret and secret["data"]["ca.crt"] and all(b for b in all_bundles(fake_kube)):
                break
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_when_ready, daemon=True).start()
    codes.append(run(["certs", "ensure", *common(kubeconfig_path), "--interval", "3600"]))
    assert codes == [0]
    data = secret_data(fake_kube)
    assert all(b == data["ca.crt"] for b in all_bundles(fake_kube))
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_ensure_once_waits_for_the_manual_secret(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(fake_kube)
    ca = pki.generate_ca()
    leaf = pki.generate_serving_cert(ca, pki.service_dns_names(SERVICE, NAMESPACE))

    def publish() -> None:
        time.sleep(0.3)
        put_secret(fake_kube, {"ca.crt": ca.cert_pem, "tls.crt": leaf.cert_pem, "tls.key": leaf.key_pem})

    threading.Thread(target=publish, daemon=True).start()
    argv = ["certs", "ensure", "--once", "--mode", "manual", "--wait", "20", *common(kubeconfig_path)]
    assert run(argv) == 0
    captured = capsys.readouterr()
    assert "waiting: waiting for CA bundle in secret dynamo-system/webhook-server-cert" in captured.err
    assert captured.out.count("changed: injected caBundle into CRD") == 4
    assert not [c for c in fake_kube.writes() if c.resource == "secrets"]


def test_service_name_and_namespace_default_to_serves_outside_a_cluster(
    fake_kube: FakeKube, kubeconfig_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``certs`` outside a cluster needs neither flag: the defaults are serve's (Settings)."""
    seed(fake_kube)
    assert run(["certs", "ensure", "--once", "--kubeconfig", str(kubeconfig_path)]) == 0
    assert f"changed: created Secret {NAMESPACE}/webhook-server-cert" in capsys.readouterr().out
    assert run(["certs", "status", "--kubeconfig", str(kubeconfig_path)]) == 0
    assert f"SANs: {SERVICE}.{NAMESPACE}.svc, {SERVICE}, {SERVICE}.{NAMESPACE}" in capsys.readouterr().out
