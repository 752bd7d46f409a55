"""The rules of the 1.5 preflight, on plain objects as listed: what each one looks at, what breaks,
the fix, and the public statement (release note or upstream pull request) that says so.

Pure functions, no API: :mod:`app.cluster.preflight` lists the objects and hands them here. The
DGD and DCD rules read both API shapes (``v1alpha1``: ``spec.services`` map, ``componentType``,
``checkpoint``; ``v1beta1``: ``spec.components`` list, ``type``, ``experimental.checkpoint``), by the
object's own ``apiVersion``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from app.review.webhook_paths import WEBHOOK_ROUTES, WebhookRoute
from domain.constants import GROUP

JsonObj = dict[str, Any]

NOTES_1_5 = "https://docs.nvidia.com/dynamo/v1.5.0/reference/releases/deprecations.md"
#: The 1.5 change that removes DynamoCheckpoint (API, CRD, controller, webhooks) and makes
#: ``checkpointRef`` name a PodSnapshot.
SNAPSHOT_PR = "https://github.com/ai-dynamo/dynamo/pull/14076"

DGD, DCD, CHECKPOINT = "DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoCheckpoint"
MULTINODE_TYPES = ("worker", "prefill", "decode")
STANDBY_ENV = "DYN_SNAPSHOT_RESTORE_STANDBY"


@dataclass(frozen=True)
class Finding:
    """One thing that breaks on the upgrade, with its fix and the statement that says so."""

    kind: str
    name: str
    breaks: str
    fix: str
    source: str
    namespace: str = ""  # empty for cluster-scoped objects

    @property
    def subject(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def as_json(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "breaks": self.breaks,
            "fix": self.fix,
            "source": self.source,
        }


def _about(obj: JsonObj, kind: str, breaks: str, fix: str, source: str) -> Finding:
    meta = obj.get("metadata") or {}
    return Finding(kind, str(meta.get("name", "")), breaks, fix, source, str(meta.get("namespace", "")))


# --------------------------------------------------------------------------- components


@dataclass(frozen=True)
class Component:
    """One component of a DGD, or the one of a DCD, in either API shape."""

    name: str
    type: str
    spec: JsonObj
    checkpoint: JsonObj


def _is_alpha(obj: JsonObj) -> bool:
    return str(obj.get("apiVersion", "")).endswith("/v1alpha1")


def _component(name: str, spec: JsonObj, alpha: bool) -> Component:
    if alpha:
        return Component(name, str(spec.get("componentType") or ""), spec, spec.get("checkpoint") or {})
    checkpoint = (spec.get("experimental") or {}).get("checkpoint") or {}
    return Component(name, str(spec.get("type") or ""), spec, checkpoint)


def components(kind: str, obj: JsonObj) -> list[Component]:
    spec = obj.get("spec") or {}
    alpha = _is_alpha(obj)
    if kind == DCD:
        own = str(spec.get("serviceName") if alpha else spec.get("name") or "")
        return [_component(own or str((obj.get("metadata") or {}).get("name", "")), spec, alpha)]
    if alpha:
        services = spec.get("services") or {}
        return [_component(str(n), s, alpha) for n, s in services.items() if isinstance(s, dict)]
    return [
        _component(str(c.get("name", "")), c, alpha)
        for c in spec.get("components") or ()
        if isinstance(c, dict)
    ]


# --------------------------------------------------------------------------- object rules


def checkpoint_object(obj: JsonObj) -> list[Finding]:
    """Every DynamoCheckpoint: 1.5 removes the kind and its CRD."""
    return [
        _about(
            obj,
            CHECKPOINT,
            "the DynamoCheckpoint CRD is removed in 1.5; this checkpoint is not translated or restored",
            "capture a PodSnapshot instead and point checkpointRef at it",
            SNAPSHOT_PR,
        )
    ]


def checkpoint_users(kind: str, obj: JsonObj) -> list[Finding]:
    """Components restoring from a DynamoCheckpoint by ``checkpointRef``, or having the DGD manage one."""
    out: list[Finding] = []
    for c in components(kind, obj):
        ref = c.checkpoint.get("checkpointRef")
        if ref:
            out.append(
                _about(
                    obj,
                    kind,
                    f"component {c.name}: checkpointRef {ref} names a DynamoCheckpoint; "
                    "from 1.5 checkpointRef names a PodSnapshot",
                    "capture a PodSnapshot and set checkpointRef to its name",
                    SNAPSHOT_PR,
                )
            )
        elif c.checkpoint.get("enabled") is True:
            out.append(
                _about(
                    obj,
                    kind,
                    f"component {c.name}: checkpointing enabled; its DGD-managed "
                    "DynamoCheckpoint is not carried over (1.5 captures a PodSnapshot again)",
                    "expect a new capture after the upgrade, or disable checkpointing first",
                    SNAPSHOT_PR,
                )
            )
    return out


def epp_config(kind: str, obj: JsonObj) -> list[Finding]:
    """DGD components configuring the Go EPP (``eppConfig``), which 1.5 removes."""
    if kind != DGD:
        return []
    return [
        _about(
            obj,
            kind,
            f"component {c.name}: eppConfig configures the Go EPP, removed in 1.5",
            "remove eppConfig (see the note for the EPP that replaces it)",
            NOTES_1_5,
        )
        for c in components(kind, obj)
        if c.spec.get("eppConfig") is not None
    ]


def multinode_type(kind: str, obj: JsonObj) -> list[Finding]:
    """Components with ``multinode`` whose type is not worker, prefill or decode."""
    return [
        _about(
            obj,
            kind,
            f"component {c.name}: multinode on a component of type {c.type or '(none)'}; "
            f"1.5 admits multinode only on {', '.join(MULTINODE_TYPES)}",
            "remove multinode from this component",
            NOTES_1_5,
        )
        for c in components(kind, obj)
        if c.spec.get("multinode") is not None and c.type not in MULTINODE_TYPES
    ]


def _env_places(node: Any, path: str) -> Iterator[str]:
    """Paths of every env list entry named :data:`STANDBY_ENV` under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("env", "envs") and isinstance(value, list):
                yield from (
                    f"{path}.{key}" for e in value if isinstance(e, dict) and e.get("name") == STANDBY_ENV
                )
            else:
                yield from _env_places(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            label = item.get("name") if isinstance(item, dict) and isinstance(item.get("name"), str) else i
            yield from _env_places(item, f"{path}[{label}]")


def standby_env(kind: str, obj: JsonObj) -> list[Finding]:
    """Objects (pods, DGDs, DCDs) whose container env still sets ``DYN_SNAPSHOT_RESTORE_STANDBY``."""
    places = sorted(set(_env_places(obj.get("spec") or {}, "spec")))
    if not places:
        return []
    return [
        _about(
            obj,
            kind,
            f"{STANDBY_ENV} is set ({', '.join(places)}); 1.5 removes it",
            f"remove {STANDBY_ENV} from the env",
            NOTES_1_5,
        )
    ]


def dynamo_object(kind: str, obj: JsonObj) -> list[Finding]:
    """Every rule for one listed Dynamo object of ``kind``."""
    if kind == CHECKPOINT:
        return checkpoint_object(obj)
    if kind not in (DGD, DCD):
        return []
    return [
        *checkpoint_users(kind, obj),
        *epp_config(kind, obj),
        *multinode_type(kind, obj),
        *standby_env(kind, obj),
    ]


def pod(obj: JsonObj) -> list[Finding]:
    return standby_env("Pod", obj)


# --------------------------------------------------------------------------- webhook configurations


def _removed_routes() -> dict[str, WebhookRoute]:
    """The served admission paths 1.5 drops: DGD and DCD validation at v1alpha1 paths."""
    return {
        r.path: r
        for r in WEBHOOK_ROUTES
        if r.type != "convert" and "v1alpha1" in r.path and set(r.kinds) & {DGD, DCD}
    }


REMOVED_PATHS: dict[str, WebhookRoute] = _removed_routes()


def _replacement(route: WebhookRoute) -> str:
    beta = [
        r.path
        for r in WEBHOOK_ROUTES
        if r.type == route.type and r.kinds == route.kinds and f"{GROUP}/v1beta1" in str(r.expected_gvk)
    ]
    return f"point it at {beta[0]}" if beta else "point it at the kind's v1beta1 path"


def _hook_path(hook: JsonObj) -> str:
    client = hook.get("clientConfig") or {}
    if client.get("service"):
        return str(client["service"].get("path") or "")
    return urlparse(str(client.get("url") or "")).path


def webhook_configuration(kind: str, obj: JsonObj) -> list[Finding]:
    """Webhooks of a Mutating/ValidatingWebhookConfiguration calling a path 1.5 no longer serves."""
    out: list[Finding] = []
    for hook in obj.get("webhooks") or ():
        route = REMOVED_PATHS.get(_hook_path(hook))
        if route is not None:
            out.append(
                _about(
                    obj,
                    kind,
                    f"webhook {hook.get('name', '')} calls {route.path}, which 1.5 no longer serves",
                    _replacement(route),
                    NOTES_1_5,
                )
            )
    return out


def stored_alpha(name: str, stored_versions: Sequence[str]) -> list[Finding]:
    """A CRD whose status.storedVersions still lists v1alpha1: 1.5 stores v1beta1 only."""
    if "v1alpha1" not in stored_versions:
        return []
    return [
        Finding(
            "CustomResourceDefinition",
            name,
            "status.storedVersions still lists v1alpha1; 1.5 promotes storage to v1beta1",
            "dynamo-webhook storage-migrate",
            NOTES_1_5,
        )
    ]
