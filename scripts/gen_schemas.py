"""Derive the compact type skeletons in app/review/schemas/ from the operator's CRD manifests and Go types.

Run by ``scripts/generate --operator path/to/deploy/operator``, from the vendored CRDs of
``tests/fixtures/crds/``.

A skeleton keeps only what a JSON type check needs: ``t`` (type), ``p`` (properties),
``i`` (items), ``a`` (additionalProperties), ``x`` (unchecked: preserve-unknown-fields or
int-or-string). Descriptions, validations and defaults are dropped.

With ``--operator`` (a checkout of ``deploy/operator`` at the pinned commit: its ``api/`` Go
types, its ``go.mod``/``go.sum`` for the modules they use, read from the Go module cache) every
number the operator decodes into a sized Go type also gets ``f`` (that Go type: ``int32``,
``int64``, ``int`` …; ``int32`` for an int-or-string, ``float32``) and ``g`` (what Go's decoder
names the field in its error: the innermost Go struct and the JSON path from the root, with the
Go names of embedded structs, e.g. ``DynamoComponentDeploymentSharedSpec.spec.components.replicas``).
A value the CRD keeps as preserve-unknown-fields but the operator decodes into a Go struct (the
pod templates of a checkpoint job and of GPU-memory-service client pods) gets the skeleton of that
Go type instead of ``x``. A value Go reads with its own parser (``UnmarshalJSON``) gets ``k``:
``quantity`` (``resource.Quantity``), ``time`` / ``microtime`` (``metav1.Time`` / ``MicroTime``),
``duration`` (``metav1.Duration``) or ``bytes`` (``[]byte``, base64). The checked-in skeletons
are generated with ``--operator``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

OUT = Path(__file__).resolve().parents[1] / "app" / "review" / "schemas"

# Go types with their own JSON decoding in the Dynamo API beyond the generated tables' own.
EXTRA_SPECIAL = {"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON": "raw"}


def skeleton(node: dict[str, Any]) -> dict[str, Any]:
    if node.get("x-kubernetes-preserve-unknown-fields") and not node.get("properties"):
        return {"x": 1}
    if node.get("x-kubernetes-int-or-string"):
        return {"t": "int-or-string"}
    out: dict[str, Any] = {}
    if "type" in node:
        out["t"] = node["type"]
    if node.get("properties"):
        out["p"] = {k: skeleton(v) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["i"] = skeleton(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        out["a"] = skeleton(node["additionalProperties"])
    return out


class GoTypes:
    """The Go types of the operator's API packages, compiled by :mod:`gocompat.nodes`."""

    def __init__(self, operator: Path) -> None:
        import gen_gotypes
        from goparse import Modules, pins_from_go_mod, replaces_from_go_mod

        from gocompat import nodes

        self.nodes = nodes
        self.module, pins = pins_from_go_mod(operator)
        gen_gotypes.SPECIAL.update(EXTRA_SPECIAL)
        local = {**replaces_from_go_mod(operator), self.module: operator}
        self.tables = gen_gotypes.Tables(Modules(pins, local))

    def root(self, version: str, kind: str) -> Any:
        path = f"{self.module}/api/{version}"
        t = self.tables
        t.add_roots([(path, kind)])
        self.nodes.register(
            SimpleNamespace(STRUCTS=t.structs, NAMED=t.named, SPECIAL=t.special, PACKAGES=t.packages)
        )
        return self.nodes.node(t.qualify(path, kind))


def parsed_kind(node: Any) -> str | None:
    """``k`` of a Go leaf that parses its JSON text itself, or None."""
    from gocompat import leaves

    if isinstance(node, leaves._Quantity):
        return "quantity"
    if isinstance(node, leaves._Time):
        return "microtime" if node.micro else "time"
    if isinstance(node, leaves._Duration):
        return "duration"
    if isinstance(node, leaves._Bytes):
        return "bytes"
    return None


def go_skeleton(node: Any, struct: str, path: list[str]) -> dict[str, Any]:
    """The skeleton of a Go type itself, for a value the CRD leaves unchecked
    (preserve-unknown-fields) but the operator decodes into a typed struct."""
    from gocompat import leaves, nodes

    while isinstance(node, nodes._Ptr):
        node = node.elem
    where = f"{struct}.{'.'.join(path)}"
    if isinstance(node, nodes._Struct):
        props = {
            name: go_skeleton(f.node, node.name, [*path, *f.via, name]) for name, f in node.fields.items()
        }
        return {"t": "object", "p": props}
    if isinstance(node, nodes._Slice):
        return {"t": "array", "i": go_skeleton(node.elem, struct, path)}
    if isinstance(node, nodes._Map):
        return {"t": "object", "a": go_skeleton(node.elem, struct, path)}
    if isinstance(node, leaves._Int):
        return {"t": "integer", "f": node.display, "g": where}
    if isinstance(node, leaves._Float):
        return {"t": "number", **({"f": node.display, "g": where} if node.limit < float("inf") else {})}
    if isinstance(node, leaves._IntOrString):
        return {"t": "int-or-string", "f": "int32", "g": where}
    if isinstance(node, leaves._Quantity):
        return {"t": "int-or-string", "k": "quantity"}
    if isinstance(node, leaves._Scalar) and node.json_type is bool:
        return {"t": "boolean"}
    if isinstance(node, leaves._Time | leaves._Duration | leaves._Bytes):
        return {"t": "string", "k": parsed_kind(node)}
    if isinstance(node, leaves._Scalar):
        return {"t": "string"}
    return {"x": 1}


def annotate(skel: dict[str, Any], crd: dict[str, Any], node: Any, struct: str, path: list[str]) -> None:
    """Add ``f``/``g`` to the number nodes of ``skel`` and ``k`` to the self-parsed ones (walked together with its CRD schema
    ``crd`` and the Go type ``node``; ``struct``/``path``: the error context Go keeps). A value
    the CRD leaves unchecked but Go decodes into a struct gets the Go type's own skeleton."""
    from gocompat import leaves, nodes

    while isinstance(node, nodes._Ptr):
        node = node.elem
    if "x" in skel and not crd.get("x-kubernetes-int-or-string"):
        if isinstance(node, nodes._Struct):
            skel.clear()
            skel.update(go_skeleton(node, struct, path))
        return
    where = f"{struct}.{'.'.join(path)}"
    kind = parsed_kind(node)
    if kind is not None:
        skel["k"] = kind
    elif isinstance(node, leaves._Int) and skel.get("t") == "integer":
        skel.update(f=node.display, g=where)
    elif isinstance(node, leaves._IntOrString) and skel.get("t") == "int-or-string":
        skel.update(f="int32", g=where)
    elif isinstance(node, leaves._Float) and skel.get("t") == "number" and node.limit < float("inf"):
        skel.update(f=node.display, g=where)
    elif isinstance(node, nodes._Struct):
        for name, sub in (skel.get("p") or {}).items():
            f = node.fields.get(name)
            if f is not None:
                annotate(sub, crd["properties"][name], f.node, node.name, [*path, *f.via, f.name])
    elif isinstance(node, nodes._Slice) and "i" in skel:
        annotate(skel["i"], crd["items"], node.elem, struct, path)
    elif isinstance(node, nodes._Map) and "a" in skel:
        annotate(skel["a"], crd["additionalProperties"], node.elem, struct, path)


def build(crds: list[Path], operator: Path | None) -> dict[Path, str]:
    """Each skeleton's text by path, one per version of each CRD; with the Go types of
    ``operator`` (a ``deploy/operator`` tree) when given."""
    go = GoTypes(operator) if operator is not None else None
    out: dict[Path, str] = {}
    for path in crds:
        crd = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        kind = crd["spec"]["names"]["kind"]
        group = crd["spec"]["group"]
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            skel = skeleton(schema)
            if go is not None:
                root = go.root(version["name"], kind)
                annotate(skel, schema, root, root.name, [])
            target = OUT / f"{group}_{version['name']}_{kind}.json"
            out[target] = json.dumps(skel, separators=(",", ":"), sort_keys=True) + "\n"
    return out
