"""``dynamo-webhook audit``: what the admission and conversion rules make of every Dynamo object that
already exists in a cluster, before they are installed or upgraded.

Read-only: paginated LISTs of the six kinds (plus their CRDs, the namespace-scope Leases and the live
look-ups ``serve`` makes). Each object then goes through the server's own code
(:func:`app.review.dispatch.review_admission`, :func:`app.review.dispatch.convert_objects`) the way the API server
would send it on

- its next update: a no-op UPDATE (``object`` = ``oldObject`` = the object as stored), mutating then
  validating webhook, in the API version its last writer used (``metadata.managedFields``);
- its re-creation from the same manifest (restore, GitOps re-sync): a CREATE of the object without
  its server-set metadata and status;
- a conversion round trip through both versions.

Only the webhooks of ``deploy/`` are simulated (:data:`REGISTRATION`), with their API versions and
match policies: an Equivalent webhook receives the object converted to its version with
``requestKind`` the version the client used; an Exact one only sees requests in its own version.
"""

from __future__ import annotations

import base64
import datetime as dt
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonpatch
import orjson

from app.cluster.inventory import (
    EXIT_FINDINGS,
    EXIT_OK,
    CrdInfo,
    JsonObj,
    Listing,
    Progress,
    collection_path,
    read_crd,
)
from app.review.dispatch import review_admission
from app.review.errors import ConversionFailure
from app.review.roundtrip import convert_one, roundtrip_problems
from app.review.webhook_paths import WEBHOOK_ROUTES
from app.server.cluster_services import ClusterServices, LiveLookups
from app.server.settings import ADMISSION_FIELDS, Settings
from certs.kube import lease_path
from certs.leases import LEASE_NAME, lease_expired
from domain.constants import GROUP
from kinds import custom_kinds
from kinds.registry import Kind

Operation = Literal["UPDATE", "CREATE"]


@dataclass(frozen=True, slots=True)
class Hook:
    """One webhook of deploy/'s registration for a kind."""

    name: str
    path: str
    version: str
    exact: bool = False  # matchPolicy Exact (else Equivalent)


def _registered(kind: Kind, review_type: str) -> Hook | None:
    for hook in kind.webhooks:
        if hook.type == review_type and hook.name:
            return Hook(hook.name, hook.path, hook.version, hook.exact)
    return None


#: kind -> (mutating, validating) webhook as deploy/ registers them (from the kind registry).
REGISTRATION: dict[str, tuple[Hook | None, Hook | None]] = {
    kind.kind: (_registered(kind, "mutate"), _registered(kind, "validate")) for kind in custom_kinds()
}

#: Metadata the API server sets; a manifest (and so a CREATE) does not carry it.
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)
AUDIT_USER = {"username": "dynamo-webhook-audit", "groups": ["system:authenticated"]}
STORED_BASIS = (
    "The API does not say which version one object is stored in. Each CRD's status.storedVersions "
    "lists every version objects may still be stored in: with a single entry every object is stored "
    "in it; otherwise each object is in one of them until storage-migrate has rewritten it."
)


# --------------------------------------------------------------------------- one object


@dataclass
class Check:
    """The outcome of one simulated request."""

    operation: Operation
    allowed: bool = True
    webhook: str = ""  # the webhook that refused
    code: int = 200
    message: str = ""  # the webhook's status message
    warnings: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # defaulting: "add /spec/..."

    @property
    def error(self) -> str:
        """The refusal as the API server reports it to the client."""
        if self.allowed:
            return ""
        if self.webhook.startswith("conversion "):
            return f"{self.webhook} failed: {self.message}"
        denied = f'admission webhook "{self.webhook}" denied the request'
        return f"{denied}: {self.message}" if self.message else f"{denied} without explanation"

    def as_json(self) -> JsonObj:
        out: JsonObj = {"allowed": self.allowed}
        if not self.allowed:
            out.update(webhook=self.webhook, code=self.code, message=self.message, error=self.error)
        if self.warnings:
            out["warnings"] = self.warnings
        if self.changes:
            out["changes"] = self.changes
        return out


@dataclass
class ObjectReport:
    kind: str
    namespace: str
    name: str
    checked_as: str  # the API version of the simulated requests
    update: Check
    create: Check
    roundtrip: dict[str, list[str]] = field(default_factory=dict)  # through version -> field paths
    stored: tuple[str, ...] = ()  # versions it may be stored in
    excluded: bool = False  # namespace claimed by a namespace-restricted operator

    @property
    def refused(self) -> bool:
        return not (self.update.allowed and self.create.allowed)

    @property
    def defaulted(self) -> bool:
        return bool(self.update.changes)

    @property
    def not_round_tripping(self) -> bool:
        return any(self.roundtrip.values())

    @property
    def findings(self) -> bool:
        return self.refused or self.defaulted or self.not_round_tripping

    def as_json(self) -> JsonObj:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "checkedAs": f"{GROUP}/{self.checked_as}",
            "excluded": self.excluded,
            "update": self.update.as_json(),
            "create": self.create.as_json(),
            "roundTrip": {f"{GROUP}/{v}": paths for v, paths in self.roundtrip.items()},
            "storedAs": [f"{GROUP}/{v}" for v in self.stored],
        }


def _version(obj: JsonObj) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[2]


def writer_version(obj: JsonObj, served: Sequence[str], default: str) -> str:
    """The version of the newest write to the object itself (not a subresource) according to
    ``metadata.managedFields``: the version its owners use, and so the one its next update will
    come in. ``default`` when that is unknown or not served."""
    entries = [
        m
        for m in (obj.get("metadata") or {}).get("managedFields") or ()
        if isinstance(m, dict) and not m.get("subresource") and m.get("operation") in ("Update", "Apply")
    ]
    if not entries:
        return default
    newest = max(entries, key=lambda m: str(m.get("time") or ""))
    version = str(newest.get("apiVersion", "")).rpartition("/")[2]
    return version if version in served else default


def as_manifest(obj: JsonObj) -> JsonObj:
    """The object as a manifest would carry it: no server-set metadata, no status."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_METADATA}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


class Auditor:
    """Runs the simulated requests for one object at a time with the server's functions."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.expected = {r.path: r.expected_gvk for r in WEBHOOK_ROUTES}
        self._uid = 0
        # Conversions of the object being audited, by (id of the source, target version); the
        # sources are kept alive with their results, and nothing here mutates either.
        self._converted: dict[tuple[int, str], tuple[JsonObj, JsonObj]] = {}

    # -- conversion
    def to_version(self, obj: JsonObj, version: str) -> JsonObj:
        """``obj`` as the conversion webhook would answer for ``version`` (cached for one object)."""
        if _version(obj) == version:
            return obj
        key = (id(obj), version)
        if key not in self._converted:
            self._converted[key] = (obj, convert_one(obj, f"{GROUP}/{version}"))
        return self._converted[key][1]

    def _convert(self, obj: JsonObj, api_version: str) -> JsonObj:
        return self.to_version(obj, api_version.rpartition("/")[2])

    # -- admission
    def _review(
        self,
        kind: Kind,
        hook: Hook,
        operation: Operation,
        request_version: str,
        obj: JsonObj,
        old: JsonObj | None,
    ) -> JsonObj:
        self._uid += 1
        meta = obj.get("metadata") or {}
        resource = {"group": GROUP, "version": hook.version, "resource": kind.plural}
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": f"audit-{self._uid}",
                "kind": {"group": GROUP, "version": hook.version, "kind": kind.kind},
                "resource": resource,
                "requestKind": {"group": GROUP, "version": request_version, "kind": kind.kind},
                "requestResource": {**resource, "version": request_version},
                "name": meta.get("name", ""),
                "namespace": meta.get("namespace", ""),
                "operation": operation,
                "userInfo": AUDIT_USER,
                "object": obj,
                "oldObject": old,
                "dryRun": False,
            },
        }

    def admit(
        self, kind: Kind, operation: Operation, request_version: str, obj: JsonObj, old: JsonObj | None
    ) -> Check:
        """Mutating then validating webhook of ``kind`` for ``obj`` sent in ``request_version``."""
        check = Check(operation)
        mutating, validating = REGISTRATION.get(kind.kind, (None, None))
        hooks: tuple[tuple[Literal["mutate", "validate"], Hook | None], ...] = (
            ("mutate", mutating),
            ("validate", validating),
        )
        for review_type, hook in hooks:
            if hook is None or (hook.exact and hook.version != request_version):
                continue
            try:
                sent = self.to_version(obj, hook.version)
                old_sent = self.to_version(old, hook.version) if old is not None else None
            except ConversionFailure as exc:
                check.allowed, check.code, check.message = False, exc.code, exc.message
                check.webhook = f"conversion webhook for {GROUP}/{_version(obj)}, Kind={kind.kind}"
                return check
            review = self._review(kind, hook, operation, request_version, sent, old_sent)
            outcome = review_admission(review, review_type, self.ctx, self.expected.get(hook.path))
            response = outcome.response
            check.warnings += [str(w) for w in response.get("warnings", ())]
            if not outcome.allowed:
                check.allowed, check.webhook, check.code, check.message = (
                    False,
                    hook.name,
                    outcome.code,
                    outcome.message,
                )
                return check
            if response.get("patch"):
                ops = orjson.loads(base64.b64decode(response["patch"]))
                # A status operation is inert: the API server keeps the stored status on an update
                # of the object itself (the status subresource); it is not a change to report.
                check.changes += [f"{op['op']} {op['path']}" for op in ops if not _is_status(op["path"])]
                sent = jsonpatch.apply_patch(sent, ops)
            obj = sent
        return check

    def audit(self, kind: Kind, obj: JsonObj, crd: CrdInfo) -> ObjectReport:
        """Every check of one object as listed (in any served version)."""
        self._converted.clear()
        meta = obj.get("metadata") or {}
        served = crd.served or (_version(obj),)
        version = writer_version(obj, served, crd.storage_version or _version(obj))
        forms: dict[str, JsonObj] = {_version(obj): obj}
        roundtrip: dict[str, list[str]] = {}
        if kind.convertible:
            for through in ("v1alpha1", "v1beta1"):
                try:
                    forms[through] = self.to_version(obj, through)
                    roundtrip[through] = roundtrip_problems(forms[through], self._convert)
                except ConversionFailure as exc:
                    roundtrip[through] = [f"(conversion failed: {exc})"]
        if version in forms:
            request = forms[version]
        else:  # unconvertible object: check it as listed
            request, version = obj, _version(obj)
        update = self.admit(kind, "UPDATE", version, request, request)
        create = self.admit(kind, "CREATE", version, as_manifest(request), None)
        namespace = str(meta.get("namespace", ""))
        return ObjectReport(
            kind=kind.kind,
            namespace=namespace,
            name=str(meta.get("name", "")),
            checked_as=version,
            update=update,
            create=create,
            roundtrip=roundtrip,
            stored=(crd.storage_version,) if crd.migrated else crd.stored_versions,
            excluded=self.ctx.namespace_excluded(namespace),
        )


# --------------------------------------------------------------------------- the cluster


@dataclass
class KindState:
    kind: Kind
    crd: CrdInfo | None
    listed_as: str = ""
    objects: int = 0

    def as_json(self) -> JsonObj:
        out: JsonObj = {"kind": self.kind.kind, "crd": self.kind.crd_name, "installed": self.crd is not None}
        if self.crd is not None:
            out.update(
                storageVersion=f"{GROUP}/{self.crd.storage_version}",
                storedVersions=[f"{GROUP}/{v}" for v in self.crd.stored_versions],
                singleStoredVersion=self.crd.migrated,
                objects=self.objects,
            )
        return out


@dataclass
class Report:
    namespace: str | None  # None: all namespaces
    settings: dict[str, Any]
    kinds: list[KindState] = field(default_factory=list)
    objects: list[ObjectReport] = field(default_factory=list)
    excluded_namespaces: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def refused(self) -> list[ObjectReport]:
        return [o for o in self.objects if o.refused]

    @property
    def exit_code(self) -> int:
        return EXIT_FINDINGS if self.refused else EXIT_OK

    def totals(self, key: Callable[[ObjectReport], str]) -> dict[str, dict[str, int]]:
        out: dict[str, Counter[str]] = {}
        for o in self.objects:
            c = out.setdefault(key(o), Counter())
            c["objects"] += 1
            c["refusedOnUpdate"] += not o.update.allowed
            c["refusedOnCreate"] += not o.create.allowed
            c["refused"] += o.refused
            c["defaulted"] += o.defaulted
            c["notRoundTripping"] += o.not_round_tripping
            c["excluded"] += o.excluded
        return {k: {f: v[f] for f in TOTAL_FIELDS} for k, v in sorted(out.items())}

    def as_json(self) -> JsonObj:
        overall = self.totals(lambda o: "all").get("all", dict.fromkeys(TOTAL_FIELDS, 0))
        return {
            "scope": {"namespace": self.namespace, "allNamespaces": self.namespace is None},
            "settings": self.settings,
            "excludedNamespaces": self.excluded_namespaces,
            "kinds": [k.as_json() for k in self.kinds],
            "storedVersionsBasis": STORED_BASIS,
            "objects": [o.as_json() for o in self.objects],
            "totals": {
                **overall,
                "byKind": self.totals(lambda o: o.kind),
                "byNamespace": self.totals(lambda o: o.namespace),
            },
            "seconds": round(self.seconds, 3),
        }


TOTAL_FIELDS = (
    "objects",
    "refused",
    "refusedOnUpdate",
    "refusedOnCreate",
    "defaulted",
    "notRoundTripping",
    "excluded",
)


class LeaseSnapshot:
    """The namespace-scope Leases as listed once (``serve`` watches them; an audit is a snapshot)."""

    def __init__(self, leases: Iterable[JsonObj], now: dt.datetime | None = None) -> None:
        now = now or dt.datetime.now(dt.UTC)
        self.excluded = sorted(
            str(lease["metadata"].get("namespace", ""))
            for lease in leases
            if (lease.get("metadata") or {}).get("name") == LEASE_NAME and not lease_expired(lease, now)
        )

    def is_excluded(self, namespace: str) -> bool:
        return namespace in self.excluded


def admission_context(kube: Any, settings: Settings) -> tuple[Any, LeaseSnapshot]:
    """The context ``serve`` builds with an API: Lease exclusion and the live look-ups (ClusterTopology
    bindings read once per name)."""
    listed = kube.list(lease_path(), fields=f"metadata.name={LEASE_NAME}")
    scope = LeaseSnapshot(listed.get("items") or ())
    lookups = CachedLookups(kube)
    return ClusterServices(scope=scope, lookups=lookups).admission_context(settings), scope


class CachedLookups(LiveLookups):
    """The live look-ups of ``serve``, each ClusterTopologyBinding read once (an audit is a snapshot)."""

    def __init__(self, kube: Any) -> None:
        super().__init__(kube, discovery_ttl=3600.0)
        self._topologies: dict[str, tuple[str, ...] | Exception] = {}

    def cluster_topology(self, name: str) -> tuple[str, ...]:
        if name not in self._topologies:
            try:
                self._topologies[name] = super().cluster_topology(name)
            except Exception as exc:
                self._topologies[name] = exc
        found = self._topologies[name]
        if isinstance(found, Exception):
            raise found
        return found


def run(
    kube: Any,
    kinds: Sequence[Kind],
    namespace: str | None,
    settings: Settings,
    *,
    page_size: int = 500,
    progress: Progress | None = None,
) -> Report:
    started = time.monotonic()
    ctx, scope = admission_context(kube, settings)
    report = Report(
        namespace, {f: getattr(settings, f) for f in ADMISSION_FIELDS}, excluded_namespaces=scope.excluded
    )
    auditor = Auditor(ctx)
    progress = progress or Progress(enabled=False)
    for kind in kinds:
        crd = read_crd(kube, kind)
        state = KindState(kind, crd)
        report.kinds.append(state)
        if crd is None or not crd.served:
            continue
        state.listed_as = crd.list_version
        listing = Listing(kube, collection_path(kind, state.listed_as, namespace), page_size)
        for obj in listing:
            obj.setdefault("apiVersion", f"{GROUP}/{state.listed_as}")
            obj.setdefault("kind", kind.kind)
            report.objects.append(auditor.audit(kind, obj, crd))
            state.objects += 1
            progress.update(f"audit {kind.plural}", state.objects, listing.total)
        progress.clear()
    report.seconds = time.monotonic() - started
    return report


def _is_status(path: str) -> bool:
    return path == "/status" or path.startswith("/status/")
