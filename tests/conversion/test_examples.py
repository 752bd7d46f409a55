"""Worked examples of the conversion spec (§10.1–§10.3), checked against the pinned code."""

from __future__ import annotations

from typing import Any

import orjson

from app.review.compare import diff_paths, normalize
from kinds import convert

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert diff_paths(normalize(a), normalize(b)) == []


def test_dgd_alpha_to_beta_disaggregated_with_pvc() -> None:
    src = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "llm", "namespace": "ns"},
        "spec": {
            "backendFramework": "vllm",
            "pvcs": [
                {
                    "create": True,
                    "name": "models",
                    "storageClass": "standard",
                    "size": "10Gi",
                    "volumeAccessMode": "ReadWriteOnce",
                }
            ],
            "services": {
                "Frontend": {"componentType": "frontend", "replicas": 1},
                "decode": {
                    "componentType": "worker",
                    "subComponentType": "decode",
                    "replicas": 2,
                    "resources": {"limits": {"gpu": "1"}},
                },
                "prefill": {
                    "componentType": "worker",
                    "subComponentType": "prefill",
                    "replicas": 1,
                    "resources": {"limits": {"gpu": "1"}},
                },
            },
        },
    }
    main_gpu = {"spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    want = {
        "apiVersion": BETA,
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "llm",
            "namespace": "ns",
            "annotations": {
                "nvidia.com/dgd-spec": orjson.dumps(
                    {"version": 1, "spec": {"pvcs": src["spec"]["pvcs"]}}  # type: ignore[index]
                ).decode()
            },
        },
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1},
                {"name": "decode", "type": "decode", "replicas": 2, "podTemplate": main_gpu},
                {"name": "prefill", "type": "prefill", "replicas": 1, "podTemplate": main_gpu},
            ],
        },
        "status": {"state": ""},
    }
    got = convert(src, BETA)
    _same(got, want)
    # Upper case sorts first (byte-wise order).
    assert [c["name"] for c in got["spec"]["components"]] == ["Frontend", "decode", "prefill"]
    _same(convert(got, ALPHA), src)


def test_dgd_beta_to_alpha_unsorted_list_and_sidecar_ref() -> None:
    src = {
        "apiVersion": BETA,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {
            "components": [
                {
                    "name": "worker",
                    "type": "worker",
                    "podTemplate": {
                        "spec": {
                            "containers": [
                                {"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}]}
                            ]
                        }
                    },
                },
                {"name": "epp", "type": "epp", "frontendSidecar": "sidecar-frontend"},
            ]
        },
    }
    got = convert(src, ALPHA)
    assert got["spec"]["services"] == {
        "worker": {
            "componentType": "worker",
            "envs": [{"name": "A", "value": "1"}],
            "extraPodSpec": {"mainContainer": {"image": "img:1"}},
        },
        "epp": {"componentType": "epp"},
    }
    payload = orjson.loads(got["metadata"]["annotations"]["nvidia.com/dgd-spec"])
    assert payload == {
        "version": 1,
        "spec": {"components": [{"name": "worker"}, {"name": "epp", "frontendSidecar": "sidecar-frontend"}]},
    }
    back = convert(got, BETA)
    assert "annotations" not in back["metadata"]
    _same(back, src)


def test_dcd_alpha_empty_service_name_falls_back_and_is_flagged() -> None:
    src = {
        "apiVersion": ALPHA,
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "my-dcd"},
        "spec": {"componentType": "worker"},
    }
    got = convert(src, BETA)
    assert got["spec"] == {"name": "my-dcd", "type": "worker"}
    assert orjson.loads(got["metadata"]["annotations"]["nvidia.com/dcd-spec"]) == {
        "version": 1,
        "spec": {},
        "rawJSON": [{"path": "serviceName", "nil": True}],
    }
    _same(convert(got, ALPHA), src)


def test_dcd_beta_with_pod_template_gets_hub_origin_marker() -> None:
    src = {
        "apiVersion": BETA,
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "worker"},
        "spec": {
            "name": "worker",
            "type": "worker",
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1"}]}},
        },
    }
    got = convert(src, ALPHA)
    assert got["spec"] == {
        "serviceName": "worker",
        "componentType": "worker",
        "extraPodSpec": {"mainContainer": {"image": "img:1"}},
    }
    assert orjson.loads(got["metadata"]["annotations"]["nvidia.com/dcd-spec"]) == {
        "version": 1,
        "spec": {"name": "worker"},
    }
    back = convert(got, BETA)
    assert "annotations" not in back["metadata"]
    _same(back, src)
