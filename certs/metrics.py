"""Prometheus metrics for the certificate loop (default registry, ``dynamo_webhook_cert_`` prefix)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

LEAF_EXPIRY_SECONDS = Gauge(
    "dynamo_webhook_cert_leaf_expiry_seconds",
    "Seconds until the serving certificate expires (negative once expired)",
)
CA_EXPIRY_SECONDS = Gauge(
    "dynamo_webhook_cert_ca_expiry_seconds",
    "Seconds until the signing CA certificate expires (negative once expired)",
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
    "1 when a valid serving key pair is in place",
)
