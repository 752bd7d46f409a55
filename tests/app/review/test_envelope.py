"""Envelope rules against the running ASGI app: versions, uid echo, patches, denials,
handler failures, conversion all-or-nothing and metadata protection."""

from __future__ import annotations

import base64
import json
from typing import Any

import jsonpatch
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

import conversion
import kinds
from app.review import reviews
from app.review.webhook_paths import WEBHOOK_ROUTES
from domain.admission import AdmissionContext, AdmissionInput, Decision
from tests.app.conftest import JSON_HEADERS, admission_review, conversion_review


def post(client: TestClient, path: str, doc: Any) -> Any:
    resp = client.post(path, content=json.dumps(doc), headers=JSON_HEADERS)
    assert resp.status_code == 200, resp.text
    return resp.json()


@pytest.mark.parametrize("api_version", ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"])
@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_allowed_review_echoes_version_and_uid(client: TestClient, api_version: str, path: str) -> None:
    out = post(client, path, admission_review(uid="abc-123", api_version=api_version))
    assert out["apiVersion"] == api_version
    assert out["kind"] == "AdmissionReview"
    assert out["response"] == {"uid": "abc-123", "allowed": True, "status": {"code": 200}}


def _patched(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
    assert inp.object is not None
    obj = json.loads(json.dumps(inp.object))
    obj["metadata"].setdefault("annotations", {})["example.com/defaulted"] = "yes"
    obj["spec"].pop("replicas", None)  # a removal must never reach the patch
    return Decision.allow(patched=obj)


def test_mutating_answer_carries_base64_json_patch_without_removes(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kinds, "default", _patched)
    review = admission_review()
    out = post(client, "/mutate", review)["response"]
    assert out["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(out["patch"]))
    assert all(op["op"] != "remove" for op in ops)
    patched = jsonpatch.apply_patch(review["request"]["object"], ops)
    assert patched["metadata"]["annotations"] == {"example.com/defaulted": "yes"}
    assert patched["spec"]["replicas"] == 1


def test_mutating_answer_without_changes_has_no_patch(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kinds, "default", lambda inp, ctx: Decision.allow(patched=inp.object))
    out = post(client, "/mutate", admission_review())["response"]
    assert "patch" not in out and "patchType" not in out


def test_validating_answer_never_carries_a_patch(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "validate", _patched)
    out = post(client, "/validate", admission_review())["response"]
    assert out["allowed"] is True
    assert "patch" not in out and "patchType" not in out


def test_denial_keeps_status_and_clips_warnings(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    long_warning = "w" * 300
    upstream_sized = "u" * 189

    def deny(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
        return Decision.deny(
            'Kind.nvidia.com "a" is invalid: spec: Required value',
            422,
            "Invalid",
            warnings=[long_warning, "short", upstream_sized],
            details={"name": "a"},
        )

    monkeypatch.setattr(kinds, "validate", deny)
    out = post(client, "/validate", admission_review())["response"]
    assert out["allowed"] is False
    assert out["status"]["code"] == 422
    assert out["status"]["reason"] == "Invalid"
    assert out["status"]["message"] == 'Kind.nvidia.com "a" is invalid: spec: Required value'
    assert out["warnings"][1] == "short"
    assert len(out["warnings"][0]) == 256 and out["warnings"][0].endswith("…")
    assert out["warnings"][2] == upstream_sized


@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_handler_exception_is_a_500_denial_with_uid(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    def boom(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(kinds, "validate", boom)
    monkeypatch.setattr(kinds, "default", boom)
    out = post(client, path, admission_review(uid="u-500"))["response"]
    assert out["uid"] == "u-500"
    assert out["allowed"] is False
    assert out["status"]["code"] == 500
    assert "kaboom" in out["status"]["message"]
    assert "reason" not in out["status"]  # as controller-runtime's admission.Errored writes it


def test_every_upstream_path_is_served(client: TestClient) -> None:
    for route in WEBHOOK_ROUTES:
        doc = conversion_review([]) if route.type == "convert" else admission_review()
        resp = client.post(route.path, content=json.dumps(doc), headers=JSON_HEADERS)
        assert resp.status_code == 200, route.path


def test_per_kind_path_passes_its_gvk_guard(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def record(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
        seen.append(inp.expected_gvk)
        return Decision.allow()

    monkeypatch.setattr(kinds, "validate", record)
    post(client, "/validate/nvidia.com/v1beta1/dynamographdeployments", admission_review())
    post(client, "/validate", admission_review())
    assert str(seen[0]) == "nvidia.com/v1beta1, Kind=DynamoGraphDeployment"
    assert seen[1] is None


# ------------------------------------------------------------------ conversion envelope


def _fake_convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    if obj.get("spec", {}).get("fail"):
        raise conversion.ConversionError("cannot convert this one")
    out = json.loads(json.dumps(obj))
    out["apiVersion"] = desired
    out["metadata"]["name"] = "renamed"  # must not survive: only labels/annotations may change
    out["metadata"].setdefault("labels", {})["converted"] = "true"
    return out


def _obj(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "7"},
        "spec": dict(spec),
    }


def test_conversion_keeps_order_count_and_metadata(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kinds, "convert", _fake_convert)
    objects = [_obj(f"o{i}") for i in range(5)]
    out = post(client, "/convert", conversion_review(objects))
    assert out["apiVersion"] == "apiextensions.k8s.io/v1" and out["kind"] == "ConversionReview"
    resp = out["response"]
    assert resp["uid"] == "cuid"
    assert resp["result"] == {"status": "Success"}
    assert [o["metadata"]["name"] for o in resp["convertedObjects"]] == [f"o{i}" for i in range(5)]
    for src, dst in zip(objects, resp["convertedObjects"], strict=True):
        assert dst["apiVersion"] == "nvidia.com/v1beta1"
        assert dst["metadata"]["uid"] == src["metadata"]["uid"]
        assert dst["metadata"]["resourceVersion"] == "7"
        assert dst["metadata"]["labels"] == {"converted": "true"}


def test_conversion_is_all_or_nothing(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "convert", _fake_convert)
    objects = [_obj("ok1"), _obj("bad", fail=True), _obj("ok2")]
    resp = post(client, "/convert", conversion_review(objects))["response"]
    assert resp["uid"] == "cuid"
    assert resp["result"]["status"] == "Failure"
    assert resp["result"]["message"].startswith("cannot convert this one")
    assert "objects[1] DynamoGraphDeploymentScalingAdapter ns/bad" in resp["result"]["message"]
    assert not resp.get("convertedObjects")


def test_conversion_converter_crash_is_a_failure(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        raise KeyError("x")

    monkeypatch.setattr(kinds, "convert", crash)
    resp = post(client, "/convert", conversion_review([_obj("a")]))["response"]
    assert resp["result"]["status"] == "Failure"
    assert resp["result"]["message"].startswith("internal error occurred during conversion")


def test_conversion_v1beta1_envelope_answered_in_kind(client: TestClient) -> None:
    doc = conversion_review([])
    doc["apiVersion"] = "apiextensions.k8s.io/v1beta1"
    out = post(client, "/convert", doc)
    assert out["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    assert out["response"]["result"]["status"] == "Success"
    assert out["response"]["convertedObjects"] == []


@pytest.mark.parametrize(
    ("request_body", "fragment"),
    [
        ({"uid": "u", "objects": []}, "desiredAPIVersion"),
        ({"uid": "u", "desiredAPIVersion": "nvidia.com/v1beta1", "objects": {}}, "request.objects"),
        ({"uid": "u", "desiredAPIVersion": "nvidia.com/v1beta1", "objects": [1]}, "objects[0]"),
    ],
)
def test_conversion_malformed_request_is_a_failure_with_uid(
    client: TestClient, request_body: dict[str, Any], fragment: str
) -> None:
    doc = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "request": request_body}
    resp = post(client, "/convert", doc)["response"]
    assert resp["uid"] == "u"
    assert resp["result"]["status"] == "Failure"
    assert fragment in resp["result"]["message"]


def test_unknown_kind_or_version_fails_the_review(client: TestClient) -> None:
    unknown = {"apiVersion": "nvidia.com/v1alpha1", "kind": "Nonsense", "metadata": {"name": "n"}}
    resp = post(client, "/convert", conversion_review([unknown]))["response"]
    assert resp["result"]["status"] == "Failure"
    assert "Nonsense" in resp["result"]["message"]
    bad_version = _obj("v")
    resp = post(client, "/convert", conversion_review([bad_version], desired="nvidia.com/v9"))["response"]
    assert resp["result"]["status"] == "Failure"
    assert "nvidia.com/v9" in resp["result"]["message"]


def test_health_ready_and_metrics(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").status_code == 200
    post(client, "/validate", admission_review())
    text = client.get("/metrics").text
    assert 'controller_runtime_webhook_requests_total{code="200",webhook="/validate"}' in text
    assert "controller_runtime_webhook_latency_seconds_bucket" in text
    assert "controller_runtime_webhook_requests_in_flight" in text
    assert "dynamo_webhook_admission_reviews_total" in text


@given(
    uid=st.text(max_size=20),
    api_version=st.sampled_from(["apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"]),
    objects=st.lists(
        st.dictionaries(
            st.text(max_size=8),
            st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.text(max_size=8)),
            max_size=4,
        ),
        max_size=4,
    ),
)
def test_conversion_answer_encoded_object_by_object_is_the_same_bytes(
    uid: str, api_version: str, objects: list[dict[str, Any]]
) -> None:
    encoded = [orjson.dumps(o) for o in objects]
    assert reviews.conversion_review_encoded(api_version, uid, encoded) == reviews.conversion_review(
        api_version, uid, objects
    )


def _read(kind: Any, request_kind: Any = None) -> AdmissionInput:
    doc = admission_review()
    doc["request"]["kind"] = kind
    doc["request"]["requestKind"] = request_kind
    return reviews.admission_input(reviews.read_admission_review(doc))


def test_request_gvks_are_read_once_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    kind = {"group": "nvidia.com", "version": "v1beta1", "kind": "DynamoGraphDeployment"}
    first, second = _read(kind, dict(kind)), _read(dict(kind), dict(kind, version="v1alpha1"))
    assert first.kind is first.request_kind is second.kind
    assert (second.kind.api_version, second.kind.kind) == ("nvidia.com/v1beta1", "DynamoGraphDeployment")
    assert second.request_kind is not None and second.request_kind.version == "v1alpha1"
    assert _read({"version": "v1", "kind": "Pod"}).kind == reviews.GVK("", "v1", "Pod")
    # The values come from requests: the memo never holds more than its bound.
    monkeypatch.setattr(reviews, "_gvks", {})
    for n in range(3 * reviews._GVK_CACHE_SIZE):
        assert _read(dict(kind, kind=f"K{n}")).kind.kind == f"K{n}"
        assert len(reviews._gvks) <= reviews._GVK_CACHE_SIZE


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ({"group": 1, "version": "v1", "kind": "Pod"}, "request.kind.group: expected a string, got integer"),
        ({"version": "v1", "kind": ["Pod"]}, "request.kind.kind: expected a string, got array"),
        ({"group": "nvidia.com", "kind": "DynamoModel"}, "request.kind: version and kind are required"),
        (
            {"group": "nvidia.com", "version": "v1beta1", "kind": ""},
            "request.kind: version and kind are required",
        ),
        ("DynamoModel", "request.kind: expected an object with group, version and kind, got string"),
    ],
)
def test_malformed_request_gvk_names_the_field(kind: Any, message: str) -> None:
    with pytest.raises(reviews.InvalidRequest) as caught:
        _read(kind)
    assert caught.value.message == message
