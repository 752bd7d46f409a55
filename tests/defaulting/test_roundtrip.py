"""v1alpha1 requests through the real converters: answers apply to what was sent, never
remove anything, and default to themselves."""

from __future__ import annotations

from typing import Any

import jsonpatch
from hypothesis import given
from hypothesis import strategies as st

import kinds
from defaulting.common import keep_sent_fields
from domain.admission import AdmissionContext, AdmissionSettings, Operation
from tests.admission_helpers import make_input

ALPHA = "nvidia.com/v1alpha1"
CTXS = [
    AdmissionContext(AdmissionSettings(grove=True, operator_version="1.1.0")),
    AdmissionContext(AdmissionSettings(operator_version="1.1.0")),
]

names = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,6}", fullmatch=True)
services = st.dictionaries(
    names,
    st.fixed_dictionaries(
        {},
        optional={
            "replicas": st.integers(0, 3),
            "componentType": st.sampled_from(["frontend", "worker", "planner"]),
            "minAvailable": st.integers(0, 2),
            "extraPodSpec": st.fixed_dictionaries(
                {"mainContainer": st.fixed_dictionaries({"image": st.just("x:1.0.0")})}
            ),
            "multinode": st.fixed_dictionaries({"nodeCount": st.integers(1, 3)}),
            "envs": st.just([{"name": "A", "value": "b"}]),
        },
    ),
    max_size=3,
)
annotations = st.none() | st.dictionaries(
    st.sampled_from(["nvidia.com/enable-grove", "nvidia.com/workload-provider"]),
    st.sampled_from(["false", "grove", "component"]),
)
dgdr_specs = st.fixed_dictionaries(
    {"model": st.just("Qwen/Qwen3-0.6B")},
    optional={
        "backend": st.sampled_from(["auto", "vllm"]),
        "autoApply": st.booleans(),
        "profilingConfig": st.fixed_dictionaries(
            {},
            optional={
                "profilerImage": st.sampled_from(["", "p:1.0.0"]),
                "config": st.just({"sla": {"isl": 10}}),
            },
        ),
        "deploymentOverrides": st.fixed_dictionaries({}, optional={"workersImage": st.just("w:1.0.0")}),
    },
)


def check(sent: dict[str, Any], operation: Operation, ctx: AdmissionContext) -> None:
    old = sent if operation == "UPDATE" else None
    d = kinds.default(make_input(ALPHA, sent["kind"], operation, sent, old), ctx)
    assert d.allowed, d.message
    if d.patched is None:
        return
    assert d.patched["apiVersion"] == ALPHA
    patch = jsonpatch.make_patch(sent, d.patched)
    assert all(op["op"] in ("add", "replace") for op in patch.patch), patch.patch
    assert patch.apply(sent) == d.patched
    again = kinds.default(
        make_input(ALPHA, sent["kind"], operation, d.patched, d.patched if old is not None else None), ctx
    )
    assert again.patched is None or again.patched == d.patched


@given(services, st.sampled_from(["CREATE", "UPDATE"]), annotations, st.sampled_from(CTXS))
def test_v1alpha1_dgd(svcs: dict[str, Any], operation: Operation, ann: Any, ctx: AdmissionContext) -> None:
    meta: dict[str, Any] = {"name": "g", "namespace": "d"}
    if ann is not None:
        meta["annotations"] = ann
    check(
        {"apiVersion": ALPHA, "kind": "DynamoGraphDeployment", "metadata": meta, "spec": {"services": svcs}},
        operation,
        ctx,
    )


@given(dgdr_specs, st.sampled_from(["CREATE", "UPDATE"]))
def test_v1alpha1_dgdr(spec: dict[str, Any], operation: Operation) -> None:
    sent = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r"},
        "spec": spec,
    }
    check(sent, operation, CTXS[1])


def test_keep_sent_fields() -> None:
    sent = {"a": 1, "spec": {"services": {}, "x": {"y": 1}}, "l": [1, 2]}
    answer = {"a": 2, "spec": {"x": {"z": 2}}, "l": [1]}
    assert keep_sent_fields(sent, answer) == {
        "a": 2,
        "spec": {"x": {"z": 2, "y": 1}, "services": {}},
        "l": [1],
    }
    complete = {"a": 1, "spec": {"services": {}, "x": {"y": 1, "z": 2}}}
    assert keep_sent_fields(sent, complete) == {**complete, "l": [1, 2]}
    full = {**complete, "l": []}
    assert keep_sent_fields(sent, full) is full


def alpha_dgd(services: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "g", "namespace": "d"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"services": services},
    }


def test_v1alpha1_dgd_defaults_land_at_service_paths() -> None:
    sent = alpha_dgd(
        {"Frontend": {"componentType": "frontend"}, "Worker": {"replicas": 0, "multinode": {"nodeCount": 2}}}
    )
    d = kinds.default(make_input(ALPHA, "DynamoGraphDeployment", "CREATE", sent), CTXS[0])
    assert d.patched is not None
    ops = {op["path"]: op.get("value") for op in jsonpatch.make_patch(sent, d.patched).patch}
    assert ops == {
        "/metadata/annotations": {
            "nvidia.com/workload-provider": "grove",
            "nvidia.com/dynamo-operator-origin-version": "1.1.0",
        },
        "/spec/services/Frontend/replicas": 1,
        "/spec/services/Frontend/minAvailable": 1,
        "/spec/services/Worker/minAvailable": 1,
    }


def test_v1alpha1_dgd_update_uses_the_stored_provider() -> None:
    sent = alpha_dgd({"Worker": {"componentType": "worker"}}, {"nvidia.com/workload-provider": "component"})
    d = kinds.default(make_input(ALPHA, "DynamoGraphDeployment", "UPDATE", sent, sent), CTXS[0])
    assert d.patched is not None
    ops = {op["path"]: op.get("value") for op in jsonpatch.make_patch(sent, d.patched).patch}
    assert ops == {"/spec/services/Worker/replicas": 1}


def test_v1alpha1_dgd_create_with_provider_already_stamped_has_no_patch() -> None:
    sent = alpha_dgd(
        {"Worker": {"componentType": "worker", "replicas": 2}},
        {"nvidia.com/workload-provider": "component", "nvidia.com/dynamo-operator-origin-version": "0.9.0"},
    )
    assert kinds.default(make_input(ALPHA, "DynamoGraphDeployment", "CREATE", sent), CTXS[1]).patched is None
