"""Namespace exclusion through namespace-scope marker Leases.

A namespace-restricted operator keeps a ``coordination.k8s.io/v1`` Lease named
``dynamo-operator-namespace-scope`` renewed in its namespace. The cluster-wide webhook leaves such a namespace
alone while that Lease is valid: it expires when ``now > renewTime + leaseDurationSeconds``, and a Lease
without ``renewTime`` or ``leaseDurationSeconds`` counts as expired. Validity is checked at every lookup, so
a Lease that stops being renewed stops excluding its namespace without any further event.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubernetes import client as k8s_client

from certs.kube import Backoff, Informer, JsonObj, Kube, lease_path

log = logging.getLogger(__name__)

LEASE_NAME = "dynamo-operator-namespace-scope"


def parse_time(value: Any) -> dt.datetime | None:
    """An RFC 3339 timestamp (``Time`` or ``MicroTime``) as an aware datetime, ``None`` if unusable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


def lease_expiry(lease: Mapping[str, Any]) -> dt.datetime | None:
    """``renewTime + leaseDurationSeconds``, or ``None`` when either is missing or unusable."""
    spec = lease.get("spec") or {}
    renew = parse_time(spec.get("renewTime"))
    duration = spec.get("leaseDurationSeconds")
    if renew is None or duration is None or isinstance(duration, bool) or not isinstance(duration, int):
        return None
    return renew + dt.timedelta(seconds=duration)


def lease_expired(lease: Mapping[str, Any], now: dt.datetime) -> bool:
    expiry = lease_expiry(lease)
    return expiry is None or now > expiry


class NamespaceScope:
    """Watches marker Leases in all namespaces; :meth:`is_excluded` answers from the latest copy.

    Without an API client nothing is ever excluded.
    """

    def __init__(
        self,
        api_client: k8s_client.ApiClient | None,
        *,
        clock: Callable[[], dt.datetime] | None = None,
        watch_timeout_seconds: int = 300,
        backoff: Backoff | None = None,
    ) -> None:
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self._lock = threading.Lock()
        self._leases: dict[str, JsonObj] = {}
        self._informer: Informer | None = None
        if api_client is not None:
            self._informer = Informer(
                Kube(api_client, backoff=backoff),
                lease_path(),
                self._on_event,
                fields=f"metadata.name={LEASE_NAME}",
                timeout_seconds=watch_timeout_seconds,
                name="namespace-scope-leases",
                backoff=backoff,
            )

    def start(self) -> None:
        if self._informer is not None:
            self._informer.start()

    def stop(self) -> None:
        if self._informer is not None:
            self._informer.stop()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the first list has been loaded (immediately when there is no API)."""
        return self._informer is None or self._informer.wait_synced(timeout)

    def ready(self) -> tuple[bool, str]:
        """A readiness check: until the first list has succeeded the service cannot tell which
        namespaces to leave alone, so it is not ready; the reason carries the latest failure."""
        if self._informer is None or self._informer.synced:
            return True, ""
        error = self._informer.last_error
        return (
            False,
            f"namespace-scope Leases not listed yet: {error}"
            if error
            else "namespace-scope Leases not listed yet",
        )

    def is_excluded(self, namespace: str) -> bool:
        with self._lock:
            lease = self._leases.get(namespace)
        return lease is not None and not lease_expired(lease, self.clock())

    def excluded_namespaces(self) -> list[str]:
        now = self.clock()
        with self._lock:
            leases = list(self._leases.items())
        return sorted(ns for ns, lease in leases if not lease_expired(lease, now))

    def _on_event(self, kind: str, obj: JsonObj) -> None:
        if kind == "SYNC":
            fresh = {
                str(item["metadata"].get("namespace", "")): item
                for item in obj.get("items") or []
                if (item.get("metadata") or {}).get("name") == LEASE_NAME
            }
            with self._lock:
                self._leases = fresh
            return
        meta = obj.get("metadata") or {}
        if meta.get("name") != LEASE_NAME:
            return
        namespace = str(meta.get("namespace", ""))
        with self._lock:
            if kind == "DELETED":
                self._leases.pop(namespace, None)
            elif kind in ("ADDED", "MODIFIED"):
                self._leases[namespace] = obj
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            log.info(
                "namespace-scope lease %s in %s: namespace %s",
                kind.lower(),
                namespace,
                "excluded" if self.is_excluded(namespace) else "not excluded",
            )
