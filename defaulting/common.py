"""Shared pieces of the defaulting handlers: constants, hub round trips, JSON access helpers.

Defaulters never mutate the object they are given. They copy only the containers along
the paths they change (copy-on-write), so an unchanged object is returned as the very same
object; a changed one is answered as the operator's encoder writes it (:func:`as_go_writes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conversion.errors import ConversionError
from domain.admission import JSONObject, Operation
from domain.constants import (
    ALPHA_API_VERSION,
    HUB_API_VERSION,
)
from gocompat.decoding import decode_struct
from gocompat.encoding import encode
from gocompat.errors import GoTypeError
from gocompat.typed import Decoding, Struct
from gocompat.written import encodes_as_is

# A hub defaulter: (hub object, operation) -> the object itself when nothing changes, else a
# new object sharing the untouched subtrees.
HubDefaulter = Callable[[JSONObject, Operation], JSONObject]
# The kind's conversion: (object, desired apiVersion) -> converted object; raises ConversionError.
Convert = Callable[[JSONObject, str], JSONObject]


class HubRoundTripError(Exception):
    """The object could not be converted to or from the hub version."""


def api_version_of(obj: JSONObject, fallback: str) -> str:
    value = obj.get("apiVersion")
    return value if isinstance(value, str) and value else fallback


def object_namespace(obj: JSONObject | None) -> str:
    """``metadata.namespace`` of the decoded object (what upstream's lease check reads)."""
    if not isinstance(obj, dict):
        return ""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return ""
    ns = meta.get("namespace")
    return ns if isinstance(ns, str) else ""


def default_via_hub(
    obj: JSONObject, operation: Operation, hub_default: HubDefaulter, convert: Convert
) -> JSONObject | None:
    """Default a v1alpha1 object the way the apiserver and the hub defaulter do together.

    The object is converted to the hub, defaulted there and, only when the defaulter changed
    something, converted back to v1alpha1. Returns the v1alpha1 object to answer with, or
    None when the hub defaulter changed nothing (no patch). Raises HubRoundTripError.

    ``status`` is answered exactly as sent: upstream's defaulters work on the hub object the
    apiserver converted, and their patch never touches status, so the status the round trip
    re-renders is not part of the answer.
    """
    try:
        hub = convert(obj, HUB_API_VERSION)
    except ConversionError as exc:
        raise HubRoundTripError(str(exc)) from exc
    defaulted = hub_default(hub, operation)
    if defaulted is hub:
        return None
    try:
        back = convert(defaulted, api_version_of(obj, ALPHA_API_VERSION))
    except ConversionError as exc:
        raise HubRoundTripError(str(exc)) from exc
    if "status" in obj:
        back["status"] = obj["status"]
    else:
        back.pop("status", None)
    return keep_sent_fields(obj, back)


def keep_sent_fields(sent: JSONObject, answer: JSONObject) -> JSONObject:
    """``answer`` with every object member of ``sent`` that it dropped put back.

    The round trip through the hub may drop members the hub cannot carry (an empty
    ``services`` map, for instance). A defaulter must never remove anything, so those
    members are answered as sent. Lists are taken from ``answer`` as they are.
    """
    out: JSONObject | None = None
    for key, value in sent.items():
        if key not in answer:
            new_value = value
        else:
            current = answer[key]
            if not (isinstance(value, dict) and isinstance(current, dict)):
                continue
            new_value = keep_sent_fields(value, current)
            if new_value is current:
                continue
        if out is None:
            out = dict(answer)
        out[key] = new_value
    return answer if out is None else out


def as_dict(value: Any) -> JSONObject | None:
    return value if isinstance(value, dict) else None


def go_string(value: Any) -> str:
    """A JSON value read into a Go ``string`` field: absent / null → ``""``."""
    return value if isinstance(value, str) else ""


def with_main_container_marshal_fields(alpha: JSONObject) -> JSONObject:
    """Add the fields Go's encoder always writes for a v1alpha1 ``mainContainer``.

    Upstream answers a v1alpha1 DGD with the object its converter marshals from Go types:
    a ``corev1.Container`` always carries ``name`` (no omitempty; empty for the main
    container) and ``resources`` (a struct, never omitted). Reproduced for every service
    whose ``extraPodSpec.mainContainer`` lacks them, so the answer matches upstream's.
    """
    spec = as_dict(alpha.get("spec"))
    services = as_dict(spec.get("services")) if spec is not None else None
    if services is None:
        return alpha
    new_services: JSONObject = {}
    for name, service in services.items():
        extra = as_dict(service.get("extraPodSpec")) if isinstance(service, dict) else None
        main = as_dict(extra.get("mainContainer")) if extra is not None else None
        if main is None or ("name" in main and "resources" in main):
            continue
        assert isinstance(service, dict) and extra is not None
        filled = {**main}
        filled.setdefault("name", "")
        filled.setdefault("resources", {})
        new_services[name] = {**service, "extraPodSpec": {**extra, "mainContainer": filled}}
    if not new_services:
        return alpha
    assert spec is not None
    return {**alpha, "spec": {**spec, "services": {**services, **new_services}}}


#: Go values as the webhook's decoder reads them: exact names, a mismatch fails the decode
_GO_EXACT = Decoding(values=True, fold=False, strict=True)


def as_go_writes(hub: JSONObject, spec_schema: Struct, status_schema: Struct) -> JSONObject:
    """A v1beta1 object (well typed) as the operator's ``json.Marshal`` of the object it decoded
    writes it, which is what its defaulters answer with when a default changed anything (the
    patch is the difference between the object sent and this): every field without
    ``omitempty`` at its zero value when unset (a DGD's ``status`` is always written: its
    ``state`` has no ``omitempty``), quantities canonical, Kubernetes-typed members whole
    (``podTemplate: {}`` becomes ``{"spec": {"containers": null}}``; EPP configs with their
    plugins' ``name`` and ``parameters``). Metadata and opaque members are kept as sent. An object
    the operator could not decode (a member of the wrong type, refused before any defaulting) is
    returned as it is; so are the members its decoding alone would drop (:func:`_merged`)."""
    # Quirk: the operator's patch is the difference from its json.Marshal of the whole object,
    # so it also writes what Go writes regardless of the input (status.state, an empty pod
    # template's spec, an EPP profile plugin's weight: null, which the API server then refuses).
    # A spec or status already as Go writes it (most objects: an encoder like it wrote them) is
    # not written again: its writing would equal it, and the patch compares by equality.
    out = dict(hub)
    spec = hub.get("spec")
    status = hub.get("status")
    try:
        if isinstance(spec, dict) and not encodes_as_is(spec, spec_schema):
            out["spec"] = encode(
                decode_struct(spec, spec_schema, _GO_EXACT), spec_schema, values=True, strip=True, full=True
            )
        if isinstance(status, dict) and encodes_as_is(status, status_schema):
            written = status
        else:
            status = decode_struct(status if isinstance(status, dict) else {}, status_schema, _GO_EXACT)
            written = encode(status, status_schema, values=True, strip=True, full=True)
    except GoTypeError:
        return hub
    if written:  # an omitempty struct that encodes to {} is left out
        out["status"] = written
    merged: JSONObject = _merged(hub, out)
    return merged


def _merged(sent: Any, written: Any) -> Any:
    """``written`` with every part equal to the part of ``sent`` at the same place replaced by
    that part (so that the patch, which compares by identity first, walks only what differs),
    and the members of ``sent`` that ``written`` dropped put back: controller-runtime takes
    the removals the operator's decoding alone makes (unknown members, a null pointer) out of its
    patch. Equality is Python's, which is the patch generator's: Go's compares numbers as
    float64, so ``1.0`` and ``1`` are the same (no operation), as they are here."""
    if sent == written:
        return sent
    if isinstance(sent, dict) and isinstance(written, dict):
        out = {k: _merged(sent[k], v) if k in sent else v for k, v in written.items()}
        for k, v in sent.items():
            if k not in out:
                out[k] = v
        return out
    if isinstance(sent, list) and isinstance(written, list) and len(sent) == len(written):
        return [_merged(a, b) for a, b in zip(sent, written, strict=True)]
    return written
