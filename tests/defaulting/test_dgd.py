"""DynamoGraphDeployment defaulting on the hub: provider selection, replicas, minAvailable,
provider-override targets and the origin-version stamp."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest
from hypothesis import given
from hypothesis import strategies as st

from defaulting import dgd
from domain.admission import AdmissionSettings, Operation

PROVIDER = "nvidia.com/workload-provider"
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
ENABLE_GROVE = "nvidia.com/enable-grove"
GROVE = AdmissionSettings(grove=True, operator_version="1.1.0")
NO_GROVE = AdmissionSettings(grove=False, operator_version="1.1.0")
GROVE_API = "grove.io/v1alpha1"


def graph(
    *components: dict[str, Any], annotations: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "g", "namespace": "default"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"components": list(components), **spec},
    }


def comp(name: str = "worker", **fields: Any) -> dict[str, Any]:
    return {"name": name, "type": "worker", **fields}


def run(
    obj: dict[str, Any], operation: Operation = "CREATE", settings: AdmissionSettings = NO_GROVE
) -> dict[str, Any]:
    before = copy.deepcopy(obj)
    out = dgd.default_hub(obj, operation, settings)
    assert obj == before, "the input object must never be mutated"
    return out


# --- provider selection and annotations ----------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "annotations", "provider"),
    [
        (NO_GROVE, None, "component"),
        (NO_GROVE, {PROVIDER: "grove"}, "component"),
        (GROVE, None, "grove"),
        (GROVE, {PROVIDER: "component"}, "grove"),
        (GROVE, {ENABLE_GROVE: "false"}, "component"),
        (GROVE, {ENABLE_GROVE: "FALSE"}, "component"),
        (GROVE, {ENABLE_GROVE: "False"}, "component"),
        (GROVE, {ENABLE_GROVE: " false"}, "grove"),
        (GROVE, {ENABLE_GROVE: "no"}, "grove"),
        (GROVE, {ENABLE_GROVE: "true"}, "grove"),
        (NO_GROVE, {ENABLE_GROVE: "true"}, "component"),
    ],
)
def test_create_always_stamps_the_provider(
    settings: AdmissionSettings, annotations: dict[str, Any] | None, provider: str
) -> None:
    out = run(graph(comp(), annotations=annotations), settings=settings)
    assert out["metadata"]["annotations"][PROVIDER] == provider
    assert out["metadata"]["annotations"][ORIGIN] == "1.1.0"


def test_create_without_metadata_creates_annotations() -> None:
    obj = graph(comp())
    del obj["metadata"]
    out = run(obj)
    assert out["metadata"] == {"annotations": {PROVIDER: "component", ORIGIN: "1.1.0"}}


def test_create_keeps_an_existing_origin_version() -> None:
    for value in ("0.9.0", "", "not-semver"):
        out = run(graph(comp(), annotations={ORIGIN: value}))
        assert out["metadata"]["annotations"][ORIGIN] == value


def test_create_with_null_annotations() -> None:
    out = run(graph(comp(), annotations=None))
    assert out["metadata"]["annotations"] == {PROVIDER: "component", ORIGIN: "1.1.0"}
    obj = graph(comp())
    obj["metadata"]["annotations"] = None
    assert run(obj)["metadata"]["annotations"] == {PROVIDER: "component", ORIGIN: "1.1.0"}


def test_create_keeps_other_annotations() -> None:
    out = run(graph(comp(), annotations={"a": "b"}))
    assert out["metadata"]["annotations"] == {"a": "b", PROVIDER: "component", ORIGIN: "1.1.0"}


def test_update_never_adds_annotations() -> None:
    obj = graph(comp(replicas=2))
    assert run(obj, "UPDATE", GROVE) is obj
    ann = {"x": "y"}
    obj = graph(comp(replicas=2), annotations=ann)
    assert run(obj, "UPDATE", GROVE) is obj


@pytest.mark.parametrize(
    ("annotations", "min_available"),
    [
        ({PROVIDER: "grove"}, 1),
        ({PROVIDER: "component"}, None),
        ({PROVIDER: ""}, None),
        ({PROVIDER: "Grove"}, None),
        (None, None),
    ],
)
def test_update_uses_the_stored_provider(
    annotations: dict[str, Any] | None, min_available: int | None
) -> None:
    # The gate does not matter on UPDATE; the stored annotation does.
    out = run(graph(comp(replicas=2), annotations=annotations), "UPDATE", NO_GROVE)
    assert out["spec"]["components"][0].get("minAvailable") == min_available
    assert out["metadata"].get("annotations") == annotations


# --- replicas and minAvailable -------------------------------------------------------------------


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
def test_replicas_default_to_one(operation: Operation) -> None:
    out = run(
        graph(comp("a"), comp("b", replicas=0), comp("c", replicas=None), comp("d", replicas=3)), operation
    )
    assert [c["replicas"] for c in out["spec"]["components"]] == [1, 0, 1, 3]


def test_min_available_only_for_grove() -> None:
    components = (comp("a"), comp("b", replicas=0), comp("c", minAvailable=0), comp("d", minAvailable=None))
    out = run(graph(*components), settings=GROVE)
    assert [c["minAvailable"] for c in out["spec"]["components"]] == [1, 1, 0, 1]
    out = run(graph(*components), settings=NO_GROVE)
    assert [c.get("minAvailable") for c in out["spec"]["components"]] == [None, None, 0, None]


def test_spec_without_components_and_null_entries() -> None:
    obj = graph()
    del obj["spec"]["components"]
    assert run(obj)["spec"] == {}
    out = run(graph(None, comp()))  # type: ignore[arg-type]
    # Go decodes the null entry as an empty component: defaulted, and written with its name
    assert out["spec"]["components"] == [{"name": "", "replicas": 1}, {**comp(), "replicas": 1}]
    obj = graph(comp())
    del obj["spec"]
    assert "spec" not in run(obj)


# --- provider override targets -------------------------------------------------------------------


def override(target: str | None = None, api: str = GROVE_API) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": api, "value": {"spec": {}}}
    if target is not None:
        out["target"] = target
    return out


@pytest.mark.parametrize(
    ("component", "target"),
    [
        (comp(), "PodCliqueTemplateSpec"),
        (comp(multinode={"nodeCount": 1}), "PodCliqueTemplateSpec"),
        (comp(multinode={"nodeCount": 2}), "PodCliqueScalingGroupConfig"),
        (comp(multinode={}), "PodCliqueTemplateSpec"),
        (comp(experimental={"gpuMemoryService": {"mode": "InterPod"}}), "PodCliqueScalingGroupConfig"),
        (comp(experimental={"gpuMemoryService": {"mode": "IntraPod"}}), "PodCliqueTemplateSpec"),
        (comp(experimental={"grove": {"forceScalingGroup": True}}), "PodCliqueScalingGroupConfig"),
        (comp(experimental={"grove": {"forceScalingGroup": False}}), "PodCliqueTemplateSpec"),
    ],
)
def test_component_override_target(component: dict[str, Any], target: str) -> None:
    component = {**component, "providerOverride": override()}
    out = run(graph(component), settings=GROVE)
    assert out["spec"]["components"][0]["providerOverride"]["target"] == target


def test_root_override_target() -> None:
    out = run(graph(comp(), providerOverride=override()), settings=GROVE)
    assert out["spec"]["providerOverride"] == {**override(), "target": "PodCliqueSet"}


@pytest.mark.parametrize(
    ("settings", "operation", "annotations", "ov"),
    [
        (NO_GROVE, "CREATE", None, override()),
        (GROVE, "CREATE", {ENABLE_GROVE: "false"}, override()),
        (GROVE, "CREATE", None, override(api="grove.io/v1beta1")),
        (GROVE, "CREATE", None, override(api="")),
        (GROVE, "CREATE", None, override(target="Custom")),
        (GROVE, "UPDATE", None, override()),
        (GROVE, "UPDATE", {PROVIDER: "component"}, override()),
    ],
)
def test_override_target_left_alone(
    settings: AdmissionSettings, operation: Operation, annotations: dict[str, Any] | None, ov: dict[str, Any]
) -> None:
    out = run(
        graph(comp(providerOverride=ov), providerOverride=ov, annotations=annotations), operation, settings
    )
    assert out["spec"]["providerOverride"] == ov
    assert out["spec"]["components"][0]["providerOverride"] == ov


def test_override_target_on_update_with_stored_grove_provider() -> None:
    out = run(graph(comp(providerOverride=override()), annotations={PROVIDER: "grove"}), "UPDATE", NO_GROVE)
    assert out["spec"]["components"][0]["providerOverride"]["target"] == "PodCliqueTemplateSpec"


@pytest.mark.parametrize(
    ("multinode_extra", "experimental", "target"),
    [
        ({"nodeCount": 2}, None, "PodCliqueTemplateSpec"),
        ({"nodeCount": 1}, None, None),
        ({}, None, None),
        ({"nodeCount": 3}, {"gpuMemoryService": {"mode": "InterPod"}}, None),
    ],
)
def test_multinode_role_override_targets(
    multinode_extra: dict[str, Any], experimental: dict[str, Any] | None, target: str | None
) -> None:
    multinode = {
        **multinode_extra,
        "leader": {"providerOverride": override()},
        "worker": {"providerOverride": override()},
    }
    fields: dict[str, Any] = {"multinode": multinode}
    if experimental is not None:
        fields["experimental"] = experimental
    out = run(graph(comp(**fields)), settings=GROVE)
    roles = out["spec"]["components"][0]["multinode"]
    for role in ("leader", "worker"):
        assert roles[role]["providerOverride"].get("target") == target


def test_multinode_roles_without_overrides() -> None:
    component = comp(multinode={"nodeCount": 2, "leader": {}, "worker": None})
    out = run(graph(component), settings=GROVE)
    assert out["spec"]["components"][0]["multinode"] == component["multinode"]


def test_expected_override_target_scopes() -> None:
    assert dgd.expected_override_target("grove", GROVE_API, "root", None) == "PodCliqueSet"
    assert dgd.expected_override_target("grove", GROVE_API, "component", None) is None
    assert dgd.expected_override_target("grove", GROVE_API, "other", comp()) is None
    assert dgd.expected_override_target(None, GROVE_API, "root", None) is None


# --- sharing, idempotency and patches ------------------------------------------------------------


def test_untouched_subtrees_are_kept() -> None:
    done = comp("a", replicas=1)
    todo = comp("b")
    obj = graph(done, todo, annotations={PROVIDER: "component"})
    out = run(obj, "UPDATE")
    assert out["spec"]["components"][0] == done
    assert out["spec"]["components"][1] == {**todo, "replicas": 1}
    assert out["metadata"] is obj["metadata"]


def test_unchanged_object_is_returned_as_is() -> None:
    obj = run(graph(comp(), annotations={"a": "1"}), settings=GROVE)
    assert run(obj, "CREATE", GROVE) is obj
    assert run(obj, "UPDATE", GROVE) is obj


names = st.sampled_from(["frontend", "worker", "prefill", "decode", "planner", "keep-nulls"])
maybe_int = st.none() | st.integers(0, 5)
overrides = st.none() | st.fixed_dictionaries(
    {"apiVersion": st.sampled_from([GROVE_API, "x/v1"]), "value": st.just({"spec": {}})},
    optional={"target": st.sampled_from(["", "PodCliqueSet", "X"])},
)
components = st.builds(
    lambda name, replicas, min_available, ov, nodes, leader, mode, force: {
        k: v
        for k, v in {
            "name": name,
            "replicas": replicas,
            "minAvailable": min_available,
            "providerOverride": ov,
            "multinode": None
            if nodes is None
            else {
                "nodeCount": nodes,
                "leader": {"providerOverride": leader},
                "worker": {"providerOverride": leader},
            },
            "experimental": {"gpuMemoryService": {"mode": mode}, "grove": {"forceScalingGroup": force}},
        }.items()
        if v is not None or name == "keep-nulls"
    },
    names,
    maybe_int,
    maybe_int,
    overrides,
    st.none() | st.integers(0, 3),
    overrides,
    st.sampled_from(["IntraPod", "InterPod", ""]),
    st.booleans(),
)
annotation_maps = st.none() | st.dictionaries(
    st.sampled_from([PROVIDER, ORIGIN, ENABLE_GROVE, "other"]),
    st.sampled_from(["grove", "component", "false", "FALSE", "", "1.0.0"]),
)
graphs = st.builds(
    lambda comps, ann, root: graph(*comps, annotations=ann, **({"providerOverride": root} if root else {})),
    st.lists(components, max_size=4),
    annotation_maps,
    overrides,
)
operations = st.sampled_from(["CREATE", "UPDATE"])
all_settings = st.sampled_from([GROVE, NO_GROVE])


@given(graphs, operations, all_settings)
def test_defaulting_is_idempotent_and_only_adds_or_replaces(
    obj: dict[str, Any], operation: Operation, settings: AdmissionSettings
) -> None:
    once = run(obj, operation, settings)
    assert run(once, operation, settings) is once
    # Reinvocation with a later UPDATE changes nothing either.
    assert run(once, "UPDATE", settings) is once
    patch = jsonpatch.make_patch(obj, once)
    assert all(op["op"] in ("add", "replace") for op in patch.patch)
    assert patch.apply(obj) == once
    if once is obj:
        assert patch.patch == []


def test_the_answer_is_written_as_the_operators_encoder_writes_it() -> None:
    epp = {"config": {"plugins": [{"type": "t"}]}}
    obj = graph(comp("a", podTemplate={}, sharedMemorySize="1.5Gi"), comp("b", eppConfig=epp, replicas=1))
    out = run(obj)
    assert out["status"] == {"state": ""}  # status.state has no omitempty
    a, b = out["spec"]["components"]
    assert a["podTemplate"] == {"spec": {"containers": None}}
    assert a["sharedMemorySize"] == "1536Mi"
    assert b["eppConfig"]["config"]["plugins"] == [{"name": "", "type": "t", "parameters": None}]
    # nothing to default: no answer at all, so nothing re-written
    assert run(out, "UPDATE") is out
