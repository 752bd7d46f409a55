"""The certificate gauges as a scrape reads them, and what they should say of a pair: shared by
the reloader's tests (tests/app/server/test_tls.py) and the cert loop's (tests/certs/test_loop.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from prometheus_client import REGISTRY

from app.server.tls import CertReloader
from certs import pki


def served_gauges() -> tuple[float, float, float]:
    """ready, leaf expiry and CA expiry as a scrape reads them."""
    values = [
        REGISTRY.get_sample_value(f"dynamo_webhook_cert_{name}")
        for name in ("ready", "leaf_expiry_seconds", "ca_expiry_seconds")
    ]
    assert None not in values
    return values[0] or 0.0, values[1] or 0.0, values[2] or 0.0


def seconds_left(pem: bytes) -> float:
    """Seconds until the certificate's notAfter."""
    return (pki.not_after(pem) - dt.datetime.now(dt.UTC)).total_seconds()


def serving(directory: Path, ca: pki.KeyPair, pair: pki.KeyPair) -> CertReloader:
    """A reloader serving ``pair`` (and ``ca`` as ca.crt) from ``directory``, made and loaded."""
    directory.mkdir()
    for name, pem in (("tls.crt", pair.cert_pem), ("tls.key", pair.key_pem), ("ca.crt", ca.cert_pem)):
        (directory / name).write_bytes(pem)
    reloader = CertReloader(directory / "tls.crt", directory / "tls.key")
    reloader.load()
    return reloader
