"""The rules of the 1.5 preflight, on plain objects as listed: what each one looks at, what breaks,
the fix, and the public statement (release note or upstream pull request) that says so.

Pure functions, no API: :mod:`app.cluster.preflight` lists the objects and hands them here. The
DGD and DCD rules read both API shapes (``v1alpha1``: ``spec.services`` map, ``componentType``,
``checkpoint``; ``v1beta1``: ``spec.components`` list, ``type``, ``experimental.checkpoint``), by the
object's own ``apiVersion``. Two of them are the service's own admission rules run on the listed
object (:mod:`validation.runtime_version` for the runtime version, ``elastic_ep_errors`` of
:mod:`validation.dgd_components` for Elastic EP), so the preflight and admission cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from app.review.webhook_paths import WEBHOOK_ROUTES, WebhookRoute
from conversion import ConversionError
from conversion import dcd as dcd_conversion
from conversion import dgd as dgd_conversion
from domain.constants import GROUP
from gocompat.fielderrors import FieldError, Path
from validation import runtime_version
from validation.alpha import to_hub
from validation.compat_view import FullService
from validation.dgd_components import elastic_ep_errors
from validation.objects import string

JsonObj = dict[str, Any]

NOTES_1_5 = "https://docs.nvidia.com/dynamo/v1.5.0/reference/releases/deprecations.md"
#: The 1.5 change that removes DynamoCheckpoint (API, CRD, controller, webhooks) and makes
#: ``checkpointRef`` name a PodSnapshot.
SNAPSHOT_PR = "https://github.com/ai-dynamo/dynamo/pull/14076"
#: The operator changes that added the two admission rules reused here (both in the pinned commit's
#: validation): ``runtimeVersionOverride`` required beside an image tag that is not a version, and an
#: explicit command for an Elastic-EP vLLM component.
RUNTIME_VERSION_PR = "https://github.com/ai-dynamo/dynamo/pull/10494"
ELASTIC_EP_PR = "https://github.com/ai-dynamo/dynamo/pull/12943"

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


def _override_errors(obj: JsonObj) -> Iterator[tuple[str, str, list[FieldError]]]:
    """(component, main image, the runtime-version errors of a DGD create) per DGD component, by the
    object's shape: the v1alpha1 rule on ``spec.services[<n>]``, the v1beta1 one on
    ``spec.components[i]``, each with the override a DGD requires (``allow_missing_override`` off)."""
    spec = obj.get("spec") or {}
    if _is_alpha(obj):
        for name, service in (spec.get("services") or {}).items():
            if isinstance(service, dict):
                view = FullService(service)
                image, path = view.main_image(), Path("spec", "services").key(str(name))
                override = view.runtime_version_override()
                errors = runtime_version.alpha_create(image, override, path, allow_missing_override=False)
                yield str(name), image, errors
        return
    for i, comp in enumerate(spec.get("components") or ()):
        if isinstance(comp, dict):
            path = Path("spec", "components").index(i)
            image, _ = runtime_version.hub_image_and_path(comp, path)
            errors = runtime_version.hub_create(comp, path, allow_missing_override=False)
            yield str(comp.get("name", "")), image, errors


def runtime_version_override(kind: str, obj: JsonObj) -> list[Finding]:
    """DGD components whose main image tag is not a semantic version and that set no
    ``runtimeVersionOverride``; a standalone DCD never requires it. Of the rule's errors only the
    override's count here (a missing image is another matter, refused on its own)."""
    found: list[Finding] = []
    for name, image, errors in _override_errors(obj) if kind == DGD else ():
        for field in (e.field for e in errors if e.field.endswith(".runtimeVersionOverride")):
            breaks = (
                f"component {name}: image {image} has no semantic-version tag and {field} is not set; "
                "admission refuses any change of the image or the override, and a re-creation, until it is"
            )
            fix = f"set {field} to the version of the runtime in the image (MAJOR.MINOR.PATCH)"
            found.append(_about(obj, kind, breaks, fix, RUNTIME_VERSION_PR))
    return found


def _hub(kind: str, obj: JsonObj) -> JsonObj | None:
    """``obj`` in the hub version, converted as admission converts a v1alpha1 request (None when it
    cannot be: admission refuses such an object anyway, which plain ``audit`` reports)."""
    if not _is_alpha(obj):
        return obj
    converter = dgd_conversion.CONVERTER if kind == DGD else dcd_conversion.CONVERTER
    try:
        return to_hub({**obj, "kind": kind}, converter)
    except ConversionError:
        return None


def elastic_ep_command(kind: str, obj: JsonObj) -> list[Finding]:
    """vLLM components asking for Elastic EP with Ray and no explicit main-container command (the
    DGD's ``backendFramework``, or a DCD's own)."""
    hub = _hub(kind, obj)
    if hub is None:
        return []
    spec = hub.get("spec") or {}
    backend = string(spec, "backendFramework")
    if kind == DCD:
        targets = [(components(kind, obj)[0].name, spec, Path("spec"))]
    else:
        comps = [(i, c) for i, c in enumerate(spec.get("components") or ()) if isinstance(c, dict)]
        targets = [(str(c.get("name", "")), c, Path("spec", "components").index(i)) for i, c in comps]
    field = (
        "extraPodSpec.mainContainer.command"
        if _is_alpha(obj)
        else "podTemplate.spec.containers[main].command"
    )
    return [
        _about(
            obj,
            kind,
            f"component {name}: vLLM Elastic EP with Ray (--enable-elastic-ep, --data-parallel-backend ray) "
            "without a container command; admission refuses every create and update of it, as the "
            "operator cannot start the Ray head from the image ENTRYPOINT",
            f"set {field} of this component (the executable its args are passed to)",
            ELASTIC_EP_PR,
        )
        for name, comp, path in targets
        if elastic_ep_errors(backend, comp, path)
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
        *runtime_version_override(kind, obj),
        *elastic_ep_command(kind, obj),
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
