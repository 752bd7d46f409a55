"""Rules shared by DGD components and the DCD spec (upstream ``validateDynamoComponentDeploymentSharedSpec``
in deploy/operator/internal/webhook/validation/shared_v1beta1.go), and the per-component update rules
(``validateDynamoComponentDeploymentSharedSpecUpdate``: the provider-override identities of the
component and its multinode roles, the single-/multi-node shape, the scaling-adapter replica lock,
the topology constraint, the experimental toggles, the runtime-version ratchet)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import orjson

from domain.admission import InferencePoolProbe
from domain.constants import SCOPE_COMPONENT, SCOPE_LEADER, SCOPE_WORKER
from gocompat.fielderrors import FieldError, GoJSON, Path, forbidden, invalid, required
from validation import failover, provider_override, runtime_version, topology
from validation.objects import (
    JSON,
    containers,
    experimental,
    integer,
    is_multinode,
    main_resources,
    present,
    quantity_fraction,
    quantity_text,
    string,
    sub,
)

GROVE_ONLY: Final = "is currently supported only for Grove-backed DynamoGraphDeployment components"


@dataclass(slots=True, init=False)
class SharedOptions:
    """What :func:`component_errors` depends on beyond the component. Read-only by convention:
    not frozen, as a frozen dataclass costs three times as much to build, once per request; its
    ``__init__`` is written out so that the compiled build compiles it (see
    :mod:`domain.admission`)."""

    grove_pathway: bool
    provider_overrides_supported: bool
    provider: str
    checkpoint_enabled: bool
    # Runtime-version rules run on the hub (v1beta1 source) only when this is True.
    runtime_version: bool
    allow_missing_override: bool
    # InferencePool API availability for EPP components (upstream ``inferencePoolAvailabilityError``
    # in shared_helpers.go; DGD components only, live look-up); None skips it.
    inference_pool: InferencePoolProbe | None

    def __init__(
        self,
        grove_pathway: bool,
        provider_overrides_supported: bool,
        provider: str,
        checkpoint_enabled: bool,
        runtime_version: bool,
        allow_missing_override: bool,
        inference_pool: InferencePoolProbe | None = None,
    ) -> None:
        self.grove_pathway = grove_pathway
        self.provider_overrides_supported = provider_overrides_supported
        self.provider = provider
        self.checkpoint_enabled = checkpoint_enabled
        self.runtime_version = runtime_version
        self.allow_missing_override = allow_missing_override
        self.inference_pool = inference_pool


def _inference_pool_error(probe: InferencePoolProbe) -> str | None:
    try:
        available = probe()
    except Exception as exc:
        return f"detect InferencePool API availability: {exc}"
    if available:
        return None
    return (
        "InferencePool API group (inference.networking.k8s.io) is not available in the cluster; "
        "install the Gateway API Inference Extension before deploying EPP components"
    )


def _has_container(conts: list[JSON], name: str) -> bool:
    return any(string(c, "name") == name for c in conts)


def component_errors(component: JSON, path: Path, opts: SharedOptions) -> list[FieldError]:
    """``validateDynamoComponentDeploymentSharedSpec`` in upstream order."""
    out: list[FieldError] = []
    po = sub(component, "providerOverride")
    if po is not None:
        out.extend(
            provider_override.validate_override(
                po,
                path.child("providerOverride"),
                supported=opts.provider_overrides_supported,
                provider=opts.provider,
                scope=SCOPE_COMPONENT,
                component=component,
            )
        )
    if present(component, "minAvailable") and not opts.grove_pathway:
        out.append(forbidden(path.child("minAvailable"), GROVE_ONLY))
    mn = sub(component, "multinode")
    if mn is not None:
        for role, scope in (
            ("leader", SCOPE_LEADER),
            ("worker", SCOPE_WORKER),
        ):
            rpo = sub(sub(mn, role), "providerOverride")
            if rpo is not None:
                out.extend(
                    provider_override.validate_override(
                        rpo,
                        path.child("multinode", role, "providerOverride"),
                        supported=opts.provider_overrides_supported,
                        provider=opts.provider,
                        scope=scope,
                        component=component,
                    )
                )
    if present(component, "sharedMemorySize"):
        size = component["sharedMemorySize"]
        frac = quantity_fraction(size)
        if frac is not None and frac < 0:
            out.append(
                invalid(path.child("sharedMemorySize"), quantity_text(size) or "", "must be non-negative")
            )
    ctype = string(component, "type")
    if ctype == "epp":
        if opts.inference_pool is not None:
            err = _inference_pool_error(opts.inference_pool)
            if err is not None:
                out.append(forbidden(path.child("type"), f"cannot deploy EPP component: {err}"))
        if is_multinode(component):
            out.append(forbidden(path.child("multinode"), "EPP component cannot be multinode"))
        if present(component, "replicas") and integer(component, "replicas") != 1:
            out.append(
                invalid(
                    path.child("replicas"),
                    integer(component, "replicas"),
                    "EPP component must have exactly 1 replica",
                )
            )
        if not present(component, "eppConfig"):
            out.append(required(path.child("eppConfig"), "is required for EPP components"))
    epp = sub(component, "eppConfig")
    if epp is not None:
        ref = sub(epp, "configMapRef")
        if ref is not None and not string(ref, "name"):
            out.append(required(path.child("eppConfig", "configMapRef", "name"), "is required"))
    if present(component, "frontendSidecar"):
        fs_path = path.child("frontendSidecar")
        fs = string(component, "frontendSidecar")
        pt = sub(component, "podTemplate")
        if pt is None:
            out.append(
                required(
                    path.child("podTemplate", "spec", "containers"), "is required when frontendSidecar is set"
                )
            )
        elif not fs:
            out.append(invalid(fs_path, fs, "must not be empty"))
        elif not _has_container(containers(pt), fs):
            out.append(invalid(fs_path, fs, "must match a podTemplate.spec.containers name"))
    exp = experimental(component)
    if exp is not None:
        out.extend(
            failover.experimental_errors(
                exp,
                path.child("experimental"),
                component_type=ctype,
                resources=main_resources(component),
                containers=containers(sub(component, "podTemplate")),
                grove_pathway=opts.grove_pathway,
                checkpoint_enabled=opts.checkpoint_enabled,
            )
        )
    if opts.runtime_version:
        out.extend(runtime_version.hub_create(component, path, opts.allow_missing_override))
    return out


def multinode_json(mn: JSON | None) -> GoJSON | None:
    """A MultinodeSpec pointer as Go renders it: nodeCount, then leader/worker when set."""
    if mn is None:
        return None
    out: JSON = {"nodeCount": integer(mn, "nodeCount")}
    for role in ("leader", "worker"):
        r = sub(mn, role)
        if r is None:
            continue
        rj: JSON = {}
        po = sub(r, "providerOverride")
        if po is not None:
            pj: JSON = {"apiVersion": string(po, "apiVersion")}
            if string(po, "target"):
                pj["target"] = string(po, "target")
            pj["value"] = po.get("value")
            rj["providerOverride"] = pj
        out[role] = rj
    return GoJSON(out)


def _replicas(component: JSON) -> int:
    return integer(component, "replicas", 1) if present(component, "replicas") else 1


def component_update_errors(
    new: JSON,
    old: JSON,
    path: Path,
    *,
    can_modify_replicas: bool,
    owner_kind: str,
    validate_gms_new_state: bool,
    runtime_version_ratchet: bool,
    allow_missing_override: bool,
) -> list[FieldError]:
    """``validateDynamoComponentDeploymentSharedSpecUpdate`` in upstream order.

    A component an UPDATE leaves as it was (the same JSON, value types included) is not compared
    field by field: every rule here compares the two states and finds nothing when they are
    equal, except the GPU Memory Service check of the new state, which alone runs
    (``tests/validation/test_update_unchanged.py`` pins this to the full comparison)."""
    if new is old or (new == old and orjson.dumps(new) == orjson.dumps(old)):
        # ``==`` alone would take 1, 1.0 and true for the same value; the encodings do not (the
        # conversion of an UPDATE's two v1alpha1 objects hands both the same unchanged component).
        if not validate_gms_new_state:
            return []
        return failover.gms_new_state_errors(
            experimental(new),
            path.child("experimental"),
            string(new, "type"),
            main_resources(new),
            containers(sub(new, "podTemplate")),
        )
    return compared_update_errors(
        new,
        old,
        path,
        can_modify_replicas=can_modify_replicas,
        owner_kind=owner_kind,
        validate_gms_new_state=validate_gms_new_state,
        runtime_version_ratchet=runtime_version_ratchet,
        allow_missing_override=allow_missing_override,
    )


def compared_update_errors(
    new: JSON,
    old: JSON,
    path: Path,
    *,
    can_modify_replicas: bool,
    owner_kind: str,
    validate_gms_new_state: bool,
    runtime_version_ratchet: bool,
    allow_missing_override: bool,
) -> list[FieldError]:
    """:func:`component_update_errors` comparing every field, whether the component changed or not."""
    out: list[FieldError] = []
    npo, opo = sub(new, "providerOverride"), sub(old, "providerOverride")
    if npo is not None and opo is not None:
        out.extend(provider_override.update_errors(npo, opo, path.child("providerOverride")))
    if is_multinode(new) != is_multinode(old):
        out.append(
            invalid(
                path.child("multinode"),
                multinode_json(sub(new, "multinode")),
                "cannot change node topology between single-node and multi-node after creation",
            )
        )
    nmn, omn = sub(new, "multinode"), sub(old, "multinode")
    if nmn is not None and omn is not None:
        for role in ("leader", "worker"):
            nr, orr = sub(nmn, role), sub(omn, role)
            nrp, orp = sub(nr, "providerOverride"), sub(orr, "providerOverride")
            if nrp is not None and orp is not None:
                out.extend(
                    provider_override.update_errors(
                        nrp, orp, path.child("multinode", role, "providerOverride")
                    )
                )
    if (
        (present(new, "scalingAdapter") or present(old, "scalingAdapter"))
        and not can_modify_replicas
        and _replicas(new) != _replicas(old)
    ):
        out.append(
            forbidden(
                path.child("replicas"),
                "cannot be modified directly when scaling adapter is enabled; "
                "scale or update the related DynamoGraphDeploymentScalingAdapter instead",
            )
        )
    out.extend(topology.component_topology_update_errors(new, old, path, owner_kind))
    out.extend(
        failover.experimental_update_errors(
            experimental(new),
            experimental(old),
            path.child("experimental"),
            owner_kind=owner_kind,
            component_type=string(new, "type"),
            resources=main_resources(new),
            containers=containers(sub(new, "podTemplate")),
            validate_gms_new_state=validate_gms_new_state,
        )
    )
    if runtime_version_ratchet:
        out.extend(runtime_version.hub_update(new, old, path, allow_missing_override))
    return out
