"""Shared component spec: one focused test per mapping row (§4, §11.1), both directions."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.review.compare import normalize
from kinds import convert

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
J = dict[str, Any]


def a2b(svc: J) -> tuple[J, J | None]:
    """α service ``w`` → (β component without name, spoke save of ``w`` or None)."""
    out = convert(
        {
            "apiVersion": ALPHA,
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {"services": {"w": svc}},
        },
        BETA,
    )
    comp = dict(out["spec"]["components"][0])
    assert comp.pop("name") == "w"
    raw = (out["metadata"].get("annotations") or {}).get("nvidia.com/dgd-spec")
    save = orjson.loads(raw)["spec"]["services"].get("w") if raw else None
    return normalize(comp), save


def b2a(comp: J) -> tuple[J, J | None]:
    """β component ``w`` → (α service, hub-save entry of ``w`` or None)."""
    out = convert(
        {
            "apiVersion": BETA,
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {"components": [{"name": "w", **comp}]},
        },
        ALPHA,
    )
    svc = out["spec"]["services"]["w"]
    raw = (out["metadata"].get("annotations") or {}).get("nvidia.com/dgd-spec")
    save = (
        next((c for c in orjson.loads(raw)["spec"]["components"] if c["name"] == "w"), None) if raw else None
    )
    return normalize(svc), save


def round_trip_alpha(svc: J) -> J:
    out = convert(
        {
            "apiVersion": ALPHA,
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {"services": {"w": svc}},
        },
        BETA,
    )
    back = convert(out, ALPHA)
    return normalize(back["spec"]["services"]["w"])  # type: ignore[no-any-return]


def round_trip_beta(comp: J) -> J:
    out = convert(
        {
            "apiVersion": BETA,
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g"},
            "spec": {"components": [{"name": "w", **comp}]},
        },
        ALPHA,
    )
    back = convert(out, BETA)
    c = dict(back["spec"]["components"][0])
    c.pop("name")
    return normalize(c)  # type: ignore[no-any-return]


PO = {"apiVersion": "v1", "target": "leader", "value": {"x": [1, None]}}

# (row, α service, β component) for rows that are native in both directions.
NATIVE = [
    ("providerOverride", {"providerOverride": PO}, {"providerOverride": PO}),
    ("runtimeVersionOverride", {"runtimeVersionOverride": "1.2"}, {"runtimeVersionOverride": "1.2"}),
    ("globalDynamoNamespace", {"globalDynamoNamespace": True}, {"globalDynamoNamespace": True}),
    ("modelRef", {"modelRef": {"name": "m", "revision": "r"}}, {"modelRef": {"name": "m", "revision": "r"}}),
    ("replicas/minAvailable", {"replicas": 0, "minAvailable": 2}, {"replicas": 0, "minAvailable": 2}),
    (
        "multinode",
        {"multinode": {"nodeCount": 2, "leader": {"providerOverride": PO}, "worker": {}}},
        {"multinode": {"nodeCount": 2, "leader": {"providerOverride": PO}, "worker": {}}},
    ),
    (
        "eppConfig",
        {"eppConfig": {"configMapRef": {"name": "cm", "key": "k"}}},
        {"eppConfig": {"configMapRef": {"name": "cm", "key": "k"}}},
    ),
    (
        "topologyConstraint",
        {"topologyConstraint": {"packDomain": "rack"}},
        {"topologyConstraint": {"packDomain": "rack"}},
    ),
    ("componentType", {"componentType": "frontend"}, {"type": "frontend"}),
    (
        "componentType+sub promoted",
        {"componentType": "worker", "subComponentType": "prefill"},
        {"type": "prefill"},
    ),
    ("scalingAdapter enabled", {"scalingAdapter": {"enabled": True}}, {"scalingAdapter": {}}),
    ("sharedMemory size", {"sharedMemory": {"size": "16Gi"}}, {"sharedMemorySize": "16Gi"}),
    ("sharedMemory disabled", {"sharedMemory": {"disabled": True}}, {"sharedMemorySize": "0"}),
    (
        "gpuMemoryService",
        {"gpuMemoryService": {"enabled": True, "mode": "intraPod", "deviceClassName": "d"}},
        {"experimental": {"gpuMemoryService": {"mode": "IntraPod", "deviceClassName": "d"}}},
    ),
    (
        "failover",
        {"failover": {"enabled": True, "mode": "interPod", "numShadows": 1}},
        {"experimental": {"failover": {"mode": "InterPod", "numShadows": 1}}},
    ),
    (
        "checkpoint",
        {
            "checkpoint": {
                "enabled": True,
                "mode": "Auto",
                "identity": {"model": "m", "backendFramework": "vllm", "tensorParallelSize": 2},
            }
        },
        {
            "experimental": {
                "checkpoint": {
                    "enabled": True,
                    "mode": "Auto",
                    "identity": {"model": "m", "backendFramework": "vllm", "tensorParallelSize": 2},
                }
            }
        },
    ),
    (
        "resources",
        {
            "resources": {
                "requests": {"cpu": "2", "memory": "1Gi"},
                "limits": {"gpu": "1", "custom": {"rdma/ib": "1"}},
            }
        },
        {
            "podTemplate": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "resources": {
                                "requests": {"cpu": "2", "memory": "1Gi"},
                                "limits": {"nvidia.com/gpu": "1", "rdma/ib": "1"},
                            },
                        }
                    ]
                }
            }
        },
    ),
    (
        "envs",
        {"envs": [{"name": "A", "value": "1"}]},
        {"podTemplate": {"spec": {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}}},
    ),
    (
        "probes",
        {
            "livenessProbe": {"httpGet": {"path": "/l", "port": 1}},
            "readinessProbe": {"httpGet": {"path": "/r", "port": 2}},
        },
        {
            "podTemplate": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "livenessProbe": {"httpGet": {"path": "/l", "port": 1}},
                            "readinessProbe": {"httpGet": {"path": "/r", "port": 2}},
                        }
                    ]
                }
            }
        },
    ),
    (
        "volumeMounts",
        {"volumeMounts": [{"name": "v", "mountPoint": "/v"}]},
        {
            "podTemplate": {
                "spec": {"containers": [{"name": "main", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]}
            }
        },
    ),
    (
        "extraPodMetadata",
        {"extraPodMetadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}}},
        {
            "podTemplate": {
                "metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}},
                "spec": {"containers": [{"name": "main"}]},
            }
        },
    ),
    (
        "extraPodSpec",
        {
            "extraPodSpec": {
                "nodeSelector": {"n": "1"},
                "containers": [{"name": "side", "image": "s:1"}],
                "mainContainer": {"image": "i:1"},
            }
        },
        {
            "podTemplate": {
                "spec": {
                    "nodeSelector": {"n": "1"},
                    "containers": [{"name": "main", "image": "i:1"}, {"name": "side", "image": "s:1"}],
                }
            }
        },
    ),
]


@pytest.mark.parametrize(("row", "alpha", "beta"), NATIVE, ids=[r[0] for r in NATIVE])
def test_native_row_alpha_to_beta(row: str, alpha: J, beta: J) -> None:
    comp, _ = a2b(alpha)
    assert comp == normalize(beta)


@pytest.mark.parametrize(("row", "alpha", "beta"), NATIVE, ids=[r[0] for r in NATIVE])
def test_native_row_beta_to_alpha(row: str, alpha: J, beta: J) -> None:
    svc, _ = b2a(beta)
    assert svc == normalize(alpha)


# α-only rows: saved on β, restored by β→α.
ALPHA_ONLY = [
    ("annotations", {"annotations": {"a": "1"}}),
    ("labels", {"labels": {"a": "1"}}),
    ("dynamoNamespace", {"dynamoNamespace": "ns"}),
    ("autoscaling", {"autoscaling": {"enabled": True, "minReplicas": 1, "maxReplicas": 3}}),
    ("ingress", {"ingress": {"enabled": True, "host": "h", "tls": {"secretName": "s"}}}),
    ("unpromoted subComponentType", {"componentType": "planner", "subComponentType": "x"}),
    ("scalingAdapter disabled", {"scalingAdapter": {}}),
    ("gpuMemoryService disabled", {"gpuMemoryService": {"enabled": False, "mode": "intraPod"}}),
    ("failover disabled", {"failover": {"enabled": False}}),
    ("sharedMemory disabled with size", {"sharedMemory": {"disabled": True, "size": "1Gi"}}),
    ("sharedMemory empty", {"sharedMemory": {}}),
    ("extraPodMetadata empty", {"extraPodMetadata": {}}),
    ("extraPodSpec empty", {"extraPodSpec": {}}),
    ("extraPodSpec name-only main", {"extraPodSpec": {"mainContainer": {"name": "main"}}}),
    (
        "non-canonical resources",
        {"resources": {"limits": {"cpu": "1000m", "gpu": "1", "gpuType": "nvidia.com/mig"}}},
    ),
    ("unparsable resources", {"resources": {"requests": {"cpu": "lots"}}}),
    ("envFromSecret empty", {"envFromSecret": ""}),
    ("envFromSecret", {"envFromSecret": "hf"}),
    (
        "several compilation caches",
        {
            "volumeMounts": [
                {"name": "a", "mountPoint": "/a", "useAsCompilationCache": True},
                {"name": "b", "mountPoint": "/b", "useAsCompilationCache": True},
            ]
        },
    ),
    (
        "frontendSidecar",
        {
            "frontendSidecar": {
                "image": "fe:1",
                "args": ["-x"],
                "envFromSecret": "hf",
                "envs": [{"name": "E", "value": "1"}],
            }
        },
    ),
    (
        "envs split from mainContainer.env",
        {
            "envs": [{"name": "FLAT", "value": "1"}],
            "extraPodSpec": {"mainContainer": {"env": [{"name": "EXTRA", "value": "2"}]}},
        },
    ),
]


@pytest.mark.parametrize(("row", "alpha"), ALPHA_ONLY, ids=[r[0] for r in ALPHA_ONLY])
def test_alpha_only_row_is_saved_and_restored(row: str, alpha: J) -> None:
    _, save = a2b(alpha)
    assert save is not None
    assert round_trip_alpha(alpha) == normalize(alpha)


def test_service_name_equal_to_key_is_dropped_other_names_saved() -> None:
    assert a2b({"serviceName": "w"})[1] is None
    assert round_trip_alpha({"serviceName": "w"}) == {}
    _, save = a2b({"serviceName": "other"})
    assert save == {"serviceName": "other"}
    assert round_trip_alpha({"serviceName": "other"}) == {"serviceName": "other"}


def test_lone_prefill_component_type_comes_back_promoted() -> None:
    comp, save = a2b({"componentType": "prefill"})
    assert comp == {"type": "prefill"}
    assert save is None
    assert round_trip_alpha({"componentType": "prefill"}) == {
        "componentType": "worker",
        "subComponentType": "prefill",
    }


def test_compilation_cache_first_flag_and_mount_projection() -> None:
    alpha = {"volumeMounts": [{"name": "c", "mountPoint": "/c", "useAsCompilationCache": True}]}
    comp, save = a2b(alpha)
    assert comp == {"compilationCache": {"pvcName": "c", "mountPath": "/c"}}
    assert save is None
    svc, _ = b2a({"compilationCache": {"pvcName": "c", "mountPath": "/c"}})
    assert svc == normalize(alpha)


def test_frontend_sidecar_is_synthesised_and_rebuilt() -> None:
    alpha = {"frontendSidecar": {"image": "fe:1", "args": ["-x"], "envFromSecret": "hf"}}
    comp, _ = a2b(alpha)
    assert comp["frontendSidecar"] == "sidecar-frontend"
    assert comp["podTemplate"]["spec"]["containers"] == [
        {"name": "main"},
        {
            "name": "sidecar-frontend",
            "image": "fe:1",
            "args": ["-x"],
            "envFrom": [{"secretRef": {"name": "hf"}}],
        },
    ]
    assert round_trip_alpha(alpha) == normalize(alpha)


def test_beta_sidecar_without_saved_object_stays_a_container() -> None:
    comp = {
        "frontendSidecar": "sidecar-frontend",
        "podTemplate": {
            "spec": {
                "containers": [{"name": "main", "image": "i"}, {"name": "sidecar-frontend", "image": "f"}]
            }
        },
    }
    svc, save = b2a(comp)
    assert "frontendSidecar" not in svc
    assert svc["extraPodSpec"]["containers"] == [{"name": "sidecar-frontend", "image": "f"}]
    assert save is not None and save["frontendSidecar"] == "sidecar-frontend"
    assert round_trip_beta(comp) == normalize(comp)


# β-only rows: saved on α, restored by α→β.
BETA_ONLY = [
    (
        "podTemplate metadata",
        {
            "podTemplate": {
                "metadata": {"name": "tpl", "labels": {"a": "b"}},
                "spec": {"containers": [{"name": "main", "image": "i"}]},
            }
        },
    ),
    ("experimental grove", {"experimental": {"grove": {"forceScalingGroup": True}}}),
    ("experimental empty", {"experimental": {}}),
    (
        "grove beside checkpoint",
        {"experimental": {"grove": {"forceScalingGroup": True}, "checkpoint": {"enabled": False}}},
    ),
    ("empty pod template", {"podTemplate": {}}),
    ("no main container", {"podTemplate": {"spec": {"containers": [{"name": "side", "image": "s"}]}}}),
    (
        "container order",
        {
            "podTemplate": {
                "spec": {"containers": [{"name": "side", "image": "s"}, {"name": "main", "image": "i"}]}
            }
        },
    ),
    (
        "hub-only mount fields",
        {
            "podTemplate": {
                "spec": {
                    "containers": [
                        {"name": "main", "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": True}]}
                    ]
                }
            }
        },
    ),
    (
        "frontend sidecar ref to other container",
        {
            "frontendSidecar": "side",
            "podTemplate": {
                "spec": {"containers": [{"name": "main", "image": "i"}, {"name": "side", "image": "s"}]}
            },
        },
    ),
]


@pytest.mark.parametrize(("row", "beta"), BETA_ONLY, ids=[r[0] for r in BETA_ONLY])
def test_beta_only_row_is_saved_and_restored(row: str, beta: J) -> None:
    _, save = b2a(beta)
    assert save is not None and set(save) - {"name"}
    assert round_trip_beta(beta) == normalize(beta)


def test_checkpoint_disabled_is_native_in_both_directions() -> None:
    comp, save = a2b({"checkpoint": {"mode": "Manual"}})
    assert comp == {"experimental": {"checkpoint": {"enabled": False, "mode": "Manual"}}}
    assert save is None
    svc, _ = b2a({"experimental": {"checkpoint": {"enabled": False}}})
    assert svc == {"checkpoint": {}}


def test_gms_mode_other_strings_are_copied_verbatim() -> None:
    comp, _ = a2b({"gpuMemoryService": {"enabled": True, "mode": "custom"}})
    assert comp == {"experimental": {"gpuMemoryService": {"mode": "custom"}}}


def test_main_container_merge_rules() -> None:
    alpha = {
        "envs": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
        "volumeMounts": [{"name": "flat", "mountPoint": "/flat"}],
        "extraPodSpec": {
            "containers": [{"name": "main", "image": "dropped"}],
            "mainContainer": {
                "name": "custom",
                "env": [{"name": "B", "value": "override"}, {"name": "C", "value": "3"}],
                "resources": {"limits": {"cpu": "2"}},
                "volumeMounts": [{"name": "mc", "mountPath": "/mc"}],
                "image": "img",
            },
        },
    }
    comp, _ = a2b(alpha)
    main = comp["podTemplate"]["spec"]["containers"]
    assert main == [
        {
            "name": "main",
            "image": "img",
            "env": [
                {"name": "A", "value": "1"},
                {"name": "B", "value": "override"},
                {"name": "C", "value": "3"},
            ],
            "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
            "volumeMounts": [{"name": "mc", "mountPath": "/mc"}, {"name": "flat", "mountPath": "/flat"}],
        }
    ]
