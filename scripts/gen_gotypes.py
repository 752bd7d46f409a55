"""Generate the Go JSON type tables (json names, omitempty/omitzero, pointers, collections) from
the Go API modules the operator builds against, read from the Go module cache.

Run by ``scripts/generate`` (which writes the tables, records the hashes of this script and of
``goparse.py`` in ``scripts/generated.sums``, and checks them with ``--check``).

Tables written:

* ``gocompat/tables_core.py`` — the non-Dynamo Go types inside Dynamo specs and statuses
  (``k8s.io/api/core/v1`` pod templates, pod specs, containers, env vars, probes, resources,
  affinity, volumes …; the ``batch/v1`` job spec of a profiling job; ``metav1.ObjectMeta`` and
  ``metav1.Condition``; the ``autoscaling/v2`` behavior and metric types of a v1alpha1
  autoscaling block; the Gateway API Inference Extension ``EndpointPickerConfig`` of an EPP
  component), read by the converter.
* ``gocompat/tables_grove.py`` — Grove's ``PodCliqueSet``, ``PodCliqueTemplateSpec`` and
  ``PodCliqueScalingGroupConfig`` (``github.com/ai-dynamo/grove/operator/api/core/v1alpha1``)
  with every type they reach that the core table does not already hold, read by the
  provider-override rule.

Table format. Type expressions: ``string``, ``bool``, ``int8``…``int64``, ``uint8``…``uint64``,
``float32``, ``float64``, ``bytes`` (``[]byte``), ``any``; ``*T``, ``[]T``, ``map[K]V``; otherwise
a key of ``STRUCTS`` (a struct), ``NAMED`` (a defined type: its underlying type) or ``SPECIAL`` (a
type with its own JSON decoding: ``quantity``, ``intorstring``, ``time``, ``microtime``,
``duration``, ``raw``). A key is ``<package>.<Name>``; ``PACKAGES`` gives the Go package name
that Go's own messages print for that package. A struct field is ``(json name, type, options,
Go field name)``; options are the ``json`` tag options that change encoding (``omitempty``,
``omitzero``), or ``inline`` for an embedded struct whose fields are promoted (json name ``""``).

Module versions are those of the operator's ``go.mod`` at the pinned reference (Go's minimal
version selection gives Grove's types the operator's ``k8s.io/api``, not the one Grove's own
``go.mod`` names). A module missing from the cache is fetched with ``go mod download`` and its
``h1:`` hash checked against the one pinned here (the operator's ``go.sum`` lines).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from goparse import BUILTIN_KINDS, GoPackage, GoParseError, Modules

ROOT = Path(__file__).resolve().parents[1]

K8S_API = "k8s.io/api"
APIMACHINERY = "k8s.io/apimachinery"
GROVE = "github.com/ai-dynamo/grove/operator/api"
GIE = "sigs.k8s.io/gateway-api-inference-extension"
PINS: dict[str, tuple[str, str]] = {
    K8S_API: ("v0.36.2", "h1:TF6YDLIzKfccK7cq9YpTcGX8TJmEkHVRv78DM51fRYY="),
    APIMACHINERY: ("v0.36.2", "h1:0PE/W/WNy1UX61NLbXY5TMbJ6UwLL6E6lAPkYrKFxbQ="),
    GROVE: ("v0.1.0-alpha.12-rc1", "h1:rhi1HzLU68RO573k0bQHkTc+o293Ij2sVYmNPoc1d2s="),
    GIE: ("v1.2.0", "h1:7H+ijrUImnW2ubcTakNgV723xDIdQx1Umv4vDVB+tTk="),
}

CORE = "k8s.io/api/core/v1"
META = "k8s.io/apimachinery/pkg/apis/meta/v1"
GROVE_CORE = "github.com/ai-dynamo/grove/operator/api/core/v1alpha1"

# Types with their own JSON (un)marshalers, and the rule that decodes them (see the runtime).
SPECIAL: dict[str, str] = {
    "k8s.io/apimachinery/pkg/api/resource.Quantity": "quantity",
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString": "intorstring",
    f"{META}.Time": "time",
    f"{META}.MicroTime": "microtime",
    f"{META}.Duration": "duration",
    f"{META}.FieldsV1": "raw",
    "k8s.io/apimachinery/pkg/runtime.RawExtension": "raw",
    "encoding/json.RawMessage": "raw",
}

# Import path prefix -> table prefix (table keys stay short and unique).
PREFIXES = (
    ("k8s.io/apimachinery/pkg/apis/meta/", "meta/"),
    ("k8s.io/apimachinery/pkg/api/", "api/"),
    ("k8s.io/apimachinery/pkg/util/", "util/"),
    ("k8s.io/apimachinery/pkg/", ""),
    ("k8s.io/api/", ""),
    ("github.com/ai-dynamo/grove/operator/api/", "grove/"),
    ("sigs.k8s.io/gateway-api-inference-extension/", "gie/"),
)

CORE_ROOTS = (
    (CORE, "PodTemplateSpec"),
    (CORE, "PodSpec"),
    (CORE, "Container"),
    (CORE, "EnvVar"),
    (CORE, "EnvFromSource"),
    (CORE, "Probe"),
    (CORE, "ResourceRequirements"),
    (CORE, "VolumeMount"),
    (CORE, "Affinity"),
    (CORE, "Toleration"),
    (CORE, "LocalObjectReference"),
    (CORE, "ConfigMapKeySelector"),
    ("k8s.io/api/batch/v1", "JobSpec"),
    (META, "ObjectMeta"),
    (META, "Condition"),
    ("k8s.io/api/autoscaling/v2", "HorizontalPodAutoscalerBehavior"),
    ("k8s.io/api/autoscaling/v2", "MetricSpec"),
    (f"{GIE}/apix/config/v1alpha1", "EndpointPickerConfig"),
)
GROVE_ROOTS = (
    (GROVE_CORE, "PodCliqueSet"),
    (GROVE_CORE, "PodCliqueTemplateSpec"),
    (GROVE_CORE, "PodCliqueScalingGroupConfig"),
)


def short(import_path: str) -> str:
    for prefix, repl in PREFIXES:
        if import_path.startswith(prefix):
            return repl + import_path[len(prefix) :]
    return import_path


Field = tuple[str, str, str, str]


class Tables:
    """The closure of Go types reachable from some roots, as table entries."""

    def __init__(self, modules: Modules) -> None:
        self.modules = modules
        self.structs: dict[str, tuple[Field, ...]] = {}
        self.named: dict[str, str] = {}
        self.special: dict[str, str] = {}
        self.packages: dict[str, str] = {}
        self._queue: list[tuple[GoPackage, str, str]] = []

    def add_roots(self, roots: Iterable[tuple[str, str]]) -> None:
        for path, name in roots:
            self.qualify(path, name)
        while self._queue:
            pkg, name, key = self._queue.pop()
            self.structs[key] = tuple(self._fields(pkg, name))

    def qualify(self, import_path: str, name: str) -> str:
        key = f"{short(import_path)}.{name}"
        full = f"{import_path}.{name}"
        if full in SPECIAL:
            self.special[key] = SPECIAL[full]
            self.packages[short(import_path)] = import_path.rsplit("/", 1)[-1]
            return key
        pkg = self.modules.package(import_path)
        self.packages[short(import_path)] = pkg.name
        if name in pkg.aliases:
            return self.resolve(pkg, pkg.aliases[name], name)
        if name in pkg.unmarshalers:
            raise GoParseError(f"{full} has its own JSON decoding and no rule in SPECIAL")
        if name in pkg.structs:
            if key not in self.structs:
                self.structs[key] = ()
                self._queue.append((pkg, name, key))
            return key
        if name in pkg.named:
            if key not in self.named:
                self.named[key] = "?"
                underlying = self.resolve(pkg, pkg.named[name], name)
                if underlying in self.structs:
                    raise GoParseError(f"{full}: a defined type over a struct is not supported")
                self.named[key] = underlying
            return key
        raise GoParseError(f"type {full} not found")

    def resolve(self, pkg: GoPackage, expr: str, owner: str) -> str:
        expr = expr.strip()
        if expr.startswith("*"):
            return "*" + self.resolve(pkg, expr[1:], owner)
        if expr in ("[]byte", "[]uint8"):
            return "bytes"
        if expr.startswith("[]"):
            return "[]" + self.resolve(pkg, expr[2:], owner)
        if expr.startswith("["):
            raise GoParseError(f"fixed-size array {expr!r} in {pkg.path}.{owner}")
        if expr.startswith("map["):
            depth, i = 0, 3
            while True:
                c = expr[i]
                depth += c == "["
                depth -= c == "]"
                if depth == 0:
                    break
                i += 1
            k, v = expr[4:i], expr[i + 1 :]
            return f"map[{self.resolve(pkg, k, owner)}]{self.resolve(pkg, v, owner)}"
        if expr in BUILTIN_KINDS:
            return {"byte": "uint8", "rune": "int32", "interface{}": "any"}.get(expr, expr)
        if "." in expr:
            alias, _, name = expr.partition(".")
            imports = pkg.imports.get(owner, {})
            if alias not in imports:
                raise GoParseError(f"unknown package {alias!r} in {pkg.path}.{owner}")
            return self.qualify(imports[alias], name)
        return self.qualify(pkg.path, expr)

    def _fields(self, pkg: GoPackage, name: str) -> list[Field]:
        source = pkg.structs[name]
        owner = name
        out: list[Field] = []
        for f in source:
            tag = f.tag
            json_name, _, opts = (tag or "").partition(",")
            if json_name == "-" and not opts:
                continue
            exported = f.name[:1].isupper()
            type_key = self.resolve(pkg, f.type_expr, owner)
            options = [o for o in opts.split(",") if o in ("omitempty", "omitzero", "string")]
            if "string" in options:
                raise GoParseError(f"{pkg.path}.{name}.{f.name}: ,string is not supported")
            if f.embedded and not json_name and type_key.lstrip("*") in self.structs:
                out.append(("", type_key, "inline", f.name))
                continue
            if not exported:
                continue
            out.append((json_name or f.name, type_key, ",".join(options), f.name))
        return out


HEADER = '''# Generated by scripts/generate (scripts/gen_gotypes.py); do not edit.
"""{doc}

Generated by ``scripts/gen_gotypes.py`` from {sources} — do not edit;
regenerate instead. Format: see that script; read by :mod:`gocompat.nodes`.
"""

from __future__ import annotations

from typing import Final

'''


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(doc: str, sources: str, tables: Tables, skip: frozenset[str] = frozenset()) -> str:
    def flat(name: str, value: dict[str, str]) -> str:
        rows = "".join(f"    {_q(k)}: {_q(v)},\n" for k, v in sorted(value.items()) if k not in skip)
        return f"{name}: Final[dict[str, str]] = {{\n{rows}}}\n"

    rows = []
    for key, fields in sorted(tables.structs.items()):
        if key in skip:
            continue
        body = "".join(f"        ({', '.join(_q(x) for x in f)}),\n" for f in fields)
        rows.append(f"    {_q(key)}: (\n{body}    ),\n" if fields else f"    {_q(key)}: (),\n")
    structs = "STRUCTS: Final[dict[str, tuple[tuple[str, str, str, str], ...]]] = {\n" + "".join(rows) + "}\n"
    return (
        HEADER.format(doc=doc, sources=sources)
        + flat("PACKAGES", tables.packages)
        + "\n"
        + flat("SPECIAL", tables.special)
        + "\n"
        + flat("NAMED", tables.named)
        + "\n"
        + structs
    )


def build(local: dict[str, Path] | None = None) -> dict[Path, str]:
    """Both tables' text by path; ``local``: modules read from a directory instead of the module
    cache (the ``replace`` lines of an operator checkout's ``go.mod``)."""
    modules = Modules(PINS, local)
    core = Tables(modules)
    core.add_roots(CORE_ROOTS)
    grove = Tables(modules)
    grove.add_roots(GROVE_ROOTS)
    shared = frozenset(core.structs) | frozenset(core.named) | frozenset(core.special)
    k8s = f"``{K8S_API}`` {PINS[K8S_API][0]}, ``{APIMACHINERY}`` {PINS[APIMACHINERY][0]}"
    return {
        ROOT / "gocompat" / "tables_core.py": render(
            "Go JSON shape of the Kubernetes (and other non-Dynamo) types inside Dynamo specs.",
            f"{k8s}, ``{GIE}`` {PINS[GIE][0]}",
            core,
        ),
        ROOT / "gocompat" / "tables_grove.py": render(
            "Go JSON shape of Grove's PodCliqueSet and its embedded template types (the types\n"
            "``gocompat.tables_core`` already holds are not repeated).",
            f"``{GROVE}`` {PINS[GROVE][0]}, {k8s}",
            grove,
            shared,
        ),
    }
