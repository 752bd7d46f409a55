"""Comparing the lazy v1alpha1 view (validation/compat_view.py) with the whole conversion's view:
every value the compatibility rules can read (:data:`SERVICE_READS`, :data:`GRAPH_READS`,
:data:`COMPONENT_READS`), the error of a view that cannot be built, and the answers of validation
with either view. tests/validation/test_compat_view.py runs these checks on the repository's
objects, generated ones and edges.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from conversion import ConversionError
from conversion.dcd import CONVERTER as DCD_CONVERTER
from conversion.dgd import CONVERTER as DGD_CONVERTER
from conversion.v1alpha1.component.schemas import canon_beta_shared
from domain.admission import AdmissionContext, Decision
from domain.constants import ANN_DCD_SPEC, ANN_DGD_SPEC
from validation import alpha, compat_view, dcd, dgd
from validation.compat_view import (
    CompatibilityViewError,
    ComponentView,
    GraphView,
    LazyService,
    ServiceView,
)

J = dict[str, Any]
ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
DGD = "DynamoGraphDeployment"
DCD = "DynamoComponentDeployment"

# Every value the rules read: the accessors of ServiceView (each service of a DGD, a DCD's spec),
# and the object-level fields of GraphView and ComponentView.
SERVICE_READS = (
    "annotations",
    "dynamo_namespace",
    "global_dynamo_namespace",
    "has_autoscaling",
    "volume_mounts",
    "ingress",
    "epp_config",
    "has_frontend_sidecar",
    "container_names",
    "failover",
    "gpu_memory_service",
    "has_shared_memory",
    "main_image",
    "runtime_version_override",
)
GRAPH_READS = ("name", "namespace", "pvc_names")
COMPONENT_READS = ("namespace", "owner_name")
# Service fields the object conversion sets around the component conversion.
_OBJECT_LEVEL = ("serviceName", "backendFramework")


def reads(view: GraphView | ComponentView) -> dict[tuple[str, ...], Any]:
    """The value at every accessor path of ``view``."""
    out: dict[tuple[str, ...], Any] = {}
    services: dict[str, ServiceView | None]
    if isinstance(view, GraphView):
        out.update({(a,): getattr(view, a) for a in GRAPH_READS})
        services = view.services
        out[("services",)] = sorted(services)
    else:
        out.update({(a,): getattr(view, a) for a in COMPONENT_READS})
        services = {"spec": view.spec}
    for name, service in services.items():
        if service is None:
            out[(name,)] = None
            continue
        for a in SERVICE_READS:
            out[(name, a)] = getattr(service, a)()
    return out


def _services(view: GraphView | ComponentView) -> dict[str, ServiceView | None]:
    return view.services if isinstance(view, GraphView) else {"spec": view.spec}


def _component_fields(service: ServiceView) -> J:
    return {k: v for k, v in service.whole().items() if k not in _OBJECT_LEVEL}


def _builders(
    hub: J,
) -> tuple[
    Callable[[J], GraphView | ComponentView], Callable[..., GraphView | ComponentView], Callable[..., Any]
]:
    if hub.get("kind") == DCD:
        return compat_view.full_component, compat_view.lazy_component, compat_view._lazy_component
    return compat_view.full_graph, compat_view.lazy_graph, compat_view._lazy_graph


def assert_same_view(hub: J) -> None:
    """The lazy view of ``hub`` reads like the full one, or fails with its error. A view the
    conversion can build is built lazily (no fallback), and each service converted alone is the
    service of the whole conversion."""
    full_build, lazy_build, lazy_only = _builders(hub)
    try:
        full = full_build(hub)
    except CompatibilityViewError as exc:
        with pytest.raises(CompatibilityViewError) as got:
            lazy_build(hub)
        assert str(got.value) == str(exc)
        return
    lazy = lazy_build(hub)
    assert reads(lazy) == reads(full)
    lazy_services, full_services = _services(lazy), _services(full)
    for name, service in lazy_services.items():
        other = full_services[name]
        if service is None or other is None:
            assert service is other
            continue
        assert _component_fields(service) == _component_fields(other), name
    if _lazy_applies(hub):
        assert all(isinstance(s, LazyService | None) for s in _services(lazy_only(hub)).values())


def _lazy_applies(hub: J) -> bool:
    """A v1beta1 object of its kind, with object metadata and unique component names."""
    if hub.get("apiVersion") != BETA or not isinstance(hub.get("metadata") or {}, dict):
        return False
    spec = hub.get("spec")
    comps = spec.get("components") if isinstance(spec, dict) and hub["kind"] == DGD else None
    names = [c.get("name", "") for c in comps if isinstance(c, dict)] if isinstance(comps, list) else []
    return len(set(names)) == len(names)


def _with_strategy(lazy: bool, call: Callable[[], Decision]) -> Decision:
    saved = compat_view.LAZY
    compat_view.LAZY = lazy
    try:
        return call()
    finally:
        compat_view.LAZY = saved


def assert_same_decision(call: Callable[[], Decision]) -> Decision:
    lazy = _with_strategy(True, call)
    assert lazy == _with_strategy(False, call)
    return lazy


def touched_object(hub: J) -> J:
    """``hub`` with every main container image changed to one without a semver tag and one more
    replica: the update rules (the runtime-version ratchet included) have something to say."""
    out = copy.deepcopy(hub)
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out
    comps = spec.get("components") if hub.get("kind") == DGD else [spec]
    for c in comps if isinstance(comps, list) else ():
        if not isinstance(c, dict):
            continue
        c["replicas"] = (c["replicas"] + 1) if isinstance(c.get("replicas"), int) else 1
        tpl = c.get("podTemplate")
        ctrs = ((tpl or {}).get("spec") or {}).get("containers") if isinstance(tpl, dict) else None
        for ctr in ctrs if isinstance(ctrs, list) else ():
            if isinstance(ctr, dict) and ctr.get("name") == "main":
                ctr["image"] = "registry.example/worker:latest"
    return out


def assert_same_answers(hub: J) -> None:
    """validate_hub answers the same with either view: CREATE and UPDATE, with the v1alpha1
    rules (runtime version on the v1alpha1 view) and without."""
    ctx = AdmissionContext()
    touched = touched_object(hub)
    name = str((hub.get("metadata") or {}).get("name", "")) if isinstance(hub.get("metadata"), dict) else ""
    for rv_source in ("v1beta1", "v1alpha1"):
        for operation, new, old in (("CREATE", hub, None), ("UPDATE", hub, hub), ("UPDATE", touched, hub)):
            if hub.get("kind") == DCD:
                assert_same_decision(
                    lambda o=operation, n=new, p=old, r=rv_source: dcd.validate_hub(o, n, p, ctx, r)
                )
            else:
                assert_same_decision(
                    lambda o=operation, n=new, p=old, r=rv_source: dgd.validate_hub(
                        o, n, p, ctx, r, "kubernetes-admin", name
                    )
                )


def assert_same_shared(hub: J) -> None:
    """Views built after another object's view, sharing its decoded save, checked status and
    canonical components (as an UPDATE's old and new object do), read like views built alone."""
    _, lazy_build, _ = _builders(hub)
    touched = touched_object(hub)
    bad_status = {**touched, "status": "x"}  # its status half of the conversion fails
    meta = touched.get("metadata")
    anns = meta.get("annotations") if isinstance(meta, dict) else None
    unsaved = copy.deepcopy(touched)  # an empty save: nothing restored from it
    if isinstance(anns, dict):
        unsaved["metadata"]["annotations"] = {
            k: "{}" if k in (ANN_DGD_SPEC, ANN_DCD_SPEC) else v for k, v in anns.items()
        }
    pairs = ((hub, touched), (touched, hub), (hub, copy.deepcopy(hub)), (hub, bad_status), (hub, unsaved))
    for first, second in pairs:
        try:
            alone = [lazy_build(first), lazy_build(second)]
        except CompatibilityViewError as exc:
            with pytest.raises(CompatibilityViewError) as got:
                shared = compat_view._Shared()
                lazy_build(first, shared)
                lazy_build(second, shared)
            assert str(got.value) == str(exc)
            continue
        shared = compat_view._Shared()
        together = [lazy_build(first, shared), lazy_build(second, shared)]
        for view, fresh in zip(together, alone, strict=True):
            assert_same_reads(view, fresh)


def assert_same_reads(view: GraphView | ComponentView, other_view: GraphView | ComponentView) -> None:
    """Both views read alike, and so do the fields of each service converted whole."""
    assert reads(view) == reads(other_view)
    for name, service in _services(view).items():
        other = _services(other_view)[name]
        if service is None or other is None:
            assert service is other
            continue
        assert _component_fields(service) == _component_fields(other), name


def assert_same(hub: J) -> None:
    assert_same_view(hub)
    assert_same_answers(hub)
    assert_same_shared(hub)


def assert_same_converted(obj: J) -> None:
    """A v1alpha1 object this service brings to the hub (a request sent as v1alpha1): converting
    it back cannot fail, its DGD components decode to themselves, and the view built on those
    grounds (``Views(converted=True)``) reads like the full one."""
    converter = DCD_CONVERTER if obj["kind"] == DCD else DGD_CONVERTER
    try:
        hub = alpha.to_hub(obj, converter)
    except ConversionError:
        return
    full_build, _, lazy_only = _builders(hub)
    full = full_build(hub)  # raises when the conversion back fails
    if obj["kind"] == DGD:
        for c in hub["spec"].get("components") or []:
            assert orjson.dumps(canon_beta_shared(c)) == orjson.dumps(c)
    converted = lazy_only(hub, None, True)
    assert all(isinstance(s, LazyService | None) for s in _services(converted).values())
    assert_same_reads(converted, full)
