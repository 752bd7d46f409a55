"""The hand-kept Go type declarations of the converters (``conversion/v1alpha1/dgd.py``,
``component/schemas.py``, ``dgdr/types.py``) checked against the CRDs: a field a declaration
names that the CRD has not, and a CRD field a declaration leaves out, at every level the
declaration spells out (a Kubernetes type it takes from the generated tables, ``Go(...)`` or a
``Struct`` naming its ``go`` type, is the tables' business and is not looked into).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from conversion.v1alpha1 import dgd
from conversion.v1alpha1.component import schemas as component
from conversion.v1alpha1.dgdr import types as dgdr
from gocompat.typed import Go, Kind, ListOf, MapOf, Ptr, Struct

Schema = dict[str, Any]


class Mismatch(NamedTuple):
    declaration: str  # e.g. "conversion/v1alpha1/dgd.py ALPHA_SPEC"
    crd_path: str  # e.g. "DynamoGraphDeployment v1alpha1 spec.pvcs[]"
    problem: str


_DGD, _DCD, _DGDR = "DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest"
#: (module file, declaration name, the Struct, kind, version, path of its CRD node)
ROOTS: tuple[tuple[str, str, Struct, str, str, str], ...] = (
    ("conversion/v1alpha1/dgd.py", "ALPHA_SPEC", dgd.ALPHA_SPEC, _DGD, "v1alpha1", "spec"),
    ("conversion/v1alpha1/dgd.py", "BETA_SPEC", dgd.BETA_SPEC, _DGD, "v1beta1", "spec"),
    ("conversion/v1alpha1/dgd.py", "ALPHA_STATUS", dgd.ALPHA_STATUS, _DGD, "v1alpha1", "status"),
    ("conversion/v1alpha1/dgd.py", "BETA_STATUS", dgd.BETA_STATUS, _DGD, "v1beta1", "status"),
    (
        "conversion/v1alpha1/component/schemas.py",
        "ALPHA_SHARED",
        component.ALPHA_SHARED,
        _DGD,
        "v1alpha1",
        "spec.services{}",
    ),
    (
        "conversion/v1alpha1/component/schemas.py",
        "BETA_SHARED",
        component.BETA_SHARED,
        _DGD,
        "v1beta1",
        "spec.components[]",
    ),
    ("conversion/v1alpha1/dgdr/types.py", "ALPHA_SPEC", dgdr.ALPHA_SPEC, _DGDR, "v1alpha1", "spec"),
    ("conversion/v1alpha1/dgdr/types.py", "BETA_SPEC", dgdr.BETA_SPEC, _DGDR, "v1beta1", "spec"),
    ("conversion/v1alpha1/dgdr/types.py", "ALPHA_STATUS", dgdr.ALPHA_STATUS, _DGDR, "v1alpha1", "status"),
    ("conversion/v1alpha1/dgdr/types.py", "BETA_STATUS", dgdr.BETA_STATUS, _DGDR, "v1beta1", "status"),
)


#: a declaration reached inside another one is named as itself
_NAMES = {id(struct): f"{module} {name}" for module, name, struct, *_ in ROOTS}


def node_at(schema: Schema, path: str) -> Schema | None:
    """The schema node of a path in the notation of :mod:`tools.repin.crds`."""
    node: Schema | None = schema
    for part in path.replace("[]", ".[]").replace("{}", ".{}").split("."):
        if node is None or not part:
            continue
        if part == "[]":
            node = node.get("items")
        elif part == "{}":
            node = node.get("additionalProperties")
        else:
            node = (node.get("properties") or {}).get(part)
    return node if isinstance(node, dict) else None


def _check(kind: Kind, node: Schema, where: str, declared: str, out: list[Mismatch]) -> None:
    while isinstance(kind, Ptr):
        kind = kind.elem
    if isinstance(kind, ListOf):
        if isinstance(node.get("items"), dict):
            _check(kind.elem, node["items"], where + "[]", declared, out)
        return
    if isinstance(kind, MapOf):
        if isinstance(node.get("additionalProperties"), dict):
            _check(kind.elem, node["additionalProperties"], where + "{}", declared, out)
        return
    if not isinstance(kind, Struct) or isinstance(kind, Go) or kind.go is not None:
        return
    declared = _NAMES.get(id(kind), declared)
    props = node.get("properties") or {}
    if node.get("x-kubernetes-preserve-unknown-fields") and not props:
        return
    for f in kind.fields:
        if f.name not in props:
            out.append(Mismatch(declared, f"{where}.{f.name}", "declared, not in the CRD"))
        else:
            _check(f.kind, props[f.name], f"{where}.{f.name}", declared, out)
    for name in sorted(set(props) - set(kind.by_name)):
        out.append(Mismatch(declared, f"{where}.{name}", "in the CRD, not declared"))


def mismatches(crds: dict[str, dict[str, Schema]]) -> list[Mismatch]:
    """Every disagreement of the declarations with ``crds`` (kind -> version -> schema)."""
    out: list[Mismatch] = []
    for module, name, struct, kind, version, path in ROOTS:
        schema = crds.get(kind, {}).get(version)
        node = node_at(schema, path) if schema is not None else None
        declared = f"{module} {name}"
        if node is None:
            out.append(Mismatch(declared, f"{kind} {version} {path}", "no such field in the CRD"))
            continue
        _check(struct, node, f"{kind} {version} {path}", declared, out)
    return list(dict.fromkeys(out))  # a shared declaration is reached from several roots
