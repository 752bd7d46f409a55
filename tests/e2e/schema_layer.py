"""What the API server's structural-schema layer does to a custom object of one CRD version, modelled
offline so that the end-to-end comparisons can say exactly what to expect:

1. unknown fields are pruned (unless ``x-kubernetes-preserve-unknown-fields``),
2. ``null`` values of fields that are not ``nullable`` are dropped,
3. ``default`` values fill absent fields (and are themselves walked).

All three run where the API server decodes an object of a version (the request body, the object
read from etcd); on an object a conversion webhook returns, only the first two (the end-to-end
suite observed it: a converted object is pruned, not defaulted). ``metadata``, ``apiVersion`` and ``kind``
are the API server's own and are left alone.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.testenv import ROOT

Obj = dict[str, Any]
CRD_DIR = ROOT / "tests" / "fixtures" / "crds"
_TOP_LEVEL_OWN = ("apiVersion", "kind", "metadata")


@functools.cache
def _schemas() -> dict[tuple[str, str], Obj]:
    """(kind, apiVersion) -> openAPIV3Schema, for every vendored CRD version."""
    out: dict[tuple[str, str], Obj] = {}
    for path in sorted(Path(CRD_DIR).glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            out[(kind, f"{group}/{version['name']}")] = version["schema"]["openAPIV3Schema"]
    return out


def schema_of(kind: str, api_version: str) -> Obj:
    """The vendored schema; kinds with a stand-in CRD (every field kept) get a free-form schema."""
    return _schemas().get(
        (kind, api_version), {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    )


def apply_schema(obj: Obj, *, defaults: bool = True) -> Obj:
    """``obj`` as the API server holds it after pruning, null dropping and (``defaults``) defaulting with
    the schema of its own ``apiVersion``."""
    schema = schema_of(obj["kind"], obj["apiVersion"])
    out = copy.deepcopy(obj)
    props = schema.get("properties") or {}
    if not props:
        return out
    for key in list(out):
        if key in _TOP_LEVEL_OWN:
            continue
        if key not in props or (out[key] is None and not props[key].get("nullable")):
            del out[key]
        else:
            out[key] = _walk(out[key], props[key], defaults)
    return out


def _walk(value: Any, schema: Obj, defaults: bool) -> Any:
    if isinstance(value, dict):
        return _walk_object(value, schema, defaults)
    if isinstance(value, list):
        items = schema.get("items")
        return [_walk(v, items, defaults) for v in value] if isinstance(items, dict) else value
    return value


def _walk_object(value: Obj, schema: Obj, defaults: bool) -> Obj:
    props: Obj = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    if not props and not isinstance(extra, dict):
        return value  # free-form: kept as sent
    for key in list(value):
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if sub is None:
            if not preserve:
                del value[key]
            continue
        if value[key] is None and not sub.get("nullable"):
            del value[key]
            continue
        value[key] = _walk(value[key], sub, defaults)
    if defaults:
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = _walk(copy.deepcopy(sub["default"]), sub, defaults)
    return value
