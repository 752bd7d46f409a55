"""Regenerate the review payloads in admission/ and conversion/ from manifests/.

    scripts/generate   (runs documents() below and records each file's hash in scripts/generated.sums)

Each AdmissionReview is what the apiserver would send for the manifest (user
kubernetes-admin); each ConversionReview asks for the other version of the manifest.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
USER = {"username": "kubernetes-admin", "uid": "admin", "groups": ["system:masters", "system:authenticated"]}


def manifest(name: str) -> dict[str, Any]:
    doc = yaml.safe_load((HERE / "manifests" / name).read_text())
    assert isinstance(doc, dict)
    return doc


def admission(
    obj: dict[str, Any], operation: str, uid: str, old: dict[str, Any] | None = None
) -> dict[str, Any]:
    group, _, version = obj["apiVersion"].rpartition("/")
    gvk = {"group": group, "version": version, "kind": obj["kind"]}
    resource = obj["kind"].lower() + "s"
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": gvk,
            "resource": {"group": group, "version": version, "resource": resource},
            "requestKind": gvk,
            "requestResource": {"group": group, "version": version, "resource": resource},
            "name": obj["metadata"]["name"],
            "namespace": obj["metadata"].get("namespace", "default"),
            "operation": operation,
            "userInfo": USER,
            "object": obj,
            "oldObject": old,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": f"{operation.title()}Options"},
        },
    }


def conversion(objs: list[dict[str, Any]], desired: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objs},
    }


def with_meta(obj: dict[str, Any], **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].update(meta)
    return out


def documents() -> dict[Path, str]:
    """Every review payload's text by path."""
    out: dict[Path, str] = {}

    def write(path: str, doc: dict[str, Any]) -> None:
        out[HERE / path] = json.dumps(doc, indent=2) + "\n"

    dgd = manifest("dgd-agg-v1beta1.yaml")
    dgd_alpha = manifest("dgd-agg-v1alpha1.yaml")
    disagg = manifest("dgd-disagg-v1alpha1.yaml")
    dcd = manifest("dcd-v1beta1.yaml")
    dgdr = manifest("dgdr-v1beta1.yaml")
    model = manifest("dynamomodel-lora.yaml")
    dgdsa = manifest("dgdsa-v1beta1.yaml")
    stored = {
        "uid": "0c5d3c55-9d8e-4b43-a8c3-4f1b2b6a1f10",
        "resourceVersion": "4711",
        "generation": 1,
        "creationTimestamp": "2026-11-01T10:00:00Z",
    }

    write(
        "admission/dgd-v1beta1-create.json", admission(dgd, "CREATE", "e7a3c1c2-0001-4000-8000-000000000001")
    )
    write(
        "admission/dgd-v1alpha1-create.json",
        admission(dgd_alpha, "CREATE", "e7a3c1c2-0002-4000-8000-000000000002"),
    )
    changed = copy.deepcopy(with_meta(dgd, **stored))
    changed["spec"]["backendFramework"] = "sglang"
    old = with_meta(dgd, **stored)
    old["spec"]["backendFramework"] = "vllm"
    write(
        "admission/dgd-v1beta1-update-backend.json",
        admission(changed, "UPDATE", "e7a3c1c2-0003-4000-8000-000000000003", old),
    )
    write(
        "admission/dcd-v1beta1-create.json", admission(dcd, "CREATE", "e7a3c1c2-0004-4000-8000-000000000004")
    )
    write(
        "admission/dgdr-v1beta1-create.json",
        admission(dgdr, "CREATE", "e7a3c1c2-0005-4000-8000-000000000005"),
    )
    write(
        "admission/dynamomodel-create.json",
        admission(model, "CREATE", "e7a3c1c2-0006-4000-8000-000000000006"),
    )
    write(
        "admission/dgdsa-v1beta1-create.json",
        admission(dgdsa, "CREATE", "e7a3c1c2-0007-4000-8000-000000000007"),
    )

    write(
        "conversion/dgd-to-v1beta1.json",
        conversion(
            [with_meta(dgd_alpha, **stored), with_meta(disagg, **stored)],
            "nvidia.com/v1beta1",
            "c0a1b2c3-0001-4000-8000-000000000001",
        ),
    )
    write(
        "conversion/dgd-to-v1alpha1.json",
        conversion([with_meta(dgd, **stored)], "nvidia.com/v1alpha1", "c0a1b2c3-0002-4000-8000-000000000002"),
    )
    write(
        "conversion/dcd-to-v1alpha1.json",
        conversion([with_meta(dcd, **stored)], "nvidia.com/v1alpha1", "c0a1b2c3-0003-4000-8000-000000000003"),
    )
    write(
        "conversion/dgdr-to-v1alpha1.json",
        conversion(
            [with_meta(dgdr, **stored)], "nvidia.com/v1alpha1", "c0a1b2c3-0004-4000-8000-000000000004"
        ),
    )
    write(
        "conversion/dgdsa-to-v1alpha1.json",
        conversion(
            [with_meta(dgdsa, **stored)], "nvidia.com/v1alpha1", "c0a1b2c3-0005-4000-8000-000000000005"
        ),
    )
    return out


def main() -> None:
    for path, text in documents().items():
        path.write_text(text)


if __name__ == "__main__":
    main()
