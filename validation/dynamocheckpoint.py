"""DynamoCheckpoint validation (v1alpha1, gated by Checkpoint): upstream ``validateDynamoCheckpoint``
with ``validateDynamoCheckpointSpec`` and ``validateDynamoCheckpointJobConfig``
(deploy/operator/internal/webhook/validation/dynamocheckpoint.go).

The Checkpoint gate is off by default, so every CREATE and every non-terminating UPDATE is
denied by default. UPDATE re-runs the create rules on the new object; identity
immutability is a CRD CEL rule, not a webhook rule.

Intra-pod GMS wiring (GMS enabled, mode empty or ``intraPod``) is checked on
``spec.job.podTemplateSpec.spec`` in this order: extra client containers exist, the shared
volume, the GMS init sidecar (and its three client checks), every client container in
container order (the target container plus the extra clients), the pod resource claim,
then the target container. A mode other than ``intraPod``/``interPod`` is not checked.
"""

from __future__ import annotations

from typing import Any, Final

from domain.admission import AdmissionContext, AdmissionInput, Decision, JSONObject
from domain.constants import KIND_CHECKPOINT, MAIN_CONTAINER
from gocompat.fielderrors import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    to_decision,
)
from validation.objects import name_of

__all__ = ["KIND_CHECKPOINT", "spec_errors", "validate"]

GMS_MODE_INTRA_POD: Final = "intraPod"
GMS_MODE_INTER_POD: Final = "interPod"
GMS_SHARED_VOLUME: Final = "gms-intrapod-control"
GMS_SHARED_MOUNT_PATH: Final = "/gms-intrapod-control"
GMS_ENV_SOCKET_DIR: Final = "GMS_SOCKET_DIR"
GMS_SERVER_CONTAINER: Final = "gms-server"
GMS_CLAIM_NAME: Final = "intrapod-shared-gpu"

_SPEC: Final = Path("spec")


def _obj(value: Any) -> JSONObject | None:
    return value if isinstance(value, dict) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _items(value: Any) -> list[JSONObject]:
    """A list of Go structs: null entries decode to zero values (empty objects)."""
    return [v if isinstance(v, dict) else {} for v in _list(value)]


def _index_by_name(items: list[JSONObject], name: str) -> int:
    for i, item in enumerate(items):
        if _str(item.get("name")) == name:
            return i
    return -1


def _has(items: list[JSONObject], **fields: str) -> bool:
    return any(all(_str(item.get(k)) == v for k, v in fields.items()) for item in items)


def _client_errors(container: JSONObject, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not _has(_items(container.get("env")), name=GMS_ENV_SOCKET_DIR, value=GMS_SHARED_MOUNT_PATH):
        errs.append(
            required(path.child("env"), f"must contain {GMS_ENV_SOCKET_DIR}={GMS_SHARED_MOUNT_PATH} for GMS")
        )
    resources = _obj(container.get("resources")) or {}
    if not _has(_items(resources.get("claims")), name=GMS_CLAIM_NAME):
        errs.append(
            required(
                path.child("resources", "claims"), f'must contain the GMS resource claim "{GMS_CLAIM_NAME}"'
            )
        )
    if not _has(
        _items(container.get("volumeMounts")), name=GMS_SHARED_VOLUME, mountPath=GMS_SHARED_MOUNT_PATH
    ):
        errs.append(
            required(
                path.child("volumeMounts"),
                f'must mount volume "{GMS_SHARED_VOLUME}" at "{GMS_SHARED_MOUNT_PATH}" for GMS',
            )
        )
    return errs


def _job_errors(job: JSONObject, gms: JSONObject) -> list[FieldError]:
    errs: list[FieldError] = []
    job_path = _SPEC.child("job")
    pod_path = job_path.child("podTemplateSpec", "spec")
    template = _obj(job.get("podTemplateSpec")) or {}
    pod = _obj(template.get("spec")) or {}
    containers = _items(pod.get("containers"))
    init_containers = _items(pod.get("initContainers"))

    if not _has(_items(pod.get("volumes")), name=GMS_SHARED_VOLUME):
        errs.append(
            required(pod_path.child("volumes"), f'must contain the GMS shared volume "{GMS_SHARED_VOLUME}"')
        )

    server = _index_by_name(init_containers, GMS_SERVER_CONTAINER)
    if server < 0:
        errs.append(
            required(
                pod_path.child("initContainers"),
                f'must contain the GMS init sidecar "{GMS_SERVER_CONTAINER}"',
            )
        )
    else:
        errs += _client_errors(init_containers[server], pod_path.child("initContainers").index(server))

    explicit_target = _str(job.get("targetContainerName"))
    target = explicit_target or MAIN_CONTAINER
    clients = {target, *(_str(n) for n in _list(gms.get("extraClientContainers")))}
    for i, container in enumerate(containers):
        if _str(container.get("name")) in clients:
            errs += _client_errors(container, pod_path.child("containers").index(i))

    if not _has(_items(pod.get("resourceClaims")), name=GMS_CLAIM_NAME):
        errs.append(
            required(
                pod_path.child("resourceClaims"),
                f'must contain the GMS pod resource claim "{GMS_CLAIM_NAME}"',
            )
        )

    if _index_by_name(containers, target) < 0:
        if not explicit_target:
            errs.append(
                required(
                    pod_path.child("containers"), f'must contain the default target container "{target}"'
                )
            )
        else:
            errs.append(
                invalid(
                    job_path.child("targetContainerName"),
                    explicit_target,
                    "does not name a container in podTemplateSpec.spec.containers",
                )
            )
    return errs


def spec_errors(spec: JSONObject, checkpoint_gate: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if not checkpoint_gate:
        errs.append(forbidden(_SPEC, "checkpoint functionality is disabled in the operator configuration"))
    gms = _obj(spec.get("gpuMemoryService"))
    if gms is None or gms.get("enabled") is not True:
        return errs
    gms_path = _SPEC.child("gpuMemoryService")
    mode = _str(gms.get("mode"))
    job = _obj(spec.get("job")) or {}
    if mode in ("", GMS_MODE_INTRA_POD):
        template = _obj(job.get("podTemplateSpec")) or {}
        containers = _items((_obj(template.get("spec")) or {}).get("containers"))
        for i, name in enumerate(_list(gms.get("extraClientContainers"))):
            if _index_by_name(containers, _str(name)) < 0:
                errs.append(
                    invalid(
                        gms_path.child("extraClientContainers").index(i),
                        _str(name),
                        "does not name a container in spec.job.podTemplateSpec.spec.containers",
                    )
                )
        errs += _job_errors(job, gms)
    elif mode == GMS_MODE_INTER_POD:
        # The mode is a named string type: its value renders through encoding/json.
        errs.append(not_supported(gms_path.child("mode"), GoJSON(mode), [GMS_MODE_INTRA_POD]))
    return errs


def validate(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
    """Validate one DynamoCheckpoint CREATE or UPDATE (other operations are allowed without checks)."""
    obj = inp.object
    if inp.operation not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
        return Decision.allow()
    if inp.operation == "UPDATE":
        meta = _obj(obj.get("metadata"))
        if meta is not None and meta.get("deletionTimestamp"):
            return Decision.allow()
    spec = _obj(obj.get("spec")) or {}
    return to_decision(KIND_CHECKPOINT, name_of(obj), spec_errors(spec, ctx.settings.checkpoint))
