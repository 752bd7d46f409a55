"""Service settings: environment variables (prefix ``DYNAMO_WEBHOOK_``) and matching CLI flags.

Every field of :class:`Settings` is readable from ``DYNAMO_WEBHOOK_<FIELD>`` and settable with
``--<field-with-dashes>`` on ``dynamo-webhook serve``; a flag wins over the environment. The
settings the rules read (:data:`ADMISSION_FIELDS`) are also flags of every other command that
applies the rules (``lint``, ``review``, ``convert``, ``audit``: :func:`add_admission_arguments`),
read the same way (:func:`settings_from_args`), so each command answers as ``serve`` would.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.server.cpus import MAX_WORKERS, default_workers
from app.server.incluster import in_cluster
from domain.admission import DEFAULT_OPERATOR_PRINCIPAL, DEFAULT_PLANNER_SERVICE_ACCOUNT, AdmissionSettings

MiB = 1024 * 1024


def _default_workers() -> int:
    """:func:`app.server.cpus.default_workers` (its arguments left to their defaults: the real cgroup)."""
    return default_workers()


def default_cert_dir() -> Path:
    """controller-runtime's default: ``<tmp>/k8s-webhook-server/serving-certs``."""
    return Path(tempfile.gettempdir()) / "k8s-webhook-server" / "serving-certs"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DYNAMO_WEBHOOK_", extra="ignore")

    host: str = Field("0.0.0.0", description="Address the HTTPS webhook server binds to.")
    port: int = Field(9443, ge=0, le=65535, description="HTTPS port of the webhook server.")
    cert_dir: Path = Field(
        default_factory=default_cert_dir,
        description="Directory holding tls.crt/tls.key (and ca.crt); hot-reloaded when they change.",
    )
    cert_reload_interval: float = Field(
        2.0, gt=0, le=10, description="Seconds between checks of the cert files for a new pair."
    )
    cert_mode: Literal["dev", "auto", "manual"] = Field(
        default_factory=lambda: "auto" if in_cluster() else "dev",
        description="dev: self-signed into the cert dir, no Kubernetes API (default outside a cluster); "
        "auto: manage the Secret and inject caBundles (default in a cluster); manual: cert-manager or a "
        "user Secret (only CRD conversion bundles are injected).",
    )
    cert_wait_timeout: float = Field(
        300.0,
        gt=0,
        description="Seconds serve waits at start for the cert loop to produce a pair (auto/manual).",
    )
    kubeconfig: Path | None = Field(
        None,
        description="Kubeconfig for the cert loop and lease watcher (default: in-cluster when available).",
    )
    service_name: str = Field(
        "dynamo-operator-webhook-service", description="Service name used in cert SANs."
    )
    namespace: str = Field(
        "dynamo-system", description="Namespace of the service (cert SANs, Secret, labels)."
    )
    cluster_domain: str = Field("cluster.local", description="Cluster DNS domain used in cert SANs.")
    secret_name: str = Field(
        "webhook-server-cert", description="Secret holding the serving cert (auto/manual)."
    )
    metrics_port: int = Field(
        8080,
        ge=0,
        le=65535,
        description="Plain-HTTP port serving /metrics (0 disables; /metrics is also on HTTPS).",
    )
    metrics_host: str | None = Field(
        None, description="Address the plain-HTTP metrics server binds to (default: the --host address)."
    )
    workers: int = Field(
        default_factory=_default_workers,
        ge=1,
        le=MAX_WORKERS,
        description="Number of worker processes (1: one process serves, no supervisor). Default: the CPUs "
        "the process may use (its cgroup CPU quota rounded up, else its CPU affinity), as many as the "
        "cgroup's memory limit holds with the least memory budget each.",
    )
    drain_seconds: float = Field(
        0.0,
        ge=0,
        le=300,
        description="Seconds serve keeps answering after SIGTERM (readiness already false) before it closes "
        "the listener.",
    )
    gc_threshold: int = Field(
        10_000,
        ge=0,
        description="Allocations between two collections of the garbage collector's youngest generation "
        "(Python's default is 700; 0 keeps it). Start-up objects are frozen out of collection either way.",
    )
    log_format: Literal["json", "text"] = Field(
        "json", description="Log format: json (one object per line) or text."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="Log level.")
    max_admission_bytes: int = Field(
        7 * MiB, gt=0, description="Largest AdmissionReview body accepted (413 above)."
    )
    max_conversion_bytes: int = Field(
        64 * MiB, gt=0, description="Largest ConversionReview body accepted (413 above)."
    )
    memory_budget: int | None = Field(
        None,
        gt=0,
        description="Bytes the requests of one server process may hold at once (bodies and the work of "
        "answering them); past it a request waits unread, then gets a 503. Default: the cgroup's memory "
        "limit shared among the workers, less 128 MiB each (512 MiB without a limit).",
    )
    body_timeout: float = Field(
        30.0,
        gt=0,
        description="Seconds allowed to receive a request body (408 after, at most a second later).",
    )
    header_timeout: float = Field(
        10.0,
        gt=0,
        description="Seconds allowed for a connection's TLS handshake, and for each request's headers (from the "
        "connection's start for the first request, from its first byte for the next ones); the connection is "
        "closed after. Also the metrics port's read deadline.",
    )
    send_timeout: float = Field(
        30.0,
        gt=0,
        description="Seconds an answer may wait without the client taking any of it; the connection is reset "
        "after (an answer is delivered whole or the connection reset, never cut short).",
    )
    max_header_bytes: int = Field(
        64 * 1024,
        ge=1024,
        description="Bytes a request's head (request line and headers) may take; past it a 431 (a 414 for a URL "
        "over 8 KiB) and the connection is closed.",
    )
    max_connections: int | None = Field(
        None,
        ge=1,
        description="Connections open at once per server process (TLS handshakes included); a connection "
        "beyond is closed as soon as it is accepted. Default: what the process's share of the cgroup's memory "
        "limit leaves beside its memory budget and 88 MiB at rest, at 320 KiB a connection, between 64 and "
        "1000 (128 in a 256Mi pod; 1000 without a limit).",
    )
    feature_grove: bool = Field(
        False, description="Feature gate Grove (upstream default without a cluster: off)."
    )
    feature_checkpoint: bool = Field(False, description="Feature gate Checkpoint (default off).")
    feature_gpu_discovery: bool = Field(True, description="Feature gate GPUDiscovery (default on).")
    operator_principal: str = Field(
        DEFAULT_OPERATOR_PRINCIPAL,
        description="Username of the operator's service account (replica-lock exemption).",
    )
    planner_service_account: str = Field(
        DEFAULT_PLANNER_SERVICE_ACCOUNT,
        description="Name of the planner's service account, in any namespace (replica-lock exemption; empty: none).",
    )
    operator_version: str = Field(
        "0.1.0", description="Operator version (semver) used by version-dependent rules."
    )
    dgdr_default_image: str = Field("", description="Default profiler image for DGDRs (empty: derived).")
    print_curl: bool = Field(True, description="Print a ready-to-paste curl command when serving.")

    def metrics_address(self) -> str:
        """The address the plain-HTTP metrics server binds to: ``metrics_host``, or ``host`` when unset."""
        return self.host if self.metrics_host is None else self.metrics_host

    def admission_settings(self, cluster_lookups: bool = False) -> AdmissionSettings:
        return AdmissionSettings(
            grove=self.feature_grove,
            checkpoint=self.feature_checkpoint,
            gpu_discovery=self.feature_gpu_discovery,
            operator_principal=self.operator_principal,
            planner_service_account=self.planner_service_account,
            operator_version=self.operator_version,
            dgdr_default_image=self.dgdr_default_image,
            cluster_lookups=cluster_lookups,
        )


#: The settings the admission rules read (:meth:`Settings.admission_settings`): the ones every
#: command that applies the rules (``lint``, ``review``, ``convert``, ``audit``) shares with ``serve``.
ADMISSION_FIELDS = (
    "feature_grove",
    "feature_checkpoint",
    "feature_gpu_discovery",
    "operator_principal",
    "planner_service_account",
    "operator_version",
    "dgdr_default_image",
)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def settings_default(name: str) -> Any:
    """The default of a field (the environment aside): also the default of the tools that share it."""
    return Settings.model_fields[name].get_default(call_default_factory=True)


def shown_default(name: str) -> str | None:
    """A field's default as its help shows it (as it would be written in its variable), or None
    when it has none to show."""
    value = settings_default(name)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value != "" else '""'


def add_settings_arguments(parser: Any, only: tuple[str, ...] | None = None) -> None:
    """Add one flag per settings field (or per field of ``only``) to a parser or argument group;
    unset flags fall back to env vars and defaults. Each flag's help names its variable and its
    default (the flag's own default is None: unset, so that the variable applies)."""
    for name, field in Settings.model_fields.items():
        if only is not None and name not in only:
            continue
        env = f"DYNAMO_WEBHOOK_{name.upper()}"
        default = shown_default(name)
        shown = "" if default is None else f" (default: {default})"
        help_text = f"{field.description} [env {env}]{shown}".replace("%", "%%")
        annotation: Any = field.annotation
        if annotation is bool:
            parser.add_argument(
                _flag(name), dest=name, action=argparse.BooleanOptionalAction, default=None, help=help_text
            )
            continue
        kwargs: dict[str, Any] = {"dest": name, "default": None, "help": help_text}
        if get_origin(annotation) is Literal:
            kwargs["choices"] = list(get_args(annotation))
        elif annotation in (int, int | None):
            kwargs["type"] = int
        elif annotation is float:
            kwargs["type"] = float
        parser.add_argument(_flag(name), **kwargs)


def add_admission_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of :data:`ADMISSION_FIELDS`, in a group of their own, for a command that applies the
    rules as ``serve`` does."""
    group = parser.add_argument_group(
        "rule settings (as for serve: the flag, else its DYNAMO_WEBHOOK_* variable, else the default)"
    )
    add_settings_arguments(group, only=ADMISSION_FIELDS)


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The settings of a command: each flag given, else its variable, else its default. A value that
    is not valid is a :class:`ValueError` naming its flag and variable, on one line."""
    overrides = {
        name: getattr(args, name) for name in Settings.model_fields if getattr(args, name, None) is not None
    }
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        where = f"{_flag(name)} / DYNAMO_WEBHOOK_{name.upper()}: " if name in Settings.model_fields else ""
        raise ValueError(f"{where}{error['msg']} (got {error.get('input')!r})") from None
