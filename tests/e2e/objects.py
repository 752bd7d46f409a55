"""Objects for the end-to-end scenarios: the example manifests, offline conversion through the
``dynamo-webhook convert`` command, the namespace-scope Lease, and the metadata the API server owns."""

from __future__ import annotations

import copy
import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from certs.leases import LEASE_NAME
from tests.e2e.cluster import EXE
from tests.e2e.testenv import ROOT, Kubectl

Obj = dict[str, Any]

GROUP = "nvidia.com"
ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
PLURALS = {
    "DynamoGraphDeployment": "dynamographdeployments",
    "DynamoComponentDeployment": "dynamocomponentdeployments",
    "DynamoGraphDeploymentRequest": "dynamographdeploymentrequests",
    "DynamoGraphDeploymentScalingAdapter": "dynamographdeploymentscalingadapters",
    "DynamoModel": "dynamomodels",
    "DynamoCheckpoint": "dynamocheckpoints",
}
CONVERTIBLE_KINDS = (
    "DynamoGraphDeployment",
    "DynamoComponentDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentScalingAdapter",
)
MANIFESTS = (
    *sorted((ROOT / "examples" / "manifests").glob("*.yaml")),
    *sorted((ROOT / "tests" / "fixtures" / "conversion" / "manifests").glob("*.yaml")),
    *sorted((ROOT / "tests" / "fixtures" / "conversion" / "dgdr-manifests").glob("*.yaml")),
)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def other_version(api_version: str) -> str:
    return BETA if api_version == ALPHA else ALPHA


def resource(kind: str, api_version: str) -> str:
    """``<plural>.<version>.<group>``, the kubectl spelling that pins the version read."""
    return f"{PLURALS[kind]}.{api_version.split('/')[1]}.{GROUP}"


def load_manifests(paths: tuple[Path, ...] = MANIFESTS) -> list[tuple[str, Obj]]:
    """Every convertible document as (``file:doc``, object)."""
    found: list[tuple[str, Obj]] = []
    for path in paths:
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and doc.get("kind") in CONVERTIBLE_KINDS:
                found.append((f"{path.relative_to(ROOT)}:{i}", doc))
    return found


def convert_offline(objs: list[Obj], to: str) -> list[Obj]:
    """``dynamo-webhook convert --to <to> -o json`` of the objects, as a user runs it."""
    proc = subprocess.run(
        [str(EXE), "convert", "-", "--to", to, "-o", "json", "--quiet"],
        input=yaml.safe_dump_all(objs, sort_keys=False),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    docs: list[Obj] = out if isinstance(out, list) else [out]
    assert len(docs) == len(objs)
    return docs


def user_view(obj: Obj) -> Obj:
    """The object without what the API server and kubectl own: of ``metadata`` only name, labels and
    annotations (kubectl's last-applied annotation aside) are kept. Payload annotations stay compared."""
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    kept: Obj = {"name": meta.get("name")}
    labels = meta.get("labels") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    if labels:
        kept["labels"] = labels
    if annotations:
        kept["annotations"] = annotations
    out["metadata"] = kept
    return out


def in_namespace(obj: Obj, namespace: str, name: str | None = None) -> Obj:
    out = copy.deepcopy(obj)
    out.setdefault("metadata", {})["namespace"] = namespace
    if name is not None:
        out["metadata"]["name"] = name
    return out


def scope_lease(namespace: str, duration: int = 3600) -> Obj:
    """A valid namespace-scope marker Lease: a namespace-restricted operator owns ``namespace``."""
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": LEASE_NAME, "namespace": namespace},
        "spec": {
            "holderIdentity": "e2e-restricted-operator",
            "leaseDurationSeconds": duration,
            "acquireTime": now,
            "renewTime": now,
        },
    }


def namespace(kubectl: Kubectl, name: str) -> str:
    kubectl("create", "namespace", name)
    return name
