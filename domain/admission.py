"""Plain-data description of one admission request and of the answer to it.

These types are the contract between the HTTP layer (``app``) and the admission
rules (``validation`` and ``defaulting``). They carry no HTTP concepts: the
review envelope is parsed by ``app`` and mapped onto :class:`AdmissionInput`,
and a :class:`Decision` is mapped back onto an AdmissionReview response.

The types built once or more per review (:class:`UserInfo`, :class:`AdmissionInput`,
:class:`Decision`) write their ``__init__`` out instead of letting ``@dataclass`` generate it:
the compiled build (mypyc) compiles a written ``__init__`` but leaves a generated one
interpreted, about six times slower (1 µs per :class:`AdmissionInput`). ``@dataclass(init=False)``
still gives them their field order, ``==`` and ``repr``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
JSONObject = dict[str, Any]

DEFAULT_OPERATOR_PRINCIPAL = "system:serviceaccount:dynamo-system:dynamo-operator"
DEFAULT_PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"


@dataclass(frozen=True, slots=True)
class GVK:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:  # Go's schema.GroupVersionKind.String()
        return f"{self.api_version}, Kind={self.kind}"


def gvk_mismatch_message(expected: GVK, got: GVK) -> str:
    """The GVK guard's plain error text."""
    return f"admission requires {expected}, got {got}; check webhook and CRD conversion configuration"


@dataclass(slots=True, init=False)
class UserInfo:
    """The requesting user. Read-only by convention: not frozen, because a frozen dataclass sets
    each field through ``object.__setattr__``, which triples its construction cost, paid once per
    review."""

    username: str
    uid: str
    groups: tuple[str, ...]
    extra: dict[str, tuple[str, ...]]

    def __init__(
        self,
        username: str = "",
        uid: str = "",
        groups: tuple[str, ...] = (),
        extra: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.username = username
        self.uid = uid
        self.groups = groups
        self.extra = {} if extra is None else extra


@dataclass(frozen=True, slots=True)
class AdmissionSettings:
    """Resolved feature gates and operator identity (upstream defaults with no cluster)."""

    grove: bool = False
    checkpoint: bool = False
    gpu_discovery: bool = True
    operator_principal: str = DEFAULT_OPERATOR_PRINCIPAL
    planner_service_account: str = DEFAULT_PLANNER_SERVICE_ACCOUNT
    operator_version: str = "0.1.0"
    dgdr_default_image: str = ""
    # Live cluster look-ups (ClusterTopologyBinding, InferencePool discovery). Off offline:
    # rules that need them are skipped.
    cluster_lookups: bool = False


@dataclass(slots=True, init=False)
class AdmissionInput:
    """One AdmissionReview request, already decoded (objects are plain JSON dicts). Read-only by
    convention, not frozen, for the reason given at :class:`UserInfo`."""

    uid: str
    kind: GVK
    operation: Operation
    name: str
    namespace: str
    request_kind: GVK | None
    resource: str
    sub_resource: str
    user: UserInfo
    object: JSONObject | None
    old_object: JSONObject | None
    dry_run: bool
    # The GVK a per-kind upstream path expects (its GVK guard); None on the generic routes.
    expected_gvk: GVK | None

    def __init__(
        self,
        uid: str,
        kind: GVK,
        operation: Operation,
        name: str = "",
        namespace: str = "",
        request_kind: GVK | None = None,
        resource: str = "",
        sub_resource: str = "",
        user: UserInfo | None = None,
        object: JSONObject | None = None,
        old_object: JSONObject | None = None,
        dry_run: bool = False,
        expected_gvk: GVK | None = None,
    ) -> None:
        self.uid = uid
        self.kind = kind
        self.operation = operation
        self.name = name
        self.namespace = namespace
        self.request_kind = request_kind
        self.resource = resource
        self.sub_resource = sub_resource
        self.user = UserInfo() if user is None else user
        self.object = object
        self.old_object = old_object
        self.dry_run = dry_run
        self.expected_gvk = expected_gvk

    @property
    def source_version(self) -> str:
        """``requestKind.version`` when present, else the version of ``kind``."""
        return (self.request_kind or self.kind).version


@dataclass(slots=True, init=False)
class Decision:
    """The outcome of one admission handler.

    ``status`` is the full ``metav1.Status`` to put in the response when denied (or
    ``{"code": 200}`` when allowed). ``patched`` is only set by mutating handlers: the
    complete mutated object, in the same apiVersion as the object that was sent; the
    HTTP layer diffs it against what was sent.
    """

    allowed: bool
    status: JSONObject
    warnings: list[str]
    patched: JSONObject | None

    def __init__(
        self,
        allowed: bool,
        status: JSONObject | None = None,
        warnings: list[str] | None = None,
        patched: JSONObject | None = None,
    ) -> None:
        self.allowed = allowed
        self.status = {"code": 200} if status is None else status
        self.warnings = [] if warnings is None else warnings
        self.patched = patched

    @classmethod
    def allow(cls, warnings: list[str] | None = None, patched: JSONObject | None = None) -> Decision:
        return cls(True, {"code": 200}, list(warnings or []), patched)

    @classmethod
    def deny(
        cls,
        message: str,
        code: int = 403,
        reason: str = "Forbidden",
        warnings: list[str] | None = None,
        details: JSONObject | None = None,
    ) -> Decision:
        status: JSONObject = {"code": code, "message": message}
        if reason:
            status["reason"] = reason
        if details is not None:
            status["status"] = "Failure"
            status["details"] = details
        return cls(False, status, list(warnings or []))

    @property
    def code(self) -> int:
        return int(self.status.get("code", 200))

    @property
    def message(self) -> str:
        return str(self.status.get("message", ""))


# Namespace exclusion hook (lease markers of namespace-restricted operators).
NamespaceExcluded = Callable[[str], bool]


class LookupNotFound(LookupError):
    """A live look-up found no such object (Kubernetes NotFound)."""


# Live look-ups, used only when ``AdmissionSettings.cluster_lookups`` is on and a hook is set.
# ClusterTopologyBinding by name -> the domains of its ``spec.levels`` in level order; raises
# LookupNotFound when the binding does not exist, any other exception for read errors (its
# text is shown to the client).
ClusterTopologyReader = Callable[[str], tuple[str, ...]]
# Whether the ``inference.networking.k8s.io`` API group is served; raises on discovery errors.
InferencePoolProbe = Callable[[], bool]


def never_excluded(namespace: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class AdmissionContext:
    """Everything a handler may consult besides the request itself."""

    settings: AdmissionSettings = field(default_factory=AdmissionSettings)
    namespace_excluded: NamespaceExcluded = never_excluded
    cluster_topology: ClusterTopologyReader | None = None
    inference_pool_available: InferencePoolProbe | None = None
