"""Builders and payload accessors shared by the DGDR conversion tests (no tests here)."""

from __future__ import annotations

import json
from typing import Any

from conversion.v1alpha1 import dgdr
from domain.constants import ANN_DGDR_SPEC, ANN_DGDR_STATUS

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
KIND = "DynamoGraphDeploymentRequest"
ANN_SPEC = ANN_DGDR_SPEC
ANN_STATUS = ANN_DGDR_STATUS

Obj = dict[str, Any]


def alpha(spec: Obj | None = None, status: Obj | None = None, anns: dict[str, str] | None = None) -> Obj:
    obj: Obj = {"apiVersion": ALPHA, "kind": KIND, "metadata": {"name": "r", "namespace": "ns"}}
    if anns is not None:
        obj["metadata"]["annotations"] = anns
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


def beta(spec: Obj | None = None, status: Obj | None = None, anns: dict[str, str] | None = None) -> Obj:
    obj = alpha(spec, status, anns)
    obj["apiVersion"] = BETA
    return obj


def a2b(spec: Obj | None = None, status: Obj | None = None, anns: dict[str, str] | None = None) -> Obj:
    return dgdr.to_hub(alpha(spec, status, anns))


def b2a(spec: Obj | None = None, status: Obj | None = None, anns: dict[str, str] | None = None) -> Obj:
    return dgdr.from_hub(beta(spec, status, anns))


def anns(obj: Obj) -> dict[str, str]:
    out: dict[str, str] = obj["metadata"].get("annotations", {})
    return out


def spec_payload(obj: Obj) -> Obj | None:
    """The sparse spec inside ``nvidia.com/dgdr-spec`` (envelope unwrapped), or None."""
    raw = anns(obj).get(ANN_SPEC)
    if raw is None:
        return None
    env = json.loads(raw)
    assert env["version"] == 1
    spec: Obj = env["spec"]
    return spec


def status_payload(obj: Obj) -> Obj | None:
    raw = anns(obj).get(ANN_STATUS)
    return None if raw is None else json.loads(raw)


def envelope(spec: Obj) -> str:
    return json.dumps({"version": 1, "spec": spec})


def profiler_job(resources: Obj | None = None, **pod: Any) -> Obj:
    spec: Obj = dict(pod)
    if resources is not None:
        spec["containers"] = [{"name": "profiler", "resources": resources}]
    return {"template": {"spec": spec}}
