"""Bad input: what is not a review gets an HTTP 4xx with a JSON error body; a readable
review with a malformed request gets a 200 denial naming the field."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from app.review.errors import BadRequest
from app.review.reviews import MAX_DEPTH, _few_brackets, _within, check_depth, parse_json
from tests.app.conftest import JSON_HEADERS, admission_review, make_client


def _post_raw(client: TestClient, path: str, body: bytes, content_type: str = "application/json") -> Any:
    return client.post(path, content=body, headers={"Content-Type": content_type})


def _assert_json_error(resp: Any, status: int, fragment: str) -> None:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == status
    assert fragment in body["error"]


@pytest.mark.parametrize("path", ["/validate", "/mutate", "/convert"])
@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"", "empty"),
        (b"not json", "not valid JSON"),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"', "not valid JSON"),
        (b'{"a": "\xff\xfe"}', "not valid JSON"),  # invalid UTF-8
        (b"[1, 2, 3]", "expected a"),
        (b'"a string"', "expected a"),
        (b'{"apiVersion": "v1", "kind": "Pod"}', "got apiVersion='v1' kind='Pod'"),
    ],
)
def test_not_a_review_is_400(client: TestClient, path: str, body: bytes, fragment: str) -> None:
    _assert_json_error(_post_raw(client, path, body), 400, fragment)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 5000])
def test_absurd_nesting_is_400(client: TestClient, depth: int) -> None:
    review = admission_review()
    nested = "[" * depth + "]" * depth
    body = json.dumps(review).replace('"replicas": 1', f'"replicas": {nested}').encode()
    resp = _post_raw(client, "/validate", body)
    assert resp.status_code == 400
    assert "nest" in resp.json()["error"] or "JSON" in resp.json()["error"]


def test_admission_review_sent_to_convert_is_400(client: TestClient) -> None:
    _assert_json_error(
        _post_raw(client, "/convert", json.dumps(admission_review()).encode()), 400, "ConversionReview"
    )


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda r: r.pop("request"), "has no request"),
        (lambda r: r.update(request=[]), "has no request"),
        (lambda r: r["request"].pop("uid"), "has no uid"),
        (lambda r: r["request"].update(uid=""), "has no uid"),
        (lambda r: r["request"].update(uid=7), "has no uid"),
        (lambda r: r.update(apiVersion="admission.k8s.io/v2"), "admission.k8s.io/v2"),
        (lambda r: r.update(kind="Review"), "kind='Review'"),
    ],
)
def test_broken_envelope_is_400(client: TestClient, mutate: Any, fragment: str) -> None:
    review = admission_review()
    mutate(review)
    _assert_json_error(_post_raw(client, "/validate", json.dumps(review).encode()), 400, fragment)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/yaml", ""]
)
def test_wrong_content_type_is_415(client: TestClient, content_type: str) -> None:
    resp = _post_raw(client, "/validate", json.dumps(admission_review()).encode(), content_type)
    _assert_json_error(resp, 415, "Content-Type")


def test_content_type_with_charset_is_accepted(client: TestClient) -> None:
    resp = _post_raw(
        client, "/validate", json.dumps(admission_review()).encode(), "application/json; charset=utf-8"
    )
    assert resp.status_code == 200


def test_admission_body_over_limit_is_413() -> None:
    with make_client(max_admission_bytes=10_000) as client:
        review = admission_review()
        review["request"]["object"]["metadata"]["annotations"] = {"big": "x" * 20_000}
        _assert_json_error(_post_raw(client, "/validate", json.dumps(review).encode()), 413, "exceeds")


def test_default_limits_are_7_and_64_mib() -> None:
    from app.server.settings import Settings

    settings = Settings()
    assert settings.max_admission_bytes == 7 * 1024 * 1024
    assert settings.max_conversion_bytes == 64 * 1024 * 1024


def test_conversion_has_the_larger_limit() -> None:
    with make_client(max_admission_bytes=10_000, max_conversion_bytes=100_000) as client:
        objects = [{"apiVersion": "v1", "kind": "Nonsense", "metadata": {"name": "x" * 15_000}}]
        body = json.dumps(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "ConversionReview",
                "request": {"uid": "u", "desiredAPIVersion": "nvidia.com/v1beta1", "objects": objects},
            }
        )
        assert _post_raw(client, "/convert", body.encode()).status_code == 200
        assert _post_raw(client, "/convert", (body + " " * 100_000).encode()).status_code == 413


def test_streamed_body_over_limit_is_413() -> None:
    with make_client(max_admission_bytes=1000) as client:

        def chunks() -> Any:
            for _ in range(10):
                yield b" " * 500

        resp = client.post("/validate", content=chunks(), headers=JSON_HEADERS)
        assert resp.status_code == 413


def test_wrong_method_and_unknown_path(client: TestClient) -> None:
    assert client.get("/validate").status_code == 405
    assert client.post("/nope", content=b"{}", headers=JSON_HEADERS).status_code == 404


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (
            lambda r: r["request"]["object"].update(spec="oops"),
            "request.object.spec: expected a JSON object, got string",
        ),
        (
            lambda r: r["request"]["object"].update(metadata=[1]),
            "request.object.metadata: expected a JSON object",
        ),
        (
            lambda r: r["request"]["object"]["metadata"].update(labels={"a": 1}),
            "request.object.metadata.labels",
        ),
        (lambda r: r["request"]["object"]["metadata"].update(name=5), "request.object.metadata.name"),
        (lambda r: r["request"].update(object=None), "request.object: Required value"),
        (lambda r: r["request"].update(object="x"), "request.object: expected a JSON object, got string"),
        (lambda r: r["request"].update(operation="PATCH"), 'request.operation: Unsupported value: "PATCH"'),
        (lambda r: r["request"].pop("kind"), "request.kind"),
        (
            lambda r: r["request"].update(kind={"group": "nvidia.com"}),
            "request.kind: version and kind are required",
        ),
        (lambda r: r["request"].update(userInfo="me"), "request.userInfo"),
        (lambda r: r["request"].update(operation="UPDATE"), "request.oldObject: Required value"),
    ],
)
@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_malformed_request_is_a_200_denial_naming_the_field(
    client: TestClient, mutate: Any, fragment: str, path: str
) -> None:
    review = admission_review(uid="bad-1")
    mutate(review)
    resp = _post_raw(client, path, json.dumps(review).encode())
    assert resp.status_code == 200, resp.text
    out = resp.json()["response"]
    assert out["uid"] == "bad-1"
    assert out["allowed"] is False
    assert out["status"]["code"] == 400
    assert fragment in out["status"]["message"]


def test_delete_with_null_object_is_allowed(client: TestClient) -> None:
    review = admission_review(operation="DELETE")
    review["request"]["oldObject"] = review["request"]["object"]
    review["request"]["object"] = None
    out = _post_raw(client, "/validate", json.dumps(review).encode()).json()["response"]
    assert out["allowed"] is True


# ------------------------------------------------------------------ property: never a 5xx

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def _reviewish() -> st.SearchStrategy[Any]:
    request = st.fixed_dictionaries(
        {},
        optional={
            "uid": st.one_of(st.text(max_size=5), json_values),
            "kind": st.one_of(
                json_values,
                st.fixed_dictionaries(
                    {
                        "group": st.sampled_from(["nvidia.com", "", 1]),
                        "version": st.sampled_from(["v1alpha1", "v1beta1", "v1", None]),
                        "kind": st.sampled_from(
                            [
                                "DynamoGraphDeployment",
                                "DynamoModel",
                                "Pod",
                                "DynamoGraphDeploymentRequest",
                                "X",
                            ]
                        ),
                    }
                ),
            ),
            "operation": st.one_of(st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]), json_values),
            "object": json_values,
            "oldObject": json_values,
            "userInfo": json_values,
            "desiredAPIVersion": st.sampled_from(["nvidia.com/v1beta1", "nvidia.com/v1alpha1", "x"]),
            "objects": st.lists(json_values, max_size=3) | json_values,
            "requestKind": json_values,
            "subResource": json_values,
            "dryRun": json_values,
        },
    )
    return st.fixed_dictionaries(
        {
            "apiVersion": st.sampled_from(
                ["admission.k8s.io/v1", "admission.k8s.io/v1beta1", "apiextensions.k8s.io/v1", "v1"]
            ),
            "kind": st.sampled_from(["AdmissionReview", "ConversionReview", "Other"]),
            "request": st.one_of(request, json_values),
        }
    )


_fuzz_client = make_client()


@given(
    body=st.one_of(
        st.binary(max_size=64),
        json_values.map(lambda v: json.dumps(v).encode()),
        _reviewish().map(lambda v: json.dumps(v).encode()),
    ),
    path=st.sampled_from(
        [
            "/validate",
            "/mutate",
            "/convert",
            "/mutate-core-v1-pod-checkpoint-restore",
            "/validate/nvidia.com/v1beta1/dynamographdeployments",
        ]
    ),
)
def test_random_bodies_never_produce_a_5xx(body: bytes, path: str) -> None:
    resp = _post_raw(_fuzz_client, path, body)
    assert resp.status_code in (200, 400), resp.text
    doc = resp.json()
    if resp.status_code == 200:
        assert doc["kind"] in ("AdmissionReview", "ConversionReview")
        assert isinstance(doc["response"]["uid"], str) and doc["response"]["uid"]
        if doc["kind"] == "AdmissionReview":
            assert isinstance(doc["response"]["allowed"], bool)
            if not doc["response"]["allowed"]:
                assert doc["response"]["status"]["code"] >= 400
        else:
            assert doc["response"]["result"]["status"] in ("Success", "Failure")
    else:
        assert doc["error"]


def _nesting(node: Any) -> int:
    """Levels of containers from ``node`` down (``node`` counts as one, an empty container too)."""
    levels, level = 0, [node]
    while level:
        levels += 1
        level = [
            c
            for n in level
            for c in (n.values() if isinstance(n, dict) else n)
            if isinstance(c, (dict, list))
        ]
    return levels


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=40,
)


@given(
    doc=st.one_of(
        st.lists(_json_values, max_size=3), st.dictionaries(st.text(max_size=2), _json_values, max_size=3)
    ),
    budget=st.integers(min_value=1, max_value=8),
)
def test_depth_check_counts_nesting_levels(doc: Any, budget: int) -> None:
    assert _within(doc, budget) is (_nesting(doc) <= budget)


def _nested(depth: int, innermost: Any, as_dict: bool) -> Any:
    node = innermost
    for level in range(depth):
        node = {f"k{level}": node} if as_dict and level % 2 else [node]
    return node


def _refused(doc: Any) -> bool:
    try:
        check_depth(doc)
    except BadRequest as exc:
        assert exc.message == f"JSON nesting deeper than {MAX_DEPTH} levels"
        return True
    return False


@pytest.mark.parametrize("as_dict", [False, True])
@pytest.mark.parametrize("innermost", [0, "text", [], {}, [1, [2]], {"a": {}}])
@pytest.mark.parametrize(
    "depth", [1, MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 300, 600]
)
def test_depth_check_refuses_exactly_what_the_walk_refuses(depth: int, innermost: Any, as_dict: bool) -> None:
    # The check runs on orjson's encoder, padded to MAX_DEPTH; the plain walk is its definition.
    doc = _nested(depth, innermost, as_dict)
    assert _refused(doc) is (_nesting(doc) > MAX_DEPTH) is (not _within(doc, MAX_DEPTH))


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH + 1])
def test_depth_check_of_values_the_encoder_refuses(depth: int) -> None:
    # Not from orjson.loads, but the check still answers by the walk (2**70 is no 64-bit int).
    doc = _nested(depth - 1, [2**70], as_dict=True)
    assert _refused(doc) is (depth > MAX_DEPTH)


def test_depth_check_on_a_worker_thread() -> None:
    # Each thread pads with its own lists: a large review is checked on a worker thread.
    with ThreadPoolExecutor(2) as pool:
        results = list(
            pool.map(_refused, [_nested(d, 0, False) for d in range(MAX_DEPTH - 20, MAX_DEPTH + 20)] * 10)
        )
    assert results == [d > MAX_DEPTH for d in range(MAX_DEPTH - 20, MAX_DEPTH + 20)] * 10


@given(
    doc=st.one_of(
        st.lists(_json_values, max_size=3), st.dictionaries(st.text(max_size=2), _json_values, max_size=3)
    ),
    depth=st.integers(min_value=MAX_DEPTH - 8, max_value=MAX_DEPTH + 2),
)
def test_depth_check_of_any_document(doc: Any, depth: int) -> None:
    wrapped = _nested(depth - _nesting(doc) if depth > _nesting(doc) else 0, doc, as_dict=False)
    assert _refused(wrapped) is (_nesting(wrapped) > MAX_DEPTH)


@pytest.mark.parametrize("as_dict", [False, True])
@pytest.mark.parametrize("depth", [1, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 300])
@pytest.mark.parametrize("padding", ["", "[{" * 40, "x" * 3_000, "x" * 5_000, "x" * 70_000])
def test_parsing_refuses_exactly_the_deep_documents(as_dict: bool, depth: int, padding: str) -> None:
    # Brackets in a string count toward the quick count, not the depth; a large body is checked
    # without counting.
    body = json.dumps({"pad": padding, "doc": _nested(depth - 1, 0, as_dict)}).encode()
    try:
        parse_json(body)
    except BadRequest as exc:
        assert exc.message == f"JSON nesting deeper than {MAX_DEPTH} levels"
        refused = True
    else:
        refused = False
    assert refused is (depth > MAX_DEPTH)


@given(
    body=st.one_of(
        st.binary(max_size=400),
        st.lists(st.sampled_from([b"{", b"[", b"}", b"]", b'"', b"a", b"\xff", b"\x00"]), max_size=300).map(
            b"".join
        ),
    )
)
def test_the_quick_count_counts_every_opening_bracket(body: bytes) -> None:
    assert _few_brackets(body) is (body.count(b"{") + body.count(b"[") <= MAX_DEPTH)
