"""A number past a double's range (``1e400``) is valid JSON: a review holding one is answered
inside the review (HTTP 200, code 400) naming the field, as the operator's typed decode refuses
it, never as a body that is not JSON."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from app.review.bignumbers import MAX_NUMBERS, OutOfRange, loads_with_big_numbers
from app.review.errors import BadRequest
from app.review.reviews import MarkedDict, parse_json
from bench import payloads
from tests.app.conftest import JSON_HEADERS, admission_review, example
from tests.app.review.test_conversion_stream import assert_same_answer, review

REPLICAS = "DynamoComponentDeploymentSharedSpec.spec.components.replicas of type int32"
PLACEHOLDER = '"NUMBER"'


def dgd(replicas: Any = 1) -> dict[str, Any]:
    obj = example("admission/dgd-v1beta1-create.json")["request"]["object"]
    obj["spec"]["components"][0]["replicas"] = replicas
    return obj  # type: ignore[no-any-return]


def post(client: TestClient, path: str, doc: Any, number: str) -> Any:
    body = json.dumps(doc).replace(PLACEHOLDER, number, 1)
    response = client.post(path, content=body.encode(), headers=JSON_HEADERS)
    assert response.status_code == 200, response.text
    return response.json()["response"]


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.5e309", "123456789e400", "9" * 400, "-" + "9" * 400])
@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_a_typed_number_field_is_refused_in_go_s_words(client: TestClient, path: str, number: str) -> None:
    answer = post(client, path, admission_review(dgd("NUMBER"), uid="big-1"), number)
    assert answer["uid"] == "big-1" and answer["allowed"] is False
    assert answer["status"]["code"] == 400
    assert answer["status"]["message"] == f"json: cannot unmarshal number {number} into Go struct field {REPLICAS}"


def test_an_untyped_field_is_refused_naming_it(client: TestClient) -> None:
    review_doc = example("admission/dgdr-v1beta1-create.json")
    review_doc["request"]["object"]["spec"].setdefault("overrides", {})["dgd"] = {"spec": {"x": ["NUMBER"]}}
    answer = post(client, "/validate", review_doc, "1e400")
    assert answer["allowed"] is False and answer["status"]["code"] == 400
    assert answer["status"]["message"] == (
        "request.object.spec.overrides.dgd.spec.x[0]: json: cannot unmarshal number 1e400 into Go value of type float64"
    )


def test_a_string_field_is_refused_as_any_number_would_be(client: TestClient) -> None:
    obj = dgd()
    obj["spec"]["components"][0]["name"] = "NUMBER"
    plain = post(client, "/validate", admission_review(obj), "7.5")
    big = post(client, "/validate", admission_review(obj), "7e400")
    assert big["status"] == plain["status"] and big["status"]["code"] == 400


def test_the_old_object_of_a_delete_is_refused_too(client: TestClient) -> None:
    doc = admission_review(None, operation="DELETE", old=dgd("NUMBER"))
    doc["request"]["object"] = None
    answer = post(client, "/validate", doc, "1e400")
    assert answer["allowed"] is False and answer["status"]["code"] == 400
    assert "1e400" in answer["status"]["message"]


def test_in_the_envelope_it_is_read_as_a_number(client: TestClient) -> None:
    body = json.dumps(admission_review(dgd())).replace('"uid": "uid-1"', '"uid": 1e400')
    response = client.post("/validate", content=body.encode(), headers=JSON_HEADERS)
    assert response.status_code == 400 and "no uid" in response.json()["error"]


def test_anything_else_wrong_is_still_not_json() -> None:
    base = json.dumps(admission_review(dgd("NUMBER")))
    for body in (
        base.replace(PLACEHOLDER, "1e400") + "x",
        base.replace(PLACEHOLDER, "1e400").replace('"metadata"', '"metadata\\q"'),
        base.replace(PLACEHOLDER, "1e400,"),
        base.replace(PLACEHOLDER, "[" + ",".join(["1e400"] * (MAX_NUMBERS + 1)) + "]"),
    ):
        with pytest.raises(BadRequest) as caught:
            parse_json(body.encode())
        assert caught.value.code == 400 and caught.value.message.startswith("request body is not valid JSON")


def test_a_body_holding_the_stand_in_text_keeps_it() -> None:
    text = '{"a": "\\u0000dead:1e400", "b": 1e400, "c": ["1e400", -2e999]}'
    doc = parse_json(text.encode())
    assert type(doc) is MarkedDict
    assert doc["a"] == "\x00dead:1e400" and doc["c"][0] == "1e400"
    assert type(doc["b"]) is OutOfRange and doc["b"].literal == "1e400"
    assert type(doc["c"][1]) is OutOfRange and doc["c"][1] == float("-inf")
    assert type(parse_json(b'{"a": 1e300}')) is dict


@settings(max_examples=100, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
), st.integers(0, 3))
def test_decoded_as_orjson_decodes_the_rest(value: Any, big: int) -> None:
    text = json.dumps({"v": value, "big": ["1e400"] * big}).replace('"1e400"', "1e400").encode()
    try:
        expected = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        doc = loads_with_big_numbers(text, exc)
        assert [type(n) for n in doc["big"]] == [OutOfRange] * big
        assert doc["v"] == orjson.loads(json.dumps(value))
    else:
        assert big == 0 and expected["v"] == orjson.loads(json.dumps(value))


@pytest.mark.parametrize("objects", [3, 150])
def test_a_conversion_fails_naming_the_object_and_the_field(objects: int) -> None:
    """Decoded whole (a small review) or one object at a time (a large one): the same answer."""
    listed = payloads.list_review(objects)["request"]["objects"]
    listed[1]["status"]["observedGeneration"] = "NUMBER"
    body = orjson.dumps(review(listed)).replace(PLACEHOLDER.encode(), b"1e400")
    outcome = assert_same_answer(body)
    answer = orjson.loads(b"".join(outcome.pieces()))["response"]  # type: ignore[union-attr]
    assert answer["convertedObjects"] is None
    message = answer["result"]["message"]
    assert message.startswith("json: cannot unmarshal number 1e400 into Go struct field ")
    assert message.endswith(f"(objects[1] DynamoGraphDeployment inference/{listed[1]['metadata']['name']})")
