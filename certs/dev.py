"""Self-signed certificates for running without a cluster (``dev`` mode)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from certs import pki
from certs.files import CA_CRT, CA_KEY, TLS_CRT, TLS_KEY, read_optional, write_cert_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DevCerts:
    ca_path: Path
    cert_path: Path
    key_path: Path
    generated: bool


def dev_dns_names(
    service: str,
    namespace: str,
    cluster_domain: str = "cluster.local",
    extra_dns: Sequence[str] = ("localhost",),
) -> list[str]:
    names = pki.service_dns_names(service, namespace, cluster_domain)
    return [*names, *(d for d in extra_dns if d not in names)]


def ensure_dev_certs(
    cert_dir: Path,
    service: str,
    namespace: str,
    cluster_domain: str = "cluster.local",
    extra_dns: Sequence[str] = ("localhost",),
    extra_ips: Sequence[str] = ("127.0.0.1",),
) -> DevCerts:
    """Keep a usable ``tls.crt``/``tls.key`` pair in ``cert_dir``; otherwise create a CA and a serving pair.

    A pair is kept when the key matches the certificate and the certificate is valid now and still valid
    after the 90-day lookahead. An existing CA (``ca.crt`` + ``ca.key``) that is itself still valid is reused.
    """
    cert_dir = Path(cert_dir)
    paths = DevCerts(cert_dir / CA_CRT, cert_dir / TLS_CRT, cert_dir / TLS_KEY, generated=False)
    cert = read_optional(paths.cert_path)
    key = read_optional(paths.key_path)
    if cert and key and _usable(cert, key):
        return paths
    ca_pem = read_optional(cert_dir / CA_CRT)
    ca_key = read_optional(cert_dir / CA_KEY)
    ca: pki.KeyPair | None = None
    if ca_pem and ca_key:
        candidate = pki.KeyPair(ca_pem, ca_key)
        if pki.ca_problem(candidate) is None:
            ca = candidate
    if ca is None:
        ca = pki.generate_ca()
    leaf = pki.generate_serving_cert(
        ca, dev_dns_names(service, namespace, cluster_domain, extra_dns), list(extra_ips)
    )
    write_cert_dir(cert_dir, leaf.cert_pem, leaf.key_pem, ca.cert_pem, ca.key_pem)
    log.info("generated self-signed webhook certificate in %s", cert_dir)
    return DevCerts(paths.ca_path, paths.cert_path, paths.key_path, generated=True)


def _usable(cert: bytes, key: bytes) -> bool:
    try:
        if not pki.valid_pair(cert, key):
            return False
        return pki.not_after(cert) > dt.datetime.now(dt.UTC) + pki.LOOKAHEAD
    except pki.CertError:
        return False
