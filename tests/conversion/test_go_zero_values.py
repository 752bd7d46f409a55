"""Kubernetes values keep exactly what Go keeps: omitempty zero values go, pointers to empty
structs stay, empty lists are not saved (expected values from the pinned upstream code)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.review.compare import normalize
from kinds import convert

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
J = dict[str, Any]


def dgd(version: str, component: J, **extra: Any) -> J:
    spec = (
        {"services": {"w": component}} if version == ALPHA else {"components": [{"name": "w", **component}]}
    )
    return {
        "apiVersion": version,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": spec,
        **extra,
    }


def spec_of(obj: J) -> Any:
    return normalize(obj["spec"])


def saved(obj: J, key: str = "nvidia.com/dgd-spec") -> Any:
    raw = (obj["metadata"].get("annotations") or {}).get(key)
    return None if raw is None else normalize(orjson.loads(raw))


def saved_service(obj: J) -> Any:
    """The spoke save of component ``w``."""
    save = saved(obj)
    assert save is not None and save["version"] == 1
    return save["spec"]["services"]["w"]


def service(obj: J) -> Any:
    return normalize(obj["spec"]["services"]["w"])


def test_read_only_false_is_dropped_from_the_main_container_and_the_save() -> None:
    mounts = [{"name": "m", "mountPath": "/m"}]
    main = {"image": "i", "volumeMounts": [{**mounts[0], "readOnly": False}]}
    out = convert(dgd(ALPHA, {"componentType": "worker", "extraPodSpec": {"mainContainer": main}}), BETA)
    (component,) = spec_of(out)["components"]
    assert component["podTemplate"] == {
        "spec": {"containers": [{"name": "main", "image": "i", "volumeMounts": mounts}]}
    }
    assert saved_service(out) == {"extraPodSpec": {"mainContainer": {"volumeMounts": mounts}}}
    main["volumeMounts"] = mounts
    assert service(convert(out, ALPHA)) == {
        "componentType": "worker",
        "extraPodSpec": {"mainContainer": main},
    }


def test_an_empty_envs_list_is_not_saved() -> None:
    main = {"image": "i", "env": [{"name": "A", "value": "1"}]}
    out = convert(
        dgd(ALPHA, {"componentType": "worker", "envs": [], "extraPodSpec": {"mainContainer": main}}), BETA
    )
    assert saved_service(out) == {"extraPodSpec": {"mainContainer": {"env": main["env"]}}}
    assert service(convert(out, ALPHA)) == {
        "componentType": "worker",
        "extraPodSpec": {"mainContainer": main},
    }


def test_resources_with_an_empty_claims_list_save_as_an_empty_object() -> None:
    out = convert(dgd(ALPHA, {"componentType": "worker", "resources": {"claims": []}}), BETA)
    assert spec_of(out) == {
        "components": [
            {"name": "w", "type": "worker", "podTemplate": {"spec": {"containers": [{"name": "main"}]}}}
        ]
    }
    assert orjson.loads(out["metadata"]["annotations"]["nvidia.com/dgd-spec"]) == {
        "version": 1,
        "spec": {"services": {"w": {"resources": {}}}},
    }
    assert spec_of(convert(out, ALPHA)) == {"services": {"w": {"componentType": "worker", "resources": {}}}}


def test_an_empty_affinity_is_a_pointer_and_survives_both_ways() -> None:
    out = convert(dgd(ALPHA, {"componentType": "worker", "extraPodSpec": {"affinity": {}}}), BETA)
    assert spec_of(out) == {
        "components": [
            {
                "name": "w",
                "type": "worker",
                "podTemplate": {"spec": {"affinity": {}, "containers": [{"name": "main"}]}},
            }
        ]
    }
    assert saved(out) is None
    assert spec_of(convert(out, ALPHA)) == {
        "services": {"w": {"componentType": "worker", "extraPodSpec": {"affinity": {}}}}
    }

    beta = dgd(
        BETA,
        {
            "type": "worker",
            "podTemplate": {"spec": {"affinity": {}, "containers": [{"name": "main", "image": "i"}]}},
        },
    )
    alpha = convert(beta, ALPHA)
    assert spec_of(alpha) == {
        "services": {
            "w": {
                "componentType": "worker",
                "extraPodSpec": {"affinity": {}, "mainContainer": {"image": "i"}},
            }
        }
    }
    assert spec_of(convert(alpha, BETA)) == spec_of(beta)


# --- beyond the reported cases: the same Go rules elsewhere --------------------------------------


@pytest.mark.parametrize(
    ("dedicated", "main", "merged"),
    [("http", 8080, "http"), (80, "http", "http"), (80, 8080, 8080), (80, 0, 80)],
)
def test_main_container_probe_ports_merge_as_mergo_does(dedicated: Any, main: Any, merged: Any) -> None:
    src = dgd(
        ALPHA,
        {
            "componentType": "worker",
            "livenessProbe": {"httpGet": {"port": dedicated}},
            "extraPodSpec": {"mainContainer": {"image": "i", "livenessProbe": {"httpGet": {"port": main}}}},
        },
    )
    main_container = convert(src, BETA)["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]
    assert main_container["livenessProbe"] == {"httpGet": {"port": merged}}


def test_a_pointer_to_zero_in_main_container_fills_a_nil_probe_field() -> None:
    src = dgd(
        ALPHA,
        {
            "componentType": "worker",
            "readinessProbe": {"periodSeconds": 3},
            "extraPodSpec": {
                "mainContainer": {"image": "i", "readinessProbe": {"terminationGracePeriodSeconds": 0}}
            },
        },
    )
    main_container = convert(src, BETA)["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]
    assert main_container["readinessProbe"] == {"periodSeconds": 3, "terminationGracePeriodSeconds": 0}


def test_status_times_are_written_in_utc_whole_seconds() -> None:
    status = {
        "state": "x",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "lastTransitionTime": "2026-01-01T01:00:00.5+01:00",
                "reason": "r",
                "message": "m",
            }
        ],
        "rollingUpdate": {
            "phase": "InProgress",
            "startTime": "2026-01-01T01:00:00.5+01:00",
            "updatedServices": ["w"],
        },
    }
    out = convert(dgd(ALPHA, {}, status=status), BETA)
    assert out["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert out["status"]["rollingUpdate"] == {
        "phase": "InProgress",
        "startTime": "2026-01-01T00:00:00Z",
        "updatedComponents": ["w"],
    }


def test_epp_config_is_written_through_its_go_type() -> None:
    config = {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": [{"type": "t"}],
        "schedulingProfiles": [],
        "saturationDetector": {"metricsStalenessThreshold": "1000ms", "queueDepthThreshold": 0},
    }
    out = convert(dgd(ALPHA, {"componentType": "epp", "eppConfig": {"config": config}}), BETA)
    got = out["spec"]["components"][0]["eppConfig"]["config"]
    assert got["saturationDetector"] == {"metricsStalenessThreshold": "1s"}


def test_profiling_job_containers_drop_omitempty_zero_values() -> None:
    container = {
        "name": "profiler",
        "image": "i",
        "volumeMounts": [{"name": "m", "mountPath": "/m", "readOnly": False}],
        "stdin": False,
        "ports": [{"containerPort": 80, "hostPort": 0}],
        "securityContext": {"privileged": False},
    }
    template = {"spec": {"affinity": {}, "hostNetwork": False, "containers": [container]}}
    src = dgd(BETA, {})
    src["kind"] = "DynamoGraphDeploymentRequest"
    src["spec"] = {"model": "m", "overrides": {"profilingJob": {"template": template}}}
    job = saved(convert(src, ALPHA), "nvidia.com/dgdr-spec")["spec"]["overrides"]["profilingJob"]
    assert job == {
        "template": {
            "spec": {
                "affinity": {},
                "containers": [
                    {
                        "name": "profiler",
                        "image": "i",
                        "volumeMounts": [{"name": "m", "mountPath": "/m"}],
                        "ports": [{"containerPort": 80}],
                        "securityContext": {"privileged": False},
                    }
                ],
            }
        }
    }
