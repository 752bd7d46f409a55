"""Derive the compact type skeletons in app/schemas/ from the operator's CRD manifests.

    .venv/bin/python scripts/gen_schemas.py path/to/nvidia.com_*.yaml

A skeleton keeps only what a JSON type check needs: ``t`` (type), ``p`` (properties),
``i`` (items), ``a`` (additionalProperties), ``x`` (unchecked: preserve-unknown-fields or
int-or-string). Descriptions, validations and defaults are dropped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parents[1] / "app" / "schemas"


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


def main(paths: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for path in paths:
        crd = yaml.safe_load(Path(path).read_text())
        kind = crd["spec"]["names"]["kind"]
        group = crd["spec"]["group"]
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            target = OUT / f"{group}_{version['name']}_{kind}.json"
            target.write_text(json.dumps(skeleton(schema), separators=(",", ":"), sort_keys=True) + "\n")
            print(f"{target.relative_to(OUT.parent.parent)}: {target.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
