"""CertReloader unit tests: first load, reload on change (including a kubelet-style symlink
swap), bad or half-written pairs ignored, unchanged rewrites not reloaded, a re-read on demand;
the TLS 1.2 suites of every context."""

from __future__ import annotations

import os
import ssl
from pathlib import Path

import pytest

from app.tls import TLS12_CIPHERS, CertReloader, load_pair
from certs import pki


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
