"""validation/compat_status.py: when it vouches for a status, the conversion of the status half
succeeds.

The property is checked on whole objects: a hub DGD or DCD whose spec converts, given a
generated status (members of every type, conditions and times good and bad) and a generated
status payload; whenever :func:`status_converts` answers True, converting the object to v1alpha1
must not fail. It is stricter than the conversion, so False says nothing; the statuses the
repository's vectors and the benchmark carry must still be vouched for, or the lazy view would
convert them again.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from bench import payloads
from conversion import ConversionError
from conversion.dcd import CONVERTER as DCD_CONVERTER
from conversion.dgd import CONVERTER as DGD_CONVERTER
from domain.constants import ANN_DCD_STATUS, ANN_DGD_STATUS, KIND_DCD, KIND_DGD
from tests.conversion.support import load_vectors
from validation.compat_status import status_converts

J = dict[str, Any]
ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "x", "True"]),
    st.lists(st.sampled_from(["a", 1]), max_size=2),
    st.dictionaries(st.sampled_from(["a", "phase"]), st.integers(0, 2), max_size=2),
)
GOOD_TIMES = st.sampled_from(
    [
        "2026-02-03T14:05:11Z",
        "2026-02-03T14:05:11.25+02:00",
        "2026-02-03T4:05:11,5-24:00",
        "1999-12-31T23:59:59-01:30",
    ]
)
BAD_TIMES = st.sampled_from(
    [
        "yesterday",
        "2026-02-30T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-02-03T24:00:00Z",
        "2026-02-03T14:05:11",
        "2026-02-03t14:05:11z",
        "2026-02-03T14:05:11+25:00",
        "2026-02-03 14:05:11Z",
        "",
    ]
)
TIMES = st.one_of(GOOD_TIMES, BAD_TIMES, JUNK)
GENERATIONS = st.one_of(
    st.integers(0, 10),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 3.0, 2.5, 1e30, True]),
    JUNK,
)
TEXT = st.sampled_from(["Ready", "True", "False", "", "all_resources_are_ready"])

GOOD_CONDITION = st.fixed_dictionaries(
    {"type": TEXT, "status": TEXT, "lastTransitionTime": GOOD_TIMES},
    optional={"observedGeneration": st.integers(0, 10), "reason": TEXT, "message": TEXT},
)
ANY = st.one_of(TIMES, GENERATIONS, TEXT, JUNK)
REPLICA = st.fixed_dictionaries(
    {"componentKind": st.sampled_from(["PodClique", "Deployment"])},
    optional={
        "componentNames": st.lists(st.sampled_from(["a", "b"]), max_size=2),
        "componentName": st.sampled_from(["a", "b"]),
        "replicas": st.integers(0, 3),
        "readyReplicas": st.integers(0, 3),
    },
)
# Statuses as the operator writes them: every one converts.
GOOD_STATUS = st.fixed_dictionaries(
    {},
    optional={
        "observedGeneration": st.integers(0, 10),
        "state": TEXT,
        "placement": st.fixed_dictionaries({}, optional={"score": st.integers(0, 9), "state": TEXT}),
        "conditions": st.lists(GOOD_CONDITION, min_size=1, max_size=2),
        "restart": st.fixed_dictionaries({}, optional={"observedID": TEXT, "phase": TEXT}),
        "checkpoints": st.dictionaries(
            st.sampled_from(["w", "f"]),
            st.fixed_dictionaries({}, optional={"checkpointName": TEXT, "ready": st.booleans()}),
            min_size=1,
            max_size=2,
        ),
        "components": st.dictionaries(st.sampled_from(["Frontend", "w"]), REPLICA, min_size=1, max_size=2),
        "component": REPLICA,
        "rollingUpdate": st.fixed_dictionaries(
            {},
            optional={
                "phase": TEXT,
                "startTime": GOOD_TIMES,
                "endTime": GOOD_TIMES,
                "updatedComponents": st.lists(st.sampled_from(["w", "Frontend"]), max_size=2),
            },
        ),
    },
)
MEMBERS = (
    "observedGeneration",
    "state",
    "placement",
    "conditions",
    "restart",
    "checkpoints",
    "components",
    "component",
    "rollingUpdate",
)
CONDITION_KEYS = (
    "type",
    "status",
    "reason",
    "message",
    "observedGeneration",
    "lastTransitionTime",
    "Type",
    "LastTransitionTime",
    "extra",
)
NESTED_KEYS = (
    "startTime",
    "endTime",
    "updatedComponents",
    "phase",
    "componentNames",
    "componentName",
    "score",
)
# Where one value is replaced: a member, a member of the first condition, the first condition, a
# member of an object inside the status, an entry of a map of objects.
SITES = (
    *(("member", m) for m in MEMBERS),
    *(("condition", k) for k in CONDITION_KEYS),
    ("conditions", ""),
    *(("nested", k) for k in NESTED_KEYS),
    ("entry", "components"),
    ("entry", "checkpoints"),
)
# Every member present, so that every site exists.
FULL_STATUS = st.fixed_dictionaries(
    {
        "observedGeneration": st.integers(1, 10),
        "state": TEXT,
        "placement": st.fixed_dictionaries({"score": st.integers(0, 9)}),
        "conditions": st.lists(GOOD_CONDITION, min_size=1, max_size=2),
        "restart": st.fixed_dictionaries({"phase": TEXT}),
        "checkpoints": st.fixed_dictionaries({"w": st.fixed_dictionaries({"checkpointName": TEXT})}),
        "components": st.fixed_dictionaries({"w": REPLICA}),
        "component": REPLICA,
        "rollingUpdate": st.fixed_dictionaries(
            {"phase": TEXT, "startTime": GOOD_TIMES, "updatedComponents": st.lists(st.just("w"), max_size=1)}
        ),
    }
)


def _perturb(status: J, site: tuple[str, str], value: Any) -> None:
    """Replace the value at ``site`` (where an earlier replacement left no object to reach it,
    nothing changes)."""
    where, key = site
    conditions = status.get("conditions")
    first = conditions[0] if isinstance(conditions, list) and conditions else None
    if where == "member":
        status[key] = value
    elif where == "condition" and isinstance(first, dict):
        first[key] = value
    elif where == "conditions" and first is not None:
        conditions[0] = value
    elif where == "nested":
        objects = [status.get(m) for m in ("placement", "restart", "rollingUpdate", "component")]
        objects += [
            m.get("w") for m in (status.get("components"), status.get("checkpoints")) if isinstance(m, dict)
        ]
        for obj in objects:
            if isinstance(obj, dict):
                obj[key] = value
    elif where == "entry" and isinstance(status.get(key), dict):
        status[key]["w"] = value


@st.composite
def statuses(draw: Any) -> Any:
    """A good status with up to three values replaced by values of any kind, or no object."""
    status: J = draw(FULL_STATUS)
    for _ in range(draw(st.integers(0, 3))):
        _perturb(status, draw(st.sampled_from(SITES)), draw(ANY))
    return draw(st.one_of(st.just(status), st.just(status), st.just(status), JUNK))


SAVED = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "",
            "{",
            "null",
            "5",
            '{"services": 5}',
            '{"service": 5}',
            '{"services": {"w": {"componentName": "b", "componentNames": ["a"]}}}',
            '{"service": {"componentName": "b"}, "podSelector": {"app": "x"}}',
            '{"podSelector": {"app": 5}}',
            '{"services": {"w": {"componentNames": "a"}}}',
        ]
    ),
    JUNK,
)


def _hub(kind: str, status: Any, saved: Any) -> J:
    """A hub object of ``kind`` whose spec converts, with ``status`` and the status payload."""
    main = {"name": "main", "image": "img:1"}
    obj: J = {"apiVersion": BETA, "kind": kind, "metadata": {"name": "g", "namespace": "ns"}}
    if kind == KIND_DGD:
        obj["spec"] = {"components": [{"name": "w", "podTemplate": {"spec": {"containers": [main]}}}]}
    else:
        obj["spec"] = {"name": "w", "podTemplate": {"spec": {"containers": [main]}}}
    obj["status"] = status
    if saved is not None:
        obj["metadata"]["annotations"] = {ANN_DGD_STATUS if kind == KIND_DGD else ANN_DCD_STATUS: saved}
    return obj


def _converts(obj: J) -> bool:
    converter = DGD_CONVERTER if obj["kind"] == KIND_DGD else DCD_CONVERTER
    try:
        converter.convert(obj, ALPHA)
    except ConversionError:
        return False
    return True


KINDS = st.sampled_from([KIND_DGD, KIND_DCD])


def _vouched_converts(kind: str, status: Any, saved: Any) -> None:
    vouched = status_converts(kind, status, saved)
    event(f"vouched: {vouched}")
    if vouched:
        assert _converts(_hub(kind, status, saved))


@pytest.mark.parametrize("site", SITES, ids=lambda s: "-".join(filter(None, s)))
@settings(max_examples=max(20, settings.default.max_examples // 4))
@given(kind=KINDS, status=FULL_STATUS, value=ANY)
def test_a_vouched_status_converts(kind: str, status: J, site: tuple[str, str], value: Any) -> None:
    _perturb(status, site, value)
    _vouched_converts(kind, status, None)


@given(KINDS, statuses(), SAVED)
def test_a_vouched_status_and_payload_convert(kind: str, status: Any, saved: Any) -> None:
    _vouched_converts(kind, status, saved)


@pytest.mark.parametrize("kind", [KIND_DGD, KIND_DCD])
@given(status=GOOD_STATUS)
def test_statuses_as_the_operator_writes_them_are_vouched_for(kind: str, status: J) -> None:
    assert status_converts(kind, status, None)
    assert _converts(_hub(kind, status, None))


@pytest.mark.parametrize(
    "kind,status,saved",
    [
        (KIND_DGD, {"conditions": [{"type": "Ready", "lastTransitionTime": "yesterday"}]}, None),
        (KIND_DGD, {"conditions": [{"type": "Ready", "observedGeneration": 2**63}]}, None),
        (KIND_DCD, {"conditions": [{"type": "Ready", "observedGeneration": -(2**63) - 1}]}, None),
        (KIND_DGD, {"conditions": [{"type": "Ready", "Type": 5}]}, None),
        (KIND_DGD, {"conditions": {"type": "Ready"}}, None),
        (KIND_DGD, {"rollingUpdate": {"updatedComponents": 5}}, None),
        (KIND_DGD, {"conditions": [{"type": "Ready", "observedGeneration": True}]}, None),
        (KIND_DGD, {"rollingUpdate": {"startTime": "2026-02-30T00:00:00Z"}}, None),
        (KIND_DGD, {"components": {"w": 5}}, None),
        (KIND_DGD, {"placement": "x"}, None),
        (KIND_DGD, {"restart": ""}, None),
        (KIND_DGD, {}, "{"),
        (KIND_DGD, {}, '{"services": 5}'),
        (KIND_DCD, {"component": 5}, None),
        (KIND_DCD, {}, '{"service": 5}'),
        (KIND_DCD, "x", None),
    ],
)
def test_statuses_the_conversion_refuses_are_not_vouched_for(kind: str, status: Any, saved: Any) -> None:
    assert not _converts(_hub(kind, status, saved))
    assert not status_converts(kind, status, saved)


@pytest.mark.parametrize(
    "kind,status",
    [
        (KIND_DGD, {"conditions": [{"type": "Ready", "observedGeneration": 2**63 - 1}]}),
        (KIND_DCD, {"conditions": [{"type": "Ready", "observedGeneration": -(2**63)}]}),
        (KIND_DGD, {"conditions": [{"lastTransitionTime": "2026-02-03T14:05:11.999999999-23:59"}]}),
        (KIND_DGD, {"rollingUpdate": {"startTime": "2024-02-29T00:00:00Z", "endTime": None}}),
        (KIND_DGD, {"conditions": [], "components": {"w": None}, "checkpoints": {"w": None}}),
    ],
)
def test_the_bounds_the_conversion_accepts_are_vouched_for(kind: str, status: J) -> None:
    assert _converts(_hub(kind, status, None))
    assert status_converts(kind, status, None)


def _hub_objects(node: Any) -> list[J]:
    if isinstance(node, list):
        return [o for x in node for o in _hub_objects(x)]
    if not isinstance(node, dict):
        return []
    found = [o for v in node.values() for o in _hub_objects(v)]
    if node.get("apiVersion") == BETA and node.get("kind") in (KIND_DGD, KIND_DCD) and "status" in node:
        found.append(node)
    return found


VECTOR_OBJECTS = [
    o for v in load_vectors("vectors_dgd.jsonl") + load_vectors("vectors_dcd.jsonl") for o in _hub_objects(v)
]


@pytest.mark.parametrize("obj", VECTOR_OBJECTS, ids=lambda o: f"{o['kind']}-{o['metadata'].get('name', '')}")
def test_the_vectors_statuses_are_vouched_for(obj: J) -> None:
    key = ANN_DGD_STATUS if obj["kind"] == KIND_DGD else ANN_DCD_STATUS
    saved = (obj["metadata"].get("annotations") or {}).get(key)
    assert status_converts(obj["kind"], obj["status"], saved)
    assert _converts(copy.deepcopy(obj))


def test_the_benchmark_statuses_are_vouched_for() -> None:
    for build in (payloads.dgd_migrated_update, payloads.large_dgd_update, payloads.dcd_update):
        review = json.loads(json.dumps(build()))
        for obj in (review["request"]["object"], review["request"]["oldObject"]):
            key = ANN_DGD_STATUS if obj["kind"] == KIND_DGD else ANN_DCD_STATUS
            assert status_converts(
                obj["kind"], obj.get("status"), obj["metadata"].get("annotations", {}).get(key)
            )
