"""The admission webhooks as the API server calls them for a create: which of deploy/'s webhooks
match a kind and version (``matchPolicy: Equivalent`` takes every version, converting the object to
the webhook's first; ``Exact`` only its own), the AdmissionReview it sends (``requestKind`` naming
the version the client wrote), and the Status it answers a client with when a webhook denies.

The webhooks themselves are the caller's :class:`Service`: its admission handlers (path and
AdmissionReview in, the review's ``response`` out) and its conversion webhook, so that this package
runs the service's own code without importing :mod:`app`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Protocol

import kinds
from apiserver.crds import GROUP
from kinds.registry import WebhookPath

JSONObject = dict[str, Any]


class Service(Protocol):
    """The service's webhooks as the API server calls them."""

    def admit(self, path: str, review: JSONObject, /) -> JSONObject:
        """The ``response`` of the AdmissionReview ``review`` sent to ``path``."""
        ...

    def convert(self, obj: JSONObject, api_version: str, /) -> JSONObject:
        """``obj`` converted by the conversion webhook; raises with the failure's message."""
        ...


@dataclass(frozen=True, slots=True)
class Hook:
    """A registered webhook that a create of one kind and version meets."""

    name: str
    path: str
    version: str


def hooks(kind: str, version: str, webhook_type: str) -> list[Hook]:
    """deploy/'s webhooks of ``webhook_type`` (``mutate``/``validate``) a create of ``kind`` in
    ``version`` is sent to, in registration order."""
    spec = kinds.REGISTRY.get(GROUP, kind)
    if spec is None:
        return []
    out = []
    for path in spec.webhooks:
        if path.type == webhook_type and path.name and _matches(path, version):
            out.append(Hook(path.name, path.path, path.version))
    return out


def _matches(path: WebhookPath, version: str) -> bool:
    return path.version == version or not path.exact


def review(obj: JSONObject, hook: Hook, request_version: str, plural: str) -> JSONObject:
    """The AdmissionReview the API server sends ``hook`` for a create of ``obj`` (already in the
    hook's version), written by the client in ``request_version``."""
    kind = str(obj.get("kind", ""))
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": GROUP, "version": hook.version, "kind": kind},
            "resource": {"group": GROUP, "version": hook.version, "resource": plural},
            "requestKind": {"group": GROUP, "version": request_version, "kind": kind},
            "requestResource": {"group": GROUP, "version": request_version, "resource": plural},
            "name": str(meta.get("name", "")),
            "namespace": str(meta.get("namespace", "")),
            "operation": "CREATE",
            "userInfo": {
                "username": "kubernetes-admin",
                "groups": ["system:masters", "system:authenticated"],
            },
            "object": obj,
            "oldObject": None,
            "dryRun": True,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    }


def denial_status(hook_name: str, response: JSONObject) -> JSONObject:
    """``webhookerrors.ToStatusErr``: the webhook's Status with its name before the message, a code
    of at least 400 and status Failure."""
    result = dict(response.get("status") or {})
    denied_by = f'admission webhook "{hook_name}" denied the request'
    code = int(result.get("code") or 0)
    result["code"] = code if code >= 400 else 400
    result["status"] = "Failure"
    if result.get("message"):
        result["message"] = f"{denied_by}: {result['message']}"
    elif result.get("reason"):
        result["message"] = f"{denied_by}: {result['reason']}"
    else:
        result["message"] = f"{denied_by} without explanation"
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, **result}
