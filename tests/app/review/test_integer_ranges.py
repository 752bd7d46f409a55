"""Numbers must fit the Go type the operator decodes them into; one that does not is refused
before any rule with the operator's decoder message (texts from the pinned upstream code)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from app.review.schema import first_type_error, skeleton_for
from conversion import ConversionError
from kinds import convert
from tests.app.conftest import JSON_HEADERS, admission_review, conversion_review

A1 = "nvidia.com/v1alpha1"
B1 = "nvidia.com/v1beta1"
DGD = "DynamoGraphDeployment"
REPLICAS_2_70 = (
    "json: cannot unmarshal number 1180591620717411303424 into Go struct field "
    "DynamoComponentDeploymentSharedSpec.spec.components.replicas of type int32"
)


def obj(api_version: str, kind: str, spec: Any, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "g"}, "spec": spec, **extra}


@pytest.mark.parametrize(
    ("api_version", "kind", "spec", "extra", "message"),
    [
        (B1, DGD, {"components": [{"name": "w", "replicas": 2**70}]}, {}, REPLICAS_2_70),
        (
            B1,
            "DynamoComponentDeployment",
            {"replicas": 2**31},
            {},
            "json: cannot unmarshal number 2147483648 into Go struct field "
            "DynamoComponentDeploymentSpec.spec.DynamoComponentDeploymentSharedSpec.replicas of type int32",
        ),
        (
            A1,
            DGD,
            {"services": {"w": {"autoscaling": {"minReplicas": 2**63}}}},
            {},
            "json: cannot unmarshal number 9223372036854775808 into Go struct field "
            "Autoscaling.spec.services.autoscaling.minReplicas of type int",
        ),
        (
            A1,
            DGD,
            {
                "services": {
                    "w": {"extraPodSpec": {"mainContainer": {"livenessProbe": {"httpGet": {"port": 2**40}}}}}
                }
            },
            {},
            "json: cannot unmarshal number 1099511627776 into Go struct field "
            "HTTPGetAction.spec.services.extraPodSpec.mainContainer.livenessProbe.ProbeHandler.httpGet.port of type int32",
        ),
        (
            B1,
            DGD,
            {
                "components": [
                    {"name": "w", "podTemplate": {"spec": {"securityContext": {"runAsUser": -(2**64)}}}}
                ]
            },
            {},
            "json: cannot unmarshal number -18446744073709551616 into Go struct field "
            "PodSecurityContext.spec.components.podTemplate.spec.securityContext.runAsUser of type int64",
        ),
        (
            B1,
            DGD,
            {
                "experimental": {"kvTransferPolicy": {"domain": "d", "preferredWeight": 1e39}},
                "components": [],
            },
            {},
            "json: cannot unmarshal number 1e+39 into Go struct field "
            "KvTransferPolicy.spec.experimental.kvTransferPolicy.preferredWeight of type float32",
        ),
        # The CRD keeps these pod templates unchecked; the operator decodes them typed.
        (
            A1,
            DGD,
            {"services": {"w": {"checkpoint": {"job": {"podTemplate": {"spec": {"priority": 2**31}}}}}}},
            {},
            "json: cannot unmarshal number 2147483648 into Go struct field "
            "PodSpec.spec.services.checkpoint.job.podTemplate.spec.priority of type int32",
        ),
        (
            B1,
            DGD,
            {
                "components": [
                    {
                        "name": "w",
                        "experimental": {
                            "gpuMemoryService": {
                                "extraClientPods": [
                                    {
                                        "name": "p",
                                        "podTemplate": {
                                            "spec": {
                                                "containers": [
                                                    {"name": "m", "ports": [{"containerPort": 2**40}]}
                                                ]
                                            }
                                        },
                                    }
                                ]
                            }
                        },
                    }
                ]
            },
            {},
            "json: cannot unmarshal number 1099511627776 into Go struct field ContainerPort.spec.components"
            ".experimental.gpuMemoryService.extraClientPods.podTemplate.spec.containers.ports.containerPort of type int32",
        ),
        (
            B1,
            "DynamoGraphDeploymentRequest",
            {"model": "m", "hardware": {"totalGpus": 3000000000}},
            {},
            "json: cannot unmarshal number 3000000000 into Go struct field HardwareSpec.spec.hardware.totalGpus "
            "of type int32",
        ),
        (
            A1,
            "DynamoGraphDeploymentScalingAdapter",
            {"replicas": -2147483649, "dgdRef": {"name": "a", "serviceName": "b"}},
            {},
            "json: cannot unmarshal number -2147483649 into Go struct field "
            "DynamoGraphDeploymentScalingAdapterSpec.spec.replicas of type int32",
        ),
        (
            A1,
            "DynamoModel",
            {"modelName": "m", "baseModelName": "b"},
            {"status": {"readyEndpoints": 2**63}},
            "json: cannot unmarshal number 9223372036854775808 into Go struct field DynamoModelStatus.status.readyEndpoints "
            "of type int",
        ),
        (
            B1,
            "DynamoComponentDeployment",
            {"replicas": 3000000000.0},
            {},
            "json: cannot unmarshal number 3000000000.0 into Go struct field "
            "DynamoComponentDeploymentSpec.spec.DynamoComponentDeploymentSharedSpec.replicas of type int32",
        ),
    ],
)
def test_numbers_beyond_their_go_type_get_the_decoder_message(
    api_version: str, kind: str, spec: Any, extra: dict[str, Any], message: str
) -> None:
    # The body travels as JSON text (a literal beyond 64 bits is parsed as a double).
    parsed = json.loads(json.dumps(obj(api_version, kind, spec, **extra)), parse_int=_as_parsed)
    assert first_type_error(parsed, api_version, kind) == message


def _as_parsed(text: str) -> int | float:
    # orjson, like the apiserver, reads an integer beyond 64 bits as the nearest double
    n = int(text)
    return n if -(2**63) <= n < 2**64 else float(n)


def test_numbers_at_the_edges_of_their_range_pass() -> None:
    for n in (2**31 - 1, -(2**31), 0):
        assert first_type_error(obj(B1, DGD, {"components": [{"name": "w", "replicas": n}]}), B1, DGD) is None


@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_an_out_of_range_replicas_is_a_400_before_any_rule(client: TestClient, path: str) -> None:
    body = json.dumps(admission_review(obj(B1, DGD, {"components": [{"name": "w", "replicas": 0}]})))
    body = body.replace('"replicas": 0', '"replicas": 1180591620717411303424')
    out = client.post(path, content=body, headers=JSON_HEADERS).json()["response"]
    assert out["allowed"] is False
    assert out["status"]["code"] == 400
    assert out["status"]["message"] == REPLICAS_2_70


def test_conversion_of_an_out_of_range_replicas_fails(client: TestClient) -> None:
    body = json.dumps(conversion_review([obj(B1, DGD, {"components": [{"name": "w", "replicas": 0}]})], A1))
    body = body.replace('"replicas": 0', '"replicas": 1180591620717411303424')
    out = client.post("/convert", content=body, headers=JSON_HEADERS).json()["response"]
    assert out["result"] == {
        "status": "Failure",
        "message": f"{REPLICAS_2_70} (objects[0] DynamoGraphDeployment g)",
    }


def test_a_payload_with_an_out_of_range_integer_is_not_decodable() -> None:
    # Go refuses the whole payload: the saved dynamoNamespace does not come back.
    payload = json.dumps(
        {"version": 1, "spec": {"services": {"w": {"replicas": 2**40, "dynamoNamespace": "x"}}}}
    )
    beta = obj(B1, DGD, {"components": [{"name": "w"}]})
    beta["metadata"]["annotations"] = {"nvidia.com/dgd-spec": payload}
    assert convert(beta, A1)["spec"]["services"]["w"] == {}
    live = obj(B1, DGD, {"components": [{"name": "w", "replicas": 2**40}]})
    with pytest.raises(ConversionError, match=r"cannot unmarshal number 1099511627776 .* of type int32"):
        convert(live, A1)


# --- every integer field of every served kind ----------------------------------------------------

_KINDS = [
    (A1, DGD),
    (B1, DGD),
    (A1, "DynamoComponentDeployment"),
    (B1, "DynamoComponentDeployment"),
    (A1, "DynamoGraphDeploymentRequest"),
    (B1, "DynamoGraphDeploymentRequest"),
    (A1, "DynamoGraphDeploymentScalingAdapter"),
    (B1, "DynamoGraphDeploymentScalingAdapter"),
    (A1, "DynamoModel"),
]


def _number_fields(
    skel: dict[str, Any], path: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], dict[str, Any]]]:
    out = []
    if "f" in skel:
        out.append((path, skel))
    for k, sub in (skel.get("p") or {}).items():
        out += _number_fields(sub, (*path, k))
    if "i" in skel:
        out += _number_fields(skel["i"], (*path, 0))
    if "a" in skel:
        out += _number_fields(skel["a"], (*path, "key"))
    return out


_FIELDS = [
    (av, kind, path, skel)
    for av, kind in _KINDS
    for path, skel in _number_fields(skeleton_for(av, kind) or {})
    if skel["f"] in ("int32", "int64", "int")
]


def _place(path: tuple[str | int, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    return [_place(rest, value)] if isinstance(head, int) else {head: _place(rest, value)}


@settings(max_examples=300)
@given(st.sampled_from(_FIELDS), st.sampled_from([1, -1]), st.integers(1, 2**40))
def test_every_integer_field_is_range_checked(field: Any, sign: int, beyond: int) -> None:
    av, kind, path, skel = field
    bits = {"int32": 32, "int64": 64, "int": 64}[skel["f"]]
    value = 2 ** (bits - 1) - 1 + beyond if sign > 0 else -(2 ** (bits - 1)) - beyond
    doc = {"apiVersion": av, "kind": kind, **_place(path, value)}
    message = first_type_error(doc, av, kind)
    assert (
        message
        == f"json: cannot unmarshal number {value} into Go struct field {skel['g']} of type {skel['f']}"
    )
    doc = {"apiVersion": av, "kind": kind, **_place(path, value - sign * beyond)}
    assert first_type_error(doc, av, kind) is None
