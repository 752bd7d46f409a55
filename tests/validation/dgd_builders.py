"""Builders for hub (v1beta1) DGD / DCD objects used by the validation tests."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.0"


def container(name: str = "main", image: str | None = IMAGE, gpus: str | None = None, **extra: Any) -> JSON:
    c: JSON = {"name": name}
    if image is not None:
        c["image"] = image
    if gpus is not None:
        c["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    c.update(extra)
    return c


def component(
    name: str = "worker",
    ctype: str = "worker",
    *,
    image: str | None = IMAGE,
    gpus: str | None = None,
    containers: list[JSON] | None = None,
    pod_annotations: dict[str, str] | None = None,
    **extra: Any,
) -> JSON:
    c: JSON = {"name": name, "type": ctype, "replicas": 1}
    conts = containers if containers is not None else [container(image=image, gpus=gpus)]
    pt: JSON = {"spec": {"containers": conts}}
    if pod_annotations is not None:
        pt["metadata"] = {"annotations": pod_annotations}
    c["podTemplate"] = pt
    c.update(extra)
    return c


def dgd(
    components: list[JSON] | None = None,
    *,
    name: str = "graph",
    annotations: dict[str, str] | None = None,
    provider: str | None = "component",
    status: JSON | None = None,
    **spec: Any,
) -> JSON:
    ann: dict[str, str] = {"nvidia.com/dynamo-operator-origin-version": "1.1.0"}
    if provider is not None:
        ann["nvidia.com/workload-provider"] = provider
    ann.update(annotations or {})
    s: JSON = {
        "backendFramework": "vllm",
        "components": components if components is not None else [component()],
    }
    s.update(spec)
    o: JSON = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": "default", "generation": 1, "annotations": ann},
        "spec": s,
    }
    if status is not None:
        o["status"] = status
    return o


def dcd(
    *,
    name: str = "dcd",
    ctype: str = "worker",
    image: str | None = IMAGE,
    gpus: str | None = None,
    **spec: Any,
) -> JSON:
    s = component(name="worker", ctype=ctype, image=image, gpus=gpus)
    s.update(spec)
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": "default", "generation": 1},
        "spec": s,
    }
