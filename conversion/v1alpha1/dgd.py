"""DynamoGraphDeployment v1alpha1 ⇄ v1beta1 (hub = v1beta1).

α ``spec.services`` (map) ⇄ β ``spec.components`` (list). Alpha-only data travels in the β
``nvidia.com/dgd-spec`` / ``nvidia.com/dgd-status`` payloads (sparse v1alpha1 types); hub-only
data in the α ``nvidia.com/dgd-spec`` payload (sparse v1beta1 spec).
"""

from __future__ import annotations

from typing import Any

from conversion.errors import ConversionError
from conversion.hub import Reuse
from conversion.payloads import (
    apply_epp_records,
    decode_root,
    get_annotation,
    has_annotation,
    read_spec_payload,
    read_status_payload,
    scrub,
    set_annotation,
    write_json_payload,
    write_spec_payload,
)
from conversion.podtemplate import ENV_LIST
from conversion.v1alpha1.component.fields import provider
from conversion.v1alpha1.component.from_hub import from_hub as component_from_hub
from conversion.v1alpha1.component.from_hub import hub_save_is_zero
from conversion.v1alpha1.component.schemas import (
    ALPHA_SHARED,
    BETA_SHARED,
    PROVIDER_OVERRIDE,
    REPLICA_STATUS_ALPHA,
    canon_alpha_shared,
    canon_beta_shared,
)
from conversion.v1alpha1.component.to_hub import to_hub as component_to_hub
from domain.constants import ALPHA_API_VERSION, ANN_DGD_SPEC, ANN_DGD_STATUS, HUB_API_VERSION
from gocompat import view as goview
from gocompat.encoding import encode
from gocompat.errors import GoTypeError
from gocompat.jsonvalue import deep_copy
from gocompat.typed import Field, Go, ListOf, MapOf, Ptr, Struct

__all__ = [
    "ALPHA_STATUS",
    "BETA_STATUS",
    "CONDITIONS",
    "from_hub",
    "replica_status_from_hub",
    "replica_status_to_hub",
    "status_conditions",
    "to_hub",
]

J = dict[str, Any]

CONDITIONS = "[]meta/v1.Condition"
TIME = "*meta/v1.Time"

_KV = Struct(
    (
        Field("clusterTopologyName", "string"),
        Field("labelKey", "string"),
        Field("domain", "string", False),
        Field("enforcement", "string"),
        Field("preferredWeight", Ptr("float")),
    )
)
_EXPERIMENTAL = Struct((Field("kvTransferPolicy", Ptr(_KV)),))
_RESTART = Struct(
    (
        Field("id", "string", False),
        Field("strategy", Ptr(Struct((Field("type", "string"), Field("order", ListOf("string")))))),
    )
)
_PVC = Struct(
    (
        Field("create", Ptr("bool")),
        Field("name", Ptr("string")),
        Field("storageClass", "string"),
        Field("size", "quantity"),
        Field("volumeAccessMode", "string"),
    )
)
# The fields both versions share, around the version's own ones: Go declares them (and so
# writes them) in the order head, own fields, tail, topologyConstraint, experimental.
_HEAD = (
    Field("providerOverride", Ptr(PROVIDER_OVERRIDE)),
    Field("annotations", "stringmap"),
    Field("labels", "stringmap"),
    Field("priorityClassName", "string"),
)
_TAIL = (Field("backendFramework", "string"), Field("restart", Ptr(_RESTART)))
_EXPERIMENTAL_FIELD = Field("experimental", Ptr(_EXPERIMENTAL))
ALPHA_SPEC = Struct(
    (
        *_HEAD,
        Field("pvcs", ListOf(_PVC)),
        Field("services", MapOf(Ptr(ALPHA_SHARED))),
        Field("envs", Go(ENV_LIST)),
        *_TAIL,
        Field(
            "topologyConstraint",
            Ptr(Struct((Field("topologyProfile", "string", False), Field("packDomain", "string")))),
        ),
        _EXPERIMENTAL_FIELD,
    )
)
# Live objects are decoded in two steps (root, then each component through the component
# module) so that components are decoded once.
ALPHA_SPEC_LIVE = Struct(
    tuple(Field(f.name, MapOf(Ptr("object"))) if f.name == "services" else f for f in ALPHA_SPEC.fields)
)
BETA_SPEC = Struct(
    (
        *_HEAD,
        Field("components", ListOf(BETA_SHARED)),
        Field("env", Go(ENV_LIST)),
        *_TAIL,
        Field(
            "topologyConstraint",
            Ptr(Struct((Field("clusterTopologyName", "string", False), Field("packDomain", "string")))),
        ),
        _EXPERIMENTAL_FIELD,
    )
)
BETA_SPEC_LIVE = Struct(
    tuple(Field(f.name, ListOf("object")) if f.name == "components" else f for f in BETA_SPEC.fields)
)
ALPHA_STATUS = Struct(
    (
        Field("observedGeneration", "int64"),
        Field("state", "string", False),
        Field("conditions", "list"),
        Field("services", MapOf(REPLICA_STATUS_ALPHA)),
        Field("restart", Ptr("object")),
        Field("checkpoints", MapOf("object")),
        Field("rollingUpdate", Ptr("object")),
        Field("placement", Ptr("object")),
    )
)

# v1beta1 ComponentReplicaStatus and DynamoGraphDeploymentStatus: v1alpha1's without
# ``componentName``, ``components`` where v1alpha1 has ``services`` (``state`` has no omitempty).
_REPLICA_STATUS_BETA = Struct(tuple(f for f in REPLICA_STATUS_ALPHA.fields if f.name != "componentName"))
BETA_STATUS = Struct(
    tuple(
        Field("components", MapOf(_REPLICA_STATUS_BETA)) if f.name == "services" else f
        for f in ALPHA_STATUS.fields
    )
)


# --- replica status -----------------------------------------------------------------------------


def _component_names_to_hub(s: J) -> list[str] | None:
    names = s.get("componentNames")
    if names:
        return list(names)
    if s.get("componentName"):
        return [s["componentName"]]
    return list(names) if names is not None else None


def replica_status_to_hub(s: J) -> J:
    out: J = {"componentKind": s.get("componentKind", "")}
    names = _component_names_to_hub(s)
    if names:
        out["componentNames"] = names
    if s.get("runtimeNamespace"):
        out["runtimeNamespace"] = s["runtimeNamespace"]
    out["replicas"] = s.get("replicas", 0)
    out["updatedReplicas"] = s.get("updatedReplicas", 0)
    for k in ("readyReplicas", "availableReplicas", "scheduledReplicas"):
        if s.get(k) is not None:
            out[k] = s[k]
    return out


def replica_status_from_hub(s: J) -> J:
    names = list(s.get("componentNames") or [])
    out: J = {"componentKind": s.get("componentKind", ""), "componentName": names[-1] if names else ""}
    if names:
        out["componentNames"] = names
    if s.get("runtimeNamespace"):
        out["runtimeNamespace"] = s["runtimeNamespace"]
    out["replicas"] = s.get("replicas", 0)
    out["updatedReplicas"] = s.get("updatedReplicas", 0)
    for k in ("readyReplicas", "availableReplicas", "scheduledReplicas"):
        if s.get(k) is not None:
            out[k] = s[k]
    return out


def name_needs_preservation(s: J | None) -> bool:
    if s is None:
        return False
    names = s.get("componentNames") or []
    if not names:
        return bool(s.get("componentName"))
    return bool(names[-1] != s.get("componentName", ""))


def should_restore_replica(dst: J, saved: J) -> bool:
    if not name_needs_preservation(saved):
        return False
    if list(dst.get("componentNames") or []) == list(_component_names_to_hub(saved) or []):
        return True
    return (
        bool(saved.get("componentName")) and not saved.get("componentNames") and not dst.get("componentNames")
    )


def restore_replica(dst: J, saved: J) -> None:
    dst["componentName"] = saved.get("componentName", "")
    names = saved.get("componentNames")
    if names:
        dst["componentNames"] = list(names)
    else:
        dst.pop("componentNames", None)


# --- status ---------------------------------------------------------------------------------------


def _status_common(src: J, dst: J) -> None:
    if src.get("observedGeneration"):
        dst["observedGeneration"] = src["observedGeneration"]
    dst["state"] = src.get("state", "")
    if src.get("placement") is not None:
        p = src["placement"]
        pl: J = {}
        if p.get("score") is not None:
            pl["score"] = p["score"]
        if p.get("state"):
            pl["state"] = p["state"]
        dst["placement"] = pl
    if src.get("conditions"):
        dst["conditions"] = status_conditions(src["conditions"])
    if src.get("restart") is not None:
        r = src["restart"]
        dst["restart"] = {k: deep_copy(r[k]) for k in ("observedID", "phase", "inProgress") if r.get(k)}
    if src.get("checkpoints"):
        dst["checkpoints"] = {
            k: {
                f: v[f]
                for f in ("checkpointName", "checkpointID", "identityHash", "ready")
                if (v or {}).get(f)
            }
            for k, v in src["checkpoints"].items()
        }


def _go(expr: str, value: Any) -> Any:
    """A Kubernetes-typed status value as Go writes it back (times in UTC, whole seconds)."""
    try:
        return goview.view(expr, value)
    except GoTypeError as exc:
        raise ConversionError(str(exc)) from exc


def status_conditions(conditions: Any) -> Any:
    """``[]metav1.Condition`` as Go writes it back."""
    return _go(CONDITIONS, conditions)


def _rolling(src: J, from_key: str, to_key: str) -> J:
    out: J = {}
    if src.get("phase"):
        out["phase"] = src["phase"]
    for k in ("startTime", "endTime"):
        if src.get(k):
            out[k] = _go(TIME, src[k])
    if src.get(from_key):
        out[to_key] = list(src[from_key])
    return out


def _status_to_hub(src: J) -> J:
    dst: J = {}
    _status_common(src, dst)
    if src.get("services"):
        dst["components"] = {k: replica_status_to_hub(v or {}) for k, v in src["services"].items()}
    if src.get("rollingUpdate") is not None:
        dst["rollingUpdate"] = _rolling(src["rollingUpdate"], "updatedServices", "updatedComponents")
    return dst


def _status_from_hub(src: J) -> J:
    dst: J = {}
    _status_common(src, dst)
    if src.get("components"):
        dst["services"] = {k: replica_status_from_hub(v or {}) for k, v in src["components"].items()}
    if src.get("rollingUpdate") is not None:
        dst["rollingUpdate"] = _rolling(src["rollingUpdate"], "updatedComponents", "updatedServices")
    return dst


# --- spec -----------------------------------------------------------------------------------------


def _spec_common(src: J, dst: J) -> None:
    for k in ("annotations", "labels"):
        if src.get(k):
            dst[k] = dict(src[k])
    for k in ("priorityClassName", "backendFramework"):
        if src.get(k):
            dst[k] = src[k]
    if "providerOverride" in src:
        dst["providerOverride"] = provider(src["providerOverride"])
    if "restart" in src:
        r = src["restart"]
        out: J = {"id": r.get("id", "")}
        if "strategy" in r:
            st = r["strategy"]
            out["strategy"] = {k: deep_copy(st[k]) for k in ("type", "order") if st.get(k)}
        dst["restart"] = out
    if "experimental" in src:
        e = src["experimental"]
        exp: J = {}
        if "kvTransferPolicy" in e:
            kv = e["kvTransferPolicy"]
            pol: J = {k: kv[k] for k in ("clusterTopologyName", "labelKey") if kv.get(k)}
            pol["domain"] = kv.get("domain", "")
            if kv.get("enforcement"):
                pol["enforcement"] = kv["enforcement"]
            if kv.get("preferredWeight") is not None:
                pol["preferredWeight"] = kv["preferredWeight"]
            exp["kvTransferPolicy"] = pol
        dst["experimental"] = exp


def _sorted_names(names: list[str]) -> bool:
    return all(names[i - 1] <= names[i] for i in range(1, len(names)))


def _byte_key(s: str) -> bytes:
    return s.encode()


def _topology(tc: J, name_from: str, name_to: str) -> J:
    """The spec-level topology constraint: α ``topologyProfile`` ⇄ β ``clusterTopologyName``."""
    out: J = {name_to: tc.get(name_from, "")}
    if tc.get("packDomain"):
        out["packDomain"] = tc["packDomain"]
    return out


def to_hub(obj: J, reuse: Reuse | None = None) -> J:
    """α DGD → β DGD (``ConvertTo``). With ``reuse``, a service or a status another object of
    the request had with the same JSON (and the same spec annotation, which its conversion also
    reads) is not converted again: its converted component and save entry, or its converted
    status and save entry, are taken from there."""
    meta = deep_copy(obj.get("metadata") or {})
    restored: J | None = None
    raw = get_annotation(meta, ANN_DGD_SPEC)
    if raw:
        got = read_spec_payload(raw, BETA_SPEC)
        if got is not None:
            restored = got[0]
            for i, rc in enumerate(restored.get("components") or ()):
                apply_epp_records(
                    (rc.get("eppConfig") or {}).get("config"), f"components/{i}/eppConfig/config", got[1]
                )
    hub_origin = restored is not None
    scrub(meta, (ANN_DGD_SPEC, ANN_DGD_STATUS))

    src = decode_root(obj.get("spec"), ALPHA_SPEC_LIVE, "spec")
    # name -> the key of its converted parts in ``reuse``, and the parts found there
    keys: dict[str, Any] = {}
    reused: dict[str, tuple[J, J]] = {}
    raw_services: J = dict(src.get("services") or {})
    try:
        for name, svc in raw_services.items():
            if svc is None:
                continue
            if reuse is not None:
                keys[name] = Reuse.key("dgd-service", svc, name, raw)
                parts = reuse.kept(keys[name], svc)
                if parts is not None:
                    reused[name] = parts
                    continue
            src["services"][name] = canon_alpha_shared(svc)
    except GoTypeError as exc:
        raise ConversionError(str(exc)) from exc
    dst: J = {}
    _spec_common(src, dst)
    if "topologyConstraint" in src:
        dst["topologyConstraint"] = _topology(
            src["topologyConstraint"], "topologyProfile", "clusterTopologyName"
        )
    if src.get("envs"):
        dst["env"] = deep_copy(src["envs"])
    save: J = {}
    if src.get("pvcs"):
        save["pvcs"] = deep_copy(src["pvcs"])

    restored_by_name: dict[str, J] = {}
    restored_components = (restored or {}).get("components") or []
    for rc in restored_components:
        restored_by_name[rc.get("name", "")] = rc
    services = src.get("services") or {}
    if services:
        # Byte-wise order: upper case sorts before lower case ("Frontend" < "decode").
        names = sorted(services, key=_byte_key)
        rnames = [rc.get("name", "") for rc in restored_components]
        if restored is not None and not _sorted_names(rnames):
            remaining = set(services)
            ordered = []
            for n in rnames:
                if n in remaining:
                    remaining.discard(n)
                    ordered.append(n)
            names = ordered + sorted(remaining, key=_byte_key)
        components: list[J] = []
        for name in names:
            svc = services[name]
            if svc is None:
                save.setdefault("services", {})[name] = None
                continue
            kept = reused.get(name)
            if kept is None:
                kept = _service_to_hub(name, svc, restored_by_name.get(name), hub_origin)
                if reuse is not None:
                    reuse.keep(keys[name], raw_services[name], kept)
            component, csave = kept
            if csave:
                save.setdefault("services", {})[name] = csave
            components.append(component)
        dst["components"] = components

    raw_status = obj.get("status")
    status_key = Reuse.key("dgd-status", raw_status) if reuse is not None else None
    status_parts = reuse.kept(status_key, raw_status) if reuse is not None else None
    if status_parts is None:
        status_parts = _status_parts_to_hub(raw_status)
        if reuse is not None:
            reuse.keep(status_key, raw_status, status_parts)
    status_save, dst_status = status_parts

    if save:
        set_annotation(meta, ANN_DGD_SPEC, write_spec_payload(encode(save, ALPHA_SPEC)))
    if status_save:
        set_annotation(meta, ANN_DGD_STATUS, write_json_payload(encode(status_save, ALPHA_STATUS)))
    out: J = {"apiVersion": HUB_API_VERSION, "kind": obj.get("kind"), "metadata": meta}
    if dst:
        # The components are encoded already, each as BETA_SPEC's list encoder would.
        out["spec"] = encode(dst, BETA_SPEC_LIVE)
    if dst_status:
        out["status"] = dst_status
    return out


def _service_to_hub(name: str, svc: J, rs: J | None, hub_origin: bool) -> tuple[J, J]:
    """One typed α service → (its β component, encoded, and its entry of the save annotation)."""
    csave: J = {}
    try:
        c = component_to_hub(
            svc, rs, csave, not hub_origin, rs is not None and rs.get("podTemplate") is not None
        )
    except ConversionError as failed:
        raise ConversionError(f'component "{name}": {failed}') from failed
    c["name"] = name
    if svc.get("serviceName") and svc["serviceName"] != name:
        csave["serviceName"] = svc["serviceName"]
    return encode(_order_component(c), BETA_SHARED), csave


def _status_parts_to_hub(raw_status: Any) -> tuple[J, J]:
    """The α status → (its save annotation entries, the β status)."""
    status = decode_root(raw_status, ALPHA_STATUS, "status")
    status_save: J = {}
    for name, s in (status.get("services") or {}).items():
        if name_needs_preservation(s):
            entry: J = {"componentName": s.get("componentName", "")}
            if s.get("componentNames") is not None:
                entry["componentNames"] = list(s["componentNames"])
            status_save.setdefault("services", {})[name] = entry
    return status_save, _status_to_hub(status)


def _order_component(c: J) -> J:
    # Put the name first for readable output; key order carries no meaning.
    out: J = {"name": c.pop("name")}
    out.update(c)
    return out


def from_hub(obj: J) -> J:
    """β DGD → α DGD (``ConvertFrom``)."""
    meta = deep_copy(obj.get("metadata") or {})
    spoke_origin = has_annotation(meta, ANN_DGD_SPEC) or has_annotation(meta, ANN_DGD_STATUS)
    restored_spec: J | None = None
    raw = get_annotation(meta, ANN_DGD_SPEC)
    if raw:
        got = read_spec_payload(raw, ALPHA_SPEC)
        if got is not None:
            restored_spec = got[0]
            for name, svc in (restored_spec.get("services") or {}).items():
                if svc is not None:
                    apply_epp_records(
                        (svc.get("eppConfig") or {}).get("config"),
                        f"services/{name}/eppConfig/config",
                        got[1],
                    )
    restored_status = read_status_payload(meta, ANN_DGD_STATUS, ALPHA_STATUS)
    scrub(meta, (ANN_DGD_SPEC, ANN_DGD_STATUS))

    src = decode_root(obj.get("spec"), BETA_SPEC_LIVE, "spec")
    comps = src.get("components") or []
    src_components = []
    try:
        for c in comps:
            src_components.append(canon_beta_shared(c))
    except GoTypeError as exc:
        raise ConversionError(str(exc)) from exc
    dst: J = {}
    _spec_common(src, dst)
    if "topologyConstraint" in src:
        dst["topologyConstraint"] = _topology(
            src["topologyConstraint"], "clusterTopologyName", "topologyProfile"
        )
    if src.get("env"):
        dst["envs"] = deep_copy(src["env"])

    hub_save: J = {}
    saved_services = (restored_spec or {}).get("services") or {}
    if src_components:
        preserve_order = not _sorted_names([c.get("name", "") for c in src_components])
        services: J = {}
        hub_components: list[J] = []
        for c in src_components:
            name = c.get("name", "")
            if name in services:
                raise ConversionError(f'duplicate component name "{name}" in spec.components')
            csave: J = {"name": name}
            try:
                a = component_from_hub(c, saved_services.get(name), csave)
            except ConversionError as failed:
                raise ConversionError(f'component "{name}": {failed}') from failed
            a.pop("serviceName", None)
            services[name] = a
            if (
                preserve_order
                or not hub_save_is_zero(csave)
                or (not spoke_origin and c.get("podTemplate") is not None)
            ):
                hub_components.append(csave)
        dst["services"] = services
        if hub_components:
            hub_save["components"] = hub_components

    src_status = obj.get("status") or {}
    dst_status = _status_from_hub(src_status if isinstance(src_status, dict) else {})

    # restore alpha-only spec from the spoke save
    if restored_spec is not None:
        if not dst.get("pvcs") and restored_spec.get("pvcs") is not None:
            dst["pvcs"] = deep_copy(restored_spec["pvcs"])
        for name, saved in saved_services.items():
            if saved is not None:
                continue
            dst.setdefault("services", {})
            if name not in dst["services"]:
                dst["services"][name] = None
        # (a service entry may be null here: restored above, or kept from the source)
        entry: J | None
        for name, entry in (dst.get("services") or {}).items():
            if entry is None:
                continue
            saved = saved_services.get(name)
            if saved is None:
                continue
            sn = saved.get("serviceName", "")
            if not entry.get("serviceName") and sn and sn != name:
                entry["serviceName"] = sn
    if restored_status is not None:
        saved_rs = restored_status.get("services") or {}
        for name, s in (dst_status.get("services") or {}).items():
            sv = saved_rs.get(name)
            if sv is not None and should_restore_replica(s, sv):
                restore_replica(s, sv)

    if hub_save:
        set_annotation(meta, ANN_DGD_SPEC, write_spec_payload(encode(hub_save, BETA_SPEC)))
    out: J = {"apiVersion": ALPHA_API_VERSION, "kind": obj.get("kind"), "metadata": meta}
    if dst:
        out["spec"] = encode(dst, ALPHA_SPEC)
    if dst_status:
        out["status"] = dst_status
    return out
