"""Kubernetes API plumbing shared by the certificate loop and the Lease watcher.

Requests go through the official client's ``ApiClient`` (authentication, TLS, proxies) but bodies stay plain
JSON dicts. Transient failures (5xx, 429, connection errors, timeouts) are retried with jittered exponential
backoff; 4xx answers surface as :class:`ApiError` (``404`` never turns into a server error).
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import urllib3
import yaml
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException

from certs.kubeerrors import ApiError as ApiError
from certs.kubeerrors import server_name, transport_failure, warn_insecure

log = logging.getLogger(__name__)

JsonObj = dict[str, Any]

_load_kube_config: Callable[..., None] = k8s_config.load_kube_config
_load_incluster_config: Callable[..., None] = k8s_config.load_incluster_config

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

MERGE_PATCH = "application/merge-patch+json"


@dataclass
class Backoff:
    """Jittered exponential backoff: attempt ``n`` waits ``uniform(0.5, 1) * min(cap, base * 2**n)``."""

    attempts: int = 6
    base: float = 0.2
    cap: float = 5.0
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int) -> float:
        return float(min(self.cap, self.base * (2**attempt)) * (0.5 + 0.5 * self.rng.random()))


def load_api_client(kubeconfig: str | None = None, context: str | None = None) -> k8s_client.ApiClient:
    """An ``ApiClient`` from ``kubeconfig`` (or ``$KUBECONFIG``/``~/.kube/config``), else in-cluster config.

    Raises ``ConfigException`` when neither is available, naming where it looked.
    """
    configuration = k8s_client.Configuration()
    explicit = kubeconfig or os.environ.get("KUBECONFIG")
    if explicit:
        _load_file(explicit, context, configuration)
        return _client(configuration)
    try:
        _load_incluster_config(client_configuration=configuration)
    except ConfigException as exc:
        default = Path(os.path.expanduser(k8s_config.KUBE_CONFIG_DEFAULT_LOCATION))
        if not default.exists():
            raise ConfigException(
                f"no kubeconfig found (looked in $KUBECONFIG: not set; {default}: no such file; "
                f"in-cluster: {str(exc).rstrip('.')}); pass --kubeconfig"
            ) from exc
        _load_file(str(default), context, configuration)
    return _client(configuration)


def _load_file(path: str, context: str | None, configuration: k8s_client.Configuration) -> None:
    """Load a kubeconfig; whatever is wrong with the file is a ``ConfigException`` naming it."""
    if os.pathsep not in path and not Path(path).exists():
        raise ConfigException(f"kubeconfig {path}: no such file")
    try:
        _load_kube_config(config_file=path, context=context, client_configuration=configuration)
    except yaml.MarkedYAMLError as exc:
        where = (
            f" (line {exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1})"
            if exc.problem_mark
            else ""
        )
        raise ConfigException(f"kubeconfig {path}: not valid YAML: {exc.problem}{where}") from exc
    except (yaml.YAMLError, OSError) as exc:
        raise ConfigException(f"kubeconfig {path}: {exc}") from exc
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        raise ConfigException(f"kubeconfig {path}: not a kubeconfig ({type(exc).__name__}: {exc})") from exc


def _client(configuration: k8s_client.Configuration) -> k8s_client.ApiClient:
    if not configuration.verify_ssl:
        warn_insecure(server_name(str(configuration.host)))
    return k8s_client.ApiClient(configuration)


def in_cluster_namespace() -> str | None:
    try:
        ns = SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    except OSError:
        return None
    return ns or None


# --- resource paths ------------------------------------------------------------------------------------


def secret_path(namespace: str, name: str | None = None) -> str:
    base = f"/api/v1/namespaces/{namespace}/secrets"
    return f"{base}/{name}" if name else base


def lease_path(namespace: str | None = None, name: str | None = None) -> str:
    if namespace is None:
        return "/apis/coordination.k8s.io/v1/leases"
    base = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    return f"{base}/{name}" if name else base


def webhook_config_path(kind: str, name: str | None = None) -> str:
    """``kind`` is ``validating`` or ``mutating``."""
    base = f"/apis/admissionregistration.k8s.io/v1/{kind}webhookconfigurations"
    return f"{base}/{name}" if name else base


def crd_path(name: str | None = None) -> str:
    base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    return f"{base}/{name}" if name else base


def label_selector(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


# --- client --------------------------------------------------------------------------------------------


class Kube:
    """JSON requests against the API server with retries for transient failures."""

    def __init__(
        self,
        api_client: k8s_client.ApiClient,
        backoff: Backoff | None = None,
        request_timeout: float = 10.0,
        before_send: Callable[[], None] | None = None,
    ) -> None:
        self.api_client = api_client
        self.backoff = backoff or Backoff()
        self.request_timeout = request_timeout
        #: Called before every request sent, retries included (the cluster tools' rate limiter).
        self.before_send = before_send
        host = getattr(getattr(api_client, "configuration", None), "host", "")
        #: ``host:port`` of the API server, named in every :class:`ApiError`.
        self.server = server_name(host) if isinstance(host, str) and host else ""

    def _unreachable(self, exc: BaseException) -> ApiError:
        return ApiError(
            0, type(exc).__name__, transport_failure(exc, self.server or "(unknown)"), server=self.server
        )

    def _answered(self, status: int, reason: str, parsed: JsonObj) -> ApiError:
        return ApiError(
            status,
            str(parsed.get("reason") or reason or "Error"),
            str(parsed.get("message", "")),
            parsed,
            server=self.server,
        )

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None,
        body: Any,
        content_type: str | None,
        timeout: float | tuple[float, float],
    ) -> Any:
        if self.before_send is not None:
            self.before_send()
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type or "application/json"
        try:
            method, url, headers, body, post = self.api_client.param_serialize(
                method,
                path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            return self.api_client.call_api(method, url, headers, body, post, _request_timeout=timeout)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._unreachable(exc) from exc
        except k8s_client.ApiException as exc:
            parsed = _parse(exc.body.encode() if isinstance(exc.body, str) else exc.body or b"")
            raise self._answered(
                exc.status or 0, str(exc.reason or ""), parsed or {"message": str(exc.body or "")}
            ) from exc

    def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> JsonObj:
        """One API call, retried on transient failures; raises :class:`ApiError` otherwise."""
        attempt = 0
        while True:
            try:
                resp = self._send(method, path, query, body, content_type, self.request_timeout)
                try:
                    data = resp.read()
                except (urllib3.exceptions.HTTPError, OSError) as exc:
                    raise self._unreachable(exc) from exc
                status = int(resp.status)
                parsed = _parse(data)
                if 200 <= status < 300:
                    return parsed
                raise self._answered(status, str(resp.reason or ""), parsed)
            except ApiError as err:
                if not err.transient or attempt + 1 >= self.backoff.attempts:
                    raise
                delay = self.backoff.delay(attempt)
                log.debug("%s %s failed (%s); retrying in %.2fs", method, path, err, delay)
                self.backoff.sleep(delay)
                attempt += 1

    def get(self, path: str) -> JsonObj | None:
        """The object at ``path``, or ``None`` when it does not exist."""
        try:
            return self.request("GET", path)
        except ApiError as err:
            if err.not_found:
                return None
            raise

    def list(self, path: str, *, labels: str | None = None, fields: str | None = None) -> JsonObj:
        query: list[tuple[str, str]] = []
        if labels:
            query.append(("labelSelector", labels))
        if fields:
            query.append(("fieldSelector", fields))
        return self.request("GET", path, query=query)

    def create(self, path: str, body: JsonObj) -> JsonObj:
        return self.request("POST", path, body=body)

    def update(self, path: str, body: JsonObj) -> JsonObj:
        return self.request("PUT", path, body=body)

    def merge_patch(self, path: str, patch: JsonObj) -> JsonObj:
        return self.request("PATCH", path, body=patch, content_type=MERGE_PATCH)

    def watch(
        self,
        path: str,
        *,
        resource_version: str,
        labels: str | None = None,
        fields: str | None = None,
        timeout_seconds: int = 60,
        on_open: Callable[[Any], None] | None = None,
    ) -> Iterator[tuple[str, JsonObj]]:
        """Stream ``(type, object)`` events after ``resource_version`` until the server ends the stream.

        ``on_open`` receives the raw response so another thread can shut it down. An ``ERROR`` event is
        raised as :class:`ApiError` (410 Gone → relist).
        """
        query = [
            ("watch", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", str(timeout_seconds)),
            ("allowWatchBookmarks", "true"),
        ]
        if labels:
            query.append(("labelSelector", labels))
        if fields:
            query.append(("fieldSelector", fields))
        resp = self._send("GET", path, query, None, None, (self.request_timeout, timeout_seconds + 10.0))
        status = int(resp.status)
        if not 200 <= status < 300:
            raise self._answered(status, str(resp.reason or ""), _parse(resp.read()))
        raw = resp.response
        if on_open is not None:
            on_open(raw)
        try:
            for line in _lines(raw):
                event = json.loads(line)
                kind = str(event.get("type", ""))
                obj = event.get("object") or {}
                if kind == "ERROR":
                    raise ApiError(
                        int(obj.get("code", 500)),
                        str(obj.get("reason", "")),
                        str(obj.get("message", "")),
                        server=self.server,
                    )
                yield kind, obj
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            raise self._unreachable(exc) from exc
        finally:
            raw.release_conn()


def _lines(raw: Any) -> Iterator[str]:
    buf = b""
    for chunk in raw.stream(amt=None, decode_content=True):
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.strip():
                yield line.decode("utf-8")
    if buf.strip():
        yield buf.decode("utf-8")


def _parse(data: bytes | None) -> JsonObj:
    if not data:
        return {}
    try:
        parsed = json.loads(data)
    except ValueError:
        return {"message": data.decode("utf-8", "replace")[:500]}
    return parsed if isinstance(parsed, dict) else {"items": parsed}


# --- list + watch --------------------------------------------------------------------------------------


class Informer:
    """List, then watch, a collection in a background thread, handing every change to ``on_event``.

    ``on_event(kind, obj)`` receives ``SYNC`` with the list object after every (re)list, then ``ADDED``,
    ``MODIFIED`` and ``DELETED`` events. Stream ends re-watch from the last resourceVersion; 410 Gone and
    errors relist after a jittered backoff. ``stop()`` ends the thread promptly.

    ``last_error`` holds the latest failure until a list succeeds again. Failures that retrying does not
    cure by itself (403 Forbidden, 401, 404: missing RBAC or API) are logged as warnings, the others
    (connection errors, 5xx) at info level.
    """

    def __init__(
        self,
        kube: Kube,
        path: str,
        on_event: Callable[[str, JsonObj], None],
        *,
        labels: str | None = None,
        fields: str | None = None,
        timeout_seconds: int = 60,
        name: str = "informer",
        backoff: Backoff | None = None,
    ) -> None:
        self.kube = kube
        self.path = path
        self.on_event = on_event
        self.labels = labels
        self.fields = fields
        self.timeout_seconds = timeout_seconds
        self.backoff = backoff or Backoff(base=0.2, cap=10.0)
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._lock = threading.Lock()
        self._raw: Any = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.last_error: str | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            raw = self._raw
        if raw is not None:
            _shutdown(raw)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    @property
    def synced(self) -> bool:
        """True once a list has succeeded (it stays true across later relists)."""
        return self._synced.is_set()

    def _opened(self, raw: Any) -> None:
        with self._lock:
            self._raw = raw
        if self._stop.is_set():
            _shutdown(raw)

    def _run(self) -> None:
        failures = 0
        rv: str | None = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    listed = self.kube.list(self.path, labels=self.labels, fields=self.fields)
                    rv = str((listed.get("metadata") or {}).get("resourceVersion", ""))
                    self.last_error = None
                    self.on_event("SYNC", listed)
                    self._synced.set()
                for kind, obj in self.kube.watch(
                    self.path,
                    resource_version=rv,
                    labels=self.labels,
                    fields=self.fields,
                    timeout_seconds=self.timeout_seconds,
                    on_open=self._opened,
                ):
                    new_rv = (obj.get("metadata") or {}).get("resourceVersion")
                    if new_rv:
                        rv = str(new_rv)
                    if kind != "BOOKMARK":
                        self.on_event(kind, obj)
                failures = 0
            except ApiError as err:
                if self._stop.is_set():
                    break
                if err.gone:
                    rv = None
                    continue
                failures += 1
                rv = None
                delay = self.backoff.delay(min(failures, 8))
                self.last_error = str(err)
                level = logging.INFO if err.transient else logging.WARNING
                log.log(level, "watch %s failed (%s); relisting in %.1fs", self.path, err, delay)
                self._stop.wait(delay)
            except Exception:
                if self._stop.is_set():
                    break
                failures += 1
                rv = None
                log.exception("watch %s handler failed", self.path)
                self._stop.wait(self.backoff.delay(min(failures, 8)))
            finally:
                with self._lock:
                    self._raw = None


def _shutdown(raw: Any) -> None:
    shutdown = getattr(raw, "shutdown", None)
    try:
        if shutdown is not None:
            shutdown()
        else:
            raw.close()
    except Exception:  # the stream may already be closed by the other thread
        log.debug("closing watch stream failed", exc_info=True)
