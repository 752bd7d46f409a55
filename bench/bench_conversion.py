"""Conversion micro-benchmark: ms per object, per kind and direction (in process).

Run with ``python -m bench.bench_conversion``. Inputs are typical objects: a disaggregated
DGD with four components (frontend, planner, prefill and decode workers) and a worker DCD.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kinds import convert

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"


def _worker(sub: str, gpus: str) -> dict[str, Any]:
    return {
        "componentType": "worker",
        "subComponentType": sub,
        "replicas": 2,
        "envFromSecret": "hf-token-secret",
        "resources": {"limits": {"gpu": gpus, "memory": "40Gi"}, "requests": {"cpu": "8", "memory": "32Gi"}},
        "sharedMemory": {"size": "16Gi"},
        "volumeMounts": [{"name": "model-cache", "mountPoint": "/cache", "useAsCompilationCache": True}],
        "extraPodSpec": {
            "nodeSelector": {"nvidia.com/gpu.product": "H100"},
            "mainContainer": {
                "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0",
                "command": ["python3", "-m", "dynamo.vllm"],
                "args": ["--model", "Qwen/Qwen3-0.6B", f"--is-{sub}-worker"],
                "workingDir": "/workspace",
                "env": [{"name": "NCCL_DEBUG", "value": "WARN"}],
            },
        },
    }


DGD_ALPHA: dict[str, Any] = {
    "apiVersion": ALPHA,
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "llm", "namespace": "prod", "labels": {"team": "ml"}},
    "spec": {
        "backendFramework": "vllm",
        "envs": [{"name": "LOG_LEVEL", "value": "info"}],
        "pvcs": [
            {"create": True, "name": "model-cache", "size": "100Gi", "volumeAccessMode": "ReadWriteMany"}
        ],
        "services": {
            "Frontend": {
                "componentType": "frontend",
                "replicas": 1,
                "extraPodSpec": {"mainContainer": {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"}},
                "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10},
            },
            "Planner": {"componentType": "planner", "replicas": 1, "dynamoNamespace": "llm"},
            "VllmPrefillWorker": _worker("prefill", "1"),
            "VllmDecodeWorker": _worker("decode", "2"),
        },
    },
    "status": {
        "state": "successful",
        "services": {
            "Frontend": {
                "componentKind": "Deployment",
                "componentName": "llm-frontend",
                "replicas": 1,
                "updatedReplicas": 1,
            }
        },
    },
}

DCD_ALPHA: dict[str, Any] = {
    "apiVersion": ALPHA,
    "kind": "DynamoComponentDeployment",
    "metadata": {"name": "llm-decode", "namespace": "prod"},
    "spec": {"backendFramework": "vllm", "serviceName": "VllmDecodeWorker", **_worker("decode", "2")},
}


def _time(fn: Callable[[], Any], rounds: int = 25, round_s: float = 0.08) -> float:
    """Best of ``rounds`` rounds of process CPU time (the machine is shared), in ms per call.

    Many short rounds make it likely that at least one runs without a neighbour competing
    for the caches and the core.
    """
    for _ in range(50):
        fn()
    best = float("inf")
    for _ in range(rounds):
        n = 0
        start = time.process_time()
        while True:
            fn()
            n += 1
            elapsed = time.process_time() - start
            if elapsed >= round_s:
                break
        best = min(best, elapsed / n * 1000.0)
    return best


def main() -> None:
    dgd_beta = convert(DGD_ALPHA, BETA)
    dcd_beta = convert(DCD_ALPHA, BETA)
    rows = [
        ("DynamoGraphDeployment", "v1alpha1->v1beta1", lambda: convert(DGD_ALPHA, BETA)),
        ("DynamoGraphDeployment", "v1beta1->v1alpha1", lambda: convert(dgd_beta, ALPHA)),
        ("DynamoComponentDeployment", "v1alpha1->v1beta1", lambda: convert(DCD_ALPHA, BETA)),
        ("DynamoComponentDeployment", "v1beta1->v1alpha1", lambda: convert(dcd_beta, ALPHA)),
    ]
    print(f"{'kind':<28} {'direction':<20} ms/object")
    for kind, direction, fn in rows:
        print(f"{kind:<28} {direction:<20} {_time(fn):.4f}")


if __name__ == "__main__":
    main()
