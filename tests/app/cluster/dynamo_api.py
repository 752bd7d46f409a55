"""An in-memory stand-in for the few API calls the cluster tools make (``audit``, ``storage-migrate``):
the Dynamo CRDs, objects of any kind with paginated LIST (``limit``/``continue``,
``remainingItemCount``), status PUTs with resourceVersion conflicts, CRD status merge patches with a
resourceVersion precondition, namespace-scope Leases, and hooks to inject failures or concurrent
changes. Objects are kept in one version (the one they are created in): the tools under test ask for
the storage version, which is what these tests create them in."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.cluster.inventory import KINDS
from certs.kube import ApiError, Kube

Obj = dict[str, Any]


def crd(
    plural: str,
    storage: str = "v1beta1",
    stored: tuple[str, ...] = ("v1beta1",),
    served: tuple[str, ...] = ("v1alpha1", "v1beta1"),
    status_subresource: bool = True,
) -> Obj:
    return {
        "metadata": {
            "name": f"{plural}.nvidia.com",
            "uid": f"uid-{plural}",
            "generation": 1,
            "resourceVersion": "1",
        },
        "spec": {
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": v == storage,
                    **({"subresources": {"status": {}}} if status_subresource else {}),
                }
                for v in served
            ]
        },
        "status": {"storedVersions": list(stored)},
    }


@dataclass
class Call:
    method: str
    path: str
    query: list[tuple[str, str]]
    body: Any


@dataclass
class FakeApi:
    crds: dict[str, Obj] = field(default_factory=dict)  # by plural
    objects: dict[tuple[str, str, str], Obj] = field(default_factory=dict)  # (plural, namespace, name)
    leases: list[Obj] = field(default_factory=list)
    #: Other collections by resource (pods, mutatingwebhookconfigurations, ...), listed in one page.
    others: dict[str, list[Obj]] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    #: Called before a request is handled; may raise ApiError or change the state.
    before: Callable[[Call], None] | None = None
    revision: int = 100
    _lock: threading.RLock = field(default_factory=threading.RLock)

    # --- setup
    def add_crd(self, plural: str, **kwargs: Any) -> Obj:
        self.crds[plural] = crd(plural, **kwargs)
        return self.crds[plural]

    def add(self, plural: str, obj: Obj) -> Obj:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("namespace", "default")
        meta.setdefault("uid", f"uid-{meta['namespace']}-{meta['name']}")
        self.revision += 1
        meta["resourceVersion"] = str(self.revision)
        self.objects[(plural, meta["namespace"], meta["name"])] = obj
        return obj

    def bump(self, plural: str, namespace: str, name: str) -> None:
        """Another client writes the object."""
        self.revision += 1
        self.objects[(plural, namespace, name)]["metadata"]["resourceVersion"] = str(self.revision)

    # --- the Kube interface the tools use
    # The real client's get (None on 404) and list, on top of this request().
    get = Kube.get
    list = Kube.list

    def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> Obj:
        with self._lock:  # the tools call from several threads (list prefetch, rewrite workers)
            call = Call(method, path, list(query or []), copy.deepcopy(body))
            self.calls.append(call)
            if self.before is not None:
                self.before(call)
            return self._handle(call)

    def _handle(self, call: Call) -> Obj:
        parts = call.path.strip("/").split("/")
        if call.path.startswith("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"):
            plural = parts[4].split(".")[0]
            found = self.crds.get(plural)
            if found is None:
                raise ApiError(404, "NotFound")
            if call.method == "GET":
                return copy.deepcopy(found)
            assert call.method == "PATCH" and parts[-1] == "status", call
            if call.body["metadata"]["resourceVersion"] != found["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict")
            found["status"].update(call.body["status"])
            found["metadata"]["resourceVersion"] = str(int(found["metadata"]["resourceVersion"]) + 1)
            return copy.deepcopy(found)
        if call.path == "/apis/coordination.k8s.io/v1/leases":
            return {"items": copy.deepcopy(self.leases)}
        if call.path.startswith("/apis/nvidia.com/"):
            return self._dynamo(call, parts[3:])
        if parts[-1] in self.others and call.method == "GET":
            namespace = parts[parts.index("namespaces") + 1] if "namespaces" in parts else None
            return {
                "metadata": {},
                "items": [
                    copy.deepcopy(o)
                    for o in self.others[parts[-1]]
                    if namespace in (None, o["metadata"].get("namespace"))
                ],
            }
        raise ApiError(404, "NotFound", call.path)

    def _dynamo(self, call: Call, rest: list[str]) -> Obj:
        namespace = None
        if rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        plural = rest[0]
        if plural not in self.crds:
            raise ApiError(404, "NotFound")
        if len(rest) == 1:
            return self._list(call, plural, namespace)
        key = (plural, namespace or "", rest[1])
        current = self.objects.get(key)
        if current is None:
            raise ApiError(404, "NotFound")
        if call.method == "GET":
            return copy.deepcopy(current)
        assert call.method == "PUT" and rest[2:] == ["status"], call
        if call.body["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict")
        self.revision += 1
        current["metadata"]["resourceVersion"] = str(self.revision)
        current["status"] = copy.deepcopy(call.body.get("status"))
        return copy.deepcopy(current)

    def _list(self, call: Call, plural: str, namespace: str | None) -> Obj:
        query = dict(call.query)
        items = [
            o for (p, ns, _), o in sorted(self.objects.items()) if p == plural and namespace in (None, ns)
        ]
        start = int(query.get("continue") or 0)
        limit = int(query.get("limit") or len(items) or 1)
        page = items[start : start + limit]
        meta: Obj = {"resourceVersion": str(self.revision)}
        if start + limit < len(items):
            meta["continue"] = str(start + limit)
            meta["remainingItemCount"] = len(items) - start - limit
        kind = next(k.kind for k in KINDS if k.plural == plural)
        version = next(v["name"] for v in self.crds[plural]["spec"]["versions"] if v["storage"])
        return {
            "metadata": meta,
            "items": [
                {"apiVersion": f"nvidia.com/{version}", "kind": kind, **copy.deepcopy(o)} for o in page
            ],
        }

    def writes(self) -> list[Call]:
        return [c for c in self.calls if c.method not in ("GET",)]
