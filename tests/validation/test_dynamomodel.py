"""DynamoModel validation: required names, LoRA source rules, immutability with warnings."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.admission import AdmissionContext, AdmissionSettings, Decision, Operation
from tests.admission_helpers import make_input
from tests.defaulting.shapes import DYNAMO_MODEL_SPEC, members
from validation import dynamomodel

API = "nvidia.com/v1alpha1"
KIND = "DynamoModel"
PREFIX = 'DynamoModel.nvidia.com "m" is invalid: '

MODEL_NAME = "spec.modelName: Required value: must not be empty"
BASE_NAME = "spec.baseModelName: Required value: must not be empty"
SOURCE = 'spec.source: Required value: is required when spec.modelType is "lora"'
URI_REQUIRED = 'spec.source.uri: Required value: must be specified when spec.modelType is "lora"'
URI_SCHEME = 'spec.source.uri: Invalid value: "<redacted>": must start with "s3://", "hf://", or "file:///"'
BASE_IMMUTABLE = 'spec.baseModelName: Invalid value: "{}": is immutable and cannot be changed after creation'
TYPE_IMMUTABLE = 'spec.modelType: Invalid value: "{}": is immutable and cannot be changed after creation'
WARN_BASE = "Changing spec.baseModelName will break endpoint discovery"
WARN_TYPE = "Changing spec.modelType may cause unexpected behavior"


def model(spec: dict[str, Any], deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "m", "namespace": "default"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": API, "kind": KIND, "metadata": meta, "spec": spec}


def lora(uri: str | None = "s3://bucket/adapter", **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "modelName": "adapter",
        "baseModelName": "Qwen/Qwen3-0.6B",
        "modelType": "lora",
        **extra,
    }
    if uri is not None:
        spec["source"] = {"uri": uri}
    return spec


def run(operation: Operation, new: dict[str, Any] | None, old: dict[str, Any] | None = None) -> Decision:
    return dynamomodel.validate(
        make_input(API, KIND, operation, new, old), AdmissionContext(AdmissionSettings())
    )


def expected(errors: list[str]) -> str:
    return PREFIX + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


CREATE_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("base model", {"modelName": "a", "baseModelName": "a"}, []),
    ("empty spec", {}, [MODEL_NAME, BASE_NAME]),
    ("empty names", {"modelName": "", "baseModelName": ""}, [MODEL_NAME, BASE_NAME]),
    ("null names", {"modelName": None, "baseModelName": "b"}, [MODEL_NAME]),
    ("lora s3", lora(), []),
    ("lora hf", lora("hf://org/adapter"), []),
    ("lora file", lora("file:///models/adapter"), []),
    ("lora file with host", lora("file://host/models/adapter"), [URI_SCHEME]),
    ("lora bare file scheme", lora("file://"), [URI_SCHEME]),
    ("lora https", lora("https://example.com/a?token=secret"), [URI_SCHEME]),
    ("lora upper-case scheme", lora("S3://bucket/a"), [URI_SCHEME]),
    ("lora without source", lora(None), [SOURCE]),
    ("lora with null source", lora(None, source=None), [SOURCE]),
    ("lora empty uri", lora(""), [URI_REQUIRED]),
    ("lora source without uri", lora(None, source={}), [URI_REQUIRED]),
    ("LoRA type is not lora", lora(None, modelType="LoRA"), []),
    (
        "base type ignores bad source",
        {"modelName": "a", "baseModelName": "b", "modelType": "base", "source": {"uri": "x"}},
        [],
    ),
    (
        "all errors in order",
        {"modelType": "lora", "source": {"uri": "gs://x"}},
        [MODEL_NAME, BASE_NAME, URI_SCHEME],
    ),
]


@pytest.mark.parametrize(("spec", "errors"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create(spec: dict[str, Any], errors: list[str]) -> None:
    d = run("CREATE", model(spec))
    assert d.warnings == []
    if not errors:
        assert d.allowed and d.status == {"code": 200}
        return
    assert not d.allowed and d.code == 422
    assert d.message == expected(errors)
    assert [f"{c['field']}: {c['message']}" for c in d.status["details"]["causes"]] == errors


@given(st.text(max_size=40))
def test_uri_is_never_echoed(uri: str) -> None:
    d = run("CREATE", model(lora(uri)))
    if d.allowed:
        assert uri.startswith(("s3://", "hf://", "file:///"))
    elif uri:
        assert d.message == expected([URI_SCHEME])
    else:
        assert d.message == expected([URI_REQUIRED])
    # The denial text never depends on the URI itself.
    assert d.allowed or str(d.status["details"]["causes"]).count("<redacted>") == int(bool(uri))


UPDATE_CASES: list[tuple[str, dict[str, Any], dict[str, Any], list[str], list[str]]] = [
    ("unchanged", lora(), lora(), [], []),
    ("modelName and uri may change", lora("hf://x", modelName="b"), lora(), [], []),
    (
        "base model changed",
        lora(baseModelName="other"),
        lora(),
        [BASE_IMMUTABLE.format("other")],
        [WARN_BASE],
    ),
    (
        "base model cleared",
        lora(baseModelName=""),
        lora(),
        [BASE_NAME, BASE_IMMUTABLE.format("")],
        [WARN_BASE],
    ),
    (
        "model type changed",
        lora(None, modelType="base"),
        lora(),
        [TYPE_IMMUTABLE.format("base")],
        [WARN_TYPE],
    ),
    (
        "model type removed",
        {"modelName": "a", "baseModelName": "Qwen/Qwen3-0.6B"},
        lora(),
        [TYPE_IMMUTABLE.format("")],
        [WARN_TYPE],
    ),
    (
        "both changed, create errors first",
        {"modelName": "a", "baseModelName": "b", "modelType": "lora"},
        {"modelName": "a", "baseModelName": "c"},
        [SOURCE, BASE_IMMUTABLE.format("b"), TYPE_IMMUTABLE.format("lora")],
        [WARN_BASE, WARN_TYPE],
    ),
]


@pytest.mark.parametrize(
    ("new", "old", "errors", "warnings"), [c[1:] for c in UPDATE_CASES], ids=[c[0] for c in UPDATE_CASES]
)
def test_update(new: dict[str, Any], old: dict[str, Any], errors: list[str], warnings: list[str]) -> None:
    d = run("UPDATE", model(new), model(old))
    assert d.warnings == warnings
    if not errors:
        assert d.allowed
    else:
        assert not d.allowed and d.message == expected(errors)


def test_update_reruns_create_rules() -> None:
    d = run("UPDATE", model(lora("")), model(lora("")))
    assert d.message == expected([URI_REQUIRED])


def test_terminating_update_skips_everything() -> None:
    d = run("UPDATE", model({"modelType": "lora"}, deleting=True), model(lora()))
    assert d.allowed and d.warnings == []


def test_terminating_create_is_validated() -> None:
    assert not run("CREATE", model({}, deleting=True)).allowed


def test_delete_allowed() -> None:
    assert run("DELETE", None, model({})).allowed


@given(members(DYNAMO_MODEL_SPEC), members(DYNAMO_MODEL_SPEC), st.sampled_from(["CREATE", "UPDATE"]))
def test_any_shape_is_answered(new: dict[str, Any], old: dict[str, Any], operation: Operation) -> None:
    d = run(operation, model(new), model(old) if operation == "UPDATE" else None)
    assert d.allowed or (d.code == 422 and d.message.startswith(PREFIX))
    assert not d.warnings or operation == "UPDATE"
