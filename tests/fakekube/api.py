"""What the fake API server (:mod:`tests.fakekube.server`) serves and answers with: the resources it
knows, a record of each call, injectable faults, Kubernetes ``Status`` errors, JSON merge patch and
label and field selectors as the API server reads them.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


RESOURCES: dict[tuple[str, str], Resource] = {
    (r.group, r.plural): r
    for r in (
        Resource("", "v1", "secrets", "Secret", True),
        Resource("coordination.k8s.io", "v1", "leases", "Lease", True),
        Resource(
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            False,
        ),
        Resource(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            False,
        ),
        Resource(
            "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False
        ),
        Resource("grove.io", "v1alpha1", "clustertopologybindings", "ClusterTopologyBinding", False),
    )
}


@dataclass(frozen=True)
class Call:
    """One request: ``verb`` is get/list/watch/create/update/patch/delete (Kubernetes RBAC verbs)."""

    verb: str
    method: str
    path: str
    group: str
    resource: str
    namespace: str | None
    name: str | None
    query: str
    status: int

    @property
    def is_write(self) -> bool:
        return self.verb in {"create", "update", "patch", "delete"}


@dataclass
class Faults:
    """Failure injection applied before a request is handled.

    ``error_rate``: probability of answering ``error_status`` (default 500) without effect.
    ``after_rate``: probability of applying a write and then answering 500 (a lost response).
    ``delay``: seconds to sleep before handling. ``verbs``: restrict faults to these verbs (None = all).
    ``fail_next``: answer the next N matching requests with ``error_status`` regardless of the rate.
    """

    error_rate: float = 0.0
    after_rate: float = 0.0
    error_status: int = 500
    delay: float = 0.0
    verbs: set[str] | None = None
    fail_next: int = 0
    match: Callable[[str, str], bool] | None = None
    seed: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def applies(self, verb: str, path: str) -> bool:
        if self.verbs is not None and verb not in self.verbs:
            return False
        return self.match is None or self.match(verb, path)


class ApiStatus(Exception):
    def __init__(self, code: int, reason: str, message: str, name: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.name = name
        self.kind = kind

    def body(self) -> Obj:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "details": {"name": self.name, "kind": self.kind},
            "code": self.code,
        }


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


_SEL_SET = re.compile(r"^\s*([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def _split_selector(sel: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in sel:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def matches_labels(labels: dict[str, str], selector: str) -> bool:
    for term in _split_selector(selector):
        m = _SEL_SET.match(term)
        if m:
            key, op, values = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
            present = key in labels and labels[key] in values
            if (op == "in") != present:
                return False
        elif "!=" in term:
            key, value = (s.strip() for s in term.split("!=", 1))
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = (s.strip() for s in term.replace("==", "=").split("=", 1))
            if labels.get(key) != value:
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif term not in labels:
            return False
    return True


def matches_fields(obj: Obj, selector: str) -> bool:
    meta = obj.get("metadata", {})
    values = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
    for term in _split_selector(selector):
        negate = "!=" in term
        key, value = (s.strip() for s in term.replace("!=", "=").replace("==", "=").split("=", 1))
        if key not in values:
            raise ApiStatus(400, "BadRequest", f'field label not supported: "{key}"')
        if (values[key] == value) == negate:
            return False
    return True
