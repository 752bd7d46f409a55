"""CertReloader unit tests: first load, reload on change (including a kubelet-style symlink
swap), bad or half-written pairs and pairs outside their validity ignored, unchanged rewrites not
reloaded, a re-read on demand; the TLS 1.2 suites of every context; and the certificate gauges
telling the pair it serves."""

from __future__ import annotations

import datetime as dt
import math
import os
import ssl
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from app.server.tls import TLS12_CIPHERS, CertReloader, OutsideValidity, load_pair
from certs import pki
from tests.certs.served import seconds_left, served_gauges


def _pair(ca: pki.KeyPair, name: str = "localhost") -> pki.KeyPair:
    return pki.generate_serving_cert(ca, [name], ["127.0.0.1"])


def _write(d: Path, pair: pki.KeyPair) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "tls.crt").write_bytes(pair.cert_pem)
    (d / "tls.key").write_bytes(pair.key_pem)


@pytest.fixture(scope="module")
def ca() -> pki.KeyPair:
    return pki.generate_ca()


def test_first_load_requires_a_valid_pair(tmp_path: Path, ca: pki.KeyPair) -> None:
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    with pytest.raises(OSError):
        reloader.load()
    assert not reloader.loaded
    _write(tmp_path, _pair(ca))
    assert reloader.load() is True
    assert reloader.loaded
    assert reloader.load() is False  # nothing changed


def test_reload_on_change_and_ignore_bad_pairs(tmp_path: Path, ca: pki.KeyPair) -> None:
    first, second = _pair(ca, "first.example"), _pair(ca, "second.example")
    _write(tmp_path, first)
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    reloader.load()
    current = reloader._current
    # Half-written: new cert, old key -> mismatch -> ignored, old context kept.
    (tmp_path / "tls.crt").write_bytes(second.cert_pem)
    assert reloader.load() is False
    assert reloader._current is current
    # Truncated PEM -> ignored.
    (tmp_path / "tls.key").write_bytes(second.key_pem[:40])
    assert reloader.load() is False
    assert reloader._current is current
    # Complete pair -> reloaded.
    (tmp_path / "tls.key").write_bytes(second.key_pem)
    assert reloader.load() is True
    assert reloader._current is not current


def test_unchanged_rewrite_does_not_rebuild(tmp_path: Path, ca: pki.KeyPair) -> None:
    pair = _pair(ca)
    _write(tmp_path, pair)
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    reloader.load()
    current = reloader._current
    _write(tmp_path, pair)
    os.utime(tmp_path / "tls.crt", ns=(1, 1))
    assert reloader.load() is False
    assert reloader._current is current


def test_kubelet_symlink_swap_is_seen(tmp_path: Path, ca: pki.KeyPair) -> None:
    # kubelet layout: tls.crt -> ..data/tls.crt, ..data -> ..2026_v1 (swapped atomically)
    v1, v2 = tmp_path / "..v1", tmp_path / "..v2"
    _write(v1, _pair(ca, "one.example"))
    _write(v2, _pair(ca, "two.example"))
    (tmp_path / "..data").symlink_to(v1.name)
    for name in ("tls.crt", "tls.key"):
        (tmp_path / name).symlink_to(f"..data/{name}")
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    reloader.load()
    tmp_link = tmp_path / "..data_tmp"
    tmp_link.symlink_to(v2.name)
    os.replace(tmp_link, tmp_path / "..data")
    assert reloader.load() is True


def test_contexts_are_tls12_plus_and_http11_only(ca: pki.KeyPair) -> None:
    pair = _pair(ca)
    ctx = load_pair(pair.cert_pem, pair.key_pem)
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2
    with pytest.raises(ValueError):
        load_pair(b"garbage", b"garbage")


def test_gauges_tell_the_served_pair(tmp_path: Path) -> None:
    ca = pki.generate_ca(valid_days=400)
    first = pki.generate_serving_cert(ca, ["localhost"], valid_days=30)
    _write(tmp_path, first)
    (tmp_path / "ca.crt").write_bytes(ca.cert_pem)
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    with pytest.raises(OSError):
        CertReloader(tmp_path / "none.crt", tmp_path / "none.key").load()
    assert served_gauges()[0] == 0  # nothing served
    reloader.load()
    ready, leaf, ca_left = served_gauges()
    assert ready == 1
    assert leaf == pytest.approx(seconds_left(first.cert_pem), abs=5)
    assert ca_left == pytest.approx(seconds_left(ca.cert_pem), abs=5)
    # A half-written pair is not served: the gauges keep telling the served one.
    second = pki.generate_serving_cert(ca, ["localhost"], valid_days=60)
    (tmp_path / "tls.crt").write_bytes(second.cert_pem)
    assert reloader.load() is False
    assert served_gauges()[1] == pytest.approx(seconds_left(first.cert_pem), abs=5)
    (tmp_path / "tls.key").write_bytes(second.key_pem)
    assert reloader.load() is True
    assert served_gauges()[1] == pytest.approx(seconds_left(second.cert_pem), abs=5)
    # A new CA's pair, ca.crt holding the new CA first and the old one behind it: the expiry told
    # is the one of the CA that signed the served certificate.
    new_ca = pki.generate_ca(valid_days=800)
    (tmp_path / "ca.crt").write_bytes(pki.bundle([new_ca.cert_pem, ca.cert_pem]))
    _write(tmp_path, pki.generate_serving_cert(new_ca, ["localhost"], valid_days=90))
    assert reloader.load() is True
    assert served_gauges()[2] == pytest.approx(seconds_left(new_ca.cert_pem), abs=5)


def test_a_served_pair_that_expires_is_not_ready_and_a_foreign_ca_is_not_told(tmp_path: Path) -> None:
    ca = pki.generate_ca()
    now = dt.datetime.now(dt.UTC)
    pair = pki.generate_serving_cert(ca, ["localhost"], valid_days=1, now=now)
    _write(tmp_path, pair)
    (tmp_path / "ca.crt").write_bytes(pki.generate_ca().cert_pem)  # left over from another CA
    clock = [now]
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key", clock=lambda: clock[0])
    reloader.load()
    assert served_gauges()[0] == 1
    clock[0] = now + dt.timedelta(days=2)  # served on, past its notAfter: nothing else to serve
    assert reloader.load() is False
    ready, leaf, ca_left = served_gauges()
    assert ready == 0
    assert -86400 - 5 < leaf < -86400 + 5
    assert math.isnan(ca_left)


def _rejected() -> float:
    return REGISTRY.get_sample_value("dynamo_webhook_serving_cert_reloads_total", {"result": "error"}) or 0.0


def test_a_pair_outside_its_validity_is_refused_like_a_damaged_one(
    tmp_path: Path, ca: pki.KeyPair, caplog: pytest.LogCaptureFixture
) -> None:
    now = dt.datetime.now(dt.UTC)
    expired = pki.generate_serving_cert(
        ca, ["localhost"], valid_days=365, now=dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    )
    early = pki.generate_serving_cert(ca, ["localhost"], valid_days=365, now=now + dt.timedelta(days=2))
    clock = [now]
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key", clock=lambda: clock[0])
    _write(tmp_path, expired)
    with pytest.raises(OutsideValidity, match="expired"):  # at start: nothing to fall back to
        reloader.load()
    assert not reloader.loaded and served_gauges()[0] == 0
    good = _pair(ca)
    _write(tmp_path, good)
    assert reloader.load() is True
    current, served = reloader._current, reloader.served
    for refused, words in ((expired, "expired"), (early, "not valid before")):
        rejected = _rejected()
        _write(tmp_path, refused)
        assert reloader.load() is False
        assert reloader._current is current and reloader.served == served and served_gauges()[0] == 1
        assert _rejected() == rejected + 1
        assert any(
            r.levelname == "ERROR" and words in r.getMessage() + str(r.__dict__.get("error"))
            for r in caplog.records
        )
        assert reloader.load() is False and _rejected() == rejected + 1  # not tried again unchanged
    # The pair not yet valid is taken, unchanged, once it is (its notBefore is backdated an hour).
    clock[0] = now + dt.timedelta(days=2)
    assert reloader.load() is True
    assert reloader._current is not current and served_gauges()[0] == 1


def test_load_pair_refuses_a_certificate_outside_its_validity(ca: pki.KeyPair) -> None:
    pair = _pair(ca)
    load_pair(pair.cert_pem, pair.key_pem)
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=400)
    with pytest.raises(OutsideValidity, match="expired") as info:
        load_pair(pair.cert_pem, pair.key_pem, later)
    assert info.value.not_before is None
    earlier = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    with pytest.raises(OutsideValidity, match="not valid before") as info:
        load_pair(pair.cert_pem, pair.key_pem, earlier)
    assert info.value.not_before == pki.load_cert(pair.cert_pem).not_valid_before_utc


def test_a_self_signed_certificate_is_its_own_ca(tmp_path: Path) -> None:
    own = pki.generate_ca(valid_days=20)  # a certificate that signs itself
    _write(tmp_path, own)
    CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key").load()
    ready, leaf, ca_left = served_gauges()
    assert (
        ready == 1
        and leaf == pytest.approx(seconds_left(own.cert_pem), abs=5)
        and ca_left == pytest.approx(leaf, abs=1)
    )


def test_tls12_suites_are_aead_only_in_every_context(tmp_path: Path, ca: pki.KeyPair) -> None:
    pair = _pair(ca)
    _write(tmp_path, pair)
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    reloader.load()
    assert reloader._current is not None
    for ctx in (reloader.server_context, reloader._current, load_pair(pair.cert_pem, pair.key_pem)):
        tls12 = [c for c in ctx.get_ciphers() if c["protocol"] == "TLSv1.2"]
        assert {c["name"] for c in tls12} == set(TLS12_CIPHERS)
        assert all(c["aead"] and c["kea"] == "kx-ecdhe" for c in tls12)
        assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2


def test_reread_loads_the_pair_even_when_its_files_are_unchanged(tmp_path: Path, ca: pki.KeyPair) -> None:
    _write(tmp_path, _pair(ca, "one.example"))
    reloader = CertReloader(tmp_path / "tls.crt", tmp_path / "tls.key")
    reloader.load()
    current = reloader._current
    assert reloader.load() is False  # the poll: nothing changed
    assert reloader.reread() is True
    assert reloader._current is not current
    (tmp_path / "tls.key").write_bytes(b"garbage")
    assert reloader.reread() is False  # a bad pair is refused, the loaded one kept
    assert reloader.loaded and reloader._current is not None
