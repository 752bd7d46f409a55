"""Certificates, judged by the API server: the cert loop (``--cert-mode auto``, the deploy/
ServiceAccount's token) creates the Secret and injects every caBundle; calls fail before the
injection and succeed after; a leaf rotation under continuous ``kubectl`` traffic fails no call;
a CA roll keeps the old and the new CA trusted until the old one expires; ``certs status`` says
what the API server holds; a blanked caBundle is put back.

The module has a control plane of its own: it starts the service with the ca-injector
ClusterRoleBinding of deploy/ held back, and rewrites the serving Secret."""

from __future__ import annotations

import base64
import datetime as dt
import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from certs import files, pki
from tests.e2e.cluster import EXE, MUTATING, NAMESPACE, SECRET, VALIDATING, Cluster, ca_bundles
from tests.e2e.ops import (
    INJECTOR_BINDING,
    SERVICE_ACCOUNT_USER,
    Traffic,
    bundles_equal,
    concurrent_requests,
    established_peers,
    example,
    failures,
    give_back,
    log_messages,
    same_cert,
    secret_data,
    served_cert,
    start_without,
)
from tests.e2e.testenv import Kubectl, Result, control_plane, wait_until

SERVICE_NAME = "dynamo-operator-webhook-service"
#: What is judged is the certificate handling (certs, the server's TLS, ``certs status``), Python in both
#: builds; the calls through the service only carry it, and the rules that answer them are the
#: admission and conversion scenarios', which run in both builds. So: the Python-build run only.
pytestmark = pytest.mark.one_build

NS = "e2e-certs"
STORED = "stored"  # a DGD stored as v1beta1, read back as v1alpha1 (through the conversion webhook)
LEAF_NAMES = [*pki.service_dns_names(SERVICE_NAME, NAMESPACE), "localhost"]


@pytest.fixture(scope="module")
def cluster(bin_dir: Path) -> Iterator[Cluster]:
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="dynamo-webhook-e2e-certs-") as tmp:
        kubectl = Kubectl(bin_dir / "kubectl", cp.kubeconfig)
        c = start_without(cp, kubectl, Path(tmp), [INJECTOR_BINDING])
        try:
            kubectl("create", "namespace", NS)
            yield c
        finally:
            c.service.stop()


def dry_run_create(kubectl: Kubectl) -> Result:
    """A DGD CREATE through the mutating and validating webhooks (nothing is stored)."""
    manifest = yaml.safe_dump(example("dgd-agg-v1beta1.yaml", NS, "probe"))
    return kubectl("create", "--dry-run=server", "-o", "name", "-f", "-", input=manifest, check=False)


def read_converted(kubectl: Kubectl) -> Result:
    """The stored v1beta1 DGD read as v1alpha1."""
    return kubectl(
        "get", "dynamographdeployments.v1alpha1.nvidia.com", STORED, "-n", NS, "-o", "name", check=False
    )


def calls(kubectl: Kubectl) -> list[tuple[str, Callable[[], Result]]]:
    return [
        ("create --dry-run=server", lambda: dry_run_create(kubectl)),
        ("get as v1alpha1", lambda: read_converted(kubectl)),
    ]


def healthy(cluster: Cluster) -> bytes:
    """The ca-injector binding in place, every caBundle equal to the Secret's ca.crt and the
    stored DGD there; returns ca.crt."""
    kubectl = cluster.kubectl
    give_back(cluster, *INJECTOR_BINDING)
    wait_until(
        lambda: bundles_equal(kubectl, secret_data(kubectl)["ca.crt"]), 60, "every caBundle injected", 0.25
    )
    if kubectl("get", "dgd", STORED, "-n", NS, check=False).returncode != 0:
        kubectl.apply(example("dgd-agg-v1beta1.yaml", NS, STORED))
    return secret_data(kubectl)["ca.crt"]


def certs_status(cluster: Cluster) -> tuple[int, dict[str, Any], str]:
    """``dynamo-webhook certs status`` as an operator runs it (admin kubeconfig): exit code, JSON
    report, text report."""
    base = [
        str(EXE),
        "certs",
        "status",
        "--kubeconfig",
        str(cluster.cp.kubeconfig),
        "--namespace",
        NAMESPACE,
        "--service-name",
        SERVICE_NAME,
    ]
    as_json = subprocess.run([*base, "-o", "json"], capture_output=True, text=True, timeout=60, check=False)
    as_text = subprocess.run(base, capture_output=True, text=True, timeout=60, check=False)
    assert as_json.returncode == as_text.returncode, as_text.stderr
    return as_json.returncode, json.loads(as_json.stdout), as_text.stdout


def status_states(report: dict[str, Any]) -> dict[str, str]:
    """The states ``certs status`` reports, keyed as :func:`ca_bundles` keys the caBundles."""
    return {
        (f"crd/{t['name']}" if t["kind"] == "crd" else f"{t['kind']}/{t['name']}"): t["state"]
        for t in report["targets"]
    }


def true_states(kubectl: Kubectl) -> dict[str, str]:
    """What each caBundle is, read from the API server."""
    want = base64.b64encode(secret_data(kubectl)["ca.crt"]).decode()
    return {
        k: "up to date" if v == want else "empty" if not v else "differs from ca.crt"
        for k, v in ca_bundles(kubectl).items()
    }


def fingerprints(pem: bytes) -> list[str]:
    return [pki.fingerprint(c) for c in pki.load_certs(pem)]


def bundle_fingerprints(kubectl: Kubectl) -> set[tuple[str, ...]]:
    return {tuple(fingerprints(base64.b64decode(v))) for v in ca_bundles(kubectl).values()}


def put_secret(kubectl: Kubectl, data: dict[str, bytes]) -> None:
    """Overwrite keys of the serving Secret (as an administrator would)."""
    patch = {"data": {k: base64.b64encode(v).decode() for k, v in data.items()}}
    kubectl("patch", "secret", SECRET, "-n", NAMESPACE, "--type=merge", "-p", json.dumps(patch))


def new_connections_succeed(cluster: Cluster, width: int = 12) -> None:
    """Simultaneous DGD CREATEs (dry run) that make the API server open new connections to the
    service (new TLS handshakes against what it serves now) all succeed."""
    before = established_peers(cluster.service.port)
    path = f"/apis/nvidia.com/v1beta1/namespaces/{NS}/dynamographdeployments?dryRun=All"
    answers = concurrent_requests(
        cluster.cp, "POST", path, example("dgd-agg-v1beta1.yaml", NS, "probe"), width
    )
    assert [body[:500] for status, body in answers if status != 201] == []
    opened = established_peers(cluster.service.port) - before
    assert opened, "the API server opened no new connection"


def test_calls_fail_before_injection_and_succeed_after(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    # The loop created the Secret and serves its pair, but may not touch the webhook
    # configurations: the CRD conversion bundles are in place, the admission ones are not.
    data = secret_data(kubectl)
    assert set(data) == {"ca.crt", "ca.key", "tls.crt", "tls.key"}
    assert same_cert(served_cert(service.port), data["tls.crt"])
    assert pki.ip_sans(data["tls.crt"]) == ["127.0.0.1"]
    want = base64.b64encode(data["ca.crt"]).decode()
    wait_until(
        lambda: all(v == want for k, v in ca_bundles(kubectl).items() if k.startswith("crd/")),
        30,
        "the CRD conversion caBundles",
    )
    bundles = ca_bundles(kubectl)
    assert sorted(k for k, v in bundles.items() if not v) == sorted(
        k for k in bundles if not k.startswith("crd/")
    )

    # Conversion is trusted (a kind without admission webhooks stores, and reads in the other version)...
    kubectl.apply(example("dgdsa-v1beta1.yaml", NS))
    kubectl("get", "dynamographdeploymentscalingadapters.v1alpha1.nvidia.com", "llama-agg-worker", "-n", NS)
    # ... admission is not: the API server does not trust the serving certificate.
    refused = dry_run_create(kubectl)
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith(
        'Internal error occurred: failed calling webhook "mdynamographdeployment.kb.io": failed to call webhook: '
        f'Post "https://127.0.0.1:{service.port}/mutate/nvidia.com/v1beta1/dynamographdeployments?timeout=10s": '
        "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    ), refused.stderr
    # The log says why, naming the missing permission; readiness does not depend on it (the
    # service serves, and serves right; it is the registration that lacks the CA).
    forbidden = (
        '{0}webhookconfigurations.admissionregistration.k8s.io is forbidden: User "'
        + SERVICE_ACCOUNT_USER
        + '" cannot list resource "{0}webhookconfigurations" in API group "admissionregistration.k8s.io" '
        "at the cluster scope"
    )
    assert (
        f"certificate reconcile failed: listing validating webhook configurations: 403 Forbidden: "
        f"{forbidden.format('validating')}; listing mutating webhook configurations: 403 Forbidden: "
        f"{forbidden.format('mutating')}"
    ) in log_messages(service, "warning")
    assert service.readyz() == (200, {"status": "ready"})
    # certs status tells the truth: the nine admission caBundles are empty, the CRDs up to date.
    code, report, text = certs_status(cluster)
    assert code == 1
    assert status_states(report) == true_states(kubectl)
    assert sorted(report["out_of_date"]) == sorted(
        f"{key.split('/')[0]} {key.split('/', 1)[1]}: caBundle empty"
        for key in bundles
        if not key.startswith("crd/")
    )
    assert "Out of date:" in text and "Everything is up to date." not in text

    # The binding back: the loop injects (its watch relists) and the same call succeeds.
    started = time.monotonic()
    healthy(cluster)
    print(f"caBundles injected {time.monotonic() - started:.1f} s after the ca-injector binding came back")
    assert dry_run_create(kubectl).returncode == 0
    code, report, text = certs_status(cluster)
    assert (code, report["out_of_date"]) == (0, [])
    assert set(status_states(report).values()) == {"up to date"} and len(report["targets"]) == len(bundles)
    assert text.endswith("Everything is up to date.\n")
    assert {c["role"] for c in report["certificates"]} == {"CA (signing)", "serving"}


def test_blanked_cabundles_are_repaired_and_certs_status_tells(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    ca = healthy(cluster)
    # While the loop runs, a blanked caBundle is put back within seconds (its watch sees the change).
    started = time.monotonic()
    kubectl(
        "patch",
        "validatingwebhookconfiguration",
        VALIDATING,
        "--type=json",
        "-p",
        '[{"op": "remove", "path": "/webhooks/1/clientConfig/caBundle"}]',
    )
    kubectl(
        "patch",
        "crd",
        "dynamographdeployments.nvidia.com",
        "--type=merge",
        "-p",
        '{"spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": null}}}}}',
    )
    wait_until(lambda: bundles_equal(kubectl, ca), 15, "the blanked caBundles repaired", 0.1)
    print(f"blanked caBundles repaired in {time.monotonic() - started:.2f} s")
    assert dry_run_create(kubectl).returncode == 0 and read_converted(kubectl).returncode == 0

    # With nothing to repair it (the service stopped), certs status names exactly what is wrong.
    code, report, _ = certs_status(cluster)
    assert (code, report["out_of_date"]) == (0, [])
    service.stop()
    kubectl(
        "patch",
        "mutatingwebhookconfiguration",
        MUTATING,
        "--type=json",
        "-p",
        '[{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": ""}]',
    )
    code, report, text = certs_status(cluster)
    assert code == 1
    assert status_states(report) == true_states(kubectl)
    assert report["out_of_date"] == [
        f"mutatingwebhookconfiguration {MUTATING}/mdynamographdeployment.kb.io: caBundle empty"
    ]
    assert text.endswith(
        f"Out of date:\n  - mutatingwebhookconfiguration {MUTATING}/mdynamographdeployment.kb.io: caBundle empty\n"
    )
    # Started again, the service repairs it on its first pass.
    service.start()
    service.wait_ready()
    wait_until(lambda: bundles_equal(kubectl, ca), 30, "the caBundle repaired after a restart", 0.25)
    assert certs_status(cluster)[0] == 0


def test_leaf_rotation_under_traffic_fails_no_call(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    healthy(cluster)
    data = secret_data(kubectl)
    before = served_cert(service.port)
    assert same_cert(before, data["tls.crt"])
    fresh = pki.generate_serving_cert(pki.KeyPair(data["ca.crt"], data["ca.key"]), LEAF_NAMES, ["127.0.0.1"])
    traffic = Traffic(calls(kubectl), threads=2)
    with traffic.running():
        traffic.wait_for_calls(6)
        put_secret(kubectl, {"tls.crt": fresh.cert_pem, "tls.key": fresh.key_pem})
        rotated_at = time.monotonic()
        wait_until(lambda: same_cert(served_cert(service.port), fresh.cert_pem), 15, "the new leaf served")
        print(f"new leaf served {time.monotonic() - rotated_at:.2f} s after the Secret changed")
        # The API server accepts it on new connections too, while the traffic goes on.
        new_connections_succeed(cluster)
        traffic.wait_for_calls(6)
    done = traffic.snapshot()
    assert failures(done) == []
    assert sum(c.started < rotated_at for c in done) >= 6 and sum(c.started > rotated_at for c in done) >= 6
    # The loop kept the new leaf (valid, same CA): nothing re-issued.
    assert secret_data(kubectl)["tls.crt"] == fresh.cert_pem
    assert "serving certificate reloaded" in log_messages(service)
    print(f"{len(done)} kubectl calls through the rotation, none failed")


def test_ca_roll_keeps_old_and_new_ca_until_the_old_one_expires(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    healthy(cluster)
    # The CA in use is about to expire (well inside the loop's 90-day look-ahead): an old CA with
    # 30 seconds left and the serving pair it signed.
    now = dt.datetime.now(dt.UTC)
    issued = now - dt.timedelta(days=1) + dt.timedelta(seconds=30)
    old_ca = pki.generate_ca(valid_days=1, now=issued)
    old_leaf = pki.generate_serving_cert(old_ca, LEAF_NAMES, ["127.0.0.1"], valid_days=1, now=issued)
    expires = pki.not_after(old_ca.cert_pem)
    put_secret(
        kubectl,
        {
            "ca.crt": old_ca.cert_pem,
            "ca.key": old_ca.key_pem,
            "tls.crt": old_leaf.cert_pem,
            "tls.key": old_leaf.key_pem,
        },
    )
    old = pki.fingerprint(pki.load_cert(old_ca.cert_pem))

    # The loop rolls: a new CA first in ca.crt, the old one kept behind it, in every caBundle.
    def rolled() -> bool:
        cas = fingerprints(secret_data(kubectl)["ca.crt"])
        return len(cas) == 2 and cas[1] == old

    wait_until(rolled, 15, "the CA roll")
    data = secret_data(kubectl)
    new_ca = pki.cert_to_pem(pki.load_certs(data["ca.crt"])[0])
    new = pki.fingerprint(pki.load_cert(new_ca))
    wait_until(lambda: bundle_fingerprints(kubectl) == {(new, old)}, 15, "both CAs in every caBundle", 0.25)
    assert pki.chains_to(data["tls.crt"], new_ca)
    wait_until(
        lambda: same_cert(served_cert(service.port), data["tls.crt"]), 15, "the leaf of the new CA served"
    )
    assert dry_run_create(kubectl).returncode == 0 and read_converted(kubectl).returncode == 0
    messages = log_messages(service, "info")
    assert "certificate reconcile: kept 1 previous CA certificate(s) in ca.crt until they expire" in messages
    assert any(
        m.startswith("certificate reconcile: issued a new CA (CA certificate expires") for m in messages
    ), messages

    # A replica still serving the old pair is trusted as well.
    files.write_cert_dir(service.cert_dir, old_leaf.cert_pem, old_leaf.key_pem, None)
    wait_until(lambda: same_cert(served_cert(service.port), old_leaf.cert_pem), 15, "the old leaf served")
    new_connections_succeed(cluster)
    assert dt.datetime.now(dt.UTC) < expires, "the old CA expired before its trust was checked"

    # Once the old CA has expired the loop takes it out of ca.crt and every caBundle (it wakes
    # for that; nothing else happens meanwhile) and serves the new pair again.
    left = (expires - dt.datetime.now(dt.UTC)).total_seconds()
    wait_until(
        lambda: fingerprints(secret_data(kubectl)["ca.crt"]) == [new], left + 15, "the old CA dropped", 0.25
    )
    dropped_after = (dt.datetime.now(dt.UTC) - expires).total_seconds()
    wait_until(lambda: bundle_fingerprints(kubectl) == {(new,)}, 15, "the old CA out of every caBundle", 0.25)
    print(f"old CA dropped {dropped_after:.1f} s after it expired")
    assert "certificate reconcile: removed 1 expired previous CA certificate(s) from ca.crt" in log_messages(
        service
    )
    wait_until(lambda: same_cert(served_cert(service.port), data["tls.crt"]), 15, "the new pair served again")
    assert dry_run_create(kubectl).returncode == 0 and read_converted(kubectl).returncode == 0
