"""A read-only report of the webhook's certificates and of which objects trust which CA."""

from __future__ import annotations

import base64
import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from certs import files, pki
from certs.config import (
    CERT_MANAGER_INJECT_ANNOTATION,
    WEBHOOK_KINDS,
    CertConfig,
    CertMode,
    decode_secret_data,
    has_conversion_webhook,
    other_converter,
)
from certs.kube import ApiError, Kube, crd_path, label_selector, secret_path, webhook_config_path


@dataclass
class CertInfo:
    role: str
    subject: str
    fingerprint: str
    not_after: str
    days_left: float
    dns_names: list[str] = field(default_factory=list)
    ip_addresses: list[str] = field(default_factory=list)
    issuer_fingerprint: str = ""


@dataclass
class Target:
    kind: str
    name: str
    cas: list[str]
    state: str


@dataclass
class StatusReport:
    secret: str
    secret_found: bool
    mode: str
    certificates: list[CertInfo] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    out_of_date: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _info(role: str, cert_pem: bytes, now: dt.datetime, issuers: list[bytes]) -> CertInfo:
    cert = pki.load_cert(cert_pem)
    issuer = next((pki.fingerprint(pki.load_cert(ca)) for ca in issuers if pki.chains_to(cert_pem, ca)), "")
    return CertInfo(
        role=role,
        subject=cert.subject.rfc4514_string(),
        fingerprint=pki.fingerprint(cert),
        not_after=cert.not_valid_after_utc.isoformat(),
        days_left=round((cert.not_valid_after_utc - now).total_seconds() / 86400, 1),
        dns_names=pki.dns_sans(cert_pem),
        ip_addresses=pki.ip_sans(cert_pem),
        issuer_fingerprint=issuer,
    )


def _bundle_state(raw: str | None, want: bytes) -> tuple[list[str], str]:
    if not raw:
        return [], "empty"
    try:
        pem = base64.b64decode(raw)
        fps = [pki.fingerprint(c) for c in pki.load_certs(pem)]
    except (ValueError, pki.CertError):
        return [], "unparseable"
    if want and pem == want:
        return fps, "up to date"
    return fps, "differs from ca.crt"


def collect_status(kube: Kube, config: CertConfig, now: dt.datetime | None = None) -> StatusReport:
    now = now or dt.datetime.now(dt.UTC)
    report = StatusReport(secret=config.secret_ref, secret_found=False, mode=config.mode)
    secret = kube.get(secret_path(config.namespace, config.secret_name))
    data = decode_secret_data(secret) if secret is not None else {}
    report.secret_found = secret is not None
    if secret is None:
        report.out_of_date.append(f"Secret {config.secret_ref} does not exist")
    ca_pem = data.get(files.CA_CRT, b"")
    crt, key = data.get(files.TLS_CRT, b""), data.get(files.TLS_KEY, b"")
    try:
        cas = [pki.cert_to_pem(c) for c in pki.load_certs(ca_pem)]
    except pki.CertError:
        cas = []
        report.out_of_date.append("ca.crt cannot be parsed")
    for index, ca in enumerate(cas):
        report.certificates.append(_info("CA (signing)" if index == 0 else "CA (previous)", ca, now, cas))
    if secret is not None and not cas:
        report.out_of_date.append("ca.crt is empty")
    if cas and config.mode == CertMode.AUTO:
        issue = pki.ca_problem(
            pki.KeyPair(cas[0], data.get(files.CA_KEY, b"")), now=now, lookahead=config.lookahead
        )
        if issue:
            report.out_of_date.append(f"CA: {issue}")
    if crt:
        try:
            report.certificates.append(_info("serving", crt, now, cas))
        except pki.CertError as exc:
            report.out_of_date.append(f"tls.crt: {exc}")
        if cas:
            names = config.dns_names if config.mode == CertMode.AUTO else []
            issue = pki.leaf_problem(
                pki.KeyPair(crt, key), ca_pem, names, now=now, lookahead=config.lookahead
            )
            if issue:
                report.out_of_date.append(f"serving certificate: {issue}")
    elif secret is not None:
        report.out_of_date.append("tls.crt is empty")

    if config.mode == CertMode.AUTO and config.inject_admission:
        for kind in WEBHOOK_KINDS:
            try:
                listed = kube.list(webhook_config_path(kind), labels=label_selector(config.selector))
            except ApiError as err:
                report.out_of_date.append(f"listing {kind} webhook configurations: {err}")
                continue
            for item in listed.get("items") or []:
                for webhook in item.get("webhooks") or []:
                    raw = (webhook.get("clientConfig") or {}).get("caBundle")
                    fps, state = _bundle_state(raw, ca_pem)
                    name = f"{item['metadata']['name']}/{webhook.get('name', '')}"
                    report.targets.append(Target(f"{kind}webhookconfiguration", name, fps, state))
                    if state != "up to date":
                        report.out_of_date.append(f"{kind}webhookconfiguration {name}: caBundle {state}")
    for crd_name in config.crd_names:
        crd = kube.get(crd_path(crd_name))
        if crd is None:
            report.targets.append(Target("crd", crd_name, [], "not installed"))
            continue
        if not has_conversion_webhook(crd):
            report.targets.append(Target("crd", crd_name, [], "no conversion webhook stanza"))
            report.out_of_date.append(f"CRD {crd_name} is missing conversion webhook configuration")
            continue
        raw = crd["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle")
        fps, state = _bundle_state(raw, ca_pem)
        other = other_converter(crd, config.namespace, config.service_name)
        if other is not None:
            report.targets.append(Target("crd", crd_name, fps, f"names Service {other}: not this service's"))
            continue
        annotations = (crd.get("metadata") or {}).get("annotations") or {}
        if config.mode == CertMode.MANUAL and CERT_MANAGER_INJECT_ANNOTATION in annotations:
            state = f"{state} (cert-manager injects)"
            report.targets.append(Target("crd", crd_name, fps, state))
            continue
        report.targets.append(Target("crd", crd_name, fps, state))
        if state != "up to date":
            report.out_of_date.append(f"CRD {crd_name}: conversion caBundle {state}")
    return report


def render(report: StatusReport) -> str:
    lines = [
        f"Secret {report.secret} ({report.mode} mode): {'present' if report.secret_found else 'MISSING'}"
    ]
    for info in report.certificates:
        lines.append(f"  {info.role}: {info.subject}  sha256:{info.fingerprint}")
        lines.append(f"    expires {info.not_after} ({info.days_left:g} days)")
        if info.dns_names or info.ip_addresses:
            lines.append(f"    SANs: {', '.join([*info.dns_names, *info.ip_addresses])}")
        if info.role == "serving":
            lines.append(
                f"    signed by: {('sha256:' + info.issuer_fingerprint) if info.issuer_fingerprint else 'unknown CA'}"
            )
    if report.targets:
        lines.append("caBundles:")
        width = max(len(f"{t.kind} {t.name}") for t in report.targets)
        for t in report.targets:
            cas = ", ".join(f"sha256:{fp}" for fp in t.cas) or "-"
            lines.append(f"  {(t.kind + ' ' + t.name).ljust(width)}  {t.state:<22} {cas}")
    if report.out_of_date:
        lines.append("Out of date:")
        lines += [f"  - {item}" for item in report.out_of_date]
    else:
        lines.append("Everything is up to date.")
    return "\n".join(lines)
