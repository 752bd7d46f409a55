"""The Pod checkpoint-restore mutator: every early exit, never a patch."""

from __future__ import annotations

from typing import Any

import pytest

from defaulting import pod
from domain.admission import AdmissionContext, AdmissionSettings, Operation
from tests.admission_helpers import make_input

CANDIDATE_LABELS = {
    "nvidia.com/dynamo-component": "worker",
    "nvidia.com/dynamo-namespace": "ns-g",
    "nvidia.com/selector": "g-worker",
}
CANDIDATE_ANNOTATIONS = {
    "nvidia.com/dynamo-checkpoint-restore-candidate": "true",
    "nvidia.com/dynamo-checkpoint-name": "ckpt",
}
ON = AdmissionSettings(checkpoint=True, cluster_lookups=True)


def a_pod(labels: dict[str, Any] | None = None, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "namespace": "team"}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "main"}]}}


def decide(
    obj: dict[str, Any],
    settings: AdmissionSettings = ON,
    operation: Operation = "CREATE",
    excluded: bool = False,
) -> str:
    ctx = AdmissionContext(settings, namespace_excluded=lambda ns: excluded and ns == "team")
    d = pod.mutate(make_input("v1", "Pod", operation, obj, obj if operation == "UPDATE" else None), ctx)
    assert d.allowed and d.patched is None and d.warnings == []
    assert d.code == 200
    return d.message


def test_candidate_without_a_readable_checkpoint() -> None:
    assert decide(a_pod(CANDIDATE_LABELS, CANDIDATE_ANNOTATIONS)) == "checkpoint not available"


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"operation": "UPDATE"}, "not a pod create"),
        ({"operation": "DELETE"}, "not a pod create"),
        ({"settings": AdmissionSettings()}, "checkpoint disabled"),
        ({"excluded": True}, "namespace excluded"),
        ({"settings": AdmissionSettings(checkpoint=True)}, "checkpoint restore mutator unavailable"),
    ],
)
def test_request_level_exits(kwargs: dict[str, Any], reason: str) -> None:
    assert decide(a_pod(CANDIDATE_LABELS, CANDIDATE_ANNOTATIONS), **kwargs) == reason


@pytest.mark.parametrize(
    ("labels", "annotations", "reason"),
    [
        (
            {**CANDIDATE_LABELS, "nvidia.com/snapshot-checkpoint-id": "abc"},
            CANDIDATE_ANNOTATIONS,
            "pod is already checkpoint-shaped",
        ),
        (
            {**CANDIDATE_LABELS, "nvidia.com/snapshot-is-checkpoint-source": "true"},
            CANDIDATE_ANNOTATIONS,
            "pod is already checkpoint-shaped",
        ),
        (
            {**CANDIDATE_LABELS, "nvidia.com/snapshot-checkpoint-id": ""},
            CANDIDATE_ANNOTATIONS,
            "checkpoint not available",
        ),
        (CANDIDATE_LABELS, None, "pod is not a checkpoint restore candidate"),
        (
            CANDIDATE_LABELS,
            {**CANDIDATE_ANNOTATIONS, "nvidia.com/dynamo-checkpoint-restore-candidate": "True"},
            "pod is not a checkpoint restore candidate",
        ),
        (
            CANDIDATE_LABELS,
            {"nvidia.com/dynamo-checkpoint-restore-candidate": "true"},
            "restore candidate has no checkpoint name",
        ),
        (None, CANDIDATE_ANNOTATIONS, "restore candidate is not operator-stamped"),
        (
            {**CANDIDATE_LABELS, "nvidia.com/selector": ""},
            CANDIDATE_ANNOTATIONS,
            "restore candidate is not operator-stamped",
        ),
    ],
)
def test_pod_level_exits(
    labels: dict[str, Any] | None, annotations: dict[str, Any] | None, reason: str
) -> None:
    assert decide(a_pod(labels, annotations)) == reason
