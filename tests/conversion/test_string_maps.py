"""Every ``map[string]string`` of the DGD/DCD types keeps every entry, empty values included.

Go decodes a JSON object into a map entry by entry and writes every entry back: a key whose
value is ``""`` (a marker label or annotation) is as much part of the object as any other.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kinds import convert

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
J = dict[str, Any]

MAP = {"marker": "", "app": "x"}


def _pod_spec() -> J:
    """A pod spec with every string map a Kubernetes PodSpec can hold, each with an empty value."""
    selector = {"matchLabels": dict(MAP)}
    return {
        "nodeSelector": dict(MAP),
        "containers": [{"name": "side", "image": "s:1"}],
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "namespaceSelector": selector, "topologyKey": "t"}
                ]
            }
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "t",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector,
            }
        ],
        "volumes": [
            {"name": "c", "csi": {"driver": "d", "volumeAttributes": dict(MAP)}},
            {"name": "f", "flexVolume": {"driver": "d", "options": dict(MAP)}},
            {
                "name": "e",
                "ephemeral": {
                    "volumeClaimTemplate": {
                        "metadata": {"labels": dict(MAP), "annotations": dict(MAP)},
                        "spec": {"selector": selector},
                    }
                },
            },
        ],
    }


def _pod_template() -> J:
    return {"metadata": {"labels": dict(MAP), "annotations": dict(MAP)}, "spec": _pod_spec()}


def _values(obj: Any, path: str = "") -> dict[str, str]:
    """Every string leaf below an entry named ``marker``/``app``, by path."""
    out: dict[str, str] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in MAP and isinstance(v, str):
                out[f"{path}.{k}"] = v
            else:
                out.update(_values(v, f"{path}.{k}"))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_values(v, f"{path}[{i}]"))
    return out


def _markers(obj: J) -> set[str]:
    """Paths of the ``marker: ""`` entries, in the object and in its payload annotations."""
    found = {p for p, v in _values(obj).items() if p.endswith(".marker") and v == ""}
    for key, raw in ((obj.get("metadata") or {}).get("annotations") or {}).items():
        if key.startswith("nvidia.com/d") and isinstance(raw, str) and raw.startswith("{"):
            found |= {f"<{key}>{p}" for p in _markers(orjson.loads(raw))}
    return found


def _strip_payload_paths(paths: set[str]) -> set[str]:
    return {p for p in paths if not p.startswith("<")}


def test_beta_pod_template_metadata_keeps_empty_values_in_alpha_extra_pod_metadata() -> None:
    beta = {
        "apiVersion": BETA,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {
            "components": [
                {
                    "name": "w",
                    "podTemplate": {
                        "metadata": {"annotations": {"foo": ""}, "labels": {"app": "", "tier": "a"}},
                        "spec": {"containers": [{"name": "main", "image": "i:1"}]},
                    },
                }
            ]
        },
    }
    svc = convert(beta, ALPHA)["spec"]["services"]["w"]
    assert svc["extraPodMetadata"] == {"annotations": {"foo": ""}, "labels": {"app": "", "tier": "a"}}


def _dgd(version: str, **spec: Any) -> J:
    return {
        "apiVersion": version,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "labels": dict(MAP), "annotations": dict(MAP)},
        "spec": {"annotations": dict(MAP), "labels": dict(MAP), **spec},
    }


def _alpha_dgd() -> J:
    return _dgd(
        ALPHA,
        services={
            "w": {
                "componentType": "worker",
                "annotations": dict(MAP),
                "labels": dict(MAP),
                "extraPodMetadata": {"annotations": dict(MAP), "labels": dict(MAP)},
                "ingress": {"host": "h", "annotations": dict(MAP), "labels": dict(MAP)},
                "gpuMemoryService": {
                    "enabled": True,
                    "extraClientPods": [{"name": "p", "podTemplate": _pod_template()}],
                },
                "checkpoint": {
                    "enabled": True,
                    "identity": {"model": "m", "backendFramework": "vllm", "extraParameters": dict(MAP)},
                    "job": {"podTemplate": _pod_template()},
                },
                "extraPodSpec": {**_pod_spec(), "mainContainer": {"image": "i:1"}},
            }
        },
    )


def _beta_dgd() -> J:
    return _dgd(
        BETA,
        components=[
            {
                "name": "w",
                "type": "worker",
                "podTemplate": {
                    "metadata": {"labels": dict(MAP), "annotations": dict(MAP)},
                    "spec": {**_pod_spec(), "containers": [{"name": "main", "image": "i:1"}]},
                },
                "experimental": {
                    "gpuMemoryService": {"extraClientPods": [{"name": "p", "podTemplate": _pod_template()}]},
                    "checkpoint": {
                        "enabled": True,
                        "identity": {
                            "model": "m",
                            "backendFramework": "vllm",
                            "extraParameters": dict(MAP),
                        },
                        "job": {"podTemplate": _pod_template()},
                    },
                },
            }
        ],
    )


def _dcd(version: str, spec: J, status: J | None = None) -> J:
    obj: J = {
        "apiVersion": version,
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "w"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def _every_marker_kept(src: J, target: str) -> None:
    before = _markers(src)
    assert before, "the fixture has no empty values"
    out = convert(src, target)
    back = convert(out, src["apiVersion"])
    # Every marker of the source is somewhere in the converted object (live or saved) ...
    assert len(_markers(out)) >= len(_strip_payload_paths(before))
    # ... and the round trip gives every one of them back where it was.
    assert _strip_payload_paths(_markers(back)) == _strip_payload_paths(before)
    assert {p: v for p, v in _values(back).items() if not p.startswith("<")} == _values(src)


@pytest.mark.parametrize(
    "src",
    [
        _alpha_dgd(),
        _beta_dgd(),
        _dcd(ALPHA, _alpha_dgd()["spec"]["services"]["w"], {"podSelector": dict(MAP)}),
        _dcd(BETA, {k: v for k, v in _beta_dgd()["spec"]["components"][0].items() if k != "name"}),
    ],
    ids=["alpha-dgd", "beta-dgd", "alpha-dcd", "beta-dcd"],
)
def test_every_string_map_keeps_empty_values_both_ways(src: J) -> None:
    _every_marker_kept(src, BETA if src["apiVersion"] == ALPHA else ALPHA)


def test_alpha_pod_maps_keep_empty_values_on_the_beta_pod_template() -> None:
    out = convert(_alpha_dgd(), BETA)
    tpl = out["spec"]["components"][0]["podTemplate"]
    assert tpl["metadata"] == {"annotations": MAP, "labels": MAP}
    spec = tpl["spec"]
    assert spec["nodeSelector"] == MAP
    term = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["labelSelector"] == {"matchLabels": MAP}
    assert term["namespaceSelector"] == {"matchLabels": MAP}
    assert spec["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": MAP}
    assert spec["volumes"][0]["csi"]["volumeAttributes"] == MAP
    assert spec["volumes"][1]["flexVolume"]["options"] == MAP
    vct = spec["volumes"][2]["ephemeral"]["volumeClaimTemplate"]
    assert vct["metadata"] == {"labels": MAP, "annotations": MAP}
    assert vct["spec"]["selector"] == {"matchLabels": MAP}
