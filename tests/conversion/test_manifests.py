"""Upstream example manifests: convert, round-trip, and validate against the target CRD schema."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.review.compare import diff_paths, normalize
from bench.payloads import epp_as_written
from kinds import convert

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MANIFESTS = sorted((FIXTURES / "conversion" / "manifests").glob("*.yaml"))
CRDS = {
    "DynamoGraphDeployment": FIXTURES / "crds" / "nvidia.com_dynamographdeployments.yaml",
    "DynamoComponentDeployment": FIXTURES / "crds" / "nvidia.com_dynamocomponentdeployments.yaml",
}
ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _schemas(kind: str) -> dict[str, dict[str, Any]]:
    with CRDS[kind].open() as fh:
        crd = yaml.load(fh, Loader=_Loader)
    return {v["name"]: v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"]}


_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


def validate(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Structural check: types, known properties, enums, required fields, int-or-string."""
    errors: list[str] = []
    if value is None:
        return errors
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            errors.append(f"{path}: not int-or-string")
        return errors
    t = schema.get("type")
    if t == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{path}: not an integer")
    elif t == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors.append(f"{path}: not a number")
    elif t in _TYPES and not isinstance(value, _TYPES[t]):
        errors.append(f"{path}: not a {t}")
        return errors
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in enum")
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields")
        for req in schema.get("required", ()):
            if req not in value:
                errors.append(f"{path}.{req}: required")
        for k, v in value.items():
            if props is not None and k in props:
                errors.extend(validate(v, props[k], f"{path}.{k}"))
            elif isinstance(extra, dict):
                errors.extend(validate(v, extra, f"{path}.{k}"))
            elif props is not None and not preserve and extra is not True:
                errors.append(f"{path}.{k}: unknown field")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors.extend(validate(item, schema["items"], f"{path}[{i}]"))
    return errors


def _load(path: Path) -> dict[str, Any]:
    with path.open() as fh:
        return yaml.load(fh, Loader=_Loader)  # type: ignore[no-any-return]


def test_manifest_set() -> None:
    assert len(MANIFESTS) == 9


@pytest.mark.parametrize("path", MANIFESTS, ids=[p.name for p in MANIFESTS])
def test_manifest_converts_round_trips_and_validates(path: Path) -> None:
    src = _load(path)
    kind = src["kind"]
    source_version = src["apiVersion"]
    target = BETA if source_version == ALPHA else ALPHA
    schemas = _schemas(kind)
    # the vendored manifest itself is valid for its own version
    assert validate(src, schemas[source_version.split("/")[1]]) == []
    out = convert(src, target)
    assert out["apiVersion"] == target and out["kind"] == kind
    # Validate what the apiserver keeps: Go's zero-value artefacts (e.g. a DGD status with
    # only ``state: ""``, written because the field has no omitempty) are normalised away.
    assert validate(normalize(out), schemas[target.split("/")[1]]) == []
    back = convert(out, source_version)
    assert diff_paths(normalize(back), normalize(epp_as_written(src))) == []
    again = convert(convert(back, target), source_version)
    assert diff_paths(normalize(again), normalize(back)) == []


def test_vllm_agg_pair_converts_into_each_other() -> None:
    a = _load(
        FIXTURES
        / "conversion"
        / "manifests"
        / "v1alpha1__DynamoGraphDeployment__vllm-agg__utils-tests-fixtures-v1alpha1-agg.yaml"
    )
    b = _load(
        FIXTURES / "conversion" / "manifests" / "v1beta1__DynamoGraphDeployment__vllm-agg__vllm-agg.yaml"
    )
    got = normalize(convert(a, BETA))
    want = normalize(b)
    got["metadata"].pop("annotations", None)
    assert got["spec"] == want["spec"]


def test_validator_rejects_bad_values() -> None:
    schema = _schemas("DynamoGraphDeployment")["v1beta1"]
    bad = {
        "apiVersion": BETA,
        "kind": "DynamoGraphDeployment",
        "spec": {"components": [{"name": "a", "type": "nope", "bogus": 1}]},
    }
    errors = validate(bad, schema)
    assert any("enum" in e for e in errors)
    assert any("unknown field" in e for e in errors)
