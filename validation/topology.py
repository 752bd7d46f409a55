"""Topology constraints and KV transfer policy, and the CRD's topology-domain pattern (the API
server's schema layer).

Upstream (deploy/operator/internal/webhook/validation/): the topology block of
``validateDynamoGraphDeploymentSpec`` with ``groveTopologyOverrideCompositionErrors``,
``validateSpecTopologyConstraint`` and ``validateKvTransferPolicy`` (dynamographdeployment.go),
``validateTopologyConstraint`` (shared_v1beta1.go), and the update rules
``validateSpecTopologyConstraintUpdate``, ``validateTopologyConstraintUpdate`` and
``validateKvTransferPolicyUpdate``."""

from __future__ import annotations

import re
from typing import Final

from domain.admission import ClusterTopologyReader, LookupNotFound
from domain.constants import PROVIDER_GROVE, SCOPE_COMPONENT, SCOPE_LEADER, SCOPE_ROOT, SCOPE_WORKER
from gocompat.fielderrors import FieldError, GoJSON, Path, forbidden, invalid, required
from gocompat.gotext import go_quote
from validation.objects import JSON, lst, string, sub
from validation.provider_override import override_writes_topology

DOMAIN_PATTERN: Final = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
_DOMAIN_RE: Final = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")
_DNS1123_SUBDOMAIN_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_TOPOLOGY_IMMUTABLE: Final = (
    "is immutable and cannot be added, removed, or changed after creation; "
    "delete and recreate the {kind} to change topology constraints"
)
_KV_IMMUTABLE: Final = (
    "is immutable and cannot be added, removed, or changed after creation; "
    "delete and recreate the DynamoGraphDeployment to change the KV transfer policy"
)
_COMPOSITION: Final = (
    "cannot be combined with spec.topologyConstraint or components[].topologyConstraint; "
    "use either the typed topology API or provider-native Grove topology overrides"
)


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``k8s.io/apimachinery/pkg/util/validation.IsDNS1123Subdomain``."""
    errs: list[str] = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(_DNS1123_SUBDOMAIN_MSG)
    return errs


# --- schema layer ------------------------------------------------------------------------------


def _pattern_error(path: Path, value: object) -> FieldError | None:
    if not isinstance(value, str) or _DOMAIN_RE.fullmatch(value) is not None:
        return None
    return invalid(path, value, f"{path} in body should match '{DOMAIN_PATTERN}'")


def schema_errors_dgd(obj: JSON, alpha: bool) -> list[FieldError]:
    """The CRD pattern on topology domains, checked on the object as sent (hub or v1alpha1)."""
    spec = sub(obj, "spec")
    if spec is None:
        return []
    out: list[FieldError] = []
    sp = Path("spec")
    if alpha:
        services = sub(spec, "services") or {}
        for name in sorted(services):
            tc = sub(services, name)
            tc = sub(tc, "topologyConstraint")
            if tc is not None and "packDomain" in tc:
                e = _pattern_error(
                    sp.child("services").key(name).child("topologyConstraint", "packDomain"), tc["packDomain"]
                )
                if e is not None:
                    out.append(e)
    else:
        for i, comp in enumerate(lst(spec, "components")):
            tc = sub(comp if isinstance(comp, dict) else None, "topologyConstraint")
            if tc is not None and "packDomain" in tc:
                e = _pattern_error(
                    sp.child("components").index(i).child("topologyConstraint", "packDomain"),
                    tc["packDomain"],
                )
                if e is not None:
                    out.append(e)
    kv = sub(sub(spec, "experimental"), "kvTransferPolicy")
    if kv is not None and "domain" in kv:
        e = _pattern_error(sp.child("experimental", "kvTransferPolicy", "domain"), kv["domain"])
        if e is not None:
            out.append(e)
    tc = sub(spec, "topologyConstraint")
    if tc is not None and "packDomain" in tc:
        e = _pattern_error(sp.child("topologyConstraint", "packDomain"), tc["packDomain"])
        if e is not None:
            out.append(e)
    return out


def schema_errors_dcd(obj: JSON) -> list[FieldError]:
    tc = sub(sub(obj, "spec"), "topologyConstraint")
    if tc is None or "packDomain" not in tc:
        return []
    e = _pattern_error(Path("spec", "topologyConstraint", "packDomain"), tc["packDomain"])
    return [] if e is None else [e]


# --- create-time rules ------------------------------------------------------------------------------


def composition_errors(spec: JSON, components: list[JSON], provider: str, path: Path) -> list[FieldError]:
    """Upstream ``groveTopologyOverrideCompositionErrors``: typed topology combined with Grove topology
    written through provider overrides."""
    if provider != PROVIDER_GROVE:
        return []
    out: list[FieldError] = []
    if override_writes_topology(sub(spec, "providerOverride"), provider, SCOPE_ROOT, None):
        out.append(forbidden(path.child("providerOverride", "value"), _COMPOSITION))
    for i, comp in enumerate(components):
        cp = path.child("components").index(i)
        if override_writes_topology(sub(comp, "providerOverride"), provider, SCOPE_COMPONENT, comp):
            out.append(forbidden(cp.child("providerOverride", "value"), _COMPOSITION))
        mn = sub(comp, "multinode")
        if mn is None:
            continue
        for role, scope in (("leader", SCOPE_LEADER), ("worker", SCOPE_WORKER)):
            r = sub(mn, role)
            if r is not None and override_writes_topology(sub(r, "providerOverride"), provider, scope, comp):
                out.append(forbidden(cp.child("multinode", role, "providerOverride", "value"), _COMPOSITION))
    return out


class TopologyInfo:
    """The levels of a ClusterTopologyBinding: domain -> level index, and the sorted domains."""

    __slots__ = ("domains", "index", "name")

    def __init__(self, name: str, levels: tuple[str, ...]) -> None:
        self.name = name
        self.index = {d: i for i, d in enumerate(levels)}
        self.domains = sorted(levels)

    def listing(self) -> str:
        return "[" + " ".join(self.domains) + "]"  # Go's %v of a []string


def read_topology(reader: ClusterTopologyReader, name: str) -> tuple[TopologyInfo | None, str]:
    """(info, error detail) for the ClusterTopologyBinding ``name``."""
    try:
        levels = reader(name)
    except LookupNotFound:
        return None, "references a ClusterTopologyBinding resource that was not found"
    except Exception as exc:
        return None, f"failed to read ClusterTopologyBinding: {exc}"
    return TopologyInfo(name, tuple(levels)), ""


def topology_errors(
    spec: JSON,
    components: list[JSON],
    provider: str,
    path: Path,
    *,
    generation: int = 0,
    grove_pathway: bool = False,
    reader: ClusterTopologyReader | None = None,
) -> list[FieldError]:
    """The topology block of upstream ``validateDynamoGraphDeploymentSpec``:
    ``groveTopologyOverrideCompositionErrors``, the required constraints, then
    ``validateSpecTopologyConstraint`` and ``validateTopologyConstraint`` against the
    ClusterTopologyBinding. Its look-up (``readGroveClusterTopology``) runs only with a reader, on
    the Grove pathway, at generation <= 1 and when the spec names a topology."""
    has_component = any(sub(c, "topologyConstraint") is not None for c in components)
    spec_tc = sub(spec, "topologyConstraint")
    if spec_tc is None and not has_component:
        return []
    out = composition_errors(spec, components, provider, path)
    constraint_path = path.child("topologyConstraint")
    if spec_tc is None:
        out.append(required(constraint_path, "is required when any component topology constraint is set"))
        return out
    spec_domain = string(spec_tc, "packDomain")
    if not spec_domain and not has_component:
        out.append(
            required(
                constraint_path.child("packDomain"), "is required when no component topologyConstraint is set"
            )
        )
    info: TopologyInfo | None = None
    name = string(spec_tc, "clusterTopologyName")
    if name and generation <= 1 and grove_pathway and reader is not None:
        info, detail = read_topology(reader, name)
        if info is None:
            out.append(invalid(constraint_path.child("clusterTopologyName"), name, detail))
    if info is None:
        return out
    if spec_domain and spec_domain not in info.index:
        out.append(
            invalid(
                constraint_path.child("packDomain"),
                GoJSON(spec_domain),
                f"does not exist in ClusterTopologyBinding {go_quote(info.name)}; available domains: {info.listing()}",
            )
        )
    for i, comp in enumerate(components):
        tc = sub(comp, "topologyConstraint")
        if tc is None:
            continue
        domain = string(tc, "packDomain")
        domain_path = path.child("components").index(i).child("topologyConstraint", "packDomain")
        level = info.index.get(domain)
        if level is None:
            # Quirk: this message names "ClusterTopology", not "ClusterTopologyBinding".
            out.append(
                invalid(
                    domain_path,
                    GoJSON(domain),
                    f"does not exist in ClusterTopology {go_quote(info.name)}; available domains: {info.listing()}",
                )
            )
            continue
        spec_level = info.index.get(spec_domain) if spec_domain else None
        if spec_level is not None and level < spec_level:
            out.append(
                invalid(
                    domain_path,
                    GoJSON(domain),
                    f"must be equal to or narrower than the deployment-level domain {go_quote(spec_domain)}",
                )
            )
    return out


def kv_policy_errors(
    spec: JSON,
    path: Path,
    grove_pathway: bool,
    requirement: str,
    *,
    generation: int = 0,
    reader: ClusterTopologyReader | None = None,
) -> list[FieldError]:
    """Upstream ``validateKvTransferPolicy`` (its ClusterTopologyBinding look-up only when a reader is
    available)."""
    policy = sub(sub(spec, "experimental"), "kvTransferPolicy")
    if policy is None:
        return []
    name = string(policy, "clusterTopologyName")
    if not name:
        return []
    name_path = path.child("experimental", "kvTransferPolicy", "clusterTopologyName")
    out: list[FieldError] = []
    errs = dns1123_subdomain_errors(name)
    if errs:
        out.append(invalid(name_path, name, "; ".join(errs)))
    if not grove_pathway:
        out.append(forbidden(name_path, requirement))
    if out or generation > 1 or reader is None:
        return out
    info, detail = read_topology(reader, name)
    if info is None:
        return [invalid(name_path, name, detail)]
    domain = string(policy, "domain")
    if domain not in info.index:
        out.append(
            invalid(
                path.child("experimental", "kvTransferPolicy", "domain"),
                GoJSON(domain),
                f"does not exist in ClusterTopologyBinding {go_quote(info.name)}; available domains: {info.listing()}",
            )
        )
    return out


# --- update rules ----------------------------------------------------------------------------------


def _spec_tc_json(tc: JSON | None) -> GoJSON | None:
    if tc is None:
        return None
    out: JSON = {"clusterTopologyName": string(tc, "clusterTopologyName")}
    if string(tc, "packDomain"):
        out["packDomain"] = string(tc, "packDomain")
    return GoJSON(out)


def _component_tc_json(tc: JSON | None) -> GoJSON | None:
    return None if tc is None else GoJSON({"packDomain": string(tc, "packDomain")})


def kv_policy_json(policy: JSON | None) -> GoJSON | None:
    if policy is None:
        return None
    out: JSON = {}
    for key in ("clusterTopologyName", "labelKey"):
        if string(policy, key):
            out[key] = string(policy, key)
    out["domain"] = string(policy, "domain")
    if string(policy, "enforcement"):
        out["enforcement"] = string(policy, "enforcement")
    pw = policy.get("preferredWeight")
    if isinstance(pw, int) and not isinstance(pw, bool):
        out["preferredWeight"] = pw
    return GoJSON(out)


def spec_topology_update_errors(new_spec: JSON, old_spec: JSON, path: Path) -> list[FieldError]:
    """Upstream ``validateSpecTopologyConstraintUpdate``: compared by (clusterTopologyName, packDomain)."""
    new_tc = sub(new_spec, "topologyConstraint")
    old_tc = sub(old_spec, "topologyConstraint")
    tp = path.child("topologyConstraint")
    msg = _TOPOLOGY_IMMUTABLE.format(kind="DynamoGraphDeployment")
    if new_tc is not None:
        if old_tc is not None and all(
            string(new_tc, k) == string(old_tc, k) for k in ("clusterTopologyName", "packDomain")
        ):
            return []
        return [invalid(tp, _spec_tc_json(new_tc), msg)]
    if old_tc is not None:
        return [invalid(tp, None, msg)]
    return []


def component_topology_update_errors(new: JSON, old: JSON, path: Path, owner_kind: str) -> list[FieldError]:
    """Upstream ``validateTopologyConstraintUpdate``: a component's constraint, compared by packDomain."""
    new_tc = sub(new, "topologyConstraint")
    old_tc = sub(old, "topologyConstraint")
    tp = path.child("topologyConstraint")
    msg = _TOPOLOGY_IMMUTABLE.format(kind=owner_kind)
    if new_tc is not None:
        if old_tc is not None and string(new_tc, "packDomain") == string(old_tc, "packDomain"):
            return []
        return [invalid(tp, _component_tc_json(new_tc), msg)]
    if old_tc is not None:
        return [invalid(tp, None, msg)]
    return []


def _effective_enforcement(policy: JSON) -> str:
    return string(policy, "enforcement") or "required"


def _kv_equal(a: JSON, b: JSON | None) -> bool:
    if b is None:
        return False
    pa, pb = a.get("preferredWeight"), b.get("preferredWeight")
    return (
        all(string(a, k) == string(b, k) for k in ("clusterTopologyName", "labelKey", "domain"))
        and _effective_enforcement(a) == _effective_enforcement(b)
        and pa == pb
    )


def kv_policy_update_errors(new_spec: JSON, old_spec: JSON, path: Path) -> list[FieldError]:
    """Upstream ``validateDynamoGraphDeploymentExperimentalSpecUpdate`` with
    ``validateKvTransferPolicyUpdate`` (empty enforcement compares as ``required``)."""
    new_exp = sub(new_spec, "experimental")
    old_policy = sub(sub(old_spec, "experimental"), "kvTransferPolicy")
    kp = path.child("experimental", "kvTransferPolicy")
    if new_exp is None:
        # Quirk: the value shown is the (nil) experimental block.
        return [invalid(kp, None, _KV_IMMUTABLE)] if old_policy is not None else []
    new_policy = sub(new_exp, "kvTransferPolicy")
    if new_policy is not None:
        return (
            []
            if _kv_equal(new_policy, old_policy)
            else [invalid(kp, kv_policy_json(new_policy), _KV_IMMUTABLE)]
        )
    return [invalid(kp, None, _KV_IMMUTABLE)] if old_policy is not None else []
