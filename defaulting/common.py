"""Shared pieces of the defaulting handlers: constants, hub round trips, JSON access helpers.

Defaulters never mutate the object they are given. They copy only the containers along
the paths they change (copy-on-write), so an unchanged object is returned as the very same
object and a changed one shares every untouched subtree with the original.
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


def keep_sent_fields(sent: JSONObject, answer: JSONObject, lists: bool = False) -> JSONObject:
    """``answer`` with every object member of ``sent`` that it dropped put back.

    The round trip through the hub may drop members the hub cannot carry (an empty
    ``services`` map, for instance). A defaulter must never remove anything, so those
    members are answered as sent. Lists are taken from ``answer`` as they are, or (``lists``)
    walked entry by entry when both have the same length.
    """
    out: JSONObject | None = None
    for key, value in sent.items():
        if key not in answer:
            new_value = value
        else:
            current = answer[key]
            if lists and isinstance(value, list) and isinstance(current, list) and len(value) == len(current):
                items = [
                    keep_sent_fields(v, c, True) if isinstance(v, dict) and isinstance(c, dict) else c
                    for v, c in zip(value, current, strict=True)
                ]
                if all(i is c for i, c in zip(items, current, strict=True)):
                    continue
                new_value = items
            elif not (isinstance(value, dict) and isinstance(current, dict)):
                continue
            else:
                new_value = keep_sent_fields(value, current, lists)
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
