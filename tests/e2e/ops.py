"""Helpers of the operational scenarios (certificates, RBAC, the webhook down and back): a service
started on a registration with parts of deploy/'s RBAC held back, continuous ``kubectl`` traffic
through the API server, and what the service serves and logs."""

from __future__ import annotations

import base64
import copy
import http.client
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.cluster import NAMESPACE, SECRET, Cluster, Obj, Service, ca_bundles, install
from tests.e2e.testenv import ROOT, ControlPlane, Kubectl, Result, free_port, wait_until

EXAMPLES = ROOT / "examples" / "manifests"
SERVICE_ACCOUNT_USER = "system:serviceaccount:dynamo-system:dynamo-webhook"
#: The deploy/ objects a scenario may hold back or take away, by (kind, name).
INJECTOR_BINDING = ("ClusterRoleBinding", "dynamo-webhook-ca-injector")
SECRET_READER_BINDING = ("RoleBinding", "dynamo-webhook-secret-reader")
SECRET_WRITER_BINDING = ("RoleBinding", "dynamo-webhook-secret-writer")
CLUSTER_ROLE = ("ClusterRole", "dynamo-webhook")


def example(name: str, namespace: str, new_name: str | None = None) -> Obj:
    """An example manifest moved into ``namespace`` (and renamed)."""
    obj: Obj = yaml.safe_load((EXAMPLES / name).read_text())
    obj["metadata"]["namespace"] = namespace
    if new_name:
        obj["metadata"]["name"] = new_name
    return obj


def _find(objs: Iterable[Obj], kind: str, name: str) -> Obj:
    for obj in objs:
        if obj["kind"] == kind and obj["metadata"]["name"] == name:
            return obj
    raise KeyError(f"{kind}/{name} is not part of the registration")


def registered(cluster: Cluster, kind: str, name: str) -> Obj:
    """The deploy/ object ``kind``/``name`` as installed (a copy)."""
    return copy.deepcopy(_find(cluster.registration, kind, name))


def _ref(objs: Iterable[Obj], kind: str, name: str) -> tuple[str, ...]:
    """kubectl arguments naming the deploy/ object ``kind``/``name``."""
    ns = _find(objs, kind, name)["metadata"].get("namespace")
    return (kind.lower(), name, *(("-n", ns) if ns else ()))


def take_away(cluster: Cluster, kind: str, name: str) -> None:
    """Delete one deploy/ RBAC object."""
    cluster.kubectl("delete", *_ref(cluster.registration, kind, name), "--wait=true")


def give_back(cluster: Cluster, kind: str, name: str) -> None:
    """Apply one deploy/ object again as deploy/ has it (server-side, as installed)."""
    cluster.kubectl.apply(registered(cluster, kind, name), "--server-side", "--force-conflicts")


def start_without(
    cp: ControlPlane, kubectl: Kubectl, workdir: Path, held_back: Sequence[tuple[str, str]], *args: str
) -> Cluster:
    """Install the registration with the deploy/ objects ``held_back`` deleted again before the
    service starts, then start ``serve`` and wait for ``/readyz`` (not for the caBundles)."""
    port = free_port()
    crds, rest, sa_config = install(cp, kubectl, workdir, port)
    for kind, name in held_back:
        kubectl("delete", *_ref(rest, kind, name))
    service = Service(workdir, sa_config, args, port=port)
    service.start()
    try:
        service.wait_ready()
    except BaseException:
        print(service.log_tail(200))
        service.stop()
        raise
    return Cluster(cp, kubectl, service, crds, rest)


# --- what the service serves and logs ------------------------------------------------------------


def secret_data(kubectl: Kubectl) -> dict[str, bytes]:
    secret = kubectl.get("secret", SECRET, NAMESPACE)
    return {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}


def bundles_equal(kubectl: Kubectl, ca_pem: bytes) -> bool:
    want = base64.b64encode(ca_pem).decode()
    return all(b == want for b in ca_bundles(kubectl).values())


def served_cert(port: int) -> bytes:
    """The serving certificate a new TLS connection to the service gets (PEM)."""
    pem = ssl.get_server_certificate(("127.0.0.1", port), timeout=5)
    return ssl.DER_cert_to_PEM_cert(ssl.PEM_cert_to_DER_cert(pem)).encode()


def same_cert(a: bytes, b: bytes) -> bool:
    return ssl.PEM_cert_to_DER_cert(a.decode()) == ssl.PEM_cert_to_DER_cert(b.decode())


def established_peers(port: int) -> set[int]:
    """Source ports of the established TCP connections to 127.0.0.1:``port`` (the API server's
    connections to the service), from /proc/net/tcp."""
    peers: set[int] = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, state = fields[1], fields[2], fields[3]
        if state == "01" and local == f"0100007F:{port:04X}":
            peers.add(int(remote.split(":")[1], 16))
    return peers


def log_records(service: Service) -> list[dict[str, Any]]:
    """The service's JSON log lines, over every start."""
    records = []
    for line in service.log_path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def log_messages(service: Service, level: str | None = None) -> list[str]:
    return [r.get("msg", "") for r in log_records(service) if level is None or r.get("level") == level]


# --- traffic -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    what: str
    started: float
    ended: float
    result: Result

    @property
    def ok(self) -> bool:
        return self.result.returncode == 0


@dataclass
class Traffic:
    """``kubectl`` calls in a loop on ``threads`` threads until stopped; every call is recorded."""

    calls: Sequence[tuple[str, Callable[[], Result]]]
    threads: int = 2
    done: list[Call] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _run(self, offset: int) -> None:
        i = offset
        while not self._stop.is_set():
            what, call = self.calls[i % len(self.calls)]
            i += 1
            started = time.monotonic()
            result = call()
            with self._lock:
                self.done.append(Call(what, started, time.monotonic(), result))

    @contextmanager
    def running(self) -> Iterator[Traffic]:
        workers = [threading.Thread(target=self._run, args=(n,), daemon=True) for n in range(self.threads)]
        for worker in workers:
            worker.start()
        try:
            yield self
        finally:
            self._stop.set()
            for worker in workers:
                worker.join(60)

    def snapshot(self) -> list[Call]:
        with self._lock:
            return list(self.done)

    def wait_for_calls(self, count: int, timeout: float = 30) -> None:
        start = len(self.snapshot())
        wait_until(lambda: len(self.snapshot()) >= start + count, timeout, f"{count} more kubectl calls")


def failures(calls: Iterable[Call]) -> list[str]:
    return [f"{c.what}: {c.result.stderr.strip()}" for c in calls if not c.ok]


def concurrent_requests(
    cp: ControlPlane, method: str, path: str, body: Any, width: int
) -> list[tuple[int, bytes]]:
    """``width`` admin requests sent to the API server at the same instant, each on a connection
    opened beforehand. The API server then has that many webhook calls in flight at once: more
    than its idle connections to the service, so it opens new ones (new TLS handshakes)."""
    data = json.dumps(body).encode() if body is not None else None
    conns = [
        http.client.HTTPSConnection("127.0.0.1", cp.port, context=cp.ssl_context(), timeout=30)
        for _ in range(width)
    ]
    for conn in conns:
        conn.connect()
    barrier = threading.Barrier(width)

    def one(conn: http.client.HTTPSConnection) -> tuple[int, bytes]:
        barrier.wait(30)
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()

    try:
        with ThreadPoolExecutor(width) as pool:
            return list(pool.map(one, conns))
    finally:
        for conn in conns:
            conn.close()
