"""The certificate a server process serves, as the certificate gauges report it.

``dynamo_webhook_cert_ready``, ``dynamo_webhook_cert_leaf_expiry_seconds`` and
``dynamo_webhook_cert_ca_expiry_seconds`` (:mod:`certs.metrics`) describe the pair the process
answers TLS handshakes with: not the Secret the loop keeps (the kubelet brings a renewed pair into
the cert dir up to a minute or two later), and in every cert mode, dev included, where no loop
runs at all. So :class:`app.server.tls.CertReloader`, which loads that pair, reads them off it
(:func:`read_served`) on each load and sets them (:func:`publish`) on each check of the files.

* ready: 1 while a pair is served and its certificate is within its validity period, else 0;
* leaf expiry: seconds until the served certificate's ``notAfter`` (negative once passed);
* CA expiry: seconds until the ``notAfter`` of the CA that signed it, found in ``ca.crt`` beside
  it (or in the chain of ``tls.crt``; the certificate itself when self-signed). NaN when none of
  them signed it: a ``ca.crt`` left over from another CA says nothing about this certificate.

With ``serve --workers N`` each worker loads and reports its own pair; the gauges keep the value
a live process set last (prometheus-client's ``livemostrecent``), and a process that never set
them (the supervisor) adds nothing.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from certs import metrics, pki


@dataclass(frozen=True, slots=True)
class ServedCert:
    """The validity of a served certificate and of the CA that signed it (None: not known)."""

    not_before: dt.datetime
    not_after: dt.datetime
    ca_not_after: dt.datetime | None


def read_served(cert_pem: bytes, ca_pem: bytes | None) -> ServedCert:
    """The validity of the (first) certificate of ``cert_pem`` and of its issuer among ``ca_pem``,
    the rest of ``cert_pem`` and itself. Raises :class:`pki.CertError` when ``cert_pem`` holds no
    certificate; an unreadable ``ca_pem`` only leaves the CA unknown."""
    chain = pki.load_certs(cert_pem)
    if not chain:
        raise pki.CertError("no PEM certificate found")
    leaf = chain[0]
    try:
        cas = pki.load_certs(ca_pem or b"")
    except pki.CertError:
        cas = []
    issuer = next((c for c in (*cas, *chain[1:], leaf) if pki.is_signed_by(leaf, c)), None)
    return ServedCert(
        leaf.not_valid_before_utc,
        leaf.not_valid_after_utc,
        issuer.not_valid_after_utc if issuer is not None else None,
    )


def publish(served: ServedCert | None, now: dt.datetime) -> None:
    """Set the three gauges for ``served`` (None: no pair served) at ``now``."""
    metrics.READY.set(1 if served is not None and served.not_before <= now <= served.not_after else 0)
    if served is None:
        return
    metrics.LEAF_EXPIRY_SECONDS.set((served.not_after - now).total_seconds())
    ca = served.ca_not_after
    metrics.CA_EXPIRY_SECONDS.set(math.nan if ca is None else (ca - now).total_seconds())
