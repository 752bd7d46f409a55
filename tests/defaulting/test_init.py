"""The defaulting entry point: routing, common behaviour and the v1alpha1 hub round trip."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import jsonpatch
import pytest

import kinds
from conversion.errors import ConversionError
from domain.admission import GVK, AdmissionContext, AdmissionSettings, Decision, Operation
from kinds.registry import Registry
from tests.admission_helpers import PER_KIND_GVK, make_input

HUB = "nvidia.com/v1beta1"
ALPHA = "nvidia.com/v1alpha1"
PROVIDER = "nvidia.com/workload-provider"
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
CTX = AdmissionContext(AdmissionSettings(operator_version="1.1.0"))


def dgd(api: str = HUB, ns: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": ns},
        "spec": spec or {"components": [{"name": "frontend", "type": "frontend"}]},
    }


def run(
    api: str,
    kind: str,
    operation: Operation,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None = None,
    ctx: AdmissionContext = CTX,
    **kwargs: Any,
) -> Decision:
    return kinds.default(make_input(api, kind, operation, obj, old, **kwargs), ctx)


def test_hub_dgd_create() -> None:
    d = run(HUB, "DynamoGraphDeployment", "CREATE", dgd())
    assert d.allowed and d.status == {"code": 200} and d.warnings == []
    assert d.patched is not None
    assert d.patched["metadata"]["annotations"] == {PROVIDER: "component", ORIGIN: "1.1.0"}
    assert d.patched["spec"]["components"][0]["replicas"] == 1


def test_no_change_means_no_patch() -> None:
    d = run(HUB, "DynamoGraphDeployment", "CREATE", dgd())
    assert d.patched is not None
    again = run(HUB, "DynamoGraphDeployment", "CREATE", d.patched)
    assert again.allowed and again.patched is None
    assert run(HUB, "DynamoGraphDeployment", "UPDATE", d.patched, d.patched).patched is None


@pytest.mark.parametrize(
    ("api", "kind", "obj"),
    [
        (HUB, "DynamoGraphDeployment", dgd()),
        (
            HUB,
            "DynamoComponentDeployment",
            {"apiVersion": HUB, "kind": "DynamoComponentDeployment", "metadata": {"name": "c"}},
        ),
        (
            HUB,
            "DynamoGraphDeploymentRequest",
            {"apiVersion": HUB, "kind": "DynamoGraphDeploymentRequest", "metadata": {"name": "r"}},
        ),
    ],
)
def test_delete_and_subresources_are_left_alone(api: str, kind: str, obj: dict[str, Any]) -> None:
    assert run(api, kind, "DELETE", None, obj).patched is None
    d = run(api, kind, "CREATE", obj, sub_resource="status")
    assert d.allowed and d.patched is None


@pytest.mark.parametrize(
    ("api", "kind"),
    [
        (ALPHA, "DynamoModel"),
        (ALPHA, "DynamoCheckpoint"),
        (HUB, "DynamoGraphDeploymentScalingAdapter"),
        (ALPHA, "DynamoGraphDeploymentScalingAdapter"),
        (HUB, "SomethingElse"),
        ("apps/v1", "Deployment"),
    ],
)
def test_kinds_without_defaults(api: str, kind: str) -> None:
    obj = {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}, "spec": {}}
    d = run(api, kind, "CREATE", obj)
    assert d.allowed and d.patched is None and d.status == {"code": 200}


def test_pods_go_to_the_restore_mutator() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    d = run("v1", "Pod", "CREATE", pod)
    assert d.allowed and d.patched is None and d.message == "checkpoint disabled"
    assert run("v1", "Pod", "DELETE", None, pod).message == "not a pod create"


def test_undecodable_object() -> None:
    inp = make_input(HUB, "DynamoGraphDeployment", "CREATE", None)
    d = kinds.default(inp, CTX)
    assert not d.allowed and d.code == 400 and "reason" not in d.status


def test_namespace_exclusion_uses_the_object_namespace() -> None:
    ctx = AdmissionContext(CTX.settings, namespace_excluded=lambda ns: ns == "team")
    inp = make_input(HUB, "DynamoGraphDeployment", "CREATE", dgd(ns="team"))
    assert kinds.default(inp, ctx).patched is None
    # The request namespace alone does not exclude anything.
    obj = dgd(ns="other")
    inp = make_input(HUB, "DynamoGraphDeployment", "CREATE", obj)
    inp = dataclasses.replace(inp, namespace="team")
    assert kinds.default(inp, ctx).patched is not None


@pytest.mark.parametrize("kind", sorted(PER_KIND_GVK))
def test_gvk_guard_on_per_kind_paths(kind: str) -> None:
    obj = {"apiVersion": ALPHA, "kind": kind, "metadata": {"name": "x"}, "spec": {}}
    d = run(ALPHA, kind, "CREATE", obj, expected_gvk=PER_KIND_GVK[kind])
    assert not d.allowed
    assert d.status == {
        "code": 403,
        "reason": "Forbidden",
        "message": f"admission requires nvidia.com/v1beta1, Kind={kind}, got nvidia.com/v1alpha1, Kind={kind}; "
        "check webhook and CRD conversion configuration",
    }
    # DELETE comes before the guard; lease exclusion too.
    assert run(ALPHA, kind, "DELETE", None, obj, expected_gvk=PER_KIND_GVK[kind]).allowed
    excluded = AdmissionContext(CTX.settings, namespace_excluded=lambda ns: True)
    assert run(ALPHA, kind, "CREATE", obj, ctx=excluded, expected_gvk=PER_KIND_GVK[kind]).allowed


def test_matching_gvk_passes_the_guard() -> None:
    d = run(
        HUB,
        "DynamoGraphDeployment",
        "CREATE",
        dgd(),
        expected_gvk=GVK("nvidia.com", "v1beta1", "DynamoGraphDeployment"),
    )
    assert d.allowed and d.patched is not None


def test_v1alpha1_dcd_is_not_defaulted() -> None:
    obj = {"apiVersion": ALPHA, "kind": "DynamoComponentDeployment", "metadata": {"name": "c"}, "spec": {}}
    d = run(ALPHA, "DynamoComponentDeployment", "CREATE", obj)
    assert d.allowed and d.patched is None


def test_dcd_and_dgdr_only_on_create() -> None:
    dcd = {"apiVersion": HUB, "kind": "DynamoComponentDeployment", "metadata": {"name": "c"}, "spec": {}}
    assert run(HUB, "DynamoComponentDeployment", "CREATE", dcd).patched == {**dcd, "spec": {"name": "c"}}
    assert run(HUB, "DynamoComponentDeployment", "UPDATE", dcd, dcd).patched is None
    dgdr = {
        "apiVersion": HUB,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r"},
        "spec": {"model": "m"},
    }
    d = run(HUB, "DynamoGraphDeploymentRequest", "CREATE", dgdr)
    assert (
        d.patched is not None
        and d.patched["spec"]["image"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.1.0"
    )
    assert run(HUB, "DynamoGraphDeploymentRequest", "UPDATE", dgdr, dgdr).patched is None


# --- the v1alpha1 round trip, with a stand-in converter -----------------------------------------


def fake_convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """alpha ``spec.services`` map <-> hub ``spec.components`` list (names sorted), no sharing."""
    obj = copy.deepcopy(obj)
    if obj.get("kind") == "Broken":
        raise ConversionError("cannot convert Broken")
    spec = obj.get("spec") or {}
    if desired == HUB and "services" in spec:
        services = spec.pop("services")
        spec["components"] = [{"name": n, **services[n]} for n in sorted(services)]
    elif desired == ALPHA and "components" in spec:
        spec["services"] = {c.pop("name"): c for c in spec.pop("components")}
    obj["apiVersion"] = desired
    return obj


@dataclasses.dataclass(frozen=True)
class FakeConverter:
    kind: str
    fn: Callable[[dict[str, Any], str], dict[str, Any]]

    def convert(self, obj: dict[str, Any], desired: str) -> dict[str, Any]:
        return self.fn(obj, desired)


def use_converter(
    monkeypatch: pytest.MonkeyPatch, fn: Callable[[dict[str, Any], str], dict[str, Any]]
) -> None:
    """Every convertible kind of the registry converts with ``fn``."""
    registry = Registry()
    for kind in kinds.REGISTRY:
        registry.register(
            dataclasses.replace(kind, converter=FakeConverter(kind.kind, fn)) if kind.converter else kind
        )
    monkeypatch.setattr(kinds, "REGISTRY", registry)


@pytest.fixture
def converter(monkeypatch: pytest.MonkeyPatch) -> None:
    use_converter(monkeypatch, fake_convert)


def alpha_graph(services: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "g", "namespace": "default"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"services": services},
    }


@pytest.mark.usefixtures("converter")
def test_v1alpha1_round_trip_answers_in_v1alpha1() -> None:
    sent = alpha_graph({"Frontend": {"componentType": "frontend"}, "Worker": {"replicas": 2}})
    d = run(ALPHA, "DynamoGraphDeployment", "CREATE", sent)
    assert d.patched is not None
    assert d.patched["apiVersion"] == ALPHA
    assert d.patched["spec"]["services"] == {
        "Frontend": {"componentType": "frontend", "replicas": 1},
        "Worker": {"replicas": 2},
    }
    patch = jsonpatch.make_patch(sent, d.patched)
    assert patch.apply(sent) == d.patched
    assert all(op["op"] in ("add", "replace") for op in patch.patch)
    # Reinvocation on the answer changes nothing.
    assert run(ALPHA, "DynamoGraphDeployment", "CREATE", d.patched).patched is None


@pytest.mark.usefixtures("converter")
def test_v1alpha1_without_hub_changes_has_no_patch() -> None:
    sent = alpha_graph({"W": {"replicas": 1}}, {PROVIDER: "component"})
    assert run(ALPHA, "DynamoGraphDeployment", "UPDATE", sent, sent).patched is None


@pytest.mark.usefixtures("converter")
def test_v1alpha1_dgdr_round_trip() -> None:
    sent = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r"},
        "spec": {"model": "m"},
    }
    d = run(ALPHA, "DynamoGraphDeploymentRequest", "CREATE", sent)
    assert d.patched == {
        **sent,
        "spec": {"model": "m", "image": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.1.0"},
    }


@pytest.mark.usefixtures("converter")
def test_conversion_failure_is_a_bad_request() -> None:
    d = kinds.default(
        make_input(
            ALPHA, "DynamoGraphDeployment", "CREATE", {"apiVersion": ALPHA, "kind": "Broken", "metadata": {}}
        ),
        CTX,
    )
    assert not d.allowed and d.status == {"code": 400, "message": "cannot convert Broken"}


def status_converter(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    out = fake_convert(obj, desired)
    out["status"] = {"state": "" if desired == ALPHA else "x", "rendered": desired}
    return out


@pytest.mark.parametrize("status", [None, {"state": "successful", "conditions": []}])
def test_v1alpha1_answer_keeps_the_status_as_sent(monkeypatch: pytest.MonkeyPatch, status: Any) -> None:
    use_converter(monkeypatch, status_converter)
    sent = alpha_graph({"W": {}})
    if status is not None:
        sent["status"] = status
    for operation in ("CREATE", "UPDATE"):
        d = run(ALPHA, "DynamoGraphDeployment", operation, sent, sent if operation == "UPDATE" else None)  # type: ignore[arg-type]
        assert d.patched is not None
        assert d.patched.get("status") == status
        assert d.patched["spec"]["services"]["W"]["replicas"] == 1


@pytest.mark.usefixtures("converter")
def test_terminating_objects_are_still_defaulted() -> None:
    # The defaulters have no deletionTimestamp exemption (only the validators do).
    hub = dgd()
    hub["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    d = run(HUB, "DynamoGraphDeployment", "UPDATE", hub, hub)
    assert d.patched is not None and d.patched["spec"]["components"][0]["replicas"] == 1
