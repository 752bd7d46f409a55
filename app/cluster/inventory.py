"""What ``audit`` and ``storage-migrate`` share: the six Dynamo kinds and their CRDs on a live cluster,
a rate-limited client, paginated listing and progress on stderr.

Requests go through :class:`certs.kube.Kube` (the plumbing of the certificate loop: the official client's
authentication and TLS, plain JSON bodies, retries of transient failures).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO

from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException

from certs.kube import ApiError, Backoff, Kube, crd_path, in_cluster_namespace, load_api_client
from certs.kubeerrors import describe
from domain.constants import GROUP
from kinds import custom_kinds
from kinds.registry import Kind

JsonObj = dict[str, Any]

#: The exit statuses of every cluster tool (``audit``, ``storage-migrate``, ``certs``, ``crds release``;
#: the table in docs/operations.md and each tool's ``--help``): done; findings (objects that would be refused,
#: not rewritten, out of date, a refusal); a usage error or a cluster that could not be used (no usable
#: kubeconfig, no answer, TLS, authentication, an API error); interrupted.
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


#: The kinds of this project's API group (the registry's order): what audit and storage-migrate list.
KINDS: tuple[Kind, ...] = tuple(custom_kinds())


def select_kinds(spec: str | None, *, convertible_only: bool = False) -> tuple[Kind, ...]:
    """Kinds named in a comma-separated list (kind, plural or short name, any case); all when empty.

    Raises ``ValueError`` naming what is unknown."""
    pool = tuple(k for k in KINDS if k.convertible or not convertible_only)
    if not spec:
        return pool
    chosen: list[Kind] = []
    for word in (w.strip().lower() for w in spec.split(",")):
        if not word:
            continue
        match = next((k for k in KINDS if word in (k.kind.lower(), k.plural, k.short, k.crd_name)), None)
        if match is None:
            raise ValueError(f"unknown kind {word!r} (one of: {', '.join(k.short for k in pool)})")
        if match not in pool:
            raise ValueError(f"{match.kind} has a single version: nothing to migrate")
        if match not in chosen:
            chosen.append(match)
    return tuple(k for k in KINDS if k in chosen)


# --- CRDs ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CrdInfo:
    """What the CRD of one kind says about its versions."""

    name: str
    uid: str
    generation: int
    resource_version: str
    storage_version: str  # "v1beta1"
    served: tuple[str, ...]
    stored_versions: tuple[str, ...]  # status.storedVersions
    status_subresource: bool

    @classmethod
    def parse(cls, crd: JsonObj) -> CrdInfo:
        meta = crd.get("metadata") or {}
        versions = (crd.get("spec") or {}).get("versions") or []
        storage = next((str(v["name"]) for v in versions if v.get("storage")), "")
        storage_entry: JsonObj = next((v for v in versions if v.get("storage")), {})
        return cls(
            name=str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            generation=int(meta.get("generation") or 0),
            resource_version=str(meta.get("resourceVersion", "")),
            storage_version=storage,
            served=tuple(str(v["name"]) for v in versions if v.get("served")),
            stored_versions=tuple(str(v) for v in (crd.get("status") or {}).get("storedVersions") or ()),
            status_subresource="status" in (storage_entry.get("subresources") or {}),
        )

    @property
    def migrated(self) -> bool:
        """Every object is stored in the storage version (the API server says so)."""
        return self.stored_versions == (self.storage_version,)

    @property
    def list_version(self) -> str:
        """The version to list objects in: the storage version when served, else the first served."""
        return self.storage_version if self.storage_version in self.served else self.served[0]


def read_crd(kube: Kube, kind: Kind) -> CrdInfo | None:
    """The kind's CRD, or ``None`` when it is not installed."""
    crd = kube.get(crd_path(kind.crd_name))
    return None if crd is None else CrdInfo.parse(crd)


def collection_path(kind: Kind, version: str, namespace: str | None = None) -> str:
    if namespace:
        return f"/apis/{GROUP}/{version}/namespaces/{namespace}/{kind.plural}"
    return f"/apis/{GROUP}/{version}/{kind.plural}"


def object_path(kind: Kind, version: str, namespace: str, name: str) -> str:
    return f"{collection_path(kind, version, namespace)}/{name}"


# --- client ---------------------------------------------------------------------------------------


class RateLimiter:
    """At most ``qps`` requests a second, evenly spaced (0: no limit). Thread-safe."""

    def __init__(
        self,
        qps: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.interval = 1.0 / qps if qps > 0 else 0.0
        self.clock = clock
        self.sleep = sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self.clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self.sleep(slot - now)


@dataclass
class Connection:
    kube: Kube
    api_client: Any
    default_namespace: str


def connect(args: argparse.Namespace, qps: float = 0.0) -> Connection:
    """A client from ``--kubeconfig``/``--context`` (raises ``ConfigException`` without any config)."""
    api = load_api_client(args.kubeconfig, args.context)
    # Every request, retries included, first waits for the rate limiter.
    kube = Kube(
        api,
        backoff=Backoff(attempts=4, base=0.2, cap=2.0),
        request_timeout=args.request_timeout,
        before_send=RateLimiter(qps).wait,
    )
    return Connection(kube, api, context_namespace(args.kubeconfig, args.context))


def context_namespace(kubeconfig: str | None, context: str | None) -> str:
    """The namespace kubectl would use: the context's, else the pod's (in a cluster), else ``default``."""
    try:
        contexts, active = k8s_config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=kubeconfig or os.environ.get("KUBECONFIG")
        )
    except (ConfigException, OSError, TypeError):
        return in_cluster_namespace() or "default"
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    namespace = ((chosen or {}).get("context") or {}).get("namespace")
    return str(namespace) if namespace else "default"


# --- listing --------------------------------------------------------------------------------------


@dataclass
class Listing:
    """Paginated LIST of one collection (``limit``/``continue``); the next page is requested while the
    current one is being used. ``total`` is known after the first page (``metadata.remainingItemCount``,
    an estimate the server may omit)."""

    kube: Kube
    path: str
    page_size: int = 500
    total: int | None = None
    restarts: int = 0
    _seen: set[str] = field(default_factory=set)

    def _fetch(self, token: str) -> JsonObj:
        query = [("limit", str(self.page_size))]
        if token:
            query.append(("continue", token))
        return self.kube.request("GET", self.path, query=query)

    def __iter__(self) -> Iterator[JsonObj]:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="list") as pool:
            token = ""
            future = pool.submit(self._fetch, token)
            while True:
                try:
                    page = future.result()
                except ApiError as err:
                    if not (err.gone and token):
                        raise
                    # The continue token expired (compaction): list again from the start, skipping
                    # what was already handed out.
                    self.restarts += 1
                    token = ""
                    future = pool.submit(self._fetch, token)
                    continue
                meta = page.get("metadata") or {}
                items = page.get("items") or []
                if not token and self.total is None:
                    remaining = meta.get("remainingItemCount")
                    self.total = len(items) + (int(remaining) if isinstance(remaining, int) else 0)
                token = str(meta.get("continue") or "")
                if token:
                    future = pool.submit(self._fetch, token)
                for item in items:
                    uid = str((item.get("metadata") or {}).get("uid", ""))
                    if uid in self._seen:
                        continue
                    self._seen.add(uid)
                    yield item
                if not token:
                    return


# --- progress -------------------------------------------------------------------------------------


class Progress:
    """``label: done/total`` rewritten in place on ``stream``, only when it is a terminal."""

    def __init__(
        self, stream: TextIO | None = None, enabled: bool | None = None, interval: float = 0.1
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.interval = interval
        self._last = 0.0
        self._shown = False

    def update(self, label: str, done: int, total: int | None, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        count = f"{done}/{max(total, done)}" if total is not None else str(done)
        self.stream.write(f"\r\x1b[K{label}: {count}")
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def fail(command: str, message: str, err: TextIO | None = None) -> int:
    (err or sys.stderr).write(f"dynamo-webhook {command}: {message}\n")
    return EXIT_USAGE


def cluster_failure(
    command: str, exc: ConfigException | ApiError, doing: str = "", err: TextIO | None = None
) -> int:
    """Say in one line why the cluster could not be used (:func:`certs.kubeerrors.describe`): exit 2."""
    return fail(
        command, describe(exc) if isinstance(exc, ConfigException) else f"{doing}{describe(exc)}", err
    )


def join(values: Sequence[str]) -> str:
    return "[" + ", ".join(values) + "]"
