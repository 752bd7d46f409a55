"""What changed between two sets of CRD manifests: every field of every kind and version, added,
removed or changed (any keyword of its schema other than its description: type, format, enum,
default, bounds, pattern, CEL rules, whether it is required).

A field is named by its path from the object's root: ``spec.components[].name`` (``[]`` a list's
items, ``{}`` a map's values). A field added or removed with everything under it is named once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import yaml

Schema = dict[str, Any]
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NESTED = ("properties", "items", "additionalProperties", "description", "required")


class Change(NamedTuple):
    kind: str
    version: str
    what: str  # "added", "removed", "changed"
    path: str
    detail: str


def load(folder: Path) -> dict[str, dict[str, Schema]]:
    """kind -> version -> openAPIV3Schema of every CRD manifest in ``folder``."""
    out: dict[str, dict[str, Schema]] = {}
    for path in sorted(folder.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=_Loader)
        if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
            continue
        versions = out.setdefault(crd["spec"]["names"]["kind"], {})
        for version in crd["spec"]["versions"]:
            versions[version["name"]] = (version.get("schema") or {}).get("openAPIV3Schema") or {}
    return out


def fields(schema: Schema, path: str = "", required: bool = False) -> dict[str, Schema]:
    """path -> the field's own keywords (``required`` added when its parent requires it)."""
    own = {k: v for k, v in schema.items() if k not in _NESTED}
    if required:
        own["required"] = True
    out = {path: own} if path else {}
    needed = set(schema.get("required") or ())
    for name, sub in (schema.get("properties") or {}).items():
        out.update(fields(sub, f"{path}.{name}" if path else name, name in needed))
    if isinstance(schema.get("items"), dict):
        out.update(fields(schema["items"], f"{path}[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        out.update(fields(schema["additionalProperties"], f"{path}{{}}"))
    return out


def _under(path: str, parents: set[str]) -> bool:
    return any(path.startswith(p) and path[len(p) :][:1] in (".", "[", "{") for p in parents)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _changed(old: Schema, new: Schema) -> str:
    keys = sorted(set(old) | set(new))
    return "; ".join(
        f"{k}: {_short(old.get(k, '<none>'))} -> {_short(new.get(k, '<none>'))}"
        for k in keys
        if old.get(k) != new.get(k)
    )


def diff(old: dict[str, dict[str, Schema]], new: dict[str, dict[str, Schema]]) -> list[Change]:
    """Every field added, removed or changed, per kind and version (a new or dropped kind or
    version is one change of its root)."""
    out: list[Change] = []
    for kind in sorted(set(old) | set(new)):
        for version in sorted(set(old.get(kind, {})) | set(new.get(kind, {}))):
            a, b = old.get(kind, {}).get(version), new.get(kind, {}).get(version)
            if a is None or b is None:
                out.append(Change(kind, version, "added" if a is None else "removed", "<version>", ""))
                continue
            fa, fb = fields(a), fields(b)
            added = {p for p in fb if p not in fa}
            removed = {p for p in fa if p not in fb}
            for p in sorted(added):
                if not _under(p, added):
                    out.append(Change(kind, version, "added", p, str(fb[p].get("type", ""))))
            for p in sorted(removed):
                if not _under(p, removed):
                    out.append(Change(kind, version, "removed", p, ""))
            for p in sorted(set(fa) & set(fb)):
                if fa[p] != fb[p]:
                    out.append(Change(kind, version, "changed", p, _changed(fa[p], fb[p])))
    return out
