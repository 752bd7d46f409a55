"""DynamoComponentDeployment v1alpha1 ⇄ v1beta1 (hub = v1beta1).

The DCD spec is ``backendFramework`` plus the shared component spec inlined. ``serviceName``
⇄ ``name`` with the empty-name rule: α→β falls back to ``metadata.name`` and flags that with
the record ``{"path":"serviceName","nil":true}`` so β→α can empty it again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conversion.errors import ConversionError
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
from conversion.v1alpha1.component.from_hub import from_hub as component_from_hub
from conversion.v1alpha1.component.from_hub import hub_save_is_zero
from conversion.v1alpha1.component.schemas import (
    ALPHA_SHARED,
    BETA_SHARED,
    REPLICA_STATUS_ALPHA,
    canon_alpha_shared,
    canon_beta_shared,
)
from conversion.v1alpha1.component.to_hub import to_hub as component_to_hub
from conversion.v1alpha1.dgd import (
    name_needs_preservation,
    replica_status_from_hub,
    replica_status_to_hub,
    restore_replica,
    should_restore_replica,
    status_conditions,
)
from domain.constants import ALPHA_API_VERSION, ANN_DCD_SPEC, ANN_DCD_STATUS, HUB_API_VERSION
from gocompat.encoding import encode
from gocompat.errors import GoTypeError
from gocompat.jsonvalue import deep_copy
from gocompat.typed import Field, Ptr, Struct

__all__ = ["ALPHA_SPEC", "ALPHA_STATUS", "BETA_SPEC", "decode_hub_spec", "from_hub", "to_hub"]

J = dict[str, Any]

EMPTY_SERVICE_NAME_PATH = "serviceName"

ALPHA_SPEC = Struct((Field("backendFramework", "string"), *ALPHA_SHARED.fields))
BETA_SPEC = Struct((Field("backendFramework", "string"), *BETA_SHARED.fields))
ALPHA_STATUS = Struct(
    (
        Field("observedGeneration", "int64"),
        Field("conditions", "list", False),
        Field("podSelector", "stringmap"),
        Field("service", Ptr(REPLICA_STATUS_ALPHA)),
    )
)


def _decode_live(spec: Any, canon: Callable[[J], J]) -> tuple[str, J]:
    """Decode a live DCD spec: ``backendFramework`` plus the shared spec (decoded once)."""
    if spec is None:
        return "", {}
    if not isinstance(spec, dict):
        raise ConversionError("json: cannot unmarshal spec: expected an object")
    # Go's decoder notes a type mismatch and goes on; a value whose own decoder fails (a quantity
    # that does not parse) stops it, and that error is the one reported.
    mismatch: ConversionError | None = None
    backend: J = {}
    try:
        if "backendFramework" in spec:
            backend = decode_root({"backendFramework": spec["backendFramework"]}, _BACKEND, "spec")
    except ConversionError as noted:
        mismatch = noted
    try:
        shared = canon({k: v for k, v in spec.items() if k != "backendFramework"})
    except GoTypeError as stopped:  # (a name of its own: the compiled build types each one)
        if mismatch is None or not str(stopped).startswith(_MISMATCH):
            raise ConversionError(str(stopped)) from stopped
    if mismatch is not None:
        raise mismatch
    return backend.get("backendFramework", ""), shared


_MISMATCH = "json: cannot unmarshal "


_BACKEND = Struct((Field("backendFramework", "string"),))


def decode_hub_spec(spec: Any) -> tuple[str, J]:
    """A live β DCD ``spec`` decoded as :func:`from_hub` decodes it: ``backendFramework`` and the
    typed shared spec. Raises ConversionError."""
    return _decode_live(spec, canon_beta_shared)


def _split_backend(spec: J) -> tuple[str, J]:
    shared = dict(spec)
    return shared.pop("backendFramework", ""), shared


def to_hub(obj: J) -> J:
    """α DCD → β DCD (``ConvertTo``)."""
    meta = deep_copy(obj.get("metadata") or {})
    restored: J | None = None
    raw = get_annotation(meta, ANN_DCD_SPEC)
    if raw:
        got = read_spec_payload(raw, BETA_SPEC)
        if got is not None:
            restored = got[0]
            apply_epp_records((restored.get("eppConfig") or {}).get("config"), "eppConfig/config", got[1])
    hub_origin = restored is not None
    scrub(meta, (ANN_DCD_SPEC, ANN_DCD_STATUS))
    object_name = meta.get("name", "") or ""

    backend, shared = _decode_live(obj.get("spec"), canon_alpha_shared)
    rshared: J | None = None
    if restored is not None:
        _, rshared = _split_backend(restored)
    save: J = {}
    dst = component_to_hub(
        shared, rshared, save, not hub_origin, rshared is not None and rshared.get("podTemplate") is not None
    )
    if not dst.get("name"):
        dst["name"] = object_name
    if restored is not None and not restored.get("name") and dst["name"] == object_name:
        dst["name"] = ""
    spec: J = {}
    if backend:
        spec["backendFramework"] = backend
    spec.update(dst)

    status = decode_root(obj.get("status"), ALPHA_STATUS, "status")
    status_save: J = {}
    if status.get("podSelector"):
        status_save["podSelector"] = dict(status["podSelector"])
    svc = status.get("service")
    if name_needs_preservation(svc):
        assert svc is not None
        entry: J = {"componentName": svc.get("componentName", "")}
        if svc.get("componentNames") is not None:
            entry["componentNames"] = list(svc["componentNames"])
        status_save["service"] = entry
    empty_name = not shared.get("serviceName") and object_name != "" and dst["name"] == object_name
    generated_tpl = not hub_origin and "podTemplate" in dst
    save_spec = generated_tpl or empty_name or bool(save)

    dst_status: J = {}
    if status.get("observedGeneration"):
        dst_status["observedGeneration"] = status["observedGeneration"]
    if status.get("conditions"):
        dst_status["conditions"] = status_conditions(status["conditions"])
    if svc is not None:
        dst_status["component"] = replica_status_to_hub(svc)

    if save_spec:
        records = [{"path": EMPTY_SERVICE_NAME_PATH, "nil": True}] if empty_name else None
        set_annotation(meta, ANN_DCD_SPEC, write_spec_payload(encode(save, ALPHA_SPEC), records))
    if status_save:
        set_annotation(meta, ANN_DCD_STATUS, write_json_payload(encode(status_save, ALPHA_STATUS)))
    out: J = {
        "apiVersion": HUB_API_VERSION,
        "kind": obj.get("kind"),
        "metadata": meta,
        "spec": encode(spec, BETA_SPEC),
    }
    if dst_status:
        out["status"] = dst_status
    return out


def from_hub(obj: J) -> J:
    """β DCD → α DCD (``ConvertFrom``)."""
    meta = deep_copy(obj.get("metadata") or {})
    object_name = meta.get("name", "") or ""
    spoke_origin = has_annotation(meta, ANN_DCD_SPEC) or has_annotation(meta, ANN_DCD_STATUS)
    restored: J | None = None
    empty_name = False
    raw = get_annotation(meta, ANN_DCD_SPEC)
    if raw:
        got = read_spec_payload(raw, ALPHA_SPEC)
        if got is not None:
            restored = got[0]
            apply_epp_records((restored.get("eppConfig") or {}).get("config"), "eppConfig/config", got[1])
            empty_name = any(r.get("path") == EMPTY_SERVICE_NAME_PATH and r.get("nil") for r in got[1])
    restored_status = read_status_payload(meta, ANN_DCD_STATUS, ALPHA_STATUS)

    backend, shared = _decode_live(obj.get("spec"), canon_beta_shared)
    rshared: J | None = None
    if restored is not None:
        _, rshared = _split_backend(restored)
    hub_save: J = {"name": ""}
    a = component_from_hub(shared, rshared, hub_save)
    spec: J = {}
    if backend:
        spec["backendFramework"] = backend
    spec.update(a)

    src_status = obj.get("status") or {}
    dst_status: J = {}
    if src_status.get("observedGeneration"):
        dst_status["observedGeneration"] = src_status["observedGeneration"]
    if src_status.get("conditions"):
        dst_status["conditions"] = status_conditions(src_status["conditions"])
    if src_status.get("component") is not None:
        dst_status["service"] = replica_status_from_hub(src_status["component"])

    if empty_name and spec.get("serviceName", "") == object_name:
        spec.pop("serviceName", None)
    if restored_status is not None:
        if not dst_status.get("podSelector") and restored_status.get("podSelector"):
            dst_status["podSelector"] = dict(restored_status["podSelector"])
        saved_svc = restored_status.get("service")
        if (
            saved_svc is not None
            and "service" in dst_status
            and should_restore_replica(dst_status["service"], saved_svc)
        ):
            restore_replica(dst_status["service"], saved_svc)
    scrub(meta, (ANN_DCD_SPEC, ANN_DCD_STATUS))

    live_name = shared.get("name", "")
    if (
        not hub_save_is_zero(hub_save)
        or (live_name == "" and object_name != "")
        or (not spoke_origin and shared.get("podTemplate") is not None)
    ):
        hub_save["name"] = live_name
        set_annotation(meta, ANN_DCD_SPEC, write_spec_payload(encode(hub_save, BETA_SPEC)))
    out: J = {"apiVersion": ALPHA_API_VERSION, "kind": obj.get("kind"), "metadata": meta}
    if spec:
        out["spec"] = encode(spec, ALPHA_SPEC)
    if dst_status:
        out["status"] = dst_status
    return out
