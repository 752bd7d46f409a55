"""gocompat.written: a value vouched for as already written as Go writes it is exactly what its
re-encoding gives, and skipping that re-encoding never changes a defaulter's answer, on every
fixture manifest and on generated values canonical and just off canonical (a quantity spelled
otherwise, a member missing, a null, a float for an integer, a folded name, key order)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kinds
from app.review.dispatch import review_admission
from bench import payloads
from conversion.v1alpha1.dcd import BETA_SPEC as DCD_SPEC
from conversion.v1alpha1.dgd import BETA_SPEC as DGD_SPEC
from conversion.v1alpha1.dgd import BETA_STATUS as DGD_STATUS
from conversion.v1alpha1.dgdr.types import BETA_SPEC as DGDR_SPEC
from conversion.v1alpha1.dgdr.types import BETA_STATUS as DGDR_STATUS
from defaulting import common
from domain.admission import AdmissionContext
from gocompat.decoding import decode_struct
from gocompat.encoding import encode
from gocompat.errors import GoTypeError
from gocompat.typed import Struct
from gocompat.written import encodes_as_is

_NO_STATUS = Struct(())
SCHEMAS: dict[str, tuple[Struct, Struct]] = {
    "DynamoGraphDeployment": (DGD_SPEC, DGD_STATUS),
    "DynamoComponentDeployment": (DCD_SPEC, _NO_STATUS),
    "DynamoGraphDeploymentRequest": (DGDR_SPEC, DGDR_STATUS),
}


def rewritten(value: Any, schema: Struct) -> Any:
    """The full path: ``value`` decoded into Go values and written again (None: no decode)."""
    try:
        decoded = decode_struct(value, schema, common._GO_EXACT)
    except GoTypeError:
        return None
    return encode(decoded, schema, values=True, strip=True, full=True)


def _objects() -> list[tuple[str, dict[str, Any]]]:
    """Every v1beta1 fixture manifest of the defaulted kinds, and every v1alpha1 one converted."""
    out: list[tuple[str, dict[str, Any]]] = []
    for kind in SCHEMAS:
        for doc in payloads.manifests(payloads.BETA, kind):
            out.append((kind, doc))
        for doc in payloads.manifests(payloads.ALPHA, kind):
            try:
                out.append((kind, kinds.convert(doc, payloads.BETA)))
            except Exception:  # a fixture its conversion refuses has no hub object
                continue
    return out


OBJECTS = _objects()
# (kind, a spec as sent, the same spec as Go writes it)
SPECS: list[tuple[str, Any, Any]] = []
for _kind, _obj in OBJECTS:
    _spec = _obj.get("spec")
    if isinstance(_spec, dict):
        _written = rewritten(_spec, SCHEMAS[_kind][0])
        SPECS.append((_kind, _spec, _written if _written is not None else _spec))


def _answers_agree(obj: dict[str, Any], kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``as_go_writes`` gives the same bytes with the skip as without it (and the spec it vouches
    for is its re-encoding)."""
    spec_schema, status_schema = SCHEMAS[kind]
    spec = obj.get("spec")
    if encodes_as_is(spec, spec_schema):
        assert rewritten(spec, spec_schema) == spec
    skipped = common.as_go_writes(obj, spec_schema, status_schema)
    with monkeypatch.context() as m:
        m.setattr(common, "encodes_as_is", lambda value, kind: False)
        full = common.as_go_writes(obj, spec_schema, status_schema)
    assert orjson.dumps(skipped) == orjson.dumps(full)


def test_the_fixtures_answer_alike_and_their_go_writing_is_vouched_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vouched = 0
    for kind, spec, written in SPECS:
        for value in (spec, written):
            _answers_agree({"apiVersion": payloads.BETA, "kind": kind, "spec": value}, kind, monkeypatch)
        vouched += encodes_as_is(written, SCHEMAS[kind][0])
    # Most specs as Go writes them are recognised (those with a time or base64 value are not).
    assert vouched >= len(SPECS) * 3 // 4, (vouched, len(SPECS))


def test_the_migrated_dgd_create_skips_the_re_encoding() -> None:
    obj = payloads.dgd_migrated_create()["request"]["object"]
    assert encodes_as_is(obj["spec"], DGD_SPEC)
    assert encodes_as_is(obj["status"], DGD_STATUS)


# --------------------------------------------------------------------------- just off canonical

Path = list[Any]


def _paths(value: Any, path: Path, out: list[Path]) -> list[Path]:
    out.append(path)
    if isinstance(value, dict):
        for k, v in value.items():
            _paths(v, [*path, k], out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _paths(v, [*path, i], out)
    return out


def _at(value: Any, path: Path) -> Any:
    for p in path:
        value = value[p]
    return value


def _respelled(v: Any) -> Any:
    """Another spelling Go's quantity, number or time parser reads as the same value."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return float(v)
    if isinstance(v, float):
        return str(v)
    if isinstance(v, str):
        if v.isdigit():
            return int(v)
        if v.endswith("Gi") and v[:-2].isdigit():
            return f"{int(v[:-2]) * 1024}Mi"
        if v.endswith("Z"):
            return v[:-1] + "+00:00"
        if v.endswith("s") and v[:-1].isdigit():
            return f"{v[:-1]}.0s"
        return v + " "
    return v


EDITS: dict[str, Callable[[Any, Any], Any]] = {
    "respell": lambda v, _: _respelled(v),
    "null": lambda v, _: None,
    "zero": lambda v, _: type(v)() if isinstance(v, str | int | float | bool | dict | list) else v,
    "empty object": lambda v, _: {},
    "string": lambda v, _: "1",
    "integer": lambda v, _: 1,
    "quantity": lambda v, _: "1.5Gi",
    "float": lambda v, _: 1.5,
    "big": lambda v, _: 2**53 + 1,
}


QUANTITY_MEMBERS = ["sharedMemorySize", "size", "limits", "requests", "overhead"]
# Canonical and not: Go writes 1.5Gi as 1536Mi, 1 as "1", 1000m as 1, 0.5 as 500m.
QUANTITIES: list[Any] = [
    "1536Mi",
    "1.5Gi",
    "1Gi",
    "1024Mi",
    1,
    "1",
    "1000m",
    "500m",
    "0.5",
    "0",
    {"cpu": "1"},
    {"cpu": "1000m", "memory": "1Gi"},
    {"nvidia.com/gpu": 1},
]


def _edit(spec: Any, draw: Any) -> Any:
    out = copy.deepcopy(spec)
    paths = _paths(out, [], [])
    for _ in range(draw(st.integers(1, 2))):
        paths = _paths(out, [], [])
        path = draw(st.sampled_from(paths))
        how = draw(
            st.sampled_from(["drop", "unknown", "fold", "reorder", "quantities", "quantities", *EDITS])
        )
        target = _at(out, path)
        if how == "quantities":
            # the quantity members of the spec, a component, a volume, a DGDR's resources
            near = [
                p
                for p in paths
                if (not p or (len(p) == 2 and isinstance(p[1], int))) and isinstance(_at(out, p), dict)
            ]
            target = _at(out, draw(st.sampled_from(near)))
            target[draw(st.sampled_from(QUANTITY_MEMBERS))] = draw(st.sampled_from(QUANTITIES))
            continue
        if how in ("drop", "unknown", "fold", "reorder"):
            if not isinstance(target, dict) or (how != "unknown" and not target):
                continue
            keys = list(target)
            if how == "drop":
                del target[draw(st.sampled_from(keys))]
            elif how == "unknown":
                target[draw(st.sampled_from(["x", "Name", "replicas", "spec", "kind"]))] = draw(
                    st.sampled_from([1, "a", None, {}, []])
                )
            elif how == "fold":
                key = draw(st.sampled_from(keys))
                target[key.upper() if key != key.upper() else key.lower()] = target.pop(key)
            else:
                order = draw(st.permutations(keys))
                items = {k: target[k] for k in order}
                target.clear()
                target.update(items)
            continue
        if not path:
            continue
        parent = _at(out, path[:-1])
        parent[path[-1]] = EDITS[how](target, draw)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_spec_just_off_go_s_writing_answers_as_the_full_path(
    monkeypatch: pytest.MonkeyPatch, data: Any
) -> None:
    kind, spec, written = data.draw(st.sampled_from(SPECS))
    edited = _edit(data.draw(st.sampled_from([spec, written])), data.draw)
    obj = {"apiVersion": payloads.BETA, "kind": kind, "metadata": {"name": "a"}, "spec": edited}
    if data.draw(st.booleans()):
        obj["status"] = _edit({"state": "", "observedGeneration": 1}, data.draw)
    _answers_agree(obj, kind, monkeypatch)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_quantity_spelled_otherwise_answers_as_the_full_path(
    monkeypatch: pytest.MonkeyPatch, data: Any
) -> None:
    kind, spec, written = data.draw(st.sampled_from([s for s in SPECS if s[0] == "DynamoGraphDeployment"]))
    value = copy.deepcopy(data.draw(st.sampled_from([spec, written])))
    target = data.draw(st.sampled_from([c for c in value.get("components") or [{}] if isinstance(c, dict)]))
    target["sharedMemorySize"] = data.draw(st.sampled_from(QUANTITIES))
    _answers_agree({"apiVersion": payloads.BETA, "kind": kind, "spec": value}, kind, monkeypatch)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_mutate_answer_is_the_full_path_s(monkeypatch: pytest.MonkeyPatch, data: Any) -> None:
    review = payloads.dgd_migrated_create()
    obj = review["request"]["object"]
    obj["spec"] = _edit(
        data.draw(st.sampled_from([obj["spec"], rewritten(obj["spec"], DGD_SPEC)])), data.draw
    )
    ctx = AdmissionContext()
    skipped = review_admission(copy.deepcopy(review), "mutate", ctx).body
    with monkeypatch.context() as m:
        m.setattr(common, "encodes_as_is", lambda value, kind: False)
        full = review_admission(copy.deepcopy(review), "mutate", ctx).body
    assert skipped == full
