from __future__ import annotations

import base64
import datetime as dt
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client as k8s_client

from certs import pki
from certs.config import CertConfig
from certs.kube import Kube
from certs.loop import Reconciler
from certs.status import collect_status
from tests.certs.conftest import (
    ADMISSION,
    CRD_GROUP,
    CRDS,
    NAMESPACE,
    OWNED,
    SECRET,
    SERVICE,
    UNOWNED,
    all_bundles,
    config_bundles,
    crd_bundle,
    leaf_names,
    load_fixture,
    put_secret,
    secret_data,
    seed,
)
from tests.certs.served import seconds_left, served_gauges, serving
from tests.fakekube.server import FakeKube

Factory = Callable[..., Reconciler]
NOW = dt.datetime.now(dt.UTC)


def assert_consistent(fake: FakeKube) -> dict[str, bytes]:
    data = secret_data(fake)
    assert pki.ca_problem(pki.KeyPair(data["ca.crt"], data["ca.key"])) is None
    assert (
        pki.leaf_problem(pki.KeyPair(data["tls.crt"], data["tls.key"]), data["ca.crt"], leaf_names()) is None
    )
    for bundle in all_bundles(fake):
        assert bundle == data["ca.crt"]
    return data


def unowned_snapshot(fake: FakeKube) -> list[object]:
    return [fake.get(ADMISSION, plural, name) for plural, name in sorted(UNOWNED)]


def test_first_start_creates_everything(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    before = unowned_snapshot(fake_kube)
    rec = make_reconciler()
    assert not rec.ready()
    result = rec.reconcile_once()
    assert result.ok, result.errors
    secret = fake_kube.get("", "secrets", SECRET, NAMESPACE)
    assert secret is not None
    assert secret["type"] == "kubernetes.io/tls"
    assert secret["metadata"]["labels"]["app.kubernetes.io/part-of"] == "dynamo-operator"
    data = assert_consistent(fake_kube)
    assert len(pki.load_certs(data["ca.crt"])) == 1
    assert pki.common_name(data["ca.crt"]) == "Dynamo-Webhook-CA"
    assert pki.common_name(data["tls.crt"]) == f"dynamo-operator-webhook-service.{NAMESPACE}.svc"
    assert rec.ready()
    # Every webhook of every owned configuration got the bundle; nothing else was touched.
    assert (
        len(config_bundles(fake_kube, "validatingwebhookconfigurations", "dynamo-operator-validating")) == 3
    )
    assert unowned_snapshot(fake_kube) == before
    touched = {(c.resource, c.name) for c in fake_kube.writes()}
    assert touched == {
        ("secrets", None),
        ("secrets", SECRET),
        *OWNED,
        *(("customresourcedefinitions", n) for n in CRDS),
    }


def test_second_pass_writes_nothing(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    rec = make_reconciler()
    assert rec.reconcile_once().ok
    fake_kube.clear_calls()
    again = rec.reconcile_once()
    assert again.ok and not again.changes
    assert fake_kube.writes() == []
    assert {c.verb for c in fake_kube.calls} == {"get", "list"}
    # A fresh replica against the same state writes nothing either.
    assert not make_reconciler(own_client=True).reconcile_once().changes
    assert fake_kube.writes() == []


def test_blank_and_wrong_bundles_repaired(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    rec = make_reconciler()
    rec.reconcile_once()
    mutating = fake_kube.get(ADMISSION, "mutatingwebhookconfigurations", "dynamo-operator-mutating")
    assert mutating is not None
    mutating["webhooks"][1]["clientConfig"].pop("caBundle")
    fake_kube.put(ADMISSION, "mutatingwebhookconfigurations", mutating)
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[1])
    assert crd is not None
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = base64.b64encode(
        pki.generate_ca().cert_pem
    ).decode()
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    fake_kube.clear_calls()
    result = rec.reconcile_once()
    assert result.ok
    assert {(c.resource, c.name) for c in fake_kube.writes()} == {
        ("mutatingwebhookconfigurations", "dynamo-operator-mutating"),
        ("customresourcedefinitions", CRDS[1]),
    }
    assert_consistent(fake_kube)
    # Only the caBundle changed in the CRD: the rest of its spec is as shipped.
    repaired = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[1])
    assert repaired is not None
    shipped = next(c for c in load_fixture("crds.yaml") if c["metadata"]["name"] == CRDS[1])
    repaired["spec"]["conversion"]["webhook"]["clientConfig"].pop("caBundle")
    assert repaired["spec"] == shipped["spec"]


def test_leaf_near_expiry_rotated_keeping_ca(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    ca = pki.generate_ca()
    old_leaf = pki.generate_serving_cert(ca, leaf_names(), now=NOW - dt.timedelta(days=300))
    put_secret(
        fake_kube,
        {
            "ca.crt": ca.cert_pem,
            "ca.key": ca.key_pem,
            "tls.crt": old_leaf.cert_pem,
            "tls.key": old_leaf.key_pem,
        },
    )
    rec = make_reconciler()
    assert rec.reconcile_once().ok  # injects the (kept) CA
    data = assert_consistent(fake_kube)
    assert data["ca.crt"] == ca.cert_pem and data["ca.key"] == ca.key_pem
    assert data["tls.crt"] != old_leaf.cert_pem
    assert pki.not_after(data["tls.crt"]) > NOW + dt.timedelta(days=360)


def test_leaf_missing_names_or_wrong_key_reissued(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    ca = pki.generate_ca()
    short = pki.generate_serving_cert(ca, leaf_names()[:2])
    other = pki.generate_ca()
    rec = make_reconciler(crd_names=(), inject_admission=False)
    for crt, key in ((short.cert_pem, short.key_pem), (short.cert_pem, other.key_pem), (b"", b"")):
        put_secret(fake_kube, {"ca.crt": ca.cert_pem, "ca.key": ca.key_pem, "tls.crt": crt, "tls.key": key})
        result = rec.reconcile_once()
        assert any("serving certificate" in c for c in result.changes)
        data = secret_data(fake_kube)
        assert data["ca.crt"] == ca.cert_pem
        assert (
            pki.leaf_problem(pki.KeyPair(data["tls.crt"], data["tls.key"]), ca.cert_pem, leaf_names()) is None
        )


def test_ca_near_expiry_rolls_with_old_and_new_bundle(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    old_ca = pki.generate_ca(now=NOW - dt.timedelta(days=3600))  # expires in 50 days
    leaf = pki.generate_serving_cert(old_ca, leaf_names(), now=NOW - dt.timedelta(days=10))
    put_secret(
        fake_kube,
        {
            "ca.crt": old_ca.cert_pem,
            "ca.key": old_ca.key_pem,
            "tls.crt": leaf.cert_pem,
            "tls.key": leaf.key_pem,
        },
    )
    clock = [NOW]
    rec = make_reconciler(clock=lambda: clock[0])
    result = rec.reconcile_once()
    assert result.ok, result.errors
    data = secret_data(fake_kube)
    cas = pki.load_certs(data["ca.crt"])
    assert len(cas) == 2
    assert pki.cert_to_pem(cas[1]) == old_ca.cert_pem
    new_ca = pki.cert_to_pem(cas[0])
    assert pki.key_matches_cert(new_ca, data["ca.key"])
    assert pki.chains_to(data["tls.crt"], new_ca) and not pki.chains_to(data["tls.crt"], old_ca.cert_pem)
    # Every bundle trusts both the outgoing and the incoming CA.
    for bundle in all_bundles(fake_kube):
        assert bundle == data["ca.crt"]
        assert pki.chains_to(leaf.cert_pem, bundle) and pki.chains_to(data["tls.crt"], bundle)
    fake_kube.clear_calls()
    assert not rec.reconcile_once().changes
    assert fake_kube.writes() == []
    # Once the outgoing CA has expired it leaves ca.crt and every bundle.
    clock[0] = NOW + dt.timedelta(days=51)
    result = rec.reconcile_once()
    assert result.ok and any("expired previous CA" in c for c in result.changes)
    data = secret_data(fake_kube)
    assert data["ca.crt"] == new_ca
    assert all(b == new_ca for b in all_bundles(fake_kube))


def test_deleted_secret_regenerated_and_reinjected(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    rec = make_reconciler()
    rec.reconcile_once()
    first = secret_data(fake_kube)["ca.crt"]
    assert fake_kube.remove("", "secrets", SECRET, NAMESPACE)
    result = rec.reconcile_once()
    assert result.ok
    data = assert_consistent(fake_kube)
    assert data["ca.crt"] != first


def test_two_replicas_racing_agree_on_one_ca(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    replicas = [make_reconciler(own_client=True) for _ in range(3)]
    barrier = threading.Barrier(len(replicas))
    results = []

    def run(rec: Reconciler) -> None:
        barrier.wait()
        results.append(rec.reconcile_once())

    threads = [threading.Thread(target=run, args=(r,)) for r in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 3 and all(r.ok for r in results), [r.errors for r in results]
    data = assert_consistent(fake_kube)
    assert len(pki.load_certs(data["ca.crt"])) == 1
    assert sum(any("new CA" in c for c in r.changes) for r in results) == 1
    secret_creates = [c for c in fake_kube.calls if c.resource == "secrets" and c.verb == "create"]
    assert sum(c.status == 201 for c in secret_creates) == 1


@pytest.mark.parametrize("seed_value", [1, 2])
def test_converges_with_thirty_percent_faults(
    fake_kube: FakeKube, make_reconciler: Factory, seed_value: int
) -> None:
    import random

    seed(fake_kube)
    fake_kube.faults.rng = random.Random(seed_value)
    fake_kube.faults.error_rate = 0.3
    fake_kube.faults.after_rate = 0.2
    rec = make_reconciler()
    for _ in range(40):
        if rec.reconcile_once().ok:
            break
    fake_kube.faults.error_rate = fake_kube.faults.after_rate = 0.0
    assert any(c.status == 500 for c in fake_kube.calls)
    assert_consistent(fake_kube)
    fake_kube.clear_calls()
    assert not rec.reconcile_once().changes
    assert fake_kube.writes() == []


def test_server_errors_are_retried_not_found_is_not(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    rec = make_reconciler(crd_names=(CRDS[0],), inject_admission=False)
    fake_kube.faults.fail_next = 3
    fake_kube.faults.error_status = 503
    result = rec.reconcile_once()
    assert result.ok
    assert [c.status for c in fake_kube.calls[:4]] == [503, 503, 503, 404]
    assert result.skipped == [f"CRD {CRDS[0]} not found"]


def test_manual_mode_never_writes_the_secret(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    rec = make_reconciler(mode="manual")
    missing = rec.reconcile_once()
    assert not missing.ok and "Secret not found" in missing.errors[0]
    assert fake_kube.writes() == []
    ca = pki.generate_ca(common_name="dynamo-operator-root-ca")
    leaf = pki.generate_serving_cert(ca, leaf_names())
    put_secret(fake_kube, {"ca.crt": ca.cert_pem, "tls.crt": leaf.cert_pem, "tls.key": leaf.key_pem})
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[0])
    assert crd is not None
    crd["metadata"]["annotations"] = {"cert-manager.io/inject-ca-from": f"{NAMESPACE}/serving-cert"}
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    before = [fake_kube.get(ADMISSION, p, n) for p, n in sorted(OWNED | UNOWNED)]
    fake_kube.clear_calls()
    result = rec.reconcile_once()
    assert result.ok, result.errors
    assert {(c.resource, c.name) for c in fake_kube.writes()} == {
        ("customresourcedefinitions", n) for n in CRDS[1:]
    }
    assert all(crd_bundle(fake_kube, n) == ca.cert_pem for n in CRDS[1:])
    assert crd_bundle(fake_kube, CRDS[0]) == b""
    assert [fake_kube.get(ADMISSION, p, n) for p, n in sorted(OWNED | UNOWNED)] == before
    assert rec.ready()
    # An empty ca.crt is reported, and still nothing is written.
    put_secret(fake_kube, {"ca.crt": b"", "tls.crt": leaf.cert_pem, "tls.key": leaf.key_pem})
    fake_kube.clear_calls()
    empty = rec.reconcile_once()
    assert any("ca.crt not found or empty" in e for e in empty.errors)
    assert fake_kube.writes() == []


def test_crd_conversion_webhook_by_url_gets_the_ca_bundle(
    fake_kube: FakeKube, make_reconciler: Factory
) -> None:
    seed(fake_kube)
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[1])
    assert crd is not None
    crd["spec"]["conversion"]["webhook"]["clientConfig"] = {"url": "https://127.0.0.1:9443/convert"}
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    result = make_reconciler().reconcile_once()
    assert result.errors == []
    assert crd_bundle(fake_kube, CRDS[1]) == secret_data(fake_kube)["ca.crt"]


def test_crd_whose_conversion_webhook_names_another_service_is_left_alone(
    fake_kube: FakeKube, make_reconciler: Factory, kube_api_client: k8s_client.ApiClient
) -> None:
    """Once the conversion was handed over (``crds release --hand-over-to``), its caBundle is the other
    converter's: this service, still running until its uninstall deletes it, must not put its own back."""
    seed(fake_kube)
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[1])
    assert crd is not None
    client_config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
    client_config["service"] = {"namespace": "operator", "name": SERVICE, "port": 443, "path": "/convert"}
    client_config["caBundle"] = base64.b64encode(b"the other converter's CA").decode()
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    result = make_reconciler().reconcile_once()
    assert result.errors == []
    assert (
        f"CRD {CRDS[1]} conversion webhook names Service operator/{SERVICE}, not this one" in result.skipped
    )
    assert crd_bundle(fake_kube, CRDS[1]) == b"the other converter's CA"
    for name in CRDS[:1] + CRDS[2:]:
        assert crd_bundle(fake_kube, name) == secret_data(fake_kube)["ca.crt"]
    report = collect_status(
        Kube(kube_api_client), CertConfig(mode="auto", namespace=NAMESPACE, service_name=SERVICE)
    )
    assert report.out_of_date == []
    (target,) = [t for t in report.targets if t.name == CRDS[1]]
    assert target.state == f"names Service operator/{SERVICE}: not this service's"


def test_crd_without_conversion_stanza_is_an_error_naming_it(
    fake_kube: FakeKube, make_reconciler: Factory
) -> None:
    seed(fake_kube)
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[2])
    assert crd is not None
    crd["spec"]["conversion"] = {"strategy": "None"}
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    result = make_reconciler().reconcile_once()
    assert result.errors == [
        f"CRD {CRDS[2]} is missing conversion webhook configuration; regenerate and apply CRD manifests"
    ]
    data = secret_data(fake_kube)
    for name in CRDS[:2] + CRDS[3:]:
        assert crd_bundle(fake_kube, name) == data["ca.crt"]
    after = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[2])
    assert after is not None and after["spec"]["conversion"] == {"strategy": "None"}


def test_missing_crds_are_skipped(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube, crds=False)
    result = make_reconciler().reconcile_once()
    assert result.ok
    assert sorted(result.skipped) == sorted(f"CRD {n} not found" for n in CRDS)
    data = secret_data(fake_kube)
    for plural, name in OWNED:
        assert all(b == data["ca.crt"] for b in config_bundles(fake_kube, plural, name))


def test_write_files_out_of_cluster(fake_kube: FakeKube, make_reconciler: Factory, tmp_path: Path) -> None:
    seed(fake_kube)
    rec = make_reconciler(write_files=True, cert_dir=tmp_path / "certs")
    assert not rec.ready()
    assert rec.reconcile_once().ok
    data = secret_data(fake_kube)
    assert (tmp_path / "certs" / "tls.crt").read_bytes() == data["tls.crt"]
    assert (tmp_path / "certs" / "tls.key").read_bytes() == data["tls.key"]
    assert (tmp_path / "certs" / "ca.crt").read_bytes() == data["ca.crt"]
    assert not (tmp_path / "certs" / "ca.key").exists()
    assert rec.ready()
    (tmp_path / "certs" / "tls.key").write_bytes(pki.generate_ca().key_pem)
    assert not rec.ready()
    assert any("wrote" in c for c in rec.reconcile_once().changes)
    assert rec.ready()


def test_dev_mode_needs_no_api(tmp_path: Path) -> None:
    rec = Reconciler(CertConfig(mode="dev", namespace="ns", service_name="svc", cert_dir=tmp_path))
    assert not rec.ready()
    first = rec.reconcile_once()
    assert first.ok and first.changes and rec.ready()
    assert "localhost" in pki.dns_sans((tmp_path / "tls.crt").read_bytes())
    assert not rec.reconcile_once().changes
    with pytest.raises(ValueError):
        Reconciler(CertConfig(mode="auto", namespace="ns", service_name="svc"))
    with pytest.raises(ValueError):
        CertConfig(mode="sometimes", namespace="ns", service_name="svc")


def wait_for(cond: Callable[[], bool], timeout: float = 8.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_loop_repairs_drift_within_seconds(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    seed(fake_kube)
    rec = make_reconciler(interval=3600, watch_timeout_seconds=5)
    rec.start()
    assert wait_for(rec.ready)
    assert wait_for(lambda: all(b == secret_data(fake_kube)["ca.crt"] for b in all_bundles(fake_kube)))
    ca = secret_data(fake_kube)["ca.crt"]
    # Blank a bundle behind the loop's back.
    validating = fake_kube.get(ADMISSION, "validatingwebhookconfigurations", "dynamo-operator-validating")
    assert validating is not None
    for webhook in validating["webhooks"]:
        webhook["clientConfig"]["caBundle"] = ""
    fake_kube.put(ADMISSION, "validatingwebhookconfigurations", validating)
    start = time.monotonic()
    assert wait_for(
        lambda: (
            config_bundles(fake_kube, "validatingwebhookconfigurations", "dynamo-operator-validating")
            == [ca] * 3
        )
    )
    assert time.monotonic() - start < 5
    # A CRD re-applied with a cleared caBundle.
    crd = fake_kube.get(CRD_GROUP, "customresourcedefinitions", CRDS[0])
    assert crd is not None
    del crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"]
    fake_kube.put(CRD_GROUP, "customresourcedefinitions", crd)
    assert wait_for(lambda: crd_bundle(fake_kube, CRDS[0]) == ca)
    # The Secret deleted: regenerated and re-injected everywhere.
    fake_kube.remove("", "secrets", SECRET, NAMESPACE)
    assert wait_for(
        lambda: (
            (d := fake_kube.get("", "secrets", SECRET, NAMESPACE)) is not None and bool(d["data"]["ca.crt"])
        )
    )
    assert wait_for(lambda: all(b == secret_data(fake_kube)["ca.crt"] for b in all_bundles(fake_kube)))
    assert secret_data(fake_kube)["ca.crt"] != ca
    rec.stop()
    assert not rec.running


def test_running_loop_drops_a_previous_ca_when_it_expires(
    fake_kube: FakeKube, make_reconciler: Factory
) -> None:
    seed(fake_kube)
    now = dt.datetime.now(dt.UTC)
    # An outgoing CA with two seconds left: the roll keeps it, and the loop (interval one hour, no
    # further events) wakes when it expires to take it out of ca.crt and every bundle.
    old_ca = pki.generate_ca(valid_days=1, now=now - dt.timedelta(days=1) + dt.timedelta(seconds=2))
    leaf = pki.generate_serving_cert(old_ca, leaf_names(), valid_days=1, now=now - dt.timedelta(days=1))
    put_secret(
        fake_kube,
        {
            "ca.crt": old_ca.cert_pem,
            "ca.key": old_ca.key_pem,
            "tls.crt": leaf.cert_pem,
            "tls.key": leaf.key_pem,
        },
    )
    rec = make_reconciler(interval=3600, jitter=0, watch_timeout_seconds=30)
    rec.start()
    assert wait_for(lambda: len(pki.load_certs(secret_data(fake_kube)["ca.crt"])) == 2, 5)
    new_ca = pki.cert_to_pem(pki.load_certs(secret_data(fake_kube)["ca.crt"])[0])
    assert 0 < rec._next_wait(0) <= 2.5
    assert wait_for(lambda: all(b == new_ca for b in all_bundles(fake_kube)), 8)
    assert secret_data(fake_kube)["ca.crt"] == new_ca
    assert rec._next_wait(0) == 3600


def test_metrics_follow_the_loop(fake_kube: FakeKube, make_reconciler: Factory) -> None:
    from prometheus_client import REGISTRY

    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    seed(fake_kube)
    before = {
        "ca": sample("dynamo_webhook_cert_rotations_total", kind="ca"),
        "leaf": sample("dynamo_webhook_cert_rotations_total", kind="leaf"),
        "crd": sample("dynamo_webhook_cert_injections_total", kind="crd"),
        "mutating": sample("dynamo_webhook_cert_injections_total", kind="mutating"),
        "errors": sample("dynamo_webhook_cert_reconcile_errors_total"),
    }
    rec = make_reconciler()
    rec.reconcile_once()
    assert sample("dynamo_webhook_cert_rotations_total", kind="ca") == before["ca"] + 1
    assert sample("dynamo_webhook_cert_rotations_total", kind="leaf") == before["leaf"] + 1
    assert sample("dynamo_webhook_cert_injections_total", kind="crd") == before["crd"] + 4
    assert sample("dynamo_webhook_cert_injections_total", kind="mutating") == before["mutating"] + 1
    assert sample("dynamo_webhook_cert_reconcile_errors_total") == before["errors"]
    fake_kube.faults.fail_next = 100
    assert not rec.reconcile_once().ok
    fake_kube.faults.fail_next = 0
    assert sample("dynamo_webhook_cert_reconcile_errors_total") == before["errors"] + 1


def test_namespace_restricted_operation_touches_no_crds(
    fake_kube: FakeKube, make_reconciler: Factory
) -> None:
    seed(fake_kube)
    crds_before = [fake_kube.get(CRD_GROUP, "customresourcedefinitions", n) for n in CRDS]
    result = make_reconciler(crd_names=()).reconcile_once()
    assert result.ok
    assert not [c for c in fake_kube.calls if c.resource == "customresourcedefinitions"]
    assert [fake_kube.get(CRD_GROUP, "customresourcedefinitions", n) for n in CRDS] == crds_before
    data = secret_data(fake_kube)
    for plural, name in OWNED:
        assert all(b == data["ca.crt"] for b in config_bundles(fake_kube, plural, name))


@pytest.mark.full_size_keys  # the server's TLS refuses RSA-1024
def test_auto_mode_gauges_tell_the_served_pair_while_the_secret_is_renewed(
    fake_kube: FakeKube, make_reconciler: Factory, tmp_path: Path
) -> None:
    """In the cluster the loop renews the pair in the Secret and the Secret mount brings it into
    the cert dir some time later: until the server loads it, the gauges tell the pair served."""

    seed(fake_kube)
    ca = pki.generate_ca(valid_days=1000)
    served = pki.generate_serving_cert(ca, leaf_names(), valid_days=30)  # within the renewal window
    put_secret(
        fake_kube,
        {"ca.crt": ca.cert_pem, "ca.key": ca.key_pem, "tls.crt": served.cert_pem, "tls.key": served.key_pem},
    )
    mount = tmp_path / "mount"
    reloader = serving(mount, ca, served)
    result = make_reconciler().reconcile_once()
    assert result.ok and any("issued a serving certificate" in c for c in result.changes)
    renewed = secret_data(fake_kube)
    assert renewed["tls.crt"] != served.cert_pem
    reloader.load()
    ready, leaf, ca_left = served_gauges()
    assert ready == 1
    assert leaf == pytest.approx(seconds_left(served.cert_pem), abs=5)
    assert ca_left == pytest.approx(seconds_left(ca.cert_pem), abs=5)
    # The mount catches up: the renewed pair is served and told.
    for name in ("tls.key", "tls.crt"):
        (mount / name).write_bytes(renewed[name])
    assert reloader.load() is True
    assert served_gauges()[1] == pytest.approx(seconds_left(renewed["tls.crt"]), abs=5)


@pytest.mark.full_size_keys  # the server's TLS refuses RSA-1024
def test_manual_mode_gauges_tell_the_served_pair_not_the_secrets(
    fake_kube: FakeKube, make_reconciler: Factory, tmp_path: Path
) -> None:
    """In the cluster the Secret mount brings a renewed pair into the cert dir some time after the
    Secret changed: until the server loads it, the gauges tell the pair it still serves."""

    seed(fake_kube)
    ca = pki.generate_ca(valid_days=500)
    served = pki.generate_serving_cert(ca, leaf_names(), valid_days=40)
    renewed = pki.generate_serving_cert(ca, leaf_names(), valid_days=300)
    cert_dir = tmp_path / "mount"
    reloader = serving(cert_dir, ca, served)
    put_secret(fake_kube, {"ca.crt": ca.cert_pem, "tls.crt": renewed.cert_pem, "tls.key": renewed.key_pem})
    rec = make_reconciler(mode="manual")
    assert rec.reconcile_once().ok and rec.ready()
    reloader.load()
    ready, leaf, ca_left = served_gauges()
    assert ready == 1
    assert leaf == pytest.approx(seconds_left(served.cert_pem), abs=5)
    assert ca_left == pytest.approx(seconds_left(ca.cert_pem), abs=5)
    # The mount catches up: the renewed pair is served and told.
    for name, pem in (("tls.key", renewed.key_pem), ("tls.crt", renewed.cert_pem)):
        (cert_dir / name).write_bytes(pem)
    assert reloader.load() is True
    assert served_gauges()[1] == pytest.approx(seconds_left(renewed.cert_pem), abs=5)
