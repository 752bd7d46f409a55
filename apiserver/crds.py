"""The vendored CRDs as the API server serves them: each kind's group, plural and scope, and each
version's structural schema, compiled once into :class:`Schema` nodes.

The schemas come from ``crds.json`` (descriptions dropped), generated from the pinned CRD manifests
by ``scripts/gen_crd_schemas.py``. A node keeps every keyword the pinned CRDs use that the API
server prunes, defaults or validates with.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import orjson

GROUP = "nvidia.com"


@dataclass(slots=True, eq=False)
class Schema:
    """One node of a structural schema (apiextensions' ``Structural``, with its value validations)."""

    type: str = ""
    format: str = ""
    nullable: bool = False
    int_or_string: bool = False
    preserve_unknown: bool = False
    embedded: bool = False
    properties: dict[str, Schema] = field(default_factory=dict)
    additional: Schema | None = None
    items: Schema | None = None
    required: tuple[str, ...] = ()
    enum: tuple[Any, ...] | None = None
    pattern: str = ""
    regex: re.Pattern[str] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    max_properties: int | None = None
    has_default: bool = False
    default: Any = None
    list_type: str = ""
    list_map_keys: tuple[str, ...] = ()
    any_of: tuple[Schema, ...] = ()
    all_of: tuple[Schema, ...] = ()
    rules: tuple[dict[str, Any], ...] = ()


def go_regex(pattern: str) -> re.Pattern[str]:
    """A Go (RE2) pattern as a Python one: ``\\z`` does not exist in Python; ``$`` without the
    multi-line flag matches only at the end in Go, never before a final newline."""
    translated = pattern.replace("\\z", "\\Z")
    translated = re.sub(r"(?<!\\)\$", r"\\Z", translated)
    return re.compile(translated)


def compile_schema(raw: dict[str, Any]) -> Schema:
    s = Schema(
        type=str(raw.get("type", "")),
        format=str(raw.get("format", "")),
        nullable=bool(raw.get("nullable")),
        int_or_string=bool(raw.get("x-kubernetes-int-or-string")),
        preserve_unknown=bool(raw.get("x-kubernetes-preserve-unknown-fields")),
        embedded=bool(raw.get("x-kubernetes-embedded-resource")),
        required=tuple(raw.get("required") or ()),
        enum=tuple(raw["enum"]) if "enum" in raw else None,
        pattern=str(raw.get("pattern", "")),
        minimum=raw.get("minimum"),
        maximum=raw.get("maximum"),
        exclusive_minimum=bool(raw.get("exclusiveMinimum")),
        exclusive_maximum=bool(raw.get("exclusiveMaximum")),
        min_length=raw.get("minLength"),
        max_length=raw.get("maxLength"),
        min_items=raw.get("minItems"),
        max_items=raw.get("maxItems"),
        max_properties=raw.get("maxProperties"),
        has_default="default" in raw,
        default=raw.get("default"),
        list_type=str(raw.get("x-kubernetes-list-type", "")),
        list_map_keys=tuple(raw.get("x-kubernetes-list-map-keys") or ()),
        rules=tuple(raw.get("x-kubernetes-validations") or ()),
    )
    if s.pattern:
        s.regex = go_regex(s.pattern)
    s.properties = {k: compile_schema(v) for k, v in (raw.get("properties") or {}).items()}
    if isinstance(raw.get("additionalProperties"), dict):
        s.additional = compile_schema(raw["additionalProperties"])
    if isinstance(raw.get("items"), dict):
        s.items = compile_schema(raw["items"])
    s.any_of = tuple(compile_schema(x) for x in raw.get("anyOf") or ())
    s.all_of = tuple(compile_schema(x) for x in raw.get("allOf") or ())
    return s


@dataclass(frozen=True, slots=True)
class Version:
    """One version of one vendored CRD."""

    kind: str
    group: str
    name: str
    plural: str
    namespaced: bool
    served: bool
    deprecation_warning: str | None
    has_status: bool
    scale_replicas_path: str | None
    raw_schema: dict[str, Any]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.name}"

    @property
    def has_rules(self) -> bool:
        """Whether the schema holds CEL rules (``x-kubernetes-validations``)."""
        return _has_rules(self.kind, self.name)

    @property
    def schema(self) -> Schema:
        return _compiled(self.kind, self.name)


@functools.cache
def _catalogue() -> dict[tuple[str, str], Version]:
    raw = orjson.loads(resources.files("apiserver").joinpath("crds.json").read_bytes())
    out: dict[tuple[str, str], Version] = {}
    for crd in raw:
        for v in crd["versions"]:
            scale = v.get("scale") or {}
            version = Version(
                kind=crd["kind"],
                group=crd["group"],
                name=v["name"],
                plural=crd["plural"],
                namespaced=crd["namespaced"],
                served=v["served"],
                deprecation_warning=v["deprecationWarning"],
                has_status=v["status"],
                scale_replicas_path=scale.get("specReplicasPath"),
                raw_schema=v["schema"],
            )
            out[(version.api_version, version.kind)] = version
    return out


@functools.cache
def _compiled(kind: str, version: str) -> Schema:
    found = _catalogue()[(f"{GROUP}/{version}", kind)]
    return compile_schema(found.raw_schema)


@functools.cache
def _has_rules(kind: str, version: str) -> bool:
    found = _catalogue()[(f"{GROUP}/{version}", kind)]
    return b"x-kubernetes-validations" in orjson.dumps(found.raw_schema)


def lookup(api_version: str, kind: str) -> Version | None:
    """The served CRD version for ``apiVersion``/``kind``, or None."""
    found = _catalogue().get((api_version, kind))
    return found if found is not None and found.served else None


def mapping(api_version: str, kind: str) -> Version | None:
    """The served version kubectl's RESTMapper finds for ``apiVersion``/``kind``: discovery gives it each
    kind as the CRD names it and in lower case (``dynamographdeployment``), or None."""
    found = lookup(api_version, kind)
    if found is None and kind == kind.lower():
        found = next(
            (v for (a, k), v in _catalogue().items() if a == api_version and k.lower() == kind and v.served),
            None,
        )
    return found


def kinds() -> tuple[str, ...]:
    """Every vendored kind, sorted."""
    return tuple(sorted({k for _, k in _catalogue()}))


def versions_of(kind: str) -> tuple[Version, ...]:
    return tuple(v for (_, k), v in sorted(_catalogue().items()) if k == kind)
