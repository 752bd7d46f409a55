"""Derive apiserver/crds.json, what the offline API-server pipeline knows of each vendored CRD, from
the pinned CRD manifests in tests/fixtures/crds/.

Run by ``scripts/generate``.

For every kind: its group, plural, scope and the scale subresource's replicas path; for every
version: whether it is served, its deprecation warning and its ``openAPIV3Schema`` with the
descriptions dropped (nothing the API server validates, prunes or defaults with is left out).
``scripts/generate --check`` checks that the checked-in file is what this script writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CRD_DIR = ROOT / "tests" / "fixtures" / "crds"
OUT = ROOT / "apiserver" / "crds.json"
# libyaml's parser where PyYAML has it (the venv's wheel does): the same documents, a tenth of the time
# of the pure-Python one on these 3.7 MB of CRDs.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _strip(node: Any, in_properties: bool = False) -> Any:
    """The schema without ``description`` keywords (a property named ``description`` stays)."""
    if isinstance(node, dict):
        return {
            k: _strip(v, k == "properties") for k, v in node.items() if in_properties or k != "description"
        }
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _version(version: dict[str, Any], kind: str, group: str) -> dict[str, Any]:
    warning = None
    if version.get("deprecated"):
        warning = version.get("deprecationWarning") or f"{group}/{version['name']} {kind} is deprecated"
    return {
        "name": version["name"],
        "served": bool(version.get("served")),
        "deprecationWarning": warning,
        "schema": _strip(version["schema"]["openAPIV3Schema"]),
        "scale": (version.get("subresources") or {}).get("scale"),
        "status": "status" in (version.get("subresources") or {}),
    }


def catalogue(crd_dir: Path = CRD_DIR) -> list[dict[str, Any]]:
    kinds = []
    for path in sorted(crd_dir.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=_Loader)
        spec = crd["spec"]
        kind, group = spec["names"]["kind"], spec["group"]
        kinds.append(
            {
                "kind": kind,
                "group": group,
                "plural": spec["names"]["plural"],
                "namespaced": spec["scope"] == "Namespaced",
                "versions": [_version(v, kind, group) for v in spec["versions"]],
            }
        )
    return kinds


def render(kinds: list[dict[str, Any]]) -> str:
    return json.dumps(kinds, separators=(",", ":"), sort_keys=False) + "\n"
