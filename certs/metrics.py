"""Prometheus metrics for the certificate loop (default registry, ``dynamo_webhook_cert_`` prefix).

The loop counts what it does (rotations, injections, failed passes). The three gauges describe
the certificate the server process serves and are set from it (:mod:`certs.served`), whatever
the cert mode; with several worker processes they keep the value a live worker set last.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

LEAF_EXPIRY_SECONDS = Gauge(
    "dynamo_webhook_cert_leaf_expiry_seconds",
    "Seconds until the served certificate expires (negative once expired)",
    multiprocess_mode="livemostrecent",
)
CA_EXPIRY_SECONDS = Gauge(
    "dynamo_webhook_cert_ca_expiry_seconds",
    "Seconds until the CA that signed the served certificate expires (negative once expired; NaN when "
    "ca.crt does not hold it)",
    multiprocess_mode="livemostrecent",
)
ROTATIONS = Counter(
    "dynamo_webhook_cert_rotations",
    "Certificates issued by the reconcile loop",
    ["kind"],
)
INJECTIONS = Counter(
    "dynamo_webhook_cert_injections",
    "caBundle writes into webhook configurations and CRD conversion webhooks",
    ["kind"],
)
RECONCILE_ERRORS = Counter(
    "dynamo_webhook_cert_reconcile_errors",
    "Reconcile passes that ended with at least one error",
)
READY = Gauge(
    "dynamo_webhook_cert_ready",
    "1 while a serving key pair is loaded and its certificate is within its validity period",
    multiprocess_mode="livemostrecent",
)
