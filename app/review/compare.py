"""Semantic comparison of converted objects (the equality rules of the verified vectors).

:func:`normalize` parses the private payload annotations as JSON, drops nulls (except inside
opaque JSON values and ``services`` map entries), drops the Go zero-value artefacts listed in
:data:`ARTEFACTS`, and turns integral floats into ints. :func:`diff_paths` lists the
dotted/indexed paths where two normalised values differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from domain.constants import ALPHA_API_VERSION, HUB_API_VERSION, KIND_DGD, KIND_DGDR, KIND_DGDSA
from kinds import REGISTRY

__all__ = ["ARTEFACTS", "OPAQUE_SUFFIXES", "PAYLOAD_KEYS", "Context", "diff_paths", "normalize"]

Path = tuple[str | int, ...]

#: payload annotation key -> (kind, "spec" or "status"), for every kind of the registry that keeps payloads
PAYLOAD_KEYS: dict[str, tuple[str, str]] = {
    key: (kind.kind, key.rpartition("-")[2]) for kind in REGISTRY for key in kind.payload_keys
}

# Path suffixes (``*`` = any list index or map key) whose values are opaque JSON: nulls kept.
OPAQUE_SUFFIXES: tuple[tuple[str, ...], ...] = (
    ("profilingConfig", "config"),
    ("features", "planner"),
    ("generatedDeployment",),
    ("profilingResults", "selectedConfig"),
    ("pareto", "*", "config"),
    ("providerOverride", "value"),
    ("eppConfig", "config"),
    ("overrides", "dgd"),
)

_CONTAINER_LISTS = frozenset(("containers", "initContainers", "ephemeralContainers"))
_REPLICA_FIELDS = frozenset(("componentKind", "componentName", "replicas", "updatedReplicas"))


@dataclass(frozen=True)
class Context:
    """What is being normalised: the root object, or a payload carried by such an object."""

    kind: str
    version: str
    payload: str | None = None  # None for the object itself, else "spec" or "status"
    #: EPP plugins' Go zero values (``name: ""``, ``parameters: null``, ``weight: null``) equal
    #: their absence (:func:`normalize`'s ``epp_zero``)
    epp_zero: bool = False
    #: a field whose value is its type's zero (``false``, ``0``, ``""``) equals its absence: Go
    #: leaves an ``omitempty`` field out when it is zero, and reads it back as zero when it is
    #: absent (:func:`normalize`'s ``omitted_zero``)
    omitted_zero: bool = False


def _is_container(p: Path) -> bool:
    if not p:
        return False
    if p[-1] == "mainContainer":
        return True
    return len(p) >= 2 and isinstance(p[-1], int) and p[-2] in _CONTAINER_LISTS


def _is_replica_entry(p: Path, ctx: Context) -> bool:
    if ctx.payload is None:
        return (len(p) == 3 and p[0] == "status" and p[1] in ("services", "components")) or (
            len(p) == 2 and p[0] == "status" and p[1] in ("service", "component")
        )
    if ctx.payload == "status":
        return (len(p) == 2 and p[0] in ("services", "components")) or (
            len(p) == 1 and p[0] in ("service", "component")
        )
    return False


def _empty(v: Any) -> bool:
    return v == {} and isinstance(v, dict)


Rule = Callable[[Path, Any, Context], bool]

# Each rule says "drop this (path, value)". Rules run bottom-up, after the value's children
# were normalised, so artefacts cascade (e.g. a metadata map emptied by dropping nulls).
ARTEFACTS: tuple[tuple[str, Rule], ...] = (
    (
        "{} pod-template metadata/spec",
        lambda p, v, c: (
            _empty(v)
            and len(p) >= 2
            and p[-1] in ("metadata", "spec")
            and p[-2] in ("podTemplate", "template")
        ),
    ),
    ("{} container resources", lambda p, v, c: _empty(v) and p[-1] == "resources" and _is_container(p[:-1])),
    (
        "root spec/status {}",
        lambda p, v, c: c.payload is None and len(p) == 1 and p[0] in ("spec", "status") and _empty(v),
    ),
    (
        'DGD status.state ""',
        lambda p, v, c: (
            c.kind == KIND_DGD
            and v == ""
            and (
                (c.payload is None and p == ("status", "state"))
                or (c.payload == "status" and p == ("state",))
            )
        ),
    ),
    (
        "replica-status zero fields",
        lambda p, v, c: (
            p[-1] in _REPLICA_FIELDS
            and (v == "" or (v == 0 and not isinstance(v, bool)))
            and _is_replica_entry(p[:-1], c)
        ),
    ),
    ('container name ""', lambda p, v, c: p[-1] == "name" and v == "" and _is_container(p[:-1])),
    (
        'alpha sharedMemory.size / pvcs[].size "0"',
        lambda p, v, c: (
            v == "0"
            and len(p) >= 2
            and p[-1] == "size"
            and (p[-2] == "sharedMemory" or (len(p) >= 3 and p[-3] == "pvcs"))
        ),
    ),
    (
        'KIND_DGDR alpha spec payload model/backend/profilerImage ""',
        lambda p, v, c: (
            c.kind == KIND_DGDR
            and c.payload == "spec"
            and c.version == HUB_API_VERSION
            and v == ""
            and p in (("spec", "model"), ("spec", "backend"), ("spec", "profilingConfig", "profilerImage"))
        ),
    ),
    (
        'KIND_DGDR beta spec payload model ""',
        lambda p, v, c: (
            c.kind == KIND_DGDR
            and c.payload == "spec"
            and c.version == ALPHA_API_VERSION
            and v == ""
            and p == ("spec", "model")
        ),
    ),
    (
        "alpha KIND_DGDR autoApply/useMocker false",
        lambda p, v, c: (
            c.kind == KIND_DGDR
            and c.payload is None
            and c.version == ALPHA_API_VERSION
            and v is False
            and p in (("spec", "autoApply"), ("spec", "useMocker"))
        ),
    ),
    (
        'alpha KIND_DGDR deployment.state ""',
        lambda p, v, c: (
            c.kind == KIND_DGDR
            and v == ""
            and (
                (
                    c.payload is None
                    and c.version == ALPHA_API_VERSION
                    and p == ("status", "deployment", "state")
                )
                or (c.payload == "status" and c.version == HUB_API_VERSION and p == ("deployment", "state"))
            )
        ),
    ),
    (
        "beta DGDSA status.replicas 0",
        lambda p, v, c: (
            c.kind == KIND_DGDSA
            and c.payload is None
            and c.version == HUB_API_VERSION
            and p == ("status", "replicas")
            and v == 0
            and not isinstance(v, bool)
        ),
    ),
    ("globalDynamoNamespace false", lambda p, v, c: p[-1] == "globalDynamoNamespace" and v is False),
)


def _opaque(p: Path) -> bool:
    for suffix in OPAQUE_SUFFIXES:
        n = len(suffix)
        if len(p) < n:
            continue
        tail = p[-n:]
        if all(s == "*" or s == t for s, t in zip(suffix, tail, strict=True)):
            return True
    return False


_DROP = object()


def _num(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
        return int(v)
    return v


def _norm_opaque(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _norm_opaque(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm_opaque(x) for x in v]
    return _num(v)


def _norm_epp_config(v: Any) -> Any:
    v = _norm_opaque(v)
    if not isinstance(v, dict):
        return v
    for plugin in v.get("plugins") or ():
        if isinstance(plugin, dict):
            if plugin.get("name") == "":
                del plugin["name"]
            if "parameters" in plugin and plugin["parameters"] is None:
                del plugin["parameters"]
    for profile in v.get("schedulingProfiles") or ():
        for ref in (profile.get("plugins") or ()) if isinstance(profile, dict) else ():
            if isinstance(ref, dict) and "weight" in ref and ref["weight"] is None:
                del ref["weight"]
    for key in ("plugins", "schedulingProfiles"):
        if key in v and v[key] is None:
            del v[key]
    return v


def _norm(v: Any, p: Path, ctx: Context) -> Any:
    if p and _opaque(p):
        if ctx.epp_zero and len(p) >= 2 and p[-2] == "eppConfig":
            return _norm_epp_config(v)
        return _norm_opaque(v)
    if isinstance(v, dict):
        out: dict[str, Any] = {}
        keep_null = bool(p) and p[-1] == "services"
        for k, x in v.items():
            sub = (*p, k)
            if x is None:
                if keep_null:
                    out[k] = None
                continue
            if (
                ctx.payload is None
                and p == ("metadata", "annotations")
                and k in PAYLOAD_KEYS
                and isinstance(x, str)
            ):
                n = _norm_payload(k, x, ctx)
            else:
                n = _norm(x, sub, ctx)
            if n is _DROP:
                continue
            out[k] = n
        v = out
    elif isinstance(v, list):
        v = [None if x is None else _norm(x, (*p, i), ctx) for i, x in enumerate(v)]
        v = [x for x in v if x is not _DROP]
    else:
        v = _num(v)
        if ctx.omitted_zero and p and isinstance(p[-1], str) and _go_zero(v):
            return _DROP
    if p:
        for _, rule in ARTEFACTS:
            if rule(p, v, ctx):
                return _DROP
    return v


def _go_zero(v: Any) -> bool:
    return v is False or v == "" or (type(v) is int and v == 0)


def _norm_payload(key: str, raw: str, ctx: Context) -> Any:
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    kind, part = PAYLOAD_KEYS[key]
    pctx = Context(
        kind=kind, version=ctx.version, payload=part, epp_zero=ctx.epp_zero, omitted_zero=ctx.omitted_zero
    )
    out = _norm(parsed, (), pctx)
    return out


def normalize(obj: Any, *, epp_zero: bool = False, omitted_zero: bool = False) -> Any:
    """Normalised copy of a Kubernetes object (or any JSON value) for semantic comparison.

    ``epp_zero``: an EPP config's plugins with their Go zero values, which the operator writes
    whenever it converts one (``name: ""``, ``parameters: null``, a scheduling-profile plugin's
    ``weight: null``), equal the same plugins without them. Not so for the verified vectors'
    equality (the operator's output holds them); so for a round-trip check, which asks whether a
    manifest loses anything (it does not: the EPP reads both alike).

    ``omitted_zero``: a field of an object whose value is ``false``, ``0`` or ``""`` equals its
    absence (not a list item, nor inside opaque JSON). Also only for a round-trip check: the
    operator's types leave such ``omitempty`` fields out when they encode what they converted
    (``volumeMounts[].useAsCompilationCache: false``), and read their absence as the same zero."""
    if not isinstance(obj, dict):
        return _norm(obj, (), Context("", "", epp_zero=epp_zero, omitted_zero=omitted_zero))
    ctx = Context(
        kind=str(obj.get("kind", "")),
        version=str(obj.get("apiVersion", "")),
        epp_zero=epp_zero,
        omitted_zero=omitted_zero,
    )
    return _norm(obj, (), ctx)


def _fmt(p: Path) -> str:
    out = ""
    for part in p:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out or "<root>"


def diff_paths(a: Any, b: Any, *, added: bool = True) -> list[str]:
    """Paths (``spec.components[0].name``) where two normalised values differ; without ``added``,
    only those ``a`` holds (what ``b`` lost or changed), not the members only ``b`` has."""
    out: list[str] = []
    _diff(a, b, (), out, added)
    return out


def _diff(a: Any, b: Any, p: Path, out: list[str], added: bool) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                if added:
                    out.append(_fmt((*p, k)))
            elif k not in b:
                out.append(_fmt((*p, k)))
            else:
                _diff(a[k], b[k], (*p, k), out, added)
        return
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i >= len(a):
                if added:
                    out.append(_fmt((*p, i)))
            elif i >= len(b):
                out.append(_fmt((*p, i)))
            else:
                _diff(a[i], b[i], (*p, i), out, added)
        return
    if type(a) is not type(b) and not (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        out.append(_fmt(p))
        return
    if a != b:
        out.append(_fmt(p))
