"""The lazy v1alpha1 view (validation/compat_view.py) against the whole conversion's view (the
checks are in tests/validation/view_checks.py).

Every value the compatibility rules can read (:data:`SERVICE_READS`, :data:`GRAPH_READS`,
:data:`COMPONENT_READS`: accessor paths evaluated on both views) is the same, a view that cannot be
built fails with the same error, and validation answers the same with either view, for every
conversion vector, admission vector and manifest of the repository, for generated objects
(v1alpha1 objects brought to the hub, v1beta1 objects, and migrated objects edited as v1beta1) and
for objects the conversion refuses.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import kinds
from conversion import ConversionError
from domain.admission import AdmissionContext
from kinds import convert
from tests.admission_helpers import make_input
from tests.conversion.strategies import alpha_dcd, alpha_dgd, beta_component, beta_dcd, beta_dgd
from tests.conversion.support import load_vectors
from tests.validation.conversion_probe import require_conversion
from tests.validation.view_checks import (
    ALPHA,
    BETA,
    COMPONENT_READS,
    DCD,
    DGD,
    GRAPH_READS,
    SERVICE_READS,
    J,
    assert_same,
    assert_same_converted,
    assert_same_decision,
)
from validation import alpha, compat_view
from validation.compat_view import (
    CompatibilityViewError,
    ComponentView,
    FullService,
    GraphView,
    LazyService,
    ServiceView,
)

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"

# Each example converts whole objects several times: a third of the profile's example count.
VIEW = settings(max_examples=max(20, settings.default.max_examples // 3))


@pytest.fixture(autouse=True)
def _conversion() -> None:
    require_conversion(DGD)
    require_conversion(DCD)


def test_reads_are_every_accessor() -> None:
    public = {n for n, v in vars(ServiceView).items() if callable(v) and not n.startswith("_")}
    assert public - {"whole", "light"} == set(SERVICE_READS)
    assert set(GraphView.__dataclass_fields__) == {*GRAPH_READS, "services"}
    assert set(ComponentView.__dataclass_fields__) == {*COMPONENT_READS, "spec"}


# --- the repository's objects ------------------------------------------------------------------------


def _alpha_forms(obj: Any) -> Iterator[J]:
    if isinstance(obj, dict) and obj.get("kind") in (DGD, DCD) and obj.get("apiVersion") == ALPHA:
        yield obj


def _hub_forms(obj: Any) -> Iterator[J]:
    """``obj`` in the hub version when it is a DGD or DCD (converted when it is v1alpha1)."""
    if not isinstance(obj, dict) or obj.get("kind") not in (DGD, DCD):
        return
    if obj.get("apiVersion") == BETA:
        yield obj
    elif obj.get("apiVersion") == ALPHA:
        try:
            yield convert(obj, BETA)
        except ConversionError:
            return


def _load_yaml(path: Path) -> J:
    obj: J = yaml.safe_load(path.read_text())
    return obj


def _manifests() -> list[tuple[str, J]]:
    paths = [
        *sorted((FIXTURES / "admission" / "manifests").glob("*/*/*.yaml")),
        *sorted((FIXTURES / "conversion" / "manifests").glob("*.yaml")),
        *sorted((ROOT / "examples" / "manifests").glob("*.yaml")),
    ]
    out = []
    for p in paths:
        obj = _load_yaml(p)
        if obj.get("kind") in (DGD, DCD):
            obj.setdefault("metadata", {}).setdefault("namespace", "default")
            out.append((str(p.relative_to(ROOT)), obj))
    return out


def _examples() -> list[tuple[str, J]]:
    out = []
    for p in sorted((ROOT / "examples").glob("*/*.json")):
        doc = json.loads(p.read_text())
        request = doc.get("request") or {}
        for i, obj in enumerate(
            [request.get("object"), request.get("oldObject"), *(request.get("objects") or [])]
        ):
            if isinstance(obj, dict) and obj.get("kind") in (DGD, DCD):
                out.append((f"{p.relative_to(ROOT)}#{i}", obj))
    return out


def _admission_vectors() -> list[J]:
    out = []
    for kind in (DGD, DCD):
        for suffix in ("jsonl", "validating.jsonl"):
            path = FIXTURES / "admission" / f"{kind}.{suffix}"
            out.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return [v for v in out if v.get("webhook") == "validating"]


CONVERSION_VECTORS = load_vectors("vectors_dgd.jsonl") + load_vectors("vectors_dcd.jsonl")
ADMISSION_VECTORS = _admission_vectors()
MANIFESTS = _manifests() + _examples()


@pytest.mark.parametrize("vector", CONVERSION_VECTORS, ids=[v["name"] for v in CONVERSION_VECTORS])
def test_conversion_vector(vector: J) -> None:
    hubs = [h for obj in (vector["input"], vector["expected"]) for h in _hub_forms(obj)]
    assert hubs
    for hub in hubs:
        assert_same(hub)
    for obj in (vector["input"], vector["expected"]):
        for alpha_obj in _alpha_forms(obj):
            assert_same_converted(alpha_obj)


@pytest.mark.parametrize("vector", ADMISSION_VECTORS, ids=[v["name"] for v in ADMISSION_VECTORS])
def test_admission_vector(vector: J) -> None:
    for obj in (vector["object"], vector.get("oldObject")):
        for hub in _hub_forms(obj):
            assert_same(hub)
        for alpha_obj in _alpha_forms(obj):
            assert_same_converted(alpha_obj)
    assert_same_decision(
        lambda: kinds.validate(
            make_input(
                vector["apiVersion"],
                vector["kind"],
                vector["operation"],
                vector["object"],
                vector.get("oldObject"),
            ),
            AdmissionContext(),
        )
    )


@pytest.mark.parametrize("name,obj", MANIFESTS, ids=[n for n, _ in MANIFESTS])
def test_manifest(name: str, obj: J) -> None:
    for hub in _hub_forms(obj):
        assert_same(hub)
    for alpha_obj in _alpha_forms(obj):
        assert_same_converted(alpha_obj)
    for operation, old in (("CREATE", None), ("UPDATE", obj)):
        decision = assert_same_decision(
            lambda op=operation, o=old: kinds.validate(
                make_input(obj["apiVersion"], obj["kind"], op, obj, o), AdmissionContext()
            )
        )
        assert decision.code != 500


def test_the_sets_are_complete() -> None:
    assert len(CONVERSION_VECTORS) == 107
    assert {v["kind"] for v in ADMISSION_VECTORS} == {DGD, DCD}
    assert {o["kind"] for _, o in MANIFESTS} == {DGD, DCD}
    assert any("nvidia.com/dgd-spec" in json.dumps(v) for v in ADMISSION_VECTORS)


# --- generated objects -------------------------------------------------------------------------------


@VIEW
@given(st.one_of(alpha_dgd(), alpha_dcd()))
def test_migrated_objects(obj: J) -> None:
    """A v1alpha1 object brought to the hub (it carries the v1alpha1 save)."""
    hub = convert(obj, BETA)
    assert_same(hub)
    assert_same_converted(obj)
    assert_same_decision(
        lambda: kinds.validate(make_input(ALPHA, obj["kind"], "UPDATE", obj, obj), AdmissionContext())
    )


@VIEW
@given(st.one_of(beta_dgd(), beta_dcd()))
def test_hub_objects(obj: J) -> None:
    """A v1beta1 object, as written and after a round trip through v1alpha1."""
    assert_same(obj)
    assert_same(convert(convert(obj, ALPHA), BETA))


@st.composite
def edited_migrated(draw: st.DrawFn) -> J:
    """A migrated object whose components were then edited as v1beta1: the save annotation and the
    hub fields disagree (components replaced, merged with other fields, added or dropped)."""
    if draw(st.booleans()):
        hub = convert(draw(alpha_dcd()), BETA)
        edit = draw(beta_dcd())["spec"]
        spec = hub.get("spec") or {}
        mode = draw(st.sampled_from(["replace", "merge", "keep"]))
        hub["spec"] = edit if mode == "replace" else {**spec, **edit} if mode == "merge" else spec
        return hub
    hub = convert(draw(alpha_dgd()), BETA)
    components = []
    for c in (hub.get("spec") or {}).get("components") or []:
        mode = draw(st.sampled_from(["replace", "merge", "keep", "drop"]))
        if mode == "drop":
            continue
        edit = draw(beta_component(c["name"]))
        components.append(edit if mode == "replace" else {**c, **edit} if mode == "merge" else c)
    if draw(st.booleans()):
        components.append(draw(beta_component("added")))
    hub.setdefault("spec", {})["components"] = components
    return hub


@VIEW
@given(edited_migrated())
def test_edited_migrated_objects(hub: J) -> None:
    assert_same(hub)


# --- v1alpha1 services on each derivation path ------------------------------------------------------

_IMG = {"extraPodSpec": {"mainContainer": {"image": "img:1"}}}
_CACHE = {"name": "c", "mountPoint": "/c", "useAsCompilationCache": True}
EDGE_SERVICES: dict[str, J] = {
    "two-cache-mounts-only": {"volumeMounts": [_CACHE, {**_CACHE, "name": "d", "mountPoint": "/d"}]},
    "two-cache-mounts-and-main": {"volumeMounts": [_CACHE, {**_CACHE, "name": "d"}], **_IMG},
    "cache-plain-and-main-mounts": {
        "volumeMounts": [{"name": "m", "mountPoint": "/m"}, _CACHE],
        "extraPodSpec": {
            "mainContainer": {"image": "img:1", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}
        },
    },
    "mount-without-mount-point": {"volumeMounts": [{"name": "m"}], **_IMG},
    "main-container-mounts-only": {
        "extraPodSpec": {"mainContainer": {"volumeMounts": [{"name": "x", "mountPath": "/x"}]}}
    },
    "frontend-sidecar-clash": {
        "frontendSidecar": {"image": "fe:1"},
        "extraPodSpec": {"containers": [{"name": "sidecar-frontend", "image": "mine"}], "mainContainer": {}},
    },
    "frontend-sidecar-no-pod": {"frontendSidecar": {"image": "fe:1", "envFromSecret": ""}},
    "shared-memory-disabled-zero": {"sharedMemory": {"disabled": True, "size": "0"}, **_IMG},
    "shared-memory-zero": {"sharedMemory": {"size": "0"}},
    "shared-memory-empty": {"sharedMemory": {}},
    "disabled-gms-and-failover": {
        "gpuMemoryService": {"enabled": False},
        "failover": {"enabled": False, "mode": "intraPod", "numShadows": 3},
        "checkpoint": {"enabled": False},
        "scalingAdapter": {"enabled": False},
    },
    "intra-pod-failover-shadows": {"failover": {"enabled": True, "mode": "intraPod", "numShadows": 2}},
    "ingress-without-host": {"ingress": {"enabled": True}},
    "epp-both": {"eppConfig": {"configMapRef": {"name": "c"}, "config": {"plugins": []}}},
    "epp-neither": {"eppConfig": {}},
    "vllm-backend-annotation": {"annotations": {"nvidia.com/vllm-distributed-executor-backend": "MP2"}},
    "dynamo-namespace-empty": {"dynamoNamespace": "", "globalDynamoNamespace": True},
    "autoscaling-empty": {"autoscaling": {}},
    "main-container-empty": {"extraPodSpec": {"mainContainer": {"name": "custom"}}},
    "semver-image-and-override": {
        "runtimeVersionOverride": "1.0.0",
        "extraPodSpec": {"mainContainer": {"image": "x:1.2.3"}},
    },
}


def _edge_object(kind: str, service: J) -> J:
    meta: J = {"name": "g.x", "namespace": "ns"}
    if kind == DCD:
        meta["ownerReferences"] = [{"apiVersion": BETA, "kind": DGD, "name": "g.x", "uid": "u"}]
        return {
            "apiVersion": ALPHA,
            "kind": DCD,
            "metadata": meta,
            "spec": {"componentType": "worker", **service},
        }
    spec = {"pvcs": [{"size": "1Gi"}], "services": {"w": {"componentType": "worker", **service}, "z": {}}}
    return {"apiVersion": ALPHA, "kind": DGD, "metadata": meta, "spec": spec}


@pytest.mark.parametrize("kind", [DGD, DCD])
@pytest.mark.parametrize("case", sorted(EDGE_SERVICES))
def test_edge_services(kind: str, case: str) -> None:
    obj = _edge_object(kind, copy.deepcopy(EDGE_SERVICES[case]))
    hub = convert(obj, BETA)
    assert_same(hub)
    assert_same(convert(convert(hub, ALPHA), BETA))
    for operation, old in (("CREATE", None), ("UPDATE", obj)):
        assert_same_decision(
            lambda op=operation, o=old: kinds.validate(
                make_input(ALPHA, kind, op, obj, o), AdmissionContext()
            )
        )


# --- objects the conversion refuses, and other edges --------------------------------------------------


def _base(kind: str) -> J:
    """A migrated object with a status and status payload."""
    if kind == DCD:
        alpha: J = {
            "apiVersion": ALPHA,
            "kind": DCD,
            "metadata": {
                "name": "w",
                "namespace": "ns",
                "ownerReferences": [{"apiVersion": BETA, "kind": DGD, "name": "g.x", "uid": "u"}],
            },
            "spec": {
                "serviceName": "w",
                "componentType": "worker",
                "dynamoNamespace": "legacy",
                "volumeMounts": [{"name": "cache", "mountPoint": "/c", "useAsCompilationCache": True}],
                "extraPodSpec": {"mainContainer": {"image": "img:1"}},
            },
            "status": {"service": {"componentKind": "Deployment", "componentName": "a", "replicas": 1}},
        }
    else:
        alpha = {
            "apiVersion": ALPHA,
            "kind": DGD,
            "metadata": {"name": "g.x", "namespace": "ns"},
            "spec": {
                "pvcs": [{"name": "p"}],
                "services": {
                    "Frontend": {
                        "componentType": "frontend",
                        "frontendSidecar": {"image": "fe:1"},
                        "extraPodSpec": {"mainContainer": {"image": "img:1"}},
                    },
                    "w": {
                        "componentType": "worker",
                        "ingress": {"enabled": True},
                        "volumeMounts": [{"name": "m", "mountPoint": "/m"}],
                        "extraPodSpec": {"mainContainer": {"image": "img:1"}},
                    },
                },
            },
            "status": {
                "state": "pending",
                "services": {"w": {"componentKind": "Deployment", "componentName": "a", "replicas": 1}},
            },
        }
    return convert(alpha, BETA)


def _ann(hub: J, key: str, value: Any) -> None:
    hub["metadata"].setdefault("annotations", {})[key] = value


def _payloads(part: str, dgd_value: Any, dcd_value: Any) -> Callable[[J], None]:
    """Set the ``spec`` or ``status`` payload annotation of a DGD and of a DCD."""

    def edit(hub: J) -> None:
        _ann(hub, f"nvidia.com/dgd-{part}", dgd_value)
        _ann(hub, f"nvidia.com/dcd-{part}", dcd_value)

    return edit


def _first_component(hub: J) -> J:
    spec: J = hub["spec"]
    return spec if hub["kind"] == DCD else spec["components"][0]  # type: ignore[no-any-return]


def _set(path: str, value: Any) -> Callable[[J], None]:
    def edit(hub: J) -> None:
        target: Any = hub
        keys = path.split(".")
        for k in keys[:-1]:
            target = target[int(k)] if isinstance(target, list) else target.setdefault(k, {})
        target[keys[-1]] = value

    return edit


FAULTS: dict[str, Callable[[J], None]] = {
    "quantity-in-component": lambda h: _first_component(h).update(sharedMemorySize="bogus"),
    "quantity-in-pod-template": lambda h: _first_component(h).update(
        podTemplate={"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "x"}}}]}}
    ),
    "wrong-type-in-pod-template": lambda h: _first_component(h).update(
        podTemplate={"spec": {"containers": [{"name": "main", "image": 5}]}}
    ),
    "null-component-field": lambda h: _first_component(h).update(replicas=None, frontendSidecar=None),
    "status-condition-time": _set(
        "status.conditions",
        [
            {
                "type": "Ready",
                "status": "True",
                "lastTransitionTime": "yesterday",
                "reason": "r",
                "message": "",
            }
        ],
    ),
    "status-not-an-object": _set("status", "x"),
    "status-replicas-not-an-object": lambda h: h["status"].update(components={"w": 5}, component=5),
    "status-payload-not-json": _payloads("status", "{", "{"),
    "status-payload-wrong-type": _payloads("status", '{"services": 5}', '{"service": 5}'),
    "spec-payload-not-json": _payloads("spec", "{", "{"),
    "spec-payload-wrong-type": _payloads(
        "spec", '{"spec": {"services": 5}}', '{"spec": {"volumeMounts": 5}}'
    ),
    "spec-payload-null-services": _payloads(
        "spec", '{"spec": {"services": {"zz": null, "Frontend": null}, "pvcs": [{}, null]}}', "null"
    ),
    "spec-payload-legacy-form": _payloads("spec", '{"pvcs": [{"name": ""}]}', '{"dynamoNamespace": ""}'),
    "annotation-not-a-string": lambda h: _ann(h, "nvidia.com/dgd-spec", 5),
    "duplicate-component": lambda h: (
        h["spec"]["components"].append(copy.deepcopy(h["spec"]["components"][0]))
        if h["kind"] == DGD
        else None
    ),
    "null-component": lambda h: h["spec"]["components"].append(None) if h["kind"] == DGD else None,
    "spec-not-an-object": _set("spec", ["x"]),
    "spec-null": _set("spec", None),
    "spec-wrong-type": lambda h: h["spec"].update(backendFramework=5),
    "metadata-not-an-object": _set("metadata", ["x"]),
    "metadata-null": _set("metadata", None),
    "annotations-not-an-object": lambda h: h["metadata"].update(annotations=["x"]),
    "alpha-api-version": _set("apiVersion", ALPHA),
    "no-api-version": lambda h: h.pop("apiVersion"),
}


@pytest.mark.parametrize("kind", [DGD, DCD])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_faults(kind: str, fault: str) -> None:
    hub = _base(kind)
    FAULTS[fault](hub)
    assert_same(hub)


def test_a_failing_view_is_the_conversion_error() -> None:
    hub = _base(DGD)
    FAULTS["quantity-in-component"](hub)
    with pytest.raises(CompatibilityViewError, match="failed to reconstruct compatibility view: quantities"):
        compat_view.lazy_graph(hub)


# --- the lazy view does less -------------------------------------------------------------------------


def _count(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(compat_view, name)

    def spy(hub: J, *args: Any) -> Any:
        calls.append(hub)
        return real(hub, *args)

    monkeypatch.setattr(compat_view, name, spy)
    return calls


def test_each_view_is_built_once_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    alpha = yaml.safe_load(
        (
            FIXTURES
            / "admission/manifests/v1alpha1/DynamoGraphDeployment/vllm-agg__utils-tests-fixtures-v1alpha1-agg.yaml"
        ).read_text()
    )
    alpha["metadata"]["namespace"] = "default"
    builds = _count(monkeypatch, "lazy_graph")
    full = _count(monkeypatch, "alpha_view")
    new = copy.deepcopy(alpha)
    new["spec"]["services"]["Frontend"]["replicas"] = 2
    # v1alpha1 UPDATE: the stateless pass and the update ratchet read the new view, the ratchet the old.
    assert kinds.validate(make_input(ALPHA, DGD, "UPDATE", new, alpha), AdmissionContext()).allowed
    assert len(builds) == 2 and builds[0] is not builds[1]
    hub = convert(alpha, BETA)
    new = copy.deepcopy(hub)
    new["spec"]["components"][0]["replicas"] = 2
    builds.clear()
    assert kinds.validate(make_input(BETA, DGD, "UPDATE", new, hub), AdmissionContext()).allowed
    assert len(builds) == 1
    assert full == []


def _converted_alone(hub: J) -> list[str]:
    """The services the compatibility rules (v1alpha1 source) convert alone on ``hub``'s lazy view:
    those whose whole conversion is cached afterwards. (Read from the view, not by patching the
    method, which the compiled build's callers would not see.)"""
    graph = compat_view.lazy_graph(hub)
    alpha.dgd_errors(graph, [], alpha_source=True)
    return sorted(
        name for name, s in graph.services.items() if isinstance(s, LazyService) and s._whole is not None
    )


def test_services_are_converted_alone_only_when_needed() -> None:
    # Frontend: frontendSidecar is present (the extraPodSpec containers are read); w: a mount
    # on the main container.
    assert _converted_alone(_base(DGD)) == ["Frontend", "w"]
    main = {"name": "main", "image": "img:1", "args": ["--x"]}
    plain: J = {
        "apiVersion": BETA,
        "kind": DGD,
        "metadata": {
            "name": "g",
            "namespace": "ns",
            "annotations": {
                "nvidia.com/dgd-spec": '{"version":1,"spec":{"services":{"a":{"dynamoNamespace":"x"}}}}'
            },
        },
        "spec": {
            "components": [
                {
                    "name": "a",
                    "compilationCache": {"pvcName": "c", "mountPath": "/c"},
                    "frontendSidecar": "sidecar-frontend",
                    "podTemplate": {
                        "spec": {"containers": [main, {"name": "sidecar-frontend", "image": "fe"}]}
                    },
                },
                {"name": "b", "sharedMemorySize": "0", "podTemplate": {"spec": {"containers": [main]}}},
            ]
        },
    }
    assert _converted_alone(plain) == []
    assert_same(plain)


def test_full_strategy_converts_the_whole_object() -> None:
    hub = _base(DGD)
    compat_view.LAZY = False
    try:
        view = compat_view.Views().graph(hub)
    finally:
        compat_view.LAZY = True
    assert all(isinstance(s, FullService) for s in view.services.values())
    assert all(isinstance(s, LazyService) for s in compat_view.Views().graph(hub).services.values())


@pytest.mark.parametrize("kind", [DGD, DCD])
@pytest.mark.parametrize(
    "fault", ["status-condition-time", "status-payload-not-json", "quantity-in-component"]
)
def test_only_objects_sent_as_v1alpha1_are_taken_for_converted(kind: str, fault: str) -> None:
    """A v1beta1 request's object is this service's conversion of nothing: its view checks what
    the conversion back would refuse, and the request is refused as upstream refuses it."""
    hub = _base(kind)
    FAULTS[fault](hub)
    with pytest.raises(CompatibilityViewError) as expected:
        (compat_view.full_component if kind == DCD else compat_view.full_graph)(hub)
    for operation, old in (("CREATE", None), ("UPDATE", copy.deepcopy(hub))):
        decision = kinds.validate(make_input(BETA, kind, operation, hub, old), AdmissionContext())
        assert not decision.allowed
        assert str(expected.value) in decision.status["message"]
