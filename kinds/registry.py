"""The shape of one registered kind, and the registry that holds them.

A :class:`Kind` says everything the rest of the project needs to know about one resource type
the service answers for: its group, version and plural (what deploy/ registers, what the
cluster tools list), its hub and served versions, the handlers of its three webhooks (typed
:class:`Validator`, :class:`HubDefaulter` / :class:`Mutator`, and the converter), the payload
annotations its conversion writes, whether its handlers guard the per-kind path's GVK, and the
webhook paths the upstream operator registers for it. :class:`Registry` refuses a kind twice.

The registry itself is filled in :mod:`kinds`, which imports each kind's modules explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from domain.admission import (
    GVK,
    AdmissionContext,
    AdmissionInput,
    AdmissionSettings,
    Decision,
    JSONObject,
    Operation,
)
from domain.constants import GROUP

WebhookType = Literal["validate", "mutate"]


class Validator(Protocol):
    """A kind's validating rules: one decoded request in, one decision out. The third argument
    tells whether the request's ``object.spec`` decodes as it is (see :func:`kinds.validate`);
    rules that never decode the spec themselves do not read it."""

    def __call__(self, inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool, /) -> Decision: ...


class HubDefaulter(Protocol):
    """A kind's defaults, on an object in the hub version: the defaulted object (a new dict), or
    the very object it was given when nothing changes."""

    def __call__(
        self, obj: JSONObject, operation: Operation, settings: AdmissionSettings, /
    ) -> JSONObject: ...


class Converter(Protocol):
    """A kind's conversion between its served versions (hub and spokes)."""

    @property
    def kind(self) -> str: ...

    @property
    def api_versions(self) -> tuple[str, ...]:
        """Every apiVersion it converts between."""
        ...

    def convert(self, obj: JSONObject, desired_api_version: str, /) -> JSONObject:
        """A new object in ``desired_api_version``; raises ``ConversionError``."""
        ...


class Mutator(Protocol):
    """A mutating handler that answers the whole request itself (no hub round trip)."""

    def __call__(self, inp: AdmissionInput, ctx: AdmissionContext, /) -> Decision: ...


@dataclass(frozen=True, slots=True)
class WebhookPath:
    """One path the upstream operator serves for a kind, and how deploy/ registers it.

    ``version``: the API version its handler decodes (and the rule's ``apiVersions`` in deploy/).
    ``guarded``: the handler checks ``request.kind`` against that GVK (the GVK guard); otherwise it
    dispatches on ``request.kind`` as the generic paths do. ``name``: the webhook entry deploy/
    registers it under (empty when deploy/ does not register the path), with ``matchPolicy:
    Exact`` when ``exact`` (else Equivalent).
    """

    path: str
    type: WebhookType
    version: str
    guarded: bool = False
    name: str = ""
    exact: bool = False


@dataclass(frozen=True, slots=True)
class Kind:
    kind: str
    plural: str
    short: str = ""
    group: str = GROUP
    hub: str = "v1beta1"
    served: tuple[str, ...] = ("v1beta1",)
    validator: Validator | None = None
    defaulter: HubDefaulter | None = None
    # Whether a request in any other version than the hub is defaulted too, through a round trip
    # to the hub by ``converter`` (else it is allowed unpatched).
    default_spokes: bool = False
    mutator: Mutator | None = None
    converter: Converter | None = None
    # Applied to a spoke-version answer of the hub round trip (the shape upstream marshals).
    spoke_answer: Callable[[JSONObject], JSONObject] | None = None
    # ``nvidia.com/<payload>-spec`` and ``-status``: the annotations conversion keeps
    # unrepresentable fields in.
    payload: str = ""
    # Whether the handlers check ``request.kind`` against a per-kind path's GVK.
    gvk_guard: bool = False
    webhooks: tuple[WebhookPath, ...] = ()
    # A CustomResourceDefinition of this project's group (listed by audit and storage-migrate).
    custom: bool = True

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def convertible(self) -> bool:
        return self.converter is not None

    @property
    def payload_keys(self) -> tuple[str, ...]:
        """The spec and status payload annotation keys (empty when conversion keeps none)."""
        if not self.payload:
            return ()
        return (f"{self.group}/{self.payload}-spec", f"{self.group}/{self.payload}-status")

    def gvk(self, version: str) -> GVK:
        return GVK(self.group, version, self.kind)

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version


@dataclass
class Registry:
    """Kinds by (group, kind); registering one twice is an error."""

    _kinds: dict[tuple[str, str], Kind] = field(default_factory=dict)

    def register(self, kind: Kind) -> Kind:
        key = (kind.group, kind.kind)
        if key in self._kinds:
            raise ValueError(f"kind {kind.kind} of group {kind.group!r} is already registered")
        paths = {w.path for k in self._kinds.values() for w in k.webhooks}
        for hook in kind.webhooks:
            if hook.path in paths:
                raise ValueError(f"webhook path {hook.path} of {kind.kind} is already registered")
        if kind.defaulter is not None and kind.mutator is not None:
            raise ValueError(f"kind {kind.kind} has both a hub defaulter and a mutator")
        if kind.hub not in kind.served:
            raise ValueError(f"kind {kind.kind}: hub version {kind.hub} is not served")
        if kind.default_spokes and (kind.defaulter is None or kind.converter is None):
            raise ValueError(f"kind {kind.kind}: defaulting spoke versions needs a defaulter and a converter")
        if kind.converter is not None and kind.converter.kind != kind.kind:
            raise ValueError(f"kind {kind.kind}: converter is for {kind.converter.kind}")
        self._kinds[key] = kind
        return kind

    def get(self, group: str, kind: str) -> Kind | None:
        return self._kinds.get((group, kind))

    def __iter__(self) -> Iterator[Kind]:
        return iter(self._kinds.values())

    def __len__(self) -> int:
        return len(self._kinds)
