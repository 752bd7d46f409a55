"""The certificate reconcile loop.

Modes:

* ``auto`` — the webhook manages its own PKI in the TLS Secret (``tls.crt``, ``tls.key``, ``ca.crt``,
  ``ca.key``): creates a placeholder Secret when absent, issues a CA and a serving certificate, renews the
  serving certificate (keeping the CA) and the CA (new CA and serving certificate) once they would no longer be
  valid 90 days from now, and keeps the ``caBundle`` of every owned admission webhook configuration and of the
  convertible CRDs' conversion webhooks equal to ``ca.crt``. After a CA renewal ``ca.crt`` holds the new CA
  first and the previous CA behind it until the previous CA expires (the loop wakes at that moment to drop it),
  so clients trust serving certificates from either while replicas pick up the new pair.
* ``manual`` — certificates come from cert-manager or the user: the Secret is only read and only the CRD
  conversion ``caBundle`` is kept in sync with its ``ca.crt`` (CRDs annotated for the cert-manager CA
  injector are left to it).
* ``dev`` — no API: a self-signed pair in the certificate directory.

Every write is conditional on the resourceVersion that was read; a conflict re-reads and re-decides, so
replicas can run the loop concurrently. Nothing is written when everything already matches.

Its configuration, the labels it selects and a pass's result are in :mod:`certs.config`.
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import logging
import random
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import client as k8s_client

from certs import files, metrics, pki
from certs.config import (
    CERT_MANAGER_INJECT_ANNOTATION,
    EXPIRY_MARGIN_SECONDS,
    SECRET_LABELS,
    WEBHOOK_KINDS,
    CertConfig,
    CertMode,
    ReconcileResult,
    decode_secret_data,
    encode_secret_data,
    has_conversion_webhook,
    other_converter,
)
from certs.dev import ensure_dev_certs
from certs.kube import (
    ApiError,
    Backoff,
    Informer,
    JsonObj,
    Kube,
    crd_path,
    label_selector,
    secret_path,
    webhook_config_path,
)
from certs.leader import WriterLease

log = logging.getLogger(__name__)


def _previous_expiries(ca_pem: bytes) -> list[dt.datetime]:
    """When each previous CA kept behind the signing CA in ``ca.crt`` expires."""
    try:
        return [c.not_valid_after_utc for c in pki.load_certs(ca_pem)[1:]]
    except pki.CertError:
        return []


def _labels_match(obj: Mapping[str, Any], selector: Mapping[str, str]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


class Reconciler:
    """Keeps certificates and caBundles in place; one pass with :meth:`reconcile_once`, or a background
    thread with :meth:`start`/:meth:`stop` (interval plus watch events on the Secret, the owned
    configurations and the CRDs)."""

    def __init__(
        self,
        config: CertConfig,
        api_client: k8s_client.ApiClient | None = None,
        *,
        clock: Callable[[], dt.datetime] | None = None,
        backoff: Backoff | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self._rng = rng or random.Random()
        self.kube: Kube | None = None
        if config.mode != CertMode.DEV:
            if api_client is None:
                raise ValueError(f"cert mode {config.mode} needs a Kubernetes API client")
            self.kube = Kube(api_client, backoff=backoff)
        self.writer_lease: WriterLease | None = None
        if self.kube is not None and config.writer_lease:
            identity = config.identity or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
            self.writer_lease = WriterLease(
                self.kube,
                config.namespace,
                config.writer_lease,
                identity,
                duration_seconds=config.writer_lease_seconds,
                clock=self.clock,
            )
        self._pass_lock = threading.Lock()
        self._trigger = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._informers: list[Informer] = []
        self._pair: tuple[bytes, bytes] | None = None
        # Expiry of each previous CA kept in ca.crt: the loop wakes then to drop it.
        self._previous_ca_expiries: list[dt.datetime] = []
        self.last_result: ReconcileResult | None = None
        self.passes = 0

    # --- one pass ----------------------------------------------------------------------------------

    def reconcile_once(self) -> ReconcileResult:
        with self._pass_lock:
            result = ReconcileResult()
            try:
                if self.config.mode == CertMode.DEV:
                    self._reconcile_dev(result)
                else:
                    self._reconcile_cluster(result)
            except ApiError as err:
                result.errors.append(f"Kubernetes API: {err}")
                result.unreachable = err.status in (0, 401, 403)
            except (pki.CertError, OSError) as err:
                result.errors.append(str(err))
            if result.errors:
                metrics.RECONCILE_ERRORS.inc()
                log.warning("certificate reconcile failed: %s", "; ".join(result.errors))
            for change in result.changes:
                log.info("certificate reconcile: %s", change)
            self.last_result = result
            self.passes += 1
            return result

    def _reconcile_dev(self, result: ReconcileResult) -> None:
        cfg = self.config
        certs = ensure_dev_certs(
            cfg.cert_dir,
            cfg.service_name,
            cfg.namespace,
            cfg.cluster_domain,
            extra_dns=("localhost", *cfg.extra_dns),
            extra_ips=("127.0.0.1", *cfg.extra_ips),
        )
        if certs.generated:
            metrics.ROTATIONS.labels(kind="leaf").inc()
            result.changes.append(f"generated a self-signed serving certificate in {cfg.cert_dir}")
        self._pair = (certs.cert_path.read_bytes(), certs.key_path.read_bytes())

    def _reconcile_cluster(self, result: ReconcileResult) -> None:
        cfg = self.config
        writer = True
        if self.writer_lease is not None:
            writer = self.writer_lease.acquire()
            if not writer:
                result.skipped.append(
                    f"writes left to the holder of lease {cfg.namespace}/{cfg.writer_lease}: {self.writer_lease.holder}"
                )
        data: dict[str, bytes] | None
        if cfg.mode == CertMode.AUTO and writer:
            data = self._ensure_auto_secret(result)
        elif cfg.mode == CertMode.AUTO:
            data = self._read_secret()
            if data is None:
                result.skipped.append(f"Secret {cfg.secret_ref} not created yet")
        else:
            data = self._read_manual_secret(result)
        if data is None:
            return
        ca_pem = data.get(files.CA_CRT, b"")
        self._previous_ca_expiries = _previous_expiries(ca_pem)
        crt, key = data.get(files.TLS_CRT, b""), data.get(files.TLS_KEY, b"")
        if crt and key and pki.key_matches_cert(crt, key):
            self._pair = (crt, key)
        if not ca_pem.strip():
            if writer or cfg.mode == CertMode.MANUAL:
                result.errors.append(
                    f"reading CA bundle from secret {cfg.secret_ref}: ca.crt not found or empty in secret {cfg.secret_ref}"
                )
        elif writer:
            self._inject(ca_pem, result)
        if cfg.write_files and (writer or (crt and key)):
            self._write_files(crt, key, ca_pem, result)

    # --- Secret ------------------------------------------------------------------------------------

    def _ensure_auto_secret(self, result: ReconcileResult) -> dict[str, bytes]:
        assert self.kube is not None
        cfg = self.config
        path = secret_path(cfg.namespace, cfg.secret_name)
        for _ in range(cfg.conflict_retries):
            secret = self.kube.get(path)
            if secret is None:
                self._create_placeholder(result)
                continue
            data = decode_secret_data(secret)
            decision = self._decide(data)
            if decision is None:
                return data
            new_data, changes, kinds = decision
            body = copy.deepcopy(secret)
            body["data"] = {**(secret.get("data") or {}), **encode_secret_data(new_data)}
            try:
                self.kube.update(path, body)
            except ApiError as err:
                if err.conflict or err.not_found:
                    log.info("Secret %s changed while renewing (%s); re-reading", cfg.secret_ref, err.reason)
                    continue
                raise
            for kind in kinds:
                metrics.ROTATIONS.labels(kind=kind).inc()
            result.changes.extend(changes)
            return {**data, **new_data}
        raise ApiError(409, "Conflict", f"Secret {cfg.secret_ref} kept changing; giving up for this pass")

    def _create_placeholder(self, result: ReconcileResult) -> None:
        assert self.kube is not None
        cfg = self.config
        body: JsonObj = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": cfg.secret_name, "namespace": cfg.namespace, "labels": dict(SECRET_LABELS)},
            "type": "kubernetes.io/tls",
            "data": {files.TLS_CRT: "", files.TLS_KEY: "", files.CA_CRT: "", files.CA_KEY: ""},
        }
        try:
            self.kube.create(secret_path(cfg.namespace), body)
            result.changes.append(f"created Secret {cfg.secret_ref}")
        except ApiError as err:
            if not err.already_exists:
                raise

    def _decide(self, data: Mapping[str, bytes]) -> tuple[dict[str, bytes], list[str], list[str]] | None:
        """New Secret data (with change descriptions and rotated kinds), or ``None`` when all is valid."""
        cfg = self.config
        now = self.clock()
        ca_pem = data.get(files.CA_CRT, b"")
        ca_key = data.get(files.CA_KEY, b"")
        crt, key = data.get(files.TLS_CRT, b""), data.get(files.TLS_KEY, b"")
        try:
            ca_certs = pki.load_certs(ca_pem)
        except pki.CertError:
            ca_certs = []
        ca_issue = (
            pki.ca_problem(pki.KeyPair(ca_pem, ca_key), now=now, lookahead=cfg.lookahead)
            if ca_certs and ca_key.strip()
            else "no CA in the Secret"
        )
        if ca_issue is not None:
            new_ca = pki.generate_ca(valid_days=cfg.ca_valid_days, now=now)
            # A CA renewed ahead of its expiry stays trusted until it expires: serving certificates it
            # signed are still in use until every replica loads the new pair.
            retained = [
                pki.cert_to_pem(c)
                for c in ca_certs
                if c.not_valid_before_utc <= now < c.not_valid_after_utc <= now + cfg.lookahead
            ]
            leaf = self._issue(new_ca, now)
            new_data = {
                files.CA_CRT: pki.bundle([new_ca.cert_pem, *retained]),
                files.CA_KEY: new_ca.key_pem,
                files.TLS_CRT: leaf.cert_pem,
                files.TLS_KEY: leaf.key_pem,
            }
            rolled = [f"issued a new CA ({ca_issue})", "issued a serving certificate from the new CA"]
            if retained:
                rolled.append(f"kept {len(retained)} previous CA certificate(s) in ca.crt until they expire")
            return new_data, rolled, ["ca", "leaf"]
        new_data = {}
        changes: list[str] = []
        kinds: list[str] = []
        # Drop previous CAs once they have expired.
        kept = [ca_certs[0], *(c for c in ca_certs[1:] if now < c.not_valid_after_utc)]
        if len(kept) != len(ca_certs):
            new_data[files.CA_CRT] = pki.bundle(pki.cert_to_pem(c) for c in kept)
            changes.append(
                f"removed {len(ca_certs) - len(kept)} expired previous CA certificate(s) from ca.crt"
            )
        signing = pki.KeyPair(pki.cert_to_pem(ca_certs[0]), ca_key)
        leaf_issue = pki.leaf_problem(
            pki.KeyPair(crt, key), signing.cert_pem, cfg.dns_names, now=now, lookahead=cfg.lookahead
        )
        if leaf_issue is not None:
            leaf = self._issue(signing, now)
            new_data[files.TLS_CRT] = leaf.cert_pem
            new_data[files.TLS_KEY] = leaf.key_pem
            changes.append(f"issued a serving certificate ({leaf_issue})")
            kinds.append("leaf")
        if not new_data:
            return None
        return new_data, changes, kinds

    def _issue(self, ca: pki.KeyPair, now: dt.datetime) -> pki.KeyPair:
        cfg = self.config
        return pki.generate_serving_cert(
            ca, cfg.dns_names, list(cfg.extra_ips), valid_days=cfg.leaf_valid_days, now=now
        )

    def _read_secret(self) -> dict[str, bytes] | None:
        assert self.kube is not None
        secret = self.kube.get(secret_path(self.config.namespace, self.config.secret_name))
        return decode_secret_data(secret) if secret is not None else None

    def _read_manual_secret(self, result: ReconcileResult) -> dict[str, bytes] | None:
        cfg = self.config
        secret = self._read_secret()
        if secret is None:
            result.errors.append(f"waiting for CA bundle in secret {cfg.secret_ref}: Secret not found")
            return None
        return secret

    # --- caBundle injection ------------------------------------------------------------------------

    def _inject(self, ca_pem: bytes, result: ReconcileResult) -> None:
        cfg = self.config
        want = base64.b64encode(ca_pem).decode()
        if cfg.mode == CertMode.AUTO and cfg.inject_admission:
            for kind in WEBHOOK_KINDS:
                self._inject_webhook_configs(kind, want, result)
        for name in cfg.crd_names:
            try:
                self._inject_crd(name, want, result)
            except ApiError as err:
                result.errors.append(f"patching CRD {name} conversion CA bundle: {err}")

    def _inject_webhook_configs(self, kind: str, want: str, result: ReconcileResult) -> None:
        assert self.kube is not None
        selector = self.config.selector
        try:
            listed = self.kube.list(webhook_config_path(kind), labels=label_selector(selector))
        except ApiError as err:
            result.errors.append(f"listing {kind} webhook configurations: {err}")
            return
        for item in listed.get("items") or []:
            name = str(item["metadata"]["name"])
            try:
                self._inject_webhook_config(kind, item, want, result)
            except ApiError as err:
                result.errors.append(f"patching {kind} webhook config {name}: {err}")

    def _inject_webhook_config(self, kind: str, obj: JsonObj, want: str, result: ReconcileResult) -> None:
        assert self.kube is not None
        name = str(obj["metadata"]["name"])
        path = webhook_config_path(kind, name)
        current: JsonObj | None = obj
        for _ in range(self.config.conflict_retries):
            if current is None or not _labels_match(current, self.config.selector):
                return
            webhooks = current.get("webhooks") or []
            if all(((w.get("clientConfig") or {}).get("caBundle") == want) for w in webhooks):
                return
            patched = copy.deepcopy(webhooks)
            for webhook in patched:
                webhook.setdefault("clientConfig", {})["caBundle"] = want
            patch = {
                "metadata": {"resourceVersion": current["metadata"]["resourceVersion"]},
                "webhooks": patched,
            }
            try:
                self.kube.merge_patch(path, patch)
            except ApiError as err:
                if err.conflict:
                    current = self.kube.get(path)
                    continue
                if err.not_found:
                    return
                raise
            metrics.INJECTIONS.labels(kind=kind).inc()
            result.changes.append(f"injected caBundle into {kind} webhook configuration {name}")
            return
        raise ApiError(409, "Conflict", f"{kind} webhook configuration {name} kept changing")

    def _inject_crd(self, name: str, want: str, result: ReconcileResult) -> None:
        assert self.kube is not None
        path = crd_path(name)
        for _ in range(self.config.conflict_retries):
            crd = self.kube.get(path)
            if crd is None:
                log.info("CRD %s not found, skipping conversion webhook CA injection", name)
                result.skipped.append(f"CRD {name} not found")
                return
            annotations = (crd.get("metadata") or {}).get("annotations") or {}
            if self.config.mode == CertMode.MANUAL and CERT_MANAGER_INJECT_ANNOTATION in annotations:
                result.skipped.append(f"CRD {name} is annotated {CERT_MANAGER_INJECT_ANNOTATION}")
                return
            if not has_conversion_webhook(crd):
                result.errors.append(
                    f"CRD {name} is missing conversion webhook configuration; regenerate and apply CRD manifests"
                )
                return
            other = other_converter(crd, self.config.namespace, self.config.service_name)
            if other is not None:
                result.skipped.append(f"CRD {name} conversion webhook names Service {other}, not this one")
                return
            client_config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
            if client_config.get("caBundle") == want:
                return
            patch = {
                "metadata": {"resourceVersion": crd["metadata"]["resourceVersion"]},
                "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": want}}}},
            }
            try:
                self.kube.merge_patch(path, patch)
            except ApiError as err:
                if err.conflict:
                    continue
                if err.not_found:
                    return
                raise
            metrics.INJECTIONS.labels(kind="crd").inc()
            result.changes.append(f"injected caBundle into CRD {name} conversion webhook")
            return
        raise ApiError(409, "Conflict", f"CRD {name} kept changing")

    # --- files, readiness --------------------------------------------------------------------------

    def _write_files(self, crt: bytes, key: bytes, ca_pem: bytes, result: ReconcileResult) -> None:
        cfg = self.config
        if not (crt and key and pki.key_matches_cert(crt, key)):
            result.errors.append(f"Secret {cfg.secret_ref} holds no matching tls.crt/tls.key pair to write")
            return
        if files.write_cert_dir(cfg.cert_dir, crt, key, ca_pem if ca_pem.strip() else None):
            result.changes.append(f"wrote the serving pair into {cfg.cert_dir}")

    def ready(self) -> bool:
        """True when a matching, currently valid serving pair is in place (in the certificate directory when
        this process writes or generates files, else in the Secret)."""
        now = self.clock()
        cfg = self.config
        if cfg.write_files or cfg.mode == CertMode.DEV:
            crt = files.read_optional(cfg.cert_dir / files.TLS_CRT)
            key = files.read_optional(cfg.cert_dir / files.TLS_KEY)
            pair = (crt, key) if crt and key else None
        else:
            pair = self._pair
        if pair is None:
            return False
        try:
            return pki.valid_pair(pair[0], pair[1], now=now)
        except pki.CertError:
            return False

    # --- background loop ---------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        if self.kube is not None and self.config.watch:
            self._informers = self._make_informers()
            for informer in self._informers:
                informer.start()
        self._thread = threading.Thread(target=self._run, name="cert-reconciler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._trigger.set()
        for informer in self._informers:
            informer.stop()
        self._informers = []
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _make_informers(self) -> list[Informer]:
        assert self.kube is not None
        cfg = self.config
        on_event = self._on_event
        timeout = cfg.watch_timeout_seconds
        informers = [
            Informer(
                self.kube,
                secret_path(cfg.namespace),
                on_event,
                fields=f"metadata.name={cfg.secret_name}",
                timeout_seconds=timeout,
                name="cert-watch-secret",
            )
        ]
        if cfg.mode == CertMode.AUTO and cfg.inject_admission:
            informers += [
                Informer(
                    self.kube,
                    webhook_config_path(kind),
                    on_event,
                    labels=label_selector(cfg.selector),
                    timeout_seconds=timeout,
                    name=f"cert-watch-{kind}",
                )
                for kind in WEBHOOK_KINDS
            ]
        # One narrow watch per CRD: listing every CRD of a cluster would move megabytes of schemas.
        informers += [
            Informer(
                self.kube,
                crd_path(),
                on_event,
                fields=f"metadata.name={name}",
                timeout_seconds=timeout,
                name=f"cert-watch-crd-{name.split('.')[0]}",
            )
            for name in cfg.crd_names
        ]
        return informers

    def _on_event(self, kind: str, obj: JsonObj) -> None:
        self._trigger.set()

    def _next_wait(self, failures: int) -> float:
        cfg = self.config
        base = cfg.interval * (1 + cfg.jitter * (2 * self._rng.random() - 1))
        # A previous CA leaves ca.crt and the caBundles when it expires, not up to an interval later.
        now = self.clock()
        margin = dt.timedelta(seconds=EXPIRY_MARGIN_SECONDS)
        wake = [(e + margin - now).total_seconds() for e in self._previous_ca_expiries if e + margin > now]
        if wake:
            base = min(base, *wake)
        if failures:
            return float(min(base, 0.5 * (2 ** min(failures, 8)) * (0.5 + 0.5 * self._rng.random())))
        return base

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            self._trigger.clear()
            try:
                result = self.reconcile_once()
                failures = 0 if result.ok else failures + 1
            except Exception:
                failures += 1
                log.exception("certificate reconcile crashed")
            self._trigger.wait(self._next_wait(failures))
            # Coalesce a burst of watch events (our own writes echo back) into one pass.
            self._stop.wait(0.05)
