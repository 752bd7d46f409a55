"""TLS for the webhook server: TLS >= 1.2 (with AEAD cipher suites only), HTTP/1.1 only, and
serving-cert hot reload.

TLS 1.2 is limited to Mozilla's "intermediate" suites with ECDHE: AES-GCM and ChaCha20-Poly1305
(:data:`TLS12_CIPHERS`); the CBC suites OpenSSL would otherwise offer are not. TLS 1.3 keeps
OpenSSL's suites (all AEAD). Every context built here has this policy, the SNI-swapped ones too.

The server hands uvicorn one long-lived :class:`ssl.SSLContext` whose SNI callback (called
for every ClientHello, with or without SNI) swaps in the *current* context. Reloading builds a
complete new context from a consistent snapshot of ``tls.crt``/``tls.key``; connections already
established keep theirs, new ones get the new certificate. A half-written or mismatched pair,
or one whose certificate is outside its validity period (expired, or not yet valid), fails to load
and is ignored (the old certificate stays, the error is logged and counted); a pair not yet valid
is tried again once it is. At start, with nothing to fall back to, such a pair stops ``serve``.

Change detection is a cheap ``stat`` of both files (following symlinks, so the kubelet's
``..data`` symlink swap of a mounted Secret is seen) every ``interval`` seconds, plus a content
digest so an unchanged rewrite does not rebuild the context. :meth:`CertReloader.reread` (SIGHUP)
reads and loads the pair at once, whatever its files look like.

The certificate gauges (ready, leaf and CA expiry) are read off the pair that is served, on each
load, and set on each check (:mod:`certs.served`): they tell what a client gets in every cert
mode, and in each worker process.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import logging
import os
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.server.observability import CERT_RELOADS
from certs import pki
from certs.files import CA_CRT, read_optional
from certs.served import ServedCert, publish, read_served

log = logging.getLogger("dynamo_webhook.tls")


#: The TLS 1.2 cipher suites served (OpenSSL names), in the server's order of preference.
TLS12_CIPHERS = (
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
)


def new_server_context() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(":".join(TLS12_CIPHERS))
    ctx.set_alpn_protocols(["http/1.1"])  # the apiserver speaks HTTP/1.1 to webhooks; no h2
    ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE | ssl.OP_NO_RENEGOTIATION
    return ctx


class OutsideValidity(ValueError):
    """A pair whose certificate is not valid when it is loaded: expired, or not yet valid (then
    ``not_before`` tells from when it is)."""

    def __init__(self, message: str, not_before: dt.datetime | None = None) -> None:
        super().__init__(message)
        self.not_before = not_before


def check_validity(cert_pem: bytes, now: dt.datetime) -> None:
    """Raise :class:`OutsideValidity` unless the (first) certificate of ``cert_pem`` is valid at
    ``now`` (``pki.CertError`` when it holds none)."""
    cert = pki.load_cert(cert_pem)
    not_before, not_after = cert.not_valid_before_utc, cert.not_valid_after_utc
    if now < not_before:
        raise OutsideValidity(f"certificate not valid before {not_before.isoformat()}", not_before)
    if now > not_after:
        raise OutsideValidity(f"certificate expired at {not_after.isoformat()}")


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def load_pair(cert_pem: bytes, key_pem: bytes, now: dt.datetime | None = None) -> ssl.SSLContext:
    """A server context for this pair; raises ``ssl.SSLError``/``ValueError`` when it is not a
    usable pair (truncated PEM, key not matching the certificate, …) and :class:`OutsideValidity`
    when its certificate is not valid at ``now`` (default: the current time)."""
    if b"-----BEGIN" not in cert_pem or b"-----BEGIN" not in key_pem:
        raise ValueError("certificate or key is not PEM")
    ctx = new_server_context()
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-tls-") as tmp:
        cert_file, key_file = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert_file.write_bytes(cert_pem)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key_pem)
        ctx.load_cert_chain(cert_file, key_file)  # verifies that the key matches the certificate
    check_validity(cert_pem, now or _utcnow())
    return ctx


@dataclass(frozen=True, slots=True)
class _Snapshot:
    stat_key: tuple[int, int, int, int, int, int]
    digest: bytes
    #: When the files, refused as not yet valid, are to be tried again (None: at their next change).
    retry_at: dt.datetime | None = None

    def unchanged(self, stat_key: tuple[int, int, int, int, int, int], now: dt.datetime) -> bool:
        return self.stat_key == stat_key and (self.retry_at is None or now < self.retry_at)


class CertReloader:
    """Owns the serving certificate of one server process."""

    def __init__(
        self,
        cert_file: Path,
        key_file: Path,
        interval: float = 2.0,
        clock: Callable[[], dt.datetime] = _utcnow,
    ) -> None:
        self.cert_file = Path(cert_file)
        self.key_file = Path(key_file)
        #: The CA bundle beside the pair (``ca.crt``), where the served certificate's CA is looked up.
        self.ca_file = self.cert_file.parent / CA_CRT
        self.interval = interval
        self.clock = clock
        #: What the certificate gauges report: the served certificate (None until one is loaded).
        self.served: ServedCert | None = None
        self._current: ssl.SSLContext | None = None
        self._snapshot: _Snapshot | None = None
        self.server_context = new_server_context()
        self.server_context.sni_callback = self._select_context
        self.loaded = False

    # SNI callback: runs inside the handshake; must be cheap and never raise.
    def _select_context(
        self, sslobj: ssl.SSLObject | ssl.SSLSocket, server_name: str | None, _: ssl.SSLContext
    ) -> None:
        current = self._current
        if current is not None and sslobj.context is not current:
            sslobj.context = current
        return None

    def _stat_key(self) -> tuple[int, int, int, int, int, int]:
        c, k = os.stat(self.cert_file), os.stat(self.key_file)
        return (c.st_ino, c.st_size, c.st_mtime_ns, k.st_ino, k.st_size, k.st_mtime_ns)

    def load(self) -> bool:
        """Load the pair if it changed. Returns True when a new certificate is now served.
        Raises on the first load (nothing to fall back to); later failures are logged. Either way
        the certificate gauges are set for the pair served after it."""
        now = self.clock()
        try:
            return self._load(now)
        finally:
            publish(self.served, now)

    def _load(self, now: dt.datetime) -> bool:
        try:
            stat_key = self._stat_key()
        except OSError as exc:
            if self._current is None:
                raise
            log.error(
                "serving cert files unreadable; keeping the current certificate", extra={"error": str(exc)}
            )
            CERT_RELOADS.labels("error").inc()
            return False
        if self._snapshot is not None and self._snapshot.unchanged(stat_key, now):
            return False
        try:
            cert_pem, key_pem = self.cert_file.read_bytes(), self.key_file.read_bytes()
            digest = hashlib.sha256(cert_pem + b"\0" + key_pem).digest()
            if self._snapshot is not None and self._snapshot.digest == digest:
                self._snapshot = _Snapshot(stat_key, digest)
                return False
            ctx = load_pair(cert_pem, key_pem, now)
        except (OSError, ssl.SSLError, ValueError) as exc:
            if self._current is None:
                raise
            log.error(
                "new serving cert pair rejected; keeping the current certificate",
                extra={"cert_file": str(self.cert_file), "error": str(exc)},
            )
            CERT_RELOADS.labels("error").inc()
            # Remember the stat so a bad pair is not retried every tick; a later write changes it,
            # and a pair not yet valid is retried once it is.
            retry_at = exc.not_before if isinstance(exc, OutsideValidity) else None
            self._snapshot = _Snapshot(stat_key, self._snapshot.digest if self._snapshot else b"", retry_at)
            return False
        first = self._current is None
        if first:
            self.server_context.load_cert_chain(self.cert_file, self.key_file)
        self._current = ctx
        self.served = self._read_served(cert_pem)
        self._snapshot = _Snapshot(stat_key, digest)
        self.loaded = True
        CERT_RELOADS.labels("initial" if first else "reloaded").inc()
        if not first:
            log.info("serving certificate reloaded", extra={"cert_file": str(self.cert_file)})
        return True

    def _read_served(self, cert_pem: bytes) -> ServedCert | None:
        try:
            ca_pem = read_optional(self.ca_file)
        except OSError:
            ca_pem = None
        try:
            return read_served(cert_pem, ca_pem)
        except pki.CertError as exc:  # load_pair took it: not expected
            log.error("served certificate unreadable for its metrics", extra={"error": str(exc)})
            return None

    def reread(self) -> bool:
        """Read and load the pair now, changed or not (a bad pair is refused as in :meth:`load`).
        Returns True when the pair read is now served."""
        self._snapshot = None
        try:
            loaded = self.load()
        except Exception as exc:  # only the first load raises; keep serving what is loaded
            log.error("serving cert re-read failed", extra={"error": repr(exc)})
            return False
        log.info("serving certificate re-read", extra={"cert_file": str(self.cert_file), "loaded": loaded})
        return loaded

    async def watch(self, stop: asyncio.Event | None = None) -> None:
        """Poll for changes until ``stop`` is set (or forever)."""
        while stop is None or not stop.is_set():
            if stop is None:
                await asyncio.sleep(self.interval)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.interval)
            try:
                self.load()
            except Exception as exc:  # never let the watcher die
                log.error("serving cert reload failed", extra={"error": repr(exc)})
