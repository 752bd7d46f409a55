"""validation/compat_plain.py and its use: the compatibility pass of a v1beta1 request whose spec
decodes as it is answers without building the v1alpha1 view only when the view would build and
hold no compatibility field, so every answer is the one the view gives.

Shown for every conversion vector, admission vector, manifest and example, for the benchmark's
objects, and for migrated objects whose save, status and components are then edited toward each
way the predicates can go wrong (a save restoring a compatibility field under any spelling, a
null service, ``pvcs``, other envelopes, a status that does not convert, components carrying a
compatibility field or sharing a name).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.review.schema import check_object
from bench import payloads
from domain.admission import AdmissionContext, Decision
from domain.constants import ANN_DCD_SPEC, ANN_DCD_STATUS, ANN_DGD_SPEC, ANN_DGD_STATUS
from kinds import convert
from tests.conversion.strategies import alpha_dcd, alpha_dgd
from tests.validation.test_compat_view import (
    ADMISSION_VECTORS,
    CONVERSION_VECTORS,
    MANIFESTS,
    _hub_forms,
    edited_migrated,
)
from tests.validation.view_checks import BETA, DCD, DGD, touched_object
from validation import alpha, compat_plain, compat_view, dcd, dgd

J = dict[str, Any]
PLAIN = settings(max_examples=max(20, settings.default.max_examples // 3))


def _decodes(hub: J) -> bool:
    problem, decodes = check_object(hub, BETA, str(hub.get("kind", "")))
    return problem is None and decodes


def _view_needed(hub: J) -> bool:
    if hub["kind"] == DGD:
        return alpha.dgd_view_needed(hub, spec_decodes=True)
    return alpha.dcd_view_needed(hub, spec_decodes=True)


def _answers(hub: J, spec_decodes: bool) -> list[Decision]:
    ctx = AdmissionContext()
    touched = touched_object(hub)
    out = []
    for rv_source in ("v1beta1", "v1alpha1"):
        for operation, new, old in (("CREATE", hub, None), ("UPDATE", hub, hub), ("UPDATE", touched, hub)):
            if hub["kind"] == DCD:
                out.append(dcd.validate_hub(operation, new, old, ctx, rv_source, spec_decodes=spec_decodes))
            else:
                out.append(
                    dgd.validate_hub(
                        operation,
                        new,
                        old,
                        ctx,
                        rv_source,
                        "kubernetes-admin",
                        "n",
                        spec_decodes=spec_decodes,
                    )
                )
    return out


def assert_plain_is_right(hub: J) -> bool:
    """When the view is said not to be needed, the whole view builds and the pass finds nothing
    in it; and the answers are those given without the shortcut. Returns whether it was taken."""
    if not isinstance(hub, dict) or hub.get("kind") not in (DGD, DCD) or not _decodes(hub):
        return False
    needed = _view_needed(hub)
    if not needed:
        warnings: list[str] = []
        if hub["kind"] == DGD:
            assert alpha.dgd_errors(compat_view.full_graph(hub), warnings, alpha_source=False) == []
        else:
            assert alpha.dcd_errors(compat_view.full_component(hub), warnings, alpha_source=False) == []
        assert warnings == []
    if _decodes(touched_object(hub)):
        assert _answers(hub, True) == _answers(hub, False)
    return not needed


def _hubs(objs: list[Any]) -> list[J]:
    return [h for obj in objs for h in _hub_forms(obj)]


def test_vectors_manifests_and_examples() -> None:
    hubs = _hubs([o for v in CONVERSION_VECTORS for o in (v["input"], v["expected"])])
    hubs += _hubs([o for v in ADMISSION_VECTORS for o in (v["object"], v.get("oldObject"))])
    hubs += _hubs([obj for _, obj in MANIFESTS])
    taken = [assert_plain_is_right(h) for h in hubs]
    assert sum(taken) >= 20, sum(taken)  # not vacuous: many migrated objects go without a view


@pytest.mark.parametrize(
    "build", [payloads.dgd_migrated_update, payloads.dgd_migrated_create, payloads.large_dgd_update]
)
def test_the_benchmark_objects_go_without_a_view(build: Callable[[], J]) -> None:
    request = build()["request"]
    for obj in (request["object"], request.get("oldObject")):
        if obj is not None:
            assert ANN_DGD_SPEC in obj["metadata"]["annotations"]
            assert assert_plain_is_right(obj)


# --- edits toward each way the predicates can go wrong -------------------------------------------------

_SAVED_KEYS = (
    "annotations",
    "Annotations",
    "dynamoNamespace",
    "DYNAMONAMESPACE",
    "autoscaling",
    "ingress",
    "sharedMemory",
    "sharedmemory",
    "gpuMemoryService",
    "failover",
    "frontendSidecar",
    "volumeMounts",
    "volumemounts",
    "annotationſ",
    "envFromSecret",
    "resources",
    "extraPodSpec",
    "unknownMember",
)
_SAVED_VALUES = (
    None,
    {},
    [],
    "x",
    1,
    {"enabled": False},
    {"enabled": True, "host": ""},
    {"a": "b"},
    [{"name": "v", "mountPoint": "/m"}],
    [{"name": "v", "useAsCompilationCache": True}],
)
_HUB_FIELDS: tuple[tuple[str, Any], ...] = (
    ("sharedMemorySize", "1Gi"),
    ("eppConfig", {"configMapRef": {"name": "c"}}),
    ("frontendSidecar", {"image": "fe:1"}),
    ("compilationCache", {"pvcName": "p", "mountPath": "/c"}),
    ("experimental", {"failover": {"mode": "intraPod"}}),
    ("experimental", {"gpuMemoryService": {"mode": "intraPod"}}),
    ("globalDynamoNamespace", True),
    ("runtimeVersionOverride", "1.0.0"),
)
_STATUSES: tuple[Any, ...] = (
    None,
    {},
    {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-12T09:30:00Z"}]},
    {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "yesterday"}]},
    {"observedGeneration": "one"},
)


def _annotations(hub: J) -> J:
    meta = hub.setdefault("metadata", {})
    anns = meta.get("annotations")
    if not isinstance(anns, dict):
        anns = meta["annotations"] = {}
    return anns


def _save(hub: J) -> tuple[str, Any]:
    key = ANN_DGD_SPEC if hub["kind"] == DGD else ANN_DCD_SPEC
    raw = _annotations(hub).get(key)
    try:
        return key, orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return key, None


def _entries(doc: Any, kind: str) -> list[J]:
    spec = doc.get("spec") if isinstance(doc, dict) else None
    if kind == DCD:
        return [spec] if isinstance(spec, dict) else []
    services = spec.get("services") if isinstance(spec, dict) else None
    return [s for s in services.values() if isinstance(s, dict)] if isinstance(services, dict) else []


@st.composite
def _edited(draw: st.DrawFn) -> J:
    if draw(st.booleans()):
        hub = draw(edited_migrated())
    else:
        hub = convert(draw(st.one_of(alpha_dgd(), alpha_dcd())), BETA)
    hub = copy.deepcopy(hub)
    kind = hub["kind"]
    key, doc = _save(hub)
    if doc is None:
        doc = {"version": 1, "spec": {"services": {}} if kind == DGD else {}}
    for _ in range(draw(st.integers(0, 3))):
        edit = draw(st.sampled_from(["member", "null-service", "pvcs", "envelope", "status", "hub", "twin"]))
        entries = _entries(doc, kind)
        if edit == "member" and entries:
            draw(st.sampled_from(entries))[draw(st.sampled_from(_SAVED_KEYS))] = draw(
                st.sampled_from(_SAVED_VALUES)
            )
        elif edit == "null-service" and kind == DGD and isinstance(doc.get("spec"), dict):
            doc["spec"].setdefault("services", {})[draw(st.sampled_from(["gone", "Frontend"]))] = None
        elif edit == "pvcs" and kind == DGD and isinstance(doc.get("spec"), dict):
            doc["spec"][draw(st.sampled_from(["pvcs", "PVCs"]))] = draw(
                st.sampled_from([None, [], [{"name": "p"}], "x"])
            )
        elif edit == "envelope":
            form = draw(st.sampled_from(["bare", "Spec", "version", "null", "list", "broken"]))
            spec = doc.get("spec")
            doc = {
                "bare": spec,
                "Spec": {"version": 1, "Spec": spec},
                "version": {"version": "one", "spec": spec},
                "null": None,
                "list": [spec],
                "broken": "{",
            }[form]
        elif edit == "status":
            hub["status"] = draw(st.sampled_from(_STATUSES))
            if draw(st.booleans()):
                status_key = ANN_DGD_STATUS if kind == DGD else ANN_DCD_STATUS
                _annotations(hub)[status_key] = draw(st.sampled_from(["{", '{"version":1}', "null", "[]"]))
        elif edit in ("hub", "twin"):
            spec = hub.get("spec")
            comps = (spec.get("components") if kind == DGD else [spec]) if isinstance(spec, dict) else None
            comps = [c for c in comps or [] if isinstance(c, dict)]
            if not comps:
                continue
            target = draw(st.sampled_from(comps))
            if edit == "twin" and kind == DGD:
                spec["components"].append(copy.deepcopy(target))
            else:
                field, value = draw(st.sampled_from(_HUB_FIELDS))
                target[field] = copy.deepcopy(value)
        if not isinstance(doc, dict):
            break
    raw = doc if isinstance(doc, str) else orjson.dumps(doc).decode()
    if draw(st.booleans()):
        # A name written with an escape, which only the JSON reads as that name.
        start = draw(st.integers(0, len(raw)))
        raw = raw[:start] + re.sub(r'"([a-z])', lambda m: f'"\\u{ord(m.group(1)):04x}', raw[start:], count=1)
    _annotations(hub)[key] = raw
    return hub


@PLAIN
@given(_edited())
def test_edited_objects(hub: J) -> None:
    assert_plain_is_right(hub)


def test_each_way_to_need_the_view() -> None:
    """Each thing the predicates read, changed on a migrated object that goes without a view,
    makes the view needed again (so no edit above is invisible to them)."""
    base = payloads.dgd_migrated_update()["request"]["object"]
    assert not _view_needed(base)

    def needed(edit: Callable[[J], None]) -> bool:
        hub = copy.deepcopy(base)
        edit(hub)
        return _view_needed(hub)

    def save(edit: Callable[[J], None]) -> Callable[[J], None]:
        def apply(hub: J) -> None:
            doc = orjson.loads(hub["metadata"]["annotations"][ANN_DGD_SPEC])
            edit(doc)
            hub["metadata"]["annotations"][ANN_DGD_SPEC] = orjson.dumps(doc).decode()

        return apply

    for name in (
        "annotations",
        "ANNOTATIONS",
        "volumeMounts",
        "frontendSidecar",
        "gpuMemoryService",
        "failover",
    ):
        assert needed(save(lambda d, n=name: d["spec"]["services"]["Frontend"].__setitem__(n, {})))
    assert needed(save(lambda d: d["spec"]["services"]["Frontend"].__setitem__("annotationſ", {})))
    assert needed(save(lambda d: d["spec"]["services"].__setitem__("Gone", None)))
    assert needed(save(lambda d: d["spec"].__setitem__("pvcs", [])))
    assert needed(lambda h: h.__setitem__("status", _STATUSES[3]))  # a time that does not parse
    assert needed(lambda h: h["spec"]["components"].append(copy.deepcopy(h["spec"]["components"][0])))
    assert needed(lambda h: h["spec"]["components"][0].__setitem__("sharedMemorySize", "1Gi"))
    assert needed(lambda h: h.__setitem__("apiVersion", "nvidia.com/v1alpha1"))
    assert not compat_plain.graph_builds_plain({**base, "kind": DCD})
    # The save's text is read first: a word in a value, or an escape, sends it to its JSON.
    assert not needed(
        save(lambda d: d["spec"]["services"]["Frontend"].__setitem__("envFromSecret", "ingress-null"))
    )

    def escaped(hub: J) -> None:
        anns = hub["metadata"]["annotations"]
        raw = anns[ANN_DGD_SPEC]
        anns[ANN_DGD_SPEC] = raw.replace('"envFromSecret":"hf-token-secret"', '"\\u0061nnotations":{}', 1)
        assert anns[ANN_DGD_SPEC] != raw

    assert needed(escaped)
    # Nothing to restore: a save that does not parse, or restores other members only.
    assert not needed(save(lambda d: d["spec"]["services"]["Frontend"].__setitem__("resources", {})))
    assert not needed(lambda h: h["metadata"]["annotations"].__setitem__(ANN_DGD_SPEC, "{"))


def test_without_a_decoding_spec_the_view_is_built() -> None:
    hub = payloads.dgd_migrated_update()["request"]["object"]
    assert alpha.dgd_view_needed(hub, spec_decodes=False)
    assert not alpha.dgd_view_needed(hub, spec_decodes=True)
    assert compat_plain.graph_builds_plain(hub)
