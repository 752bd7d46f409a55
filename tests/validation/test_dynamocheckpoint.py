"""DynamoCheckpoint validation: the Checkpoint gate and the intra-pod GMS wiring checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.admission import AdmissionContext, AdmissionSettings, Decision, Operation
from tests.admission_helpers import make_input
from tests.defaulting.shapes import CHECKPOINT_SPEC, members
from validation import dynamocheckpoint

API = "nvidia.com/v1alpha1"
KIND = "DynamoCheckpoint"
PREFIX = 'DynamoCheckpoint.nvidia.com "ckpt" is invalid: '
GATE = "spec: Forbidden: checkpoint functionality is disabled in the operator configuration"
POD = "spec.job.podTemplateSpec.spec"
ON = AdmissionSettings(checkpoint=True)

MOUNT = {"name": "gms-intrapod-control", "mountPath": "/gms-intrapod-control"}
ENV = {"name": "GMS_SOCKET_DIR", "value": "/gms-intrapod-control"}
CLAIM = {"name": "intrapod-shared-gpu"}


def client(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": "img",
        "env": [ENV],
        "resources": {"claims": [CLAIM]},
        "volumeMounts": [MOUNT],
    }


def wired_spec(**gms: Any) -> dict[str, Any]:
    """A fully wired intra-pod GMS checkpoint."""
    return {
        "identity": {"model": "m", "backendFramework": "vllm"},
        "gpuMemoryService": {"enabled": True, **gms},
        "job": {
            "podTemplateSpec": {
                "spec": {
                    "volumes": [{"name": "gms-intrapod-control", "emptyDir": {}}],
                    "initContainers": [client("gms-server")],
                    "containers": [client("main")],
                    "resourceClaims": [CLAIM],
                }
            }
        },
    }


def ckpt(spec: dict[str, Any], deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "ckpt", "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": API, "kind": KIND, "metadata": meta, "spec": spec}


def run(
    operation: Operation,
    new: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
    settings: AdmissionSettings = ON,
) -> Decision:
    return dynamocheckpoint.validate(make_input(API, KIND, operation, new, old), AdmissionContext(settings))


def expected(errors: list[str]) -> str:
    return PREFIX + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def test_gate_off_denies_every_create_and_update() -> None:
    plain = ckpt({"identity": {"model": "m", "backendFramework": "vllm"}, "job": {}})
    for op, old in (("CREATE", None), ("UPDATE", plain)):
        d = run(op, plain, old, AdmissionSettings())  # type: ignore[arg-type]
        assert not d.allowed and d.message == expected([GATE]) and d.code == 422


def test_gate_off_error_comes_first() -> None:
    spec = wired_spec(mode="interPod")
    d = run("CREATE", ckpt(spec), settings=AdmissionSettings())
    assert d.message == expected(
        [GATE, 'spec.gpuMemoryService.mode: Unsupported value: "interPod": supported values: "intraPod"']
    )


def test_gate_on_accepts_plain_and_wired_checkpoints() -> None:
    assert run("CREATE", ckpt({"identity": {"model": "m"}, "job": {}})).allowed
    assert run("CREATE", ckpt(wired_spec())).allowed
    assert run("CREATE", ckpt(wired_spec(mode="intraPod"))).allowed


def test_disabled_gms_is_not_checked() -> None:
    spec = {"gpuMemoryService": {"enabled": False, "mode": "interPod"}, "job": {}}
    assert run("CREATE", ckpt(spec)).allowed


def test_unknown_mode_is_not_checked() -> None:
    assert run("CREATE", ckpt({"gpuMemoryService": {"enabled": True, "mode": "other"}, "job": {}})).allowed


def test_inter_pod_mode_is_unsupported() -> None:
    d = run("CREATE", ckpt({"gpuMemoryService": {"enabled": True, "mode": "interPod"}, "job": {}}))
    assert d.message == expected(
        ['spec.gpuMemoryService.mode: Unsupported value: "interPod": supported values: "intraPod"']
    )
    assert d.status["details"]["causes"][0]["reason"] == "FieldValueNotSupported"


def test_unwired_intra_pod_gms_reports_every_missing_piece_in_order() -> None:
    spec = {
        "gpuMemoryService": {"enabled": True},
        "job": {"podTemplateSpec": {"spec": {"containers": [{"name": "main"}]}}},
    }
    d = run("CREATE", ckpt(spec))
    assert d.message == expected(
        [
            f'{POD}.volumes: Required value: must contain the GMS shared volume "gms-intrapod-control"',
            f'{POD}.initContainers: Required value: must contain the GMS init sidecar "gms-server"',
            f"{POD}.containers[0].env: Required value: must contain GMS_SOCKET_DIR=/gms-intrapod-control for GMS",
            f'{POD}.containers[0].resources.claims: Required value: must contain the GMS resource claim "intrapod-shared-gpu"',
            f'{POD}.containers[0].volumeMounts: Required value: must mount volume "gms-intrapod-control" at "/gms-intrapod-control" for GMS',
            f'{POD}.resourceClaims: Required value: must contain the GMS pod resource claim "intrapod-shared-gpu"',
        ]
    )


def _break(spec: dict[str, Any], where: str) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    pod = spec["job"]["podTemplateSpec"]["spec"]
    if where == "server env value":
        pod["initContainers"][0]["env"] = [{"name": "GMS_SOCKET_DIR", "value": "/other"}]
    elif where == "server mount path":
        pod["initContainers"][0]["volumeMounts"] = [{"name": "gms-intrapod-control", "mountPath": "/x"}]
    elif where == "main claims":
        pod["containers"][0]["resources"] = {}
    return spec


@pytest.mark.parametrize(
    ("where", "error"),
    [
        (
            "server env value",
            f"{POD}.initContainers[0].env: Required value: must contain GMS_SOCKET_DIR=/gms-intrapod-control for GMS",
        ),
        (
            "server mount path",
            f'{POD}.initContainers[0].volumeMounts: Required value: must mount volume "gms-intrapod-control" at "/gms-intrapod-control" for GMS',
        ),
        (
            "main claims",
            f'{POD}.containers[0].resources.claims: Required value: must contain the GMS resource claim "intrapod-shared-gpu"',
        ),
    ],
)
def test_single_wiring_defects(where: str, error: str) -> None:
    assert run("CREATE", ckpt(_break(wired_spec(), where))).message == expected([error])


def test_extra_clients_and_target_container() -> None:
    spec = wired_spec(extraClientContainers=["helper", "ghost"])
    pod = spec["job"]["podTemplateSpec"]["spec"]
    pod["containers"] = [{"name": "helper"}, client("engine")]
    spec["job"]["targetContainerName"] = "engine"
    d = run("CREATE", ckpt(spec))
    assert d.message == expected(
        [
            'spec.gpuMemoryService.extraClientContainers[1]: Invalid value: "ghost": does not name a container in spec.job.podTemplateSpec.spec.containers',
            f"{POD}.containers[0].env: Required value: must contain GMS_SOCKET_DIR=/gms-intrapod-control for GMS",
            f'{POD}.containers[0].resources.claims: Required value: must contain the GMS resource claim "intrapod-shared-gpu"',
            f'{POD}.containers[0].volumeMounts: Required value: must mount volume "gms-intrapod-control" at "/gms-intrapod-control" for GMS',
        ]
    )


def test_missing_default_target() -> None:
    spec = wired_spec()
    spec["job"]["podTemplateSpec"]["spec"]["containers"] = [client("engine")]
    assert run("CREATE", ckpt(spec)).message == expected(
        [f'{POD}.containers: Required value: must contain the default target container "main"']
    )


def test_missing_explicit_target() -> None:
    spec = wired_spec()
    spec["job"]["targetContainerName"] = "engine"
    assert run("CREATE", ckpt(spec)).message == expected(
        [
            'spec.job.targetContainerName: Invalid value: "engine": does not name a container in podTemplateSpec.spec.containers'
        ]
    )


def test_update_reruns_create_rules_and_terminating_is_skipped() -> None:
    bad = ckpt({"gpuMemoryService": {"enabled": True, "mode": "interPod"}, "job": {}})
    assert not run("UPDATE", bad, bad).allowed
    dying = ckpt({"gpuMemoryService": {"enabled": True, "mode": "interPod"}, "job": {}}, deleting=True)
    d = run("UPDATE", dying, bad, AdmissionSettings())
    assert d.allowed and d.warnings == []
    assert run("DELETE", None, bad, AdmissionSettings()).allowed


@given(members(CHECKPOINT_SPEC), st.sampled_from(["CREATE", "UPDATE"]), st.booleans())
def test_any_shape_is_answered(spec: dict[str, Any], operation: Operation, gate: bool) -> None:
    new = ckpt(spec)
    d = run(operation, new, new if operation == "UPDATE" else None, AdmissionSettings(checkpoint=gate))
    assert d.allowed or (d.code == 422 and d.message.startswith(PREFIX))
    assert d.allowed is False or gate
