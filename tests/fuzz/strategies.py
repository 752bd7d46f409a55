"""Hypothesis strategies: JSON values, and structurally plausible Dynamo objects made by
mutating real ones (the examples and the admission/conversion fixture vectors)."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]

JSON = Any

# Values the rules look at: framework names, component types, quantities, versions, images.
WORDS = (
    "",
    "main",
    "vllm",
    "sglang",
    "trtllm",
    "frontend",
    "worker",
    "planner",
    "prefill",
    "decode",
    "epp",
    "1",
    "0",
    "-1",
    "1Gi",
    "100Mi",
    "0.5",
    "2",
    "nvidia.com/gpu",
    "gpu",
    "cpu",
    "memory",
    "Always",
    "1.0.0",
    "0.7.0",
    "v1alpha1",
    "v1beta1",
    "nvidia.com/v1alpha1",
    "nvidia.com/v1beta1",
    "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0",
    "nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest",
    "grove",
    "component",
    "intraPod",
    "interPod",
    "Exact",
    "Auto",
    "true",
    "false",
)

leaf: st.SearchStrategy[JSON] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
    st.text(max_size=12),
)

json_values: st.SearchStrategy[JSON] = st.recursive(
    leaf,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(WORDS), st.text(max_size=8)), children, max_size=3),
    ),
    max_leaves=8,
)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@cache
def seeds() -> tuple[dict[str, Any], ...]:
    """Real objects of every Dynamo kind (deduplicated by content)."""
    found: list[Any] = []
    for path in sorted((ROOT / "examples/admission").glob("*.json")):
        request = json.loads(path.read_text())["request"]
        found += [request.get("object"), request.get("oldObject")]
    for path in sorted((ROOT / "examples/conversion").glob("*.json")):
        found += json.loads(path.read_text())["request"]["objects"]
    for path in sorted((ROOT / "examples/manifests").glob("*.yaml")):
        found += list(yaml.safe_load_all(path.read_text()))
    for path in sorted((ROOT / "tests/fixtures/admission").glob("*.jsonl")):
        for row in _jsonl(path):
            found += [row.get("object"), row.get("oldObject")]
    for path in sorted((ROOT / "tests/fixtures/conversion").glob("*.jsonl")):
        for row in _jsonl(path):
            found += [v for v in row.values() if isinstance(v, dict) and "apiVersion" in v and "kind" in v]
    found.append(
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoCheckpoint",
            "metadata": {"name": "ckpt", "namespace": "default"},
            "spec": {
                "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
                "job": {"podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": "x:1"}]}}},
            },
        }
    )
    unique: dict[str, dict[str, Any]] = {}
    for obj in found:
        if isinstance(obj, dict) and isinstance(obj.get("kind"), str) and obj.get("apiVersion"):
            unique.setdefault(json.dumps(obj, sort_keys=True), obj)
    return tuple(unique.values())


@cache
def field_names() -> tuple[str, ...]:
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            names.update(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for obj in seeds():
        walk(obj)
    return tuple(sorted(names))


def _slots(node: Any, out: list[tuple[Any, Any]]) -> None:
    """Every (container, key-or-index) in the tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((node, key))
            _slots(value, out)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.append((node, index))
            _slots(value, out)


@st.composite
def mutate(draw: st.DrawFn, obj: dict[str, Any], max_edits: int = 4) -> dict[str, Any]:
    """A copy of ``obj`` with a few random edits: values replaced (by JSON of any type, or by a
    value taken from elsewhere in the object), keys dropped, known field names added anywhere."""
    out = copy.deepcopy(obj)
    for _ in range(draw(st.integers(min_value=0, max_value=max_edits))):
        slots: list[tuple[Any, Any]] = []
        _slots(out, slots)
        containers = [out] + [c[k] for c, k in slots if isinstance(c[k], (dict, list))]
        op = draw(st.sampled_from(("replace", "replace", "drop", "add", "swap")))
        if op == "add":
            target = draw(st.sampled_from(containers))
            value = draw(json_values)
            if isinstance(target, dict):
                target[draw(st.sampled_from(field_names()))] = value
            else:
                target.append(value)
            continue
        if not slots:
            continue
        container, key = draw(st.sampled_from(slots))
        if op == "drop":
            del container[key]
        elif op == "swap":
            donor_container, donor_key = draw(st.sampled_from(slots))
            container[key] = copy.deepcopy(donor_container[donor_key])
        else:
            container[key] = draw(json_values)
    return out


@st.composite
def dynamo_objects(draw: st.DrawFn, max_edits: int = 4) -> dict[str, Any]:
    seed = draw(st.sampled_from(seeds()))
    return draw(mutate(seed, max_edits))


@st.composite
def object_pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """(new, old) of the same seed, each mutated: an UPDATE."""
    seed = draw(st.sampled_from(seeds()))
    return draw(mutate(seed, 3)), draw(mutate(seed, 2))


USERS = (
    {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
    {"username": "system:serviceaccount:dynamo-system:dynamo-operator", "groups": ["system:serviceaccounts"]},
    {
        "username": "system:serviceaccount:default:planner-serviceaccount",
        "groups": ["system:serviceaccounts"],
    },
)


def gvk_of(obj: Any) -> dict[str, Any]:
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if not isinstance(api_version, str):
        api_version = "nvidia.com/v1beta1"
    group, _, version = api_version.rpartition("/")
    return {
        "group": group,
        "version": version or "v1beta1",
        "kind": kind if isinstance(kind, str) else "Unknown",
    }


@st.composite
def admission_reviews(draw: st.DrawFn) -> dict[str, Any]:
    operation = draw(st.sampled_from(("CREATE", "UPDATE", "DELETE", "CREATE", "UPDATE")))
    new, old = draw(object_pairs())
    obj: Any = None if operation == "DELETE" else new
    old_obj: Any = old if operation in ("UPDATE", "DELETE") else None
    request: dict[str, Any] = {
        "uid": draw(st.sampled_from(("u-1", "705ab4f5-6393-11e8-b7cc-42010a800002"))),
        "kind": gvk_of(new),
        "resource": {"group": "nvidia.com", "version": gvk_of(new)["version"], "resource": "x"},
        "name": (new.get("metadata") or {}).get("name", "") if isinstance(new.get("metadata"), dict) else "",
        "namespace": draw(st.sampled_from(("default", "dynamo-system", ""))),
        "operation": operation,
        "userInfo": draw(st.sampled_from(USERS)),
        "object": obj,
        "oldObject": old_obj,
        "dryRun": draw(st.booleans()),
    }
    if draw(st.booleans()):
        request["requestKind"] = gvk_of(new)
    return {
        "apiVersion": draw(st.sampled_from(("admission.k8s.io/v1", "admission.k8s.io/v1beta1"))),
        "kind": "AdmissionReview",
        "request": request,
    }
