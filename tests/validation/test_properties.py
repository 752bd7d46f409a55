"""Properties of DGD/DCD validation over generated objects."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.admission import AdmissionContext
from gocompat.fielderrors import aggregate_message
from kinds import validate
from tests.admission_helpers import make_input
from tests.validation.dgd_builders import IMAGE, container, dgd

JSON = dict[str, Any]
CTX = AdmissionContext()

_values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "x", "InterPod", "IntraPod", "rack"])
)
_experimental = st.fixed_dictionaries(
    {},
    optional={
        "gpuMemoryService": st.fixed_dictionaries(
            {},
            optional={
                "mode": st.sampled_from(["", "IntraPod", "InterPod"]),
                "extraClientContainers": st.lists(st.sampled_from(["main", "side", "x"]), max_size=3),
            },
        ),
        "failover": st.fixed_dictionaries(
            {},
            optional={"mode": st.sampled_from(["", "IntraPod", "InterPod"]), "numShadows": st.integers(0, 2)},
        ),
        "grove": st.fixed_dictionaries({}, optional={"forceScalingGroup": st.booleans()}),
        "checkpoint": st.fixed_dictionaries(
            {}, optional={"enabled": st.booleans(), "job": st.just({"gmsClientContainers": ["main"]})}
        ),
    },
)

# Provider-override values, some of which do not decode into their Grove type (the
# provideroverride.ValidateValue decode step).
_override = st.fixed_dictionaries(
    {"apiVersion": st.just("grove.io/v1alpha1")},
    optional={
        "target": st.sampled_from(["PodCliqueSet", "PodCliqueTemplateSpec", "PodCliqueScalingGroupConfig"]),
        "value": st.one_of(
            _values,
            st.sampled_from(
                [
                    {"spec": {"template": {"topologyConstraint": {}}}},
                    {"spec": {"replicas": "x", "template": {"topologyConstraint": {}}}},
                    {"topologyConstraint": {"packDomain": 5}},
                    {"topologyConstraint": {"newField": 1}, "replicas": 2**40},
                ]
            ),
        ),
    },
)


@st.composite
def components(draw: st.DrawFn, name: str) -> JSON:
    image = draw(st.sampled_from([IMAGE, "r:latest", "", "r@sha256:abc", "r:v1.2.3-rc.1"]))
    gpus = draw(st.sampled_from([None, "0", "1", "2", "500m"]))
    conts = [container(image=image or None, gpus=gpus)]
    if draw(st.booleans()):
        conts.append(container("side"))
    comp: JSON = {
        "name": name,
        "type": draw(st.sampled_from(["worker", "frontend", "prefill", "decode", "planner", "epp"])),
        "podTemplate": {"spec": {"containers": conts}},
    }
    extras = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "replicas": st.integers(0, 3),
                "minAvailable": st.integers(0, 2),
                "multinode": st.builds(lambda n: {"nodeCount": n}, st.integers(0, 3)),
                "sharedMemorySize": st.sampled_from(["1Gi", "-1", "0"]),
                "experimental": _experimental,
                "scalingAdapter": st.just({}),
                "topologyConstraint": st.just({"packDomain": "rack"}),
                "frontendSidecar": st.sampled_from(["", "side", "nope"]),
                "eppConfig": st.sampled_from([{"config": {}}, {"configMapRef": {"name": ""}}]),
                "runtimeVersionOverride": st.just("1.1.0"),
                "providerOverride": _override,
                "weird": _values,
            },
        )
    )
    comp.update(extras)
    return comp


@st.composite
def graphs(draw: st.DrawFn) -> JSON:
    names = draw(
        st.lists(st.sampled_from(["a", "b", "Frontend", "worker"]), min_size=0, max_size=3, unique=True)
    )
    comps = [draw(components(n)) for n in names]
    spec: JSON = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "priorityClassName": st.sampled_from(["", "high"]),
                "topologyConstraint": st.sampled_from([{"clusterTopologyName": "t"}, {"packDomain": "zone"}]),
                "restart": st.just({"strategy": {"order": ["a", "a"]}}),
                "backendFramework": st.sampled_from(["vllm", "sglang", ""]),
                "providerOverride": _override,
            },
        )
    )
    provider = draw(st.sampled_from(["component", "grove", None, "x"]))
    return dgd(comps, provider=provider, **spec)


def _check_decision_shape(d: Any) -> None:
    assert d.code in (200, 422), d.status
    if d.code == 422:
        causes = d.status["details"]["causes"]
        texts = [f"{c['field']}: {c['message']}" for c in causes]
        assert d.message.endswith("is invalid: " + aggregate_message(texts))


@given(graphs())
def test_answers_are_well_formed_and_deterministic(obj: JSON) -> None:
    before = copy.deepcopy(obj)
    d1 = validate(
        make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "CREATE", obj, copy_objects=False), CTX
    )
    assert obj == before  # validation never mutates the request
    _check_decision_shape(d1)
    d2 = validate(
        make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "CREATE", obj, copy_objects=False), CTX
    )
    assert (d1.allowed, d1.status, d1.warnings) == (d2.allowed, d2.status, d2.warnings)


@given(graphs(), st.randoms(use_true_random=False))
def test_admitted_object_stays_updatable(obj: JSON, rnd: Any) -> None:
    created = validate(make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "CREATE", obj), CTX)
    if not created.allowed:
        return
    # An unchanged update, even with the components reordered, raises no update error.
    new = copy.deepcopy(obj)
    rnd.shuffle(new["spec"]["components"])
    d = validate(make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "UPDATE", new, obj), CTX)
    assert d.allowed, d.status
    assert d.warnings == created.warnings
