"""What the certificate loop is told and what one pass of it reports, shared by the loop
(:mod:`certs.loop`, which writes) and the read-only report (:mod:`certs.status`): the modes, the
configuration (:class:`CertConfig`), the labels and annotations the loop selects and honours, a
pass's :class:`ReconcileResult`, and the Secret's ``data`` encoding.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from certs import pki
from kinds import REGISTRY

#: The CRDs whose conversion webhook gets the CA bundle: every convertible kind of the registry.
CONVERTIBLE_CRDS: tuple[str, ...] = tuple(k.crd_name for k in REGISTRY if k.convertible)
PART_OF_LABEL = "app.kubernetes.io/part-of"
PART_OF_VALUE = "dynamo-operator"
OPERATOR_NAMESPACE_LABEL = "nvidia.com/dynamo-operator-namespace"
CERT_MANAGER_INJECT_ANNOTATION = "cert-manager.io/inject-ca-from"
DEFAULT_SECRET_NAME = "webhook-server-cert"
DEFAULT_CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
SECRET_LABELS = {
    "app.kubernetes.io/managed-by": "dynamo-operator",
    "app.kubernetes.io/component": "webhook",
    PART_OF_LABEL: PART_OF_VALUE,
}
WEBHOOK_KINDS = ("validating", "mutating")
#: How long after a previous CA's expiry the loop wakes to drop it.
EXPIRY_MARGIN_SECONDS = 0.5


class CertMode(StrEnum):
    AUTO = "auto"
    MANUAL = "manual"
    DEV = "dev"


def default_webhook_labels(namespace: str) -> dict[str, str]:
    return {PART_OF_LABEL: PART_OF_VALUE, OPERATOR_NAMESPACE_LABEL: namespace}


@dataclass
class CertConfig:
    """Settings of the certificate loop.

    ``webhook_labels`` selects the admission configurations this instance owns (default: part-of
    dynamo-operator and the operator-namespace label). ``crd_names`` empty (namespace-restricted operation)
    or ``inject_admission`` false skip those targets. ``interval`` is jittered by ±``jitter``.
    ``writer_lease`` names an optional Lease in ``namespace``: only its holder (``identity``, default
    hostname plus a random suffix) writes; the others read the Secret for their files and readiness.
    """

    mode: str
    namespace: str
    service_name: str
    secret_name: str = DEFAULT_SECRET_NAME
    cluster_domain: str = "cluster.local"
    cert_dir: Path = DEFAULT_CERT_DIR
    webhook_labels: dict[str, str] | None = None
    crd_names: tuple[str, ...] = CONVERTIBLE_CRDS
    inject_admission: bool = True
    interval: float = 60.0
    jitter: float = 0.2
    write_files: bool = False
    extra_dns: tuple[str, ...] = ()
    extra_ips: tuple[str, ...] = ()
    lookahead: dt.timedelta = pki.LOOKAHEAD
    ca_valid_days: int = pki.CA_VALID_DAYS
    leaf_valid_days: int = pki.LEAF_VALID_DAYS
    watch: bool = True
    watch_timeout_seconds: int = 300
    writer_lease: str | None = None
    writer_lease_seconds: int = 180
    identity: str | None = None
    conflict_retries: int = 8

    def __post_init__(self) -> None:
        self.mode = str(CertMode(self.mode))
        self.cert_dir = Path(self.cert_dir)
        if not self.namespace:
            raise ValueError("namespace is required")
        if not self.service_name:
            raise ValueError("service_name is required")

    @property
    def selector(self) -> dict[str, str]:
        return (
            dict(self.webhook_labels)
            if self.webhook_labels is not None
            else default_webhook_labels(self.namespace)
        )

    @property
    def dns_names(self) -> list[str]:
        names = pki.service_dns_names(self.service_name, self.namespace, self.cluster_domain)
        return [*names, *(d for d in self.extra_dns if d not in names)]

    @property
    def secret_ref(self) -> str:
        return f"{self.namespace}/{self.secret_name}"


@dataclass
class ReconcileResult:
    """What one pass changed, skipped and failed on (``ok`` when nothing failed)."""

    changes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: The API server could not be used at all (no answer, or authentication refused), not just one object.
    unreachable: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def decode_secret_data(secret: Mapping[str, Any]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[key] = base64.b64decode(value or "")
        except ValueError:
            out[key] = b""
    return out


def encode_secret_data(data: Mapping[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode() for k, v in data.items()}


def has_conversion_webhook(crd: Mapping[str, Any]) -> bool:
    """``strategy: Webhook`` with a client config naming a Service or a URL. The operator accepts only a
    Service reference; a URL (a converter reached outside Service routing, such as one on loopback
    beside a bare API server) is a valid CRD conversion config too, and its caBundle is kept the same way."""
    conversion = (crd.get("spec") or {}).get("conversion") or {}
    webhook = conversion.get("webhook") or {}
    client_config = webhook.get("clientConfig") or {}
    return conversion.get("strategy") == "Webhook" and bool(
        client_config.get("service") or client_config.get("url")
    )


def other_converter(crd: Mapping[str, Any], namespace: str, service_name: str) -> str | None:
    """``NAMESPACE/NAME`` of the Service a CRD's conversion webhook names when that is not this
    service's (``namespace``/``service_name``), else None. Such a CRD's caBundle belongs to that other
    converter (after ``dynamo-webhook crds release --hand-over-to``, or before this service was pointed
    at): this service's CA would not verify it, so it is left alone."""
    client_config = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
    service = (client_config.get("clientConfig") or {}).get("service")
    if not isinstance(service, Mapping):
        return None
    named = (service.get("namespace"), service.get("name"))
    return None if named == (namespace, service_name) else f"{named[0]}/{named[1]}"
