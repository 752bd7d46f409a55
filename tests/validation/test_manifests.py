"""Real upstream manifests through the admission chain (defaulting, then validation), as the
API server calls the webhooks on CREATE, with default settings (Grove and Checkpoint off)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import kinds
from domain.admission import AdmissionContext, AdmissionSettings, Decision
from kinds import validate
from tests.admission_helpers import make_input

MANIFESTS = Path(__file__).resolve().parent.parent / "fixtures" / "admission" / "manifests"
OVERRIDE = "is required when the specified main container image has no parseable semantic-version tag"
CHECKPOINT_OFF = "Forbidden: checkpoint functionality is disabled in the operator configuration"
JSON = dict[str, Any]
_IMAGE_LINE = re.compile(r"^(\s*(?:- )?image: )(\S+)$")


def load(rel: str) -> JSON:
    obj: JSON = yaml.safe_load((MANIFESTS / rel).read_text())
    obj["metadata"].setdefault("namespace", "default")
    return obj


def admit(obj: JSON, ctx: AdmissionContext | None = None) -> Decision:
    ctx = ctx or AdmissionContext()
    mutated = kinds.default(make_input(obj["apiVersion"], obj["kind"], "CREATE", obj), ctx)
    assert mutated.allowed, mutated.status
    final = mutated.patched if mutated.patched is not None else obj
    return validate(make_input(obj["apiVersion"], obj["kind"], "CREATE", final), ctx)


def with_semver_tags(obj: JSON) -> JSON:
    """The manifest with its placeholder image tags replaced by a release tag."""
    lines = []
    for line in yaml.safe_dump(obj, width=1 << 20).splitlines():
        m = _IMAGE_LINE.match(line)
        if m is not None:
            ref = m.group(2)
            slash, colon = ref.rfind("/"), ref.rfind(":")
            line = f"{m.group(1)}{ref[:colon] if colon > slash else ref}:1.1.0"
        lines.append(line)
    out: JSON = yaml.safe_load("\n".join(lines))
    return out


# (manifest, errors upstream reports with default settings: each "<path>: <body>")
CASES: list[tuple[str, list[str]]] = [
    # Placeholder tags (":my-tag") need spec.components[i].runtimeVersionOverride (the runtime-version rule, hub paths).
    (
        "v1beta1/DynamoGraphDeployment/vllm-agg__vllm-agg.yaml",
        [
            f"spec.components[0].runtimeVersionOverride: Required value: {OVERRIDE}",
            f"spec.components[1].runtimeVersionOverride: Required value: {OVERRIDE}",
        ],
    ),
    (
        "v1beta1/DynamoGraphDeployment/sglang-disagg-multinode.yaml",
        [f"spec.components[{i}].runtimeVersionOverride: Required value: {OVERRIDE}" for i in range(3)],
    ),
    # Failover + intra-pod GMS with the discovery-mode annotation set to "container": only the tags fail.
    (
        "v1beta1/DynamoGraphDeployment/vllm-agg-failover.yaml",
        [f"spec.components[{i}].runtimeVersionOverride: Required value: {OVERRIDE}" for i in range(2)],
    ),
    # experimental.checkpoint.enabled is refused while the Checkpoint gate is off (the default).
    (
        "v1beta1/DynamoGraphDeployment/qwen3-0-6b-trtllm-snapshot-restore.yaml",
        [
            f"spec.components[0].runtimeVersionOverride: Required value: {OVERRIDE}",
            f"spec.components[1].experimental.checkpoint: {CHECKPOINT_OFF}",
            f"spec.components[1].runtimeVersionOverride: Required value: {OVERRIDE}",
        ],
    ),
    # v1alpha1 sources report runtime-version errors at source paths, services in name order.
    (
        "v1alpha1/DynamoGraphDeployment/vllm-agg__utils-tests-fixtures-v1alpha1-agg.yaml",
        [
            f"spec.services[{n}].runtimeVersionOverride: Required value: {OVERRIDE}"
            for n in ("Frontend", "VllmDecodeWorker")
        ],
    ),
    (
        "v1alpha1/DynamoGraphDeployment/trtllm-disagg-planner.yaml",
        [
            f"spec.services[{n}].runtimeVersionOverride: Required value: {OVERRIDE}"
            for n in ("Frontend", "Planner", "decode", "prefill")
        ],
    ),
    (
        "v1alpha1/DynamoGraphDeployment/my-llm__developer-guide-knowledge-base-kubernetes-multinode-topology-aware-scheduling.yaml",
        [
            f"spec.services[{n}].runtimeVersionOverride: Required value: {OVERRIDE}"
            for n in ("Frontend", "VllmWorker")
        ],
    ),
    # Release tags everywhere; the EPP rule that needs the InferencePool API (a live look-up) is skipped offline.
    ("v1alpha1/DynamoGraphDeployment/qwen3-0-6b-agg.yaml", []),
    # A standalone DCD never needs runtimeVersionOverride.
    ("v1beta1/DynamoComponentDeployment/deployment-manifest.yaml", []),
]


@pytest.mark.parametrize(("rel", "errors"), CASES, ids=[c[0].rsplit("/", 1)[1] for c in CASES])
def test_manifest_as_published(rel: str, errors: list[str]) -> None:
    d = admit(load(rel))
    if not errors:
        assert d.allowed, d.status
        return
    assert not d.allowed
    assert [f"{c['field']}: {c['message']}" for c in d.status["details"]["causes"]] == errors


@pytest.mark.parametrize("rel", [c[0] for c in CASES], ids=[c[0].rsplit("/", 1)[1] for c in CASES])
def test_manifest_with_release_tags_is_admitted(rel: str) -> None:
    obj = with_semver_tags(load(rel))
    ctx = AdmissionContext(AdmissionSettings(checkpoint="snapshot-restore" in rel))
    d = admit(obj, ctx)
    assert d.allowed, d.status
