"""What ``serve`` runs beside the HTTPS server when a Kubernetes API is reachable: the
certificate reconcile loop and the namespace-scope Lease watcher.

- ``cert_mode=dev``: no API is needed; a self-signed pair is kept in the cert dir.
- ``cert_mode=auto|manual``: the loop keeps the Secret (auto) and the caBundles true. In the
  cluster the kubelet's Secret mount puts the pair into the cert dir; out of the cluster the loop
  writes it there itself. Either way the server's hot reload picks it up.
- With any API (in-cluster, or ``--kubeconfig``), the Lease watcher excludes namespaces that a
  namespace-restricted operator claims, as the operator's cluster-wide webhooks do. Until its
  first list has succeeded the service is not ready (it would judge namespaces it must leave
  alone); ``/readyz`` then names the failure, e.g. a missing RBAC rule.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.server.incluster import in_cluster
from app.server.settings import Settings
from certs.config import CertConfig
from certs.kube import ApiError, Backoff, Kube, load_api_client
from certs.leases import NamespaceScope
from certs.loop import Reconciler
from domain.admission import AdmissionContext, LookupNotFound

log = logging.getLogger("dynamo_webhook.cluster")


def api_available(settings: Settings) -> bool:
    return settings.kubeconfig is not None or in_cluster()


INFERENCE_POOL_GROUP = "inference.networking.k8s.io"
CLUSTER_TOPOLOGY_BINDINGS = "/apis/grove.io/v1alpha1/clustertopologybindings"


def lookup_error(err: Exception) -> RuntimeError:
    """A failed live read as the client sees it inside a denial: the API server's own message
    (as client-go's error text is, e.g. ``clustertopologybindings.grove.io "x" is forbidden: User
    … cannot get resource …``), without the HTTP status line in front."""
    if isinstance(err, ApiError) and err.status and err.message:
        return RuntimeError(err.message)
    return RuntimeError(str(err))


class LiveLookups:
    """The operator's two live reads during admission, on the same API plumbing as the cert loop:
    a ClusterTopologyBinding by name (its ``spec.levels[].domain`` in level order) and whether
    the InferencePool API group is served (discovery, cached for ``discovery_ttl`` seconds as
    a discovery client would). Requests are short and retried once: an admission answer has a
    10-second budget. A read that fails is logged as a warning (it denies the request)."""

    def __init__(self, kube: Any, discovery_ttl: float = 30.0) -> None:
        self.kube = kube
        self.discovery_ttl = discovery_ttl
        self._pool: tuple[float, bool] | None = None

    def cluster_topology(self, name: str) -> tuple[str, ...]:
        try:
            binding = self.kube.request("GET", f"{CLUSTER_TOPOLOGY_BINDINGS}/{name}")
        except ApiError as err:
            if err.not_found:
                raise LookupNotFound(name) from err
            log.warning("reading ClusterTopologyBinding failed", extra={"binding": name, "error": str(err)})
            raise lookup_error(err) from err
        levels = (binding.get("spec") or {}).get("levels") or []
        return tuple(str(level.get("domain", "")) for level in levels if isinstance(level, dict))

    def inference_pool_available(self) -> bool:
        now = time.monotonic()
        if self._pool is not None and now - self._pool[0] < self.discovery_ttl:
            return self._pool[1]
        try:
            self.kube.request("GET", f"/apis/{INFERENCE_POOL_GROUP}")
            served = True
        except ApiError as err:
            if not err.not_found:
                log.warning("InferencePool API discovery failed", extra={"error": str(err)})
                raise lookup_error(err) from err
            served = False
        self._pool = (now, served)
        return served


@dataclass
class ClusterServices:
    """Background services bound to the Kubernetes API (all optional)."""

    reconciler: Any = None
    scope: Any = None
    lookups: LiveLookups | None = None
    ready_checks: list[Callable[[], tuple[bool, str]]] = field(default_factory=list)

    def admission_context(self, settings: Settings) -> AdmissionContext:
        """The admission context: lease exclusion and live look-ups when an API is reachable."""
        if self.lookups is None:
            return AdmissionContext(
                settings=settings.admission_settings(), namespace_excluded=self.namespace_excluded
            )
        return AdmissionContext(
            settings=settings.admission_settings(cluster_lookups=True),
            namespace_excluded=self.namespace_excluded,
            cluster_topology=self.lookups.cluster_topology,
            inference_pool_available=self.lookups.inference_pool_available,
        )

    def namespace_excluded(self, namespace: str) -> bool:
        return bool(self.scope is not None and namespace and self.scope.is_excluded(namespace))

    def start(self) -> None:
        if self.reconciler is not None:
            self.reconciler.start()
        if self.scope is not None:
            self.scope.start()

    def stop(self) -> None:
        if self.scope is not None:
            self.scope.stop()
        if self.reconciler is not None:
            self.reconciler.stop()


def build_cluster_services(settings: Settings) -> ClusterServices:
    services = ClusterServices()
    if not api_available(settings):
        if settings.cert_mode != "dev":
            raise RuntimeError(
                f"cert mode {settings.cert_mode} needs a Kubernetes API: run in a cluster or pass --kubeconfig"
            )
        return services
    api = load_api_client(str(settings.kubeconfig) if settings.kubeconfig else None)
    scope = services.scope = NamespaceScope(api)
    services.ready_checks.append(scope.ready)
    services.lookups = LiveLookups(
        Kube(api, backoff=Backoff(attempts=2, base=0.05, cap=0.2), request_timeout=3.0)
    )
    if settings.cert_mode in ("auto", "manual"):
        config = CertConfig(
            mode=settings.cert_mode,
            namespace=settings.namespace,
            service_name=settings.service_name,
            secret_name=settings.secret_name,
            cluster_domain=settings.cluster_domain,
            cert_dir=settings.cert_dir,
            write_files=not in_cluster(),
            extra_dns=() if in_cluster() else ("localhost",),
            extra_ips=() if in_cluster() else ("127.0.0.1",),
        )
        reconciler = Reconciler(config, api)
        services.reconciler = reconciler
        services.ready_checks.append(
            lambda: (reconciler.ready(), "certificates not in place yet (cert loop has not converged)")
        )
    return services


def wait_for_pair(cert_file: Path, key_file: Path, services: ClusterServices, timeout: float) -> None:
    """Before the first pass has produced files (fresh install), run passes until the pair exists."""
    deadline = time.monotonic() + timeout
    while not (cert_file.exists() and key_file.exists()):
        if services.reconciler is not None:
            result = services.reconciler.reconcile_once()
            if not result.ok:
                log.warning("waiting for a serving certificate", extra={"errors": result.errors})
        if cert_file.exists() and key_file.exists():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"no serving certificate appeared in {cert_file.parent} within {timeout:g} s")
        time.sleep(2)
