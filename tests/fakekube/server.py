"""An in-process Kubernetes API server for tests.

Real HTTP on 127.0.0.1 (ephemeral port, one thread per connection) so the official ``kubernetes`` client
talks to it through a generated kubeconfig. It serves Secrets, Leases, Mutating/Validating webhook
configurations and CustomResourceDefinitions with get/list/watch/create/update/patch/delete, label and field
selectors, resourceVersion conflicts, AlreadyExists, NotFound Status bodies, injectable faults and delays, and
a record of every call. The resources, calls, faults, errors and selectors it works with are in
:mod:`tests.fakekube.api`.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import socket
import ssl
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonpatch
import yaml

from tests.fakekube.api import (
    RESOURCES,
    ApiStatus,
    Call,
    Faults,
    Obj,
    Resource,
    matches_fields,
    matches_labels,
    merge_patch,
)


class FakeKube:
    """The fake API server. ``start()`` binds 127.0.0.1:0; ``stop()`` shuts it down."""

    def __init__(self, seed: int = 0) -> None:
        self._lock = threading.Condition()
        self._objects: dict[tuple[str, str], dict[tuple[str, str], Obj]] = {k: {} for k in RESOURCES}
        self._events: list[tuple[int, tuple[str, str], str, Obj]] = []
        self._rv = 1000
        self._stopping = False
        self.calls: list[Call] = []
        self.faults = Faults(rng=random.Random(seed))
        # API groups discovery reports as served (``GET /apis/<group>``) besides those of RESOURCES.
        self.extra_groups: set[str] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._tls = False
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------------

    def start(self, tls: ssl.SSLContext | None = None) -> FakeKube:
        """Serve plain HTTP, or HTTPS with ``tls`` (a server-side context)."""
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            # The handshake happens in each handler's thread, so a client refusing the certificate
            # stops neither the accept loop nor the other connections.
            self._httpd.socket = tls.wrap_socket(
                self._httpd.socket, server_side=True, do_handshake_on_connect=False
            )
            self._tls = True
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fakekube", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"{'https' if self._tls else 'http'}://{host!s}:{port}"

    def kubeconfig(self, path: Path, **cluster: Any) -> Path:
        """Write a kubeconfig pointing at this server and return its path; ``cluster`` adds to its cluster
        entry (``**{"insecure-skip-tls-verify": True}``)."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url, **cluster}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "current-context": "fake",
        }
        path.write_text(yaml.safe_dump(config))
        return path

    # --- direct state access for tests (not recorded, no faults) --------------------------------------

    def _res(self, group: str, plural: str) -> Resource:
        try:
            return RESOURCES[(group, plural)]
        except KeyError:
            raise ApiStatus(
                404, "NotFound", f"the server could not find the requested resource ({plural})"
            ) from None

    def get(self, group: str, plural: str, name: str, namespace: str | None = None) -> Obj | None:
        with self._lock:
            obj = self._objects[(group, plural)].get((namespace or "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def list(self, group: str, plural: str) -> list[Obj]:
        with self._lock:
            return [copy.deepcopy(o) for o in self._objects[(group, plural)].values()]

    def put(self, group: str, plural: str, obj: Obj) -> Obj:
        """Create or replace an object unconditionally (as another actor would)."""
        res = self._res(group, plural)
        with self._lock:
            meta = obj.setdefault("metadata", {})
            key = (meta.get("namespace", "") if res.namespaced else "", meta["name"])
            exists = key in self._objects[(group, plural)]
            return self._store(res, key, copy.deepcopy(obj), "MODIFIED" if exists else "ADDED")

    def remove(self, group: str, plural: str, name: str, namespace: str | None = None) -> bool:
        res = self._res(group, plural)
        with self._lock:
            obj = self._objects[(group, plural)].pop((namespace or "", name), None)
            if obj is None:
                return False
            self._rv += 1
            obj["metadata"]["resourceVersion"] = str(self._rv)
            self._events.append((self._rv, (res.group, res.plural), "DELETED", copy.deepcopy(obj)))
            self._lock.notify_all()
            return True

    def writes(self) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.is_write]

    def clear_calls(self) -> None:
        with self._lock:
            self.calls.clear()

    def rbac_rules(self) -> set[tuple[str, str, str]]:
        """``(apiGroup, resource, verb)`` triples exercised so far (successful or not)."""
        with self._lock:
            return {(c.group, c.resource, c.verb) for c in self.calls if c.resource}

    # --- storage ------------------------------------------------------------------------------------

    def _store(self, res: Resource, key: tuple[str, str], obj: Obj, event: str) -> Obj:
        self._rv += 1
        meta = obj.setdefault("metadata", {})
        meta["resourceVersion"] = str(self._rv)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        if res.namespaced:
            meta["namespace"] = key[0]
        else:
            meta.pop("namespace", None)
        obj["apiVersion"] = res.api_version
        obj["kind"] = res.kind
        if res.plural == "secrets":
            _normalise_secret(obj)
        self._objects[(res.group, res.plural)][key] = obj
        self._events.append((self._rv, (res.group, res.plural), event, copy.deepcopy(obj)))
        self._lock.notify_all()
        return copy.deepcopy(obj)

    # --- request handling ---------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: Any, body: bytes) -> tuple[int, Obj | None, Any]:
        """Returns ``(status, json body, watch generator or None)``."""
        parts = urlsplit(raw_path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        route = _route(parts.path)
        verb = _verb(method, route, query)
        group, plural = (route[0], route[2]) if route else ("", "")
        namespace, name = (route[3], route[4]) if route else (None, None)
        status = 200
        try:
            if route is None:
                discovered = _discovery(parts.path, {r.group for r in RESOURCES.values()} | self.extra_groups)
                if discovered is not None:
                    return 200, discovered, None
                raise ApiStatus(404, "NotFound", "the server could not find the requested resource")
            res = self._res(group, plural)
            self._maybe_fault(verb, parts.path, before=True)
            if verb == "watch":
                status = 200
                return 200, None, self._watch(res, namespace, query)
            payload = json.loads(body) if body else None
            result, status = self._dispatch(verb, res, namespace, name, query, payload, headers)
            self._maybe_fault(verb, parts.path, before=False)
            return status, result, None
        except ApiStatus as err:
            status = err.code
            return err.code, err.body(), None
        finally:
            with self._lock:
                self.calls.append(
                    Call(verb, method, parts.path, group, plural, namespace, name, parts.query, status)
                )

    def _maybe_fault(self, verb: str, path: str, before: bool) -> None:
        f = self.faults
        if not f.applies(verb, path):
            return
        if before:
            if f.delay:
                time.sleep(f.delay)
            with self._lock:
                forced = f.fail_next > 0
                if forced:
                    f.fail_next -= 1
            if forced or (f.error_rate and f.rng.random() < f.error_rate):
                raise ApiStatus(f.error_status, "InternalError", "injected fault")
        elif (
            verb in {"create", "update", "patch", "delete"} and f.after_rate and f.rng.random() < f.after_rate
        ):
            raise ApiStatus(500, "InternalError", "injected fault after the write was applied")

    def _dispatch(
        self,
        verb: str,
        res: Resource,
        namespace: str | None,
        name: str | None,
        query: dict[str, str],
        payload: Any,
        headers: Any,
    ) -> tuple[Obj, int]:
        ns = namespace or ""
        table = self._objects[(res.group, res.plural)]
        with self._lock:
            if verb == "get":
                assert name is not None
                obj = table.get((ns, name))
                if obj is None:
                    raise self._not_found(res, name)
                return copy.deepcopy(obj), 200
            if verb == "list":
                items = [
                    copy.deepcopy(o) for (ons, _), o in sorted(table.items()) if not namespace or ons == ns
                ]
                items = self._select(items, query)
                return {
                    "apiVersion": res.api_version,
                    "kind": f"{res.kind}List",
                    "metadata": {"resourceVersion": str(self._rv)},
                    "items": items,
                }, 200
            if verb == "create":
                if not isinstance(payload, dict):
                    raise ApiStatus(400, "BadRequest", "body must be an object")
                meta = payload.setdefault("metadata", {})
                if not meta.get("name") and meta.get("generateName"):
                    meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
                if not meta.get("name"):
                    raise ApiStatus(422, "Invalid", "metadata.name: Required value")
                if res.namespaced and meta.get("namespace") not in (None, "", ns):
                    raise ApiStatus(
                        400, "BadRequest", "the namespace of the object does not match the request"
                    )
                key = (ns, meta["name"])
                if key in table:
                    raise ApiStatus(
                        409,
                        "AlreadyExists",
                        f'{res.plural}.{res.group or "core"} "{meta["name"]}" already exists',
                        meta["name"],
                        res.plural,
                    )
                meta.pop("resourceVersion", None)
                meta.pop("uid", None)
                return self._store(res, key, payload, "ADDED"), 201
            assert name is not None
            current = table.get((ns, name))
            if current is None:
                raise self._not_found(res, name)
            if verb == "delete":
                del table[(ns, name)]
                self._rv += 1
                gone = copy.deepcopy(current)
                gone["metadata"]["resourceVersion"] = str(self._rv)
                self._events.append((self._rv, (res.group, res.plural), "DELETED", copy.deepcopy(gone)))
                self._lock.notify_all()
                return gone, 200
            if verb == "update":
                if not isinstance(payload, dict):
                    raise ApiStatus(400, "BadRequest", "body must be an object")
                meta = payload.setdefault("metadata", {})
                if meta.get("name", name) != name:
                    raise ApiStatus(400, "BadRequest", "the name of the object does not match the request")
                want = meta.get("resourceVersion")
                if want and want != current["metadata"]["resourceVersion"]:
                    raise self._conflict(res, name)
                meta["uid"] = current["metadata"]["uid"]
                meta["creationTimestamp"] = current["metadata"]["creationTimestamp"]
                meta["name"] = name
                return self._store(res, (ns, name), payload, "MODIFIED"), 200
            if verb == "patch":
                ctype = str(headers.get("Content-Type", "")).split(";")[0].strip()
                if ctype == "application/json-patch+json":
                    if not isinstance(payload, list):
                        raise ApiStatus(400, "BadRequest", "json patch must be a list")
                    try:
                        patched = jsonpatch.apply_patch(current, payload)
                    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                        code = 422 if isinstance(exc, jsonpatch.JsonPatchTestFailed) else 400
                        raise ApiStatus(code, "Invalid", f"json patch failed: {exc}") from exc
                elif ctype in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
                    if not isinstance(payload, dict):
                        raise ApiStatus(400, "BadRequest", "merge patch must be an object")
                    want = (payload.get("metadata") or {}).get("resourceVersion")
                    if want and want != current["metadata"]["resourceVersion"]:
                        raise self._conflict(res, name)
                    patched = merge_patch(current, payload)
                else:
                    raise ApiStatus(
                        415,
                        "UnsupportedMediaType",
                        f"the body of the request was in an unknown format: {ctype}",
                    )
                patched.setdefault("metadata", {})["name"] = name
                patched["metadata"]["uid"] = current["metadata"]["uid"]
                return self._store(res, (ns, name), patched, "MODIFIED"), 200
        raise ApiStatus(405, "MethodNotAllowed", f"verb {verb} not supported")

    def _select(self, items: list[Obj], query: dict[str, str]) -> list[Obj]:
        labels = query.get("labelSelector")
        fields = query.get("fieldSelector")
        out = []
        for obj in items:
            if labels and not matches_labels(obj.get("metadata", {}).get("labels") or {}, labels):
                continue
            if fields and not matches_fields(obj, fields):
                continue
            out.append(obj)
        return out

    def _not_found(self, res: Resource, name: str) -> ApiStatus:
        return ApiStatus(
            404, "NotFound", f'{res.plural}.{res.group or "core"} "{name}" not found', name, res.plural
        )

    def _conflict(self, res: Resource, name: str) -> ApiStatus:
        return ApiStatus(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {res.plural}.{res.group or "core"} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            name,
            res.plural,
        )

    def _watch(self, res: Resource, namespace: str | None, query: dict[str, str]) -> Any:
        timeout = float(query.get("timeoutSeconds", "30"))
        start_rv = query.get("resourceVersion", "")
        # Validate selectors before streaming starts.
        self._select([{"metadata": {}}], {k: v for k, v in query.items() if k == "fieldSelector"})

        def keep(obj: Obj) -> bool:
            if namespace and obj.get("metadata", {}).get("namespace") != namespace:
                return False
            return bool(self._select([obj], query))

        def stream() -> Any:
            deadline = time.monotonic() + timeout
            with self._lock:
                if start_rv in ("", "0"):
                    pending = [
                        ("ADDED", copy.deepcopy(o))
                        for o in self._objects[(res.group, res.plural)].values()
                        if keep(o)
                    ]
                    cursor = self._rv
                else:
                    pending = []
                    cursor = int(start_rv)
            for item in pending:
                yield {"type": item[0], "object": item[1]}
            while True:
                with self._lock:
                    batch = [
                        (t, o)
                        for rv, key, t, o in self._events
                        if rv > cursor and key == (res.group, res.plural) and keep(o)
                    ]
                    if self._events:
                        cursor = max(cursor, self._events[-1][0])
                    if not batch:
                        remaining = deadline - time.monotonic()
                        if self._stopping or remaining <= 0:
                            return
                        self._lock.wait(min(remaining, 0.25))
                        continue
                for t, o in batch:
                    yield {"type": t, "object": copy.deepcopy(o)}

        return stream()


def _normalise_secret(obj: Obj) -> None:
    data = obj.get("data") or {}
    for key, value in (obj.pop("stringData", None) or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    for key, value in list(data.items()):
        if value is None:
            data[key] = ""
            continue
        try:
            base64.b64decode(value, validate=True)
        except ValueError:
            raise ApiStatus(422, "Invalid", f"data[{key}]: illegal base64 data") from None
    obj["data"] = data
    obj.setdefault("type", "Opaque")


_PATH = re.compile(
    r"^/(?:api/(?P<cv>v1)|apis/(?P<g>[^/]+)/(?P<v>[^/]+))(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?/?$"
)


_GROUP_PATH = re.compile(r"^/apis/(?P<g>[^/]+)/?$")


def _discovery(path: str, groups: set[str]) -> Obj | None:
    """The APIGroup document for ``/apis/<group>`` when that group is served."""
    m = _GROUP_PATH.match(path)
    if not m or m.group("g") not in groups:
        return None
    group = m.group("g")
    versions = sorted({r.version for r in RESOURCES.values() if r.group == group}) or ["v1"]
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": entries,
        "preferredVersion": entries[0],
    }


def _route(path: str) -> tuple[str, str, str, str | None, str | None] | None:
    m = _PATH.match(path)
    if not m:
        return None
    group = m.group("g") or ""
    version = m.group("cv") or m.group("v")
    return group, version, m.group("plural"), m.group("ns"), m.group("name")


def _verb(method: str, route: Any, query: dict[str, str]) -> str:
    name = route[4] if route else None
    if method == "GET":
        if name:
            return "get"
        return "watch" if query.get("watch") in ("true", "1") else "list"
    return {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(
        method, method.lower()
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeKube

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.handshake_failed = False
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.do_handshake()
            except OSError:  # the client refused the certificate, or is gone
                self.handshake_failed = True

    def handle(self) -> None:
        if not self.handshake_failed:
            super().handle()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, payload, stream = self.server_fake.handle(self.command, self.path, self.headers, body)
        if stream is not None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for event in stream:
                    data = json.dumps(event).encode() + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            return
        data = json.dumps(payload if payload is not None else {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = _serve
    do_POST = _serve
    do_PUT = _serve
    do_PATCH = _serve
    do_DELETE = _serve
