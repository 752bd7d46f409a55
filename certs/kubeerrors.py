"""What a failed Kubernetes API request says: :class:`ApiError`, and the one line the cluster tools print
for it (or for a missing kubeconfig), worded as kubectl words it.

The official client lets urllib3's exceptions through (``MaxRetryError`` around a ``NewConnectionError``
around ``ConnectionRefusedError``, with the whole URL) and its ``ApiException`` carries the raw body.
:func:`transport_failure` reads the cause out of such a chain and names the server, so every caller of
:class:`certs.kube.Kube` (the cert loop, the Lease watcher, ``audit``, ``storage-migrate``, ``certs``,
``crds release``) reports the same words; :func:`describe` is the line for any of those errors.

With ``insecure-skip-tls-verify`` urllib3 warns on every request; :func:`warn_insecure` says it once per
process instead.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import warnings
from typing import Any
from urllib.parse import urlsplit

import urllib3
from kubernetes.config.config_exception import ConfigException

log = logging.getLogger("certs.kube")

JsonObj = dict[str, Any]


class ApiError(Exception):
    """A non-2xx answer from the API server (``status`` 0 = no answer at all: ``message`` says why).

    ``server`` is the API server's ``host:port`` when known."""

    def __init__(
        self, status: int, reason: str, message: str = "", body: JsonObj | None = None, server: str = ""
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}
        self.server = server
        if status == 0:
            super().__init__(message or reason)
        else:
            super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409 and self.reason == "Conflict"

    @property
    def already_exists(self) -> bool:
        return self.status == 409 and self.reason == "AlreadyExists"

    @property
    def gone(self) -> bool:
        return self.status == 410

    @property
    def transient(self) -> bool:
        return self.status == 0 or self.status == 429 or self.status >= 500


def server_name(url: str) -> str:
    """``host:port`` of an API server URL (the scheme's port when none is written)."""
    parts = urlsplit(url if "://" in url else f"https://{url}")
    try:
        port = parts.port
    except ValueError:
        return url
    host = parts.hostname or url
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{port or (80 if parts.scheme == 'http' else 443)}"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: urllib3's ``reason``, then ``__cause__``/``__context__`` and ``args``."""
    seen: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        item = todo.pop(0)
        if any(item is s for s in seen):
            continue
        seen.append(item)
        reason = getattr(item, "reason", None)
        nested = [reason, item.__cause__, item.__context__, *item.args]
        todo += [n for n in nested if isinstance(n, BaseException)]
    return seen


def _first(chain: list[BaseException], kind: type[BaseException] | tuple[type[BaseException], ...]) -> Any:
    return next((e for e in chain if isinstance(e, kind)), None)


def _tls_reason(err: BaseException) -> str:
    if isinstance(err, ssl.SSLCertVerificationError):
        detail = err.verify_message or "certificate verify failed"
        return (
            f"TLS certificate verification failed: {detail} (the kubeconfig's certificate-authority does "
            "not sign the server's certificate, or the certificate does not name the server)"
        )
    text = getattr(err, "reason", None) or str(err)
    if isinstance(err, ssl.SSLEOFError) or "EOF" in str(text):
        return "the server closed the connection during the TLS handshake (EOF)"
    if (
        "WRONG_VERSION_NUMBER" in str(err)
        or "record layer failure" in str(err)
        or text == "WRONG_VERSION_NUMBER"
    ):
        return "TLS handshake failed: the server does not speak TLS (is it an http:// address?)"
    if isinstance(err, ssl.SSLError):
        return f"TLS handshake failed: {err.reason or err}"
    return f"TLS handshake failed: {text}"


def transport_failure(exc: BaseException, server: str) -> str:
    """One line for a request that got no answer (urllib3, ``OSError``, ``ssl``), naming ``server``."""
    chain = _chain(exc)
    if _first(chain, ConnectionRefusedError) is not None:
        return f"the connection to the server {server} was refused - did you specify the right host or port?"
    unable = f"unable to connect to the server {server}"
    name_error = _first(chain, (socket.gaierror, urllib3.exceptions.NameResolutionError))
    if name_error is not None:
        return f"{unable}: no such host (the name does not resolve)"
    tls = _first(chain, ssl.SSLCertVerificationError) or _first(chain, ssl.SSLError)
    if tls is None and isinstance(exc, urllib3.exceptions.SSLError):
        tls = exc
    if tls is not None:
        return f"{unable}: {_tls_reason(tls)}"
    # urllib3's NewConnectionError is a ConnectTimeoutError too (for old callers): not a timeout.
    if any(
        isinstance(e, urllib3.exceptions.ConnectTimeoutError)
        and not isinstance(e, urllib3.exceptions.NewConnectionError)
        for e in chain
    ):
        return f"{unable}: timed out connecting"
    if _first(chain, (urllib3.exceptions.ReadTimeoutError, TimeoutError)) is not None:
        return f"{unable}: timed out waiting for an answer"
    if _first(
        chain,
        (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, urllib3.exceptions.ProtocolError),
    ) is not None or _is_eof(chain):
        return f"{unable}: the server closed the connection without an answer (EOF)"
    oserror = _first(chain, OSError)
    if oserror is not None and oserror.strerror:
        return f"{unable}: {oserror.strerror.lower()}"
    deepest = chain[-1]
    return f"{unable}: {type(deepest).__name__}: {' '.join(str(deepest).split())}"


def _is_eof(chain: list[BaseException]) -> bool:
    return any(type(e).__name__ in ("RemoteDisconnected", "IncompleteRead", "SSLEOFError") for e in chain)


def _api_message(err: ApiError) -> str:
    return " ".join((err.message or err.reason).split())


def describe(exc: BaseException) -> str:
    """The one line a cluster tool prints for a failure to reach or use the API server."""
    if isinstance(exc, ConfigException):
        return f"no Kubernetes API configuration: {' '.join(str(exc).split())}"
    if not isinstance(exc, ApiError):
        return transport_failure(exc, "(unknown)")
    server = f"the server {exc.server}" if exc.server else "the server"
    if exc.status == 0:
        return exc.message or exc.reason
    if exc.status == 401:
        return f"you must be logged in to {server} (401 Unauthorized): {_api_message(exc)}"
    if exc.status == 403:
        return f"{server} refused the request (403 Forbidden): {_api_message(exc)}"
    return f"{server} answered {exc.status} {exc.reason}: {_api_message(exc)}"


_insecure_lock = threading.Lock()
_insecure_warned = False


def warn_insecure(server: str) -> None:
    """Silence urllib3's per-request ``InsecureRequestWarning`` and say once per process that the API
    server's certificate is not checked."""
    global _insecure_warned
    warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
    with _insecure_lock:
        if _insecure_warned:
            return
        _insecure_warned = True
    log.warning(
        "warning: the API server %s is used without checking its certificate "
        "(insecure-skip-tls-verify in the kubeconfig)",
        server,
    )
