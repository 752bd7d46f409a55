from __future__ import annotations

import datetime as dt
import stat
from pathlib import Path

import pytest

from certs import pki
from certs.dev import ensure_dev_certs
from certs.files import atomic_write, write_cert_dir


@pytest.fixture(scope="module")
def ca() -> pki.KeyPair:
    return pki.generate_ca()


@pytest.mark.full_size_keys
def test_ca_layout() -> None:
    ca = pki.generate_ca()
    assert b"BEGIN RSA PRIVATE KEY" in ca.key_pem
    cert = pki.load_cert(ca.cert_pem)
    assert pki.common_name(ca.cert_pem) == "Dynamo-Webhook-CA"
    assert pki.dns_sans(ca.cert_pem) == ["Dynamo-Webhook-CA"]
    assert "O=NVIDIA" in cert.subject.rfc4514_string()
    assert cert.public_key().key_size == 2048  # type: ignore[union-attr]
    life = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert life == dt.timedelta(days=3650, hours=1)
    assert pki.ca_problem(ca) is None


@pytest.mark.full_size_keys
def test_serving_cert(ca: pki.KeyPair) -> None:
    names = pki.service_dns_names("svc", "ns")
    assert names == ["svc.ns.svc", "svc", "svc.ns", "svc.ns.svc.cluster.local"]
    leaf = pki.generate_serving_cert(ca, names, ["127.0.0.1"])
    assert pki.load_private_key(leaf.key_pem).key_size == 2048
    assert pki.common_name(leaf.cert_pem) == "svc.ns.svc"
    assert pki.dns_sans(leaf.cert_pem) == names
    assert pki.ip_sans(leaf.cert_pem) == ["127.0.0.1"]
    assert pki.key_matches_cert(leaf.cert_pem, leaf.key_pem)
    assert pki.chains_to(leaf.cert_pem, ca.cert_pem)
    assert pki.leaf_problem(leaf, ca.cert_pem, names) is None
    life = pki.not_after(leaf.cert_pem) - pki.load_cert(leaf.cert_pem).not_valid_before_utc
    assert life == dt.timedelta(days=365, hours=1)


def test_mismatches_detected(ca: pki.KeyPair) -> None:
    other = pki.generate_ca()
    names = pki.service_dns_names("svc", "ns")
    leaf = pki.generate_serving_cert(ca, names)
    assert not pki.key_matches_cert(leaf.cert_pem, other.key_pem)
    assert not pki.chains_to(leaf.cert_pem, other.cert_pem)
    assert pki.chains_to(leaf.cert_pem, other.cert_pem + ca.cert_pem)
    assert "not signed" in (pki.leaf_problem(leaf, other.cert_pem, names) or "")
    assert "does not match" in (
        pki.leaf_problem(pki.KeyPair(leaf.cert_pem, other.key_pem), ca.cert_pem, names) or ""
    )
    assert "lacks DNS" in (pki.leaf_problem(leaf, ca.cert_pem, [*names, "x.y"]) or "")
    assert "does not match" in (pki.ca_problem(pki.KeyPair(ca.cert_pem, other.key_pem)) or "")
    assert "serverAuth" in (pki.leaf_problem(pki.KeyPair(ca.cert_pem, ca.key_pem), ca.cert_pem, []) or "")


def test_lookahead(ca: pki.KeyPair) -> None:
    names = ["a.b.svc"]
    now = dt.datetime.now(dt.UTC)
    old = pki.generate_serving_cert(ca, names, now=now - dt.timedelta(days=276))
    assert "renewal window" in (pki.leaf_problem(old, ca.cert_pem, names) or "")
    fresh = pki.generate_serving_cert(ca, names, now=now - dt.timedelta(days=274))
    assert pki.leaf_problem(fresh, ca.cert_pem, names) is None
    old_ca = pki.generate_ca(now=now - dt.timedelta(days=3650 - 89))
    assert "renewal window" in (pki.ca_problem(old_ca) or "")


def test_bundle_dedup(ca: pki.KeyPair) -> None:
    other = pki.generate_ca()
    b = pki.bundle([ca.cert_pem, other.cert_pem, ca.cert_pem])
    assert len(pki.load_certs(b)) == 2
    assert pki.load_certs(b"") == []
    with pytest.raises(pki.CertError):
        pki.load_cert(b"garbage")


def test_atomic_write_modes(tmp_path: Path, ca: pki.KeyPair) -> None:
    leaf = pki.generate_serving_cert(ca, ["x"])
    assert write_cert_dir(tmp_path / "d", leaf.cert_pem, leaf.key_pem, ca.cert_pem)
    assert stat.S_IMODE((tmp_path / "d" / "tls.key").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "d" / "tls.crt").stat().st_mode) == 0o644
    assert (tmp_path / "d" / "ca.crt").read_bytes() == ca.cert_pem
    assert not write_cert_dir(tmp_path / "d", leaf.cert_pem, leaf.key_pem, ca.cert_pem)
    assert [p.name for p in (tmp_path / "d").iterdir() if p.name.startswith(".")] == []
    assert atomic_write(tmp_path / "d" / "tls.crt", b"x")


def test_ensure_dev_certs(tmp_path: Path) -> None:
    first = ensure_dev_certs(tmp_path, "svc", "ns")
    assert first.generated
    cert = first.cert_path.read_bytes()
    assert set(pki.dns_sans(cert)) == {"localhost", "svc", "svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local"}
    assert pki.ip_sans(cert) == ["127.0.0.1"]
    assert pki.chains_to(cert, first.ca_path.read_bytes())
    assert (tmp_path / "ca.key").exists()
    again = ensure_dev_certs(tmp_path, "svc", "ns")
    assert not again.generated
    assert again.cert_path.read_bytes() == cert
    # A broken pair is replaced, reusing the CA kept beside it.
    first.key_path.write_bytes(pki.generate_ca().key_pem)
    third = ensure_dev_certs(tmp_path, "svc", "ns")
    assert third.generated
    assert pki.key_matches_cert(third.cert_path.read_bytes(), third.key_path.read_bytes())
    assert third.ca_path.read_bytes() == first.ca_path.read_bytes()
    # So is an expired one.
    expired = pki.generate_serving_cert(
        pki.generate_ca(), ["svc"], now=dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    )
    write_cert_dir(
        tmp_path,
        expired.cert_pem,
        expired.key_pem,
        first.ca_path.read_bytes(),
        (tmp_path / "ca.key").read_bytes(),
    )
    fourth = ensure_dev_certs(tmp_path, "svc", "ns")
    assert fourth.generated and pki.valid_pair(fourth.cert_path.read_bytes(), fourth.key_path.read_bytes())
