"""Validation micro-benchmark: ms per request for a typical DGD (in process).

Run with ``python -m bench.bench_validation``. The input is the v1beta1 vLLM aggregated
deployment (frontend + GPU worker) as the mutating webhook leaves it; the chain measured is
``kinds.default`` followed by ``kinds.validate`` on CREATE and on UPDATE.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import kinds
from domain.admission import GVK, AdmissionContext, AdmissionInput, UserInfo
from kinds import validate

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.0"


def _typical_dgd() -> dict[str, Any]:
    def main(args: list[str], gpus: str | None) -> dict[str, Any]:
        c: dict[str, Any] = {
            "name": "main",
            "image": IMAGE,
            "command": ["python3", "-m"],
            "args": args,
            "env": [{"name": "HF_HOME", "value": "/model-cache"}],
            "envFrom": [{"secretRef": {"name": "hf-token-secret"}}],
        }
        if gpus:
            c["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
        return c

    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "vllm-agg",
            "namespace": "default",
            "generation": 1,
            "annotations": {
                "nvidia.com/workload-provider": "component",
                "nvidia.com/dynamo-operator-origin-version": "1.1.0",
            },
        },
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {
                    "name": "Frontend",
                    "type": "frontend",
                    "replicas": 1,
                    "podTemplate": {"spec": {"containers": [main(["dynamo.frontend"], None)]}},
                },
                {
                    "name": "VllmDecodeWorker",
                    "type": "worker",
                    "replicas": 2,
                    "podTemplate": {
                        "spec": {"containers": [main(["dynamo.vllm", "--model", "Qwen/Qwen3-0.6B"], "1")]}
                    },
                },
            ],
        },
    }


def _input(op: str, obj: dict[str, Any], old: dict[str, Any] | None) -> AdmissionInput:
    return AdmissionInput(
        uid="u",
        kind=GVK("nvidia.com", "v1beta1", "DynamoGraphDeployment"),
        operation=op,  # type: ignore[arg-type]
        name="vllm-agg",
        namespace="default",
        user=UserInfo(username="kubernetes-admin", groups=("system:masters", "system:authenticated")),
        object=obj,
        old_object=old,
    )


def _time(label: str, fn: Callable[[], object], n: int = 3000) -> None:
    for _ in range(200):
        fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    per = (time.perf_counter() - start) / n * 1000
    print(f"{label:<42} {per:8.4f} ms")


def main() -> None:
    ctx = AdmissionContext()
    obj = _typical_dgd()
    old = copy.deepcopy(obj)
    create = _input("CREATE", obj, None)
    upd = _input("UPDATE", obj, old)
    assert validate(create, ctx).allowed
    assert validate(upd, ctx).allowed
    _time("validate CREATE", lambda: validate(create, ctx))
    _time("validate UPDATE", lambda: validate(upd, ctx))
    _time("default + validate CREATE", lambda: (kinds.default(create, ctx), validate(create, ctx)))


if __name__ == "__main__":
    main()
