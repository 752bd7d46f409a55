"""An optional writer Lease: with several replicas, only the holder writes the Secret and the caBundles.

Correctness never depends on it (every write is conditional on the resourceVersion it read); it only keeps
replicas from doing the same work. Every replica keeps serving, reloading and reporting readiness.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from certs.kube import ApiError, JsonObj, Kube, lease_path
from certs.leases import lease_expiry

log = logging.getLogger(__name__)


def micro_time(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WriterLease:
    """``coordination.k8s.io/v1`` Lease ``name`` in ``namespace`` held by ``identity``.

    :meth:`acquire` takes a free or expired Lease, renews its own one once a third of the duration has
    passed, and answers whether this replica holds it. Races are settled by create/update conflicts.
    """

    def __init__(
        self,
        kube: Kube,
        namespace: str,
        name: str,
        identity: str,
        duration_seconds: int = 180,
        clock: Callable[[], dt.datetime] | None = None,
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.duration_seconds = duration_seconds
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self.holder: str | None = None

    def _spec(self, now: dt.datetime, transitions: int, acquired: str | None = None) -> dict[str, Any]:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.duration_seconds,
            "acquireTime": acquired or micro_time(now),
            "renewTime": micro_time(now),
            "leaseTransitions": transitions,
        }

    def acquire(self) -> bool:
        now = self.clock()
        path = lease_path(self.namespace, self.name)
        lease = self.kube.get(path)
        if lease is None:
            body: JsonObj = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(now, 0),
            }
            try:
                self.kube.create(lease_path(self.namespace), body)
            except ApiError as err:
                if err.already_exists:
                    return False
                raise
            self.holder = self.identity
            log.info("acquired writer lease %s/%s", self.namespace, self.name)
            return True
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity")
        expiry = lease_expiry(lease)
        expired = expiry is None or now > expiry
        self.holder = holder if isinstance(holder, str) else None
        if holder != self.identity and not expired:
            return False
        if holder == self.identity and expiry is not None:
            renewed_at = expiry - dt.timedelta(seconds=int(spec.get("leaseDurationSeconds") or 0))
            if now - renewed_at < dt.timedelta(seconds=self.duration_seconds / 3):
                return True
        transitions = int(spec.get("leaseTransitions") or 0)
        if holder == self.identity:
            new_spec = self._spec(now, transitions, spec.get("acquireTime"))
        else:
            new_spec = self._spec(now, transitions + 1)
        body = {**lease, "spec": new_spec}
        try:
            self.kube.update(path, body)
        except ApiError as err:
            if err.conflict or err.not_found:
                return False
            raise
        if holder != self.identity:
            log.info("took over writer lease %s/%s from %s", self.namespace, self.name, holder or "nobody")
        self.holder = self.identity
        return True
