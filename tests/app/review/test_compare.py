"""Semantic comparison rules (vectors/README.md, spec §7.3)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from app.review.compare import diff_paths, normalize

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"


def _obj(kind: str, version: str, **parts: Any) -> dict[str, Any]:
    return {"apiVersion": version, "kind": kind, **parts}


def test_payloads_parsed_key_order_and_artefacts_irrelevant() -> None:
    a = _obj(
        "DynamoGraphDeployment",
        BETA,
        metadata={
            "annotations": {
                "nvidia.com/dgd-status": '{"state":"","services":{"w":{"componentKind":"","componentName":"x","replicas":0,"updatedReplicas":0}}}'
            }
        },
    )
    b = _obj(
        "DynamoGraphDeployment",
        BETA,
        metadata={
            "annotations": {
                "nvidia.com/dgd-status": orjson.dumps({"services": {"w": {"componentName": "x"}}}).decode()
            }
        },
    )
    assert diff_paths(normalize(a), normalize(b)) == []


def test_nulls_dropped_except_opaque_values_and_services_entries() -> None:
    n = normalize(
        _obj(
            "DynamoGraphDeployment",
            ALPHA,
            spec={"x": None, "services": {"a": None}, "providerOverride": {"value": {"k": None}}},
        )
    )
    assert n["spec"] == {"services": {"a": None}, "providerOverride": {"value": {"k": None}}}


@pytest.mark.parametrize(
    ("kind", "version", "obj", "expected"),
    [
        ("DynamoGraphDeployment", BETA, {"status": {"state": ""}}, {}),
        (
            "DynamoGraphDeployment",
            BETA,
            {
                "spec": {
                    "components": [
                        {
                            "name": "a",
                            "podTemplate": {
                                "metadata": {},
                                "spec": {"containers": [{"name": "", "resources": {}}]},
                            },
                        }
                    ]
                }
            },
            {"spec": {"components": [{"name": "a", "podTemplate": {"spec": {"containers": [{}]}}}]}},
        ),
        (
            "DynamoComponentDeployment",
            ALPHA,
            {
                "status": {
                    "conditions": None,
                    "service": {
                        "componentKind": "",
                        "componentName": "",
                        "replicas": 0,
                        "updatedReplicas": 0,
                    },
                }
            },
            {"status": {"service": {}}},
        ),
        (
            "DynamoGraphDeployment",
            ALPHA,
            {
                "spec": {
                    "pvcs": [{"name": "p", "size": "0"}],
                    "services": {"a": {"sharedMemory": {"size": "0"}, "globalDynamoNamespace": False}},
                }
            },
            {"spec": {"pvcs": [{"name": "p"}], "services": {"a": {"sharedMemory": {}}}}},
        ),
        ("DynamoGraphDeploymentScalingAdapter", BETA, {"status": {"replicas": 0}}, {}),
        (
            "DynamoGraphDeploymentRequest",
            ALPHA,
            {"spec": {"autoApply": False, "useMocker": False}, "status": {"deployment": {"state": ""}}},
            {"status": {"deployment": {}}},
        ),
        (
            "DynamoGraphDeployment",
            BETA,
            {
                "spec": {
                    "components": [{"name": "a", "podTemplate": {}, "scalingAdapter": {}, "experimental": {}}]
                }
            },
            {
                "spec": {
                    "components": [{"name": "a", "podTemplate": {}, "scalingAdapter": {}, "experimental": {}}]
                }
            },
        ),
    ],
)
def test_artefacts(kind: str, version: str, obj: dict[str, Any], expected: dict[str, Any]) -> None:
    n = normalize(_obj(kind, version, **obj))
    n.pop("apiVersion")
    n.pop("kind")
    assert n == expected


def test_dgdr_payload_artefacts() -> None:
    beta_carrier = _obj(
        "DynamoGraphDeploymentRequest",
        BETA,
        metadata={
            "annotations": {
                "nvidia.com/dgdr-spec": '{"version":1,"spec":{"model":"","backend":"","profilingConfig":{"profilerImage":""}}}'
            }
        },
    )
    assert normalize(beta_carrier)["metadata"]["annotations"]["nvidia.com/dgdr-spec"] == {
        "version": 1,
        "spec": {"profilingConfig": {}},
    }
    alpha_carrier = _obj(
        "DynamoGraphDeploymentRequest",
        ALPHA,
        metadata={"annotations": {"nvidia.com/dgdr-spec": '{"version":1,"spec":{"model":"","backend":""}}'}},
    )
    assert normalize(alpha_carrier)["metadata"]["annotations"]["nvidia.com/dgdr-spec"] == {
        "version": 1,
        "spec": {"backend": ""},
    }


def test_envelope_spec_is_not_an_artefact() -> None:
    o = _obj(
        "DynamoComponentDeployment",
        BETA,
        metadata={"annotations": {"nvidia.com/dcd-spec": '{"version":1,"spec":{}}'}},
    )
    assert normalize(o)["metadata"]["annotations"]["nvidia.com/dcd-spec"] == {"version": 1, "spec": {}}


def test_numbers_compare_numerically_lists_keep_order() -> None:
    assert diff_paths(normalize({"a": 500}), normalize({"a": 500.0})) == []
    assert diff_paths(normalize({"a": [1, 2]}), normalize({"a": [2, 1]})) == ["a[0]", "a[1]"]


def test_diff_paths_reports_missing_and_changed() -> None:
    a = {"spec": {"components": [{"name": "a", "replicas": 1}], "x": 1}}
    b = {"spec": {"components": [{"name": "a", "replicas": 2}, {"name": "b"}]}}
    assert diff_paths(a, b) == ["spec.components[0].replicas", "spec.components[1]", "spec.x"]
    assert diff_paths(True, 1) == ["<root>"]


def test_epp_config_go_zero_fields_are_artefacts_only_for_a_round_trip() -> None:
    written = {
        "eppConfig": {
            "config": {
                "plugins": [{"name": "", "type": "t", "parameters": None}],
                "schedulingProfiles": [{"name": "p", "plugins": [{"pluginRef": "t", "weight": None}]}],
            }
        }
    }
    hand = {
        "eppConfig": {
            "config": {
                "plugins": [{"type": "t"}],
                "schedulingProfiles": [{"name": "p", "plugins": [{"pluginRef": "t"}]}],
            }
        }
    }
    # the operator writes them: under the vectors' equality they are not artefacts
    assert diff_paths(normalize({"spec": written}), normalize({"spec": hand})) != []
    # the same config, for a round-trip check
    assert (
        diff_paths(normalize({"spec": written}, epp_zero=True), normalize({"spec": hand}, epp_zero=True))
        == []
    )
    other = {"eppConfig": {"config": {"plugins": [{"type": "t", "parameters": {"k": None}}]}}}
    assert normalize({"spec": other})["spec"]["eppConfig"]["config"]["plugins"][0]["parameters"] == {
        "k": None
    }
