"""The v1alpha1 view of a DGD or DCD that the compatibility pass (:mod:`validation.alpha`) reads.

Upstream rebuilds the whole v1alpha1 object with the hub -> v1alpha1 conversion and reads a few
fields of it. The rules read the view through :class:`GraphView` (a DGD), :class:`ComponentView`
(a DCD) and :class:`ServiceView` (one v1alpha1 service: a DGD's ``spec.services.<name>``, a DCD's
``spec``), which hold each value as the rules read it (an absent field and its zero value alike).
Two builds give the same values:

* **full** (:func:`full_graph`, :func:`full_component`): the whole conversion
  (:func:`alpha_view`), then the reads. Upstream's way.
* **lazy** (:func:`lazy_graph`, :func:`lazy_component`; the default, see :data:`LAZY`): only the
  fields a rule asks for, per service and on first use, from the typed hub component and its
  entry in the save annotation (``nvidia.com/dgd-spec`` / ``nvidia.com/dcd-spec``), with the
  conversion's own functions:

  - the *light* fields (:data:`LIGHT_FIELDS`) come from
    :func:`conversion.v1alpha1.component.from_hub.from_hub` run on the component and its save
    entry reduced to the members they derive from (:data:`_LIGHT_HUB`, :data:`LIGHT_SAVED`):
    ``annotations``, ``dynamoNamespace``, ``autoscaling`` and ``ingress`` are restored from the
    save; ``globalDynamoNamespace``, ``eppConfig`` and ``runtimeVersionOverride`` are copied;
    ``sharedMemory``, ``gpuMemoryService`` and ``failover`` come from ``sharedMemorySize`` and
    ``experimental`` or from the save's disabled ones; ``frontendSidecar`` is there when the hub
    names the default sidecar container and the save holds one (its value may be rebuilt from
    that container, so only its presence is read from the light fields). None of them depends on
    the pod template;
  - ``volumeMounts`` are light too when the hub main container has no mount and the save no flat
    one (then ``compilationCache`` alone feeds them); otherwise, and for the names of the
    ``extraPodSpec`` containers (read only when ``frontendSidecar`` is present), the service is
    converted alone (``from_hub`` on the whole component);
  - ``extraPodSpec.mainContainer.image`` is the image of the hub main container
    (:func:`conversion.v1alpha1.component.template.shared_main`): the decomposition moves that
    container, image included, to ``mainContainer``, and no restore of the save touches its
    image;
  - metadata (name, namespace, owner references) passes through the conversion unchanged, and
    ``spec.pvcs`` and the null services of a DGD come from the save only.

  The conversion fails only while decoding (the save payloads, the spec, each component, the
  status) and on repeated component names; the rest of it works on typed values. Building a lazy
  view runs those decodes (the status is read by :func:`validation.compat_status.status_converts`,
  and converted without the spec only when that cannot vouch for it); when one fails, names
  repeat or the object is not a v1beta1 object of its kind, the view is built the full way,
  which then reports the conversion's own error.

:class:`Views` memoises the views of one request's objects, and an UPDATE's two objects share
what they have in common (:class:`_Shared`): a save annotation of the same text is decoded once,
and a typed component equal to one already canonicalised reuses it. The views only read these
values, so sharing them cannot change a view (``tests/validation/test_compat_view.py`` compares
shared and fresh builds). The objects of a request sent as v1alpha1 are this service's own
conversion, which cannot fail to convert back: their views skip those checks (``converted``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeVar, cast

from conversion import ConversionError
from conversion.dcd import CONVERTER as DCD_CONVERTER
from conversion.dgd import CONVERTER as DGD_CONVERTER
from conversion.hub import KindConverter
from conversion.payloads import decode_root, get_annotation, read_spec_payload
from conversion.v1alpha1 import dcd as dcd_spoke
from conversion.v1alpha1 import dgd as dgd_spoke
from conversion.v1alpha1.component.from_hub import from_hub
from conversion.v1alpha1.component.schemas import ALPHA_SHARED, canon_beta_shared
from conversion.v1alpha1.component.template import shared_main
from domain.constants import (
    ALPHA_API_VERSION,
    ANN_DCD_SPEC,
    ANN_DCD_STATUS,
    ANN_DGD_SPEC,
    ANN_DGD_STATUS,
    HUB_API_VERSION,
    KIND_DCD,
    KIND_DGD,
)
from gocompat.encoding import encode
from gocompat.typed import Struct
from validation.compat_status import status_converts
from validation.objects import JSON, boolean, integer, lst, present, string, string_map, sub

#: Build views the lazy way (False: convert the whole object, as upstream does).
LAZY: bool = True


class CompatibilityViewError(Exception):
    """The v1alpha1 view of the object could not be rebuilt (a plain 403 upstream)."""


def alpha_view(hub: JSON, converter: KindConverter) -> JSON:
    """The whole v1alpha1 object, as upstream rebuilds it."""
    try:
        return converter.convert(hub, ALPHA_API_VERSION)
    except ConversionError as exc:
        raise CompatibilityViewError(f"failed to reconstruct compatibility view: {exc}") from exc


# --- what the rules read ------------------------------------------------------------------------


class Mount(NamedTuple):
    use_as_compilation_cache: bool
    mount_point: str


class Ingress(NamedTuple):
    enabled: bool
    host: str


class EPPConfig(NamedTuple):
    has_config_map_ref: bool
    has_config: bool


class Failover(NamedTuple):
    enabled: bool
    mode: str
    num_shadows: int


#: The service fields a light view holds exactly as the whole service does (``frontendSidecar``:
#: present or not; ``volumeMounts``: when :func:`_mounts_from_cache_only`).
LIGHT_FIELDS: Final = (
    "annotations",
    "dynamoNamespace",
    "globalDynamoNamespace",
    "autoscaling",
    "ingress",
    "eppConfig",
    "runtimeVersionOverride",
    "sharedMemory",
    "gpuMemoryService",
    "failover",
    "frontendSidecar",
    "volumeMounts",
)


class ServiceView:
    """One v1alpha1 service as the compatibility rules read it. :meth:`light` holds the
    :data:`LIGHT_FIELDS`, :meth:`whole` the whole service; a view of a whole converted object
    has both in one dict."""

    __slots__ = ()

    def whole(self) -> JSON:
        raise NotImplementedError

    def light(self) -> JSON:
        return self.whole()

    def _mounts(self) -> JSON:
        return self.whole()

    def annotations(self) -> dict[str, Any]:
        return string_map(self.light(), "annotations")

    def dynamo_namespace(self) -> Any:
        """The ``dynamoNamespace`` value (None when absent)."""
        return self.light().get("dynamoNamespace")

    def global_dynamo_namespace(self) -> bool:
        return boolean(self.light(), "globalDynamoNamespace")

    def has_autoscaling(self) -> bool:
        return present(self.light(), "autoscaling")

    def volume_mounts(self) -> list[Mount]:
        return [
            Mount(boolean(vm, "useAsCompilationCache"), string(vm, "mountPoint"))
            for vm in (v if isinstance(v, dict) else {} for v in lst(self._mounts(), "volumeMounts"))
        ]

    def ingress(self) -> Ingress | None:
        ing = sub(self.light(), "ingress")
        return None if ing is None else Ingress(boolean(ing, "enabled"), string(ing, "host"))

    def epp_config(self) -> EPPConfig | None:
        epp = sub(self.light(), "eppConfig")
        return None if epp is None else EPPConfig(present(epp, "configMapRef"), present(epp, "config"))

    def has_frontend_sidecar(self) -> bool:
        return present(self.light(), "frontendSidecar")

    def container_names(self) -> list[str] | None:
        """``extraPodSpec.containers[].name`` ("" for a container that is no object); None
        without ``extraPodSpec``."""
        eps = sub(self.whole(), "extraPodSpec")
        if eps is None:
            return None
        return [string(c, "name") if isinstance(c, dict) else "" for c in lst(eps, "containers")]

    def failover(self) -> Failover | None:
        fo = sub(self.light(), "failover")
        if fo is None:
            return None
        return Failover(boolean(fo, "enabled"), string(fo, "mode"), integer(fo, "numShadows"))

    def gpu_memory_service(self) -> bool | None:
        """``gpuMemoryService.enabled`` (None when ``gpuMemoryService`` is absent)."""
        gms = sub(self.light(), "gpuMemoryService")
        return None if gms is None else boolean(gms, "enabled")

    def has_shared_memory(self) -> bool:
        return present(self.light(), "sharedMemory")

    def main_image(self) -> str:
        """``extraPodSpec.mainContainer.image``."""
        return string(sub(sub(self.whole(), "extraPodSpec"), "mainContainer"), "image")

    def runtime_version_override(self) -> str:
        return string(self.light(), "runtimeVersionOverride")


class FullService(ServiceView):
    """A service of a whole converted object."""

    __slots__ = ("_service",)

    def __init__(self, service: JSON) -> None:
        self._service = service

    def whole(self) -> JSON:
        return self._service


EMPTY_SERVICE: Final = FullService({})

# The hub component members and save entry members the light fields derive from.
_LIGHT_HUB: Final = (
    "globalDynamoNamespace",
    "eppConfig",
    "runtimeVersionOverride",
    "sharedMemorySize",
    "compilationCache",
    "frontendSidecar",
)
_LIGHT_EXPERIMENTAL: Final = ("gpuMemoryService", "failover")
LIGHT_SAVED: Final = (
    "annotations",
    "dynamoNamespace",
    "autoscaling",
    "ingress",
    "sharedMemory",
    "gpuMemoryService",
    "failover",
    "frontendSidecar",
)


def _only(d: JSON, keys: tuple[str, ...]) -> JSON:
    return {k: d[k] for k in keys if k in d}


def _mounts_from_cache_only(component: JSON, saved: JSON | None) -> bool:
    """Whether ``compilationCache`` alone feeds the service's ``volumeMounts``: the hub main
    container has no mount, so the decomposition adds none and the save's origin split of
    ``mainContainer`` mounts has nothing to match, and the save holds no flat mount to restore."""
    return not lst(shared_main(component), "volumeMounts") and not lst(saved, "volumeMounts")


class LazyService(ServiceView):
    """A service derived from its typed hub component and save entry, field group by field group
    on first use."""

    __slots__ = ("_component", "_light", "_saved", "_whole")

    def __init__(self, component: JSON, saved: JSON | None) -> None:
        self._component = component
        self._saved = saved
        self._light: JSON | None = None
        self._whole: JSON | None = None

    def light(self) -> JSON:
        if self._light is None:
            component = _only(self._component, _LIGHT_HUB)
            exp = self._component.get("experimental")
            if exp is not None:
                component["experimental"] = _only(exp, _LIGHT_EXPERIMENTAL)
            # An empty save entry restores nothing: it is passed as no entry, which costs less.
            saved = None if self._saved is None else _only(self._saved, LIGHT_SAVED) or None
            self._light = from_hub(component, saved, None)
        return self._light

    def whole(self) -> JSON:
        if self._whole is None:
            whole: JSON = encode(from_hub(self._component, self._saved, None), ALPHA_SHARED)
            self._whole = whole
        return self._whole

    def _mounts(self) -> JSON:
        if _mounts_from_cache_only(self._component, self._saved):
            return self.light()
        return self.whole()

    def main_image(self) -> str:
        return string(shared_main(self._component), "image")


@dataclass(frozen=True, slots=True)
class GraphView:
    """A DGD's v1alpha1 view: ``metadata`` name and namespace, each ``spec.pvcs[i].name`` ("" when
    absent or the entry is no object) and ``spec.services`` (None: a null service)."""

    name: str
    namespace: str
    pvc_names: list[str]
    services: dict[str, ServiceView | None]


@dataclass(frozen=True, slots=True)
class ComponentView:
    """A DCD's v1alpha1 view: ``metadata.namespace``, the name of the owning DGD and ``spec``."""

    namespace: str
    owner_name: str
    spec: ServiceView


def _pvc_names(pvcs: list[Any]) -> list[str]:
    return [string(p if isinstance(p, dict) else None, "name") for p in pvcs]


def _owner_name(meta: JSON | None) -> str:
    for ref in lst(meta, "ownerReferences"):
        if isinstance(ref, dict) and string(ref, "kind") == KIND_DGD:
            return string(ref, "name")
    return ""


def full_graph(hub: JSON) -> GraphView:
    alpha = alpha_view(hub, DGD_CONVERTER)
    meta, spec = sub(alpha, "metadata"), sub(alpha, "spec") or {}
    services = sub(spec, "services") or {}
    return GraphView(
        string(meta, "name"),
        string(meta, "namespace"),
        _pvc_names(lst(spec, "pvcs")),
        {n: FullService(s) if isinstance(s, dict) else None for n, s in services.items()},
    )


def full_component(hub: JSON) -> ComponentView:
    alpha = alpha_view(hub, DCD_CONVERTER)
    meta = sub(alpha, "metadata")
    return ComponentView(string(meta, "namespace"), _owner_name(meta), FullService(sub(alpha, "spec") or {}))


# --- lazy builds ----------------------------------------------------------------------------------


class _NotLazy(Exception):
    """The lazy build does not apply: the full conversion answers."""


def hub_metadata(hub: JSON, kind: str) -> JSON | None:
    """The metadata (``{}`` when absent) of a hub object of ``kind``; None when ``hub`` is no
    such object or its metadata no object (the lazy builds do not apply)."""
    if not isinstance(hub, dict) or hub.get("kind") != kind or hub.get("apiVersion") != HUB_API_VERSION:
        return None
    meta = hub.get("metadata") or {}
    return meta if isinstance(meta, dict) else None


def _metadata(hub: JSON, kind: str) -> JSON:
    meta = hub_metadata(hub, kind)
    if meta is None:
        raise _NotLazy
    return meta


class _Shared:
    """What the lazy builds of one request's objects have in common (an UPDATE's old and new
    object mostly carry the same save annotation, status and components)."""

    __slots__ = ("components", "saved")

    def __init__(self) -> None:
        self.saved: dict[tuple[str, str], JSON | None] = {}  # (annotation, text) -> decoded save
        self.components: dict[Any, list[tuple[JSON, JSON]]] = {}  # name -> (typed, canonical)

    def canonical(self, typed: JSON) -> JSON:
        """``canon_beta_shared(typed)``, computed once per distinct component."""
        seen = self.components.setdefault(typed.get("name"), [])
        for before, canon in seen:
            if before == typed:
                return canon
        canon = canon_beta_shared(typed)
        seen.append((typed, canon))
        return canon


def _saved_spec(meta: JSON, key: str, schema: Struct, shared: _Shared) -> JSON | None:
    """The save payload as the conversion decodes it. Its ``rawJSON`` records are not applied:
    they only touch the saved ``eppConfig``, which no v1alpha1 field is restored from."""
    raw = get_annotation(meta, key)
    if not raw:
        return None
    memo = (key, raw)
    if memo not in shared.saved:
        got = read_spec_payload(raw, schema)
        shared.saved[memo] = None if got is None else got[0]
    return shared.saved[memo]


def _check_status(hub: JSON, meta: JSON, converter: KindConverter, status_key: str) -> None:
    """Fail when the status half of the conversion (the status and its payload, which the spec
    does not enter) fails on the whole object: nothing to do when :func:`status_converts` says it
    cannot fail, else the object is converted without its spec and save."""
    anns = meta.get("annotations")
    saved = anns.get(status_key) if isinstance(anns, dict) else None
    status = hub.get("status")
    if status_converts(converter.kind, status, saved):
        return
    stripped_meta = {"annotations": {status_key: saved}} if saved is not None else {}
    stripped = {
        "apiVersion": HUB_API_VERSION,
        "kind": converter.kind,
        "metadata": stripped_meta,
        "status": status,
    }
    converter.convert(stripped, ALPHA_API_VERSION)


def _lazy_graph(hub: JSON, shared: _Shared | None = None, converted: bool = False) -> GraphView:
    shared = shared or _Shared()
    meta = _metadata(hub, KIND_DGD)
    saved_spec = _saved_spec(meta, ANN_DGD_SPEC, dgd_spoke.ALPHA_SPEC, shared) or {}
    if not converted:
        _check_status(hub, meta, DGD_CONVERTER, ANN_DGD_STATUS)
    spec = decode_root(hub.get("spec"), dgd_spoke.BETA_SPEC_LIVE, "spec")
    raw_components = spec.get("components") or []
    components = raw_components if converted else [shared.canonical(c) for c in raw_components]
    saved_services = saved_spec.get("services") or {}
    services: dict[str, ServiceView | None] = {}
    for c in components:
        name = c.get("name", "")
        if name in services:
            raise _NotLazy  # the conversion refuses duplicate component names
        services[name] = LazyService(c, saved_services.get(name))
    for name, saved in saved_services.items():
        if saved is None and name not in services:
            services[name] = None
    return GraphView(
        string(meta, "name"), string(meta, "namespace"), _pvc_names(saved_spec.get("pvcs") or []), services
    )


def _lazy_component(hub: JSON, shared: _Shared | None = None, converted: bool = False) -> ComponentView:
    shared = shared or _Shared()
    meta = _metadata(hub, KIND_DCD)
    saved = _saved_spec(meta, ANN_DCD_SPEC, dcd_spoke.ALPHA_SPEC, shared)
    if not converted:
        _check_status(hub, meta, DCD_CONVERTER, ANN_DCD_STATUS)
    _, component = dcd_spoke.decode_hub_spec(hub.get("spec"))
    return ComponentView(string(meta, "namespace"), _owner_name(meta), LazyService(component, saved))


def lazy_graph(hub: JSON, shared: _Shared | None = None, converted: bool = False) -> GraphView:
    try:
        return _lazy_graph(hub, shared, converted)
    except Exception:  # any failed decode: the full conversion decides
        return full_graph(hub)


def lazy_component(hub: JSON, shared: _Shared | None = None, converted: bool = False) -> ComponentView:
    try:
        return _lazy_component(hub, shared, converted)
    except Exception:  # any failed decode: the full conversion decides
        return full_component(hub)


_View = TypeVar("_View", GraphView, ComponentView)


class Views:
    """The views of one request's objects, each built once (the stateless and the update pass
    of a request read the same views), the lazy builds sharing what the objects have in common.
    Raises CompatibilityViewError.

    ``converted``: the objects are this service's own conversion of v1alpha1 objects (a request
    sent as v1alpha1). Converting such an object back cannot fail (the conversion round trip), and
    a DGD's components are typed views already (decoding one gives it back): their views are
    built without checking the status half and without canonicalising a DGD's components
    (``tests/validation/test_compat_view.py`` proves both on every converted object)."""

    __slots__ = ("_built", "_converted", "_shared")

    def __init__(self, converted: bool = False) -> None:
        # By id(); the object is kept alongside so that its id stays its own.
        self._built: dict[int, tuple[JSON, Any]] = {}
        self._shared = _Shared()
        self._converted = converted

    def _view(
        self, hub: JSON, lazy: Callable[[JSON, _Shared, bool], _View], full: Callable[[JSON], _View]
    ) -> _View:
        hit = self._built.get(id(hub))
        if hit is None:
            hit = (hub, lazy(hub, self._shared, self._converted) if LAZY else full(hub))
            self._built[id(hub)] = hit
        return cast(_View, hit[1])

    def graph(self, hub: JSON) -> GraphView:
        return self._view(hub, lazy_graph, full_graph)

    def component(self, hub: JSON) -> ComponentView:
        return self._view(hub, lazy_component, full_component)
