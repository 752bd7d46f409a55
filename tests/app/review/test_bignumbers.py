"""A number past a double's range (``1e400``) is valid JSON: a review holding one is answered
inside the review (HTTP 200, code 400) naming the field, as the operator's typed decode refuses
it, never as a body that is not JSON."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from app.review.bignumbers import MAX_NUMBERS, OutOfRange, loads_checked, loads_with_big_numbers
from app.review.conversion_stream import review_conversion_body
from app.review.dispatch import Outcome
from app.review.errors import BadRequest
from app.review.reviews import MarkedDict, parse_json
from app.server.routes import OFFLOAD_BYTES
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


@pytest.mark.parametrize(
    "number", ["1e400", "-1e400", "1.5e309", "123456789e400", "9" * 400, "-" + "9" * 400]
)
@pytest.mark.parametrize("path", ["/validate", "/mutate"])
def test_a_typed_number_field_is_refused_in_go_s_words(client: TestClient, path: str, number: str) -> None:
    answer = post(client, path, admission_review(dgd("NUMBER"), uid="big-1"), number)
    assert answer["uid"] == "big-1" and answer["allowed"] is False
    assert answer["status"]["code"] == 400
    assert (
        answer["status"]["message"]
        == f"json: cannot unmarshal number {number} into Go struct field {REPLICAS}"
    )


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
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
        max_leaves=12,
    ),
    st.integers(0, 3),
)
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


# --------------------------------------------------------------------------- one pass, one decode

#: Numbers past a double's range, and numbers near them that are not.
PAST = [
    "1e400",
    "-1e400",
    "1.5E+0400",
    "9" * 400,
    "0.5e309",
    "1.7976931348623159e308",
    "2e99999999999999999999",
]
NEAR = ["1e300", "1e-400", "1.7976931348623157e308", "0e999", "1" + "0" * 120 + "e-50", "-0.0", "12"]


class Number:
    """A number written as it is (orjson writes none past a double's range)."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


def dump(value: Any) -> str:
    if isinstance(value, Number):
        return value.literal
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def one_number_at_a_time(text: str) -> Any:
    """The reference: orjson tried again after standing in each number it refuses, one at a time."""
    tag = "\\u0000feedfeedfeedfeed:"
    for _ in range(MAX_NUMBERS + 1):
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            match = NUMBER.match(text, exc.pos)
            if not exc.msg.startswith("number is infinity") or match is None or _ == MAX_NUMBERS:
                raise
            text = f'{text[: exc.pos]}"{tag}{match.group()}"{text[match.end() :]}'
            continue
        return normal(doc, "\x00" + tag[6:])
    raise AssertionError("unreachable")


NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def normal(value: Any, tag: str = "") -> Any:
    """``value`` with its numbers past range (or their stand-ins) as ("past", literal)."""
    if type(value) is OutOfRange:
        return ("past", value.literal)
    if tag and type(value) is str and value.startswith(tag):
        return ("past", value[len(tag) :])
    if isinstance(value, dict):
        return {k: normal(v, tag) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v, tag) for v in value]
    return value


def shape(value: Any) -> Any:
    """``value`` as a kind: what :func:`loads_checked` keeps of a body, whose verdict is all it gives."""
    return type(value).__name__ if isinstance(value, (dict, list)) else "value"


def outcome(decode: Any, text: str) -> Any:
    try:
        return decode(text)
    except orjson.JSONDecodeError as exc:
        return ("refused", exc.msg)


json_with_numbers = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([*PAST, *NEAR]).map(Number)
    | st.text(max_size=6)
    | st.sampled_from(["1e400", "a 1e400 \\", '"1e400"', "\\u0000x:1e400"]),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=40,
)
damages = st.sampled_from(["", ",", "]", "}", '"', "\\", "x", "1e400", "{", "01", "-", "e5"])


@settings(max_examples=400, deadline=None)
@given(json_with_numbers, st.data())
def test_one_pass_decodes_as_one_number_at_a_time(value: Any, data: st.DataObject) -> None:
    """The one-pass decode gives what standing in one refused number at a time gives: the same
    document, or the same refusal (now placed in the body), for damaged documents too; and the
    check gives the same verdict."""
    text = dump({"v": value, "w": [Number("1e400")]})
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(0, len(text)))
        text = text[:cut] + data.draw(damages) + text[cut + data.draw(st.integers(0, 3)) :]
    body = text.encode()
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        first = exc
    else:
        return  # the damage took the number past range away
    expected = outcome(one_number_at_a_time, text)
    found = outcome(lambda t: normal(loads_with_big_numbers(body, first)), text)
    assert found == expected
    checked = outcome(lambda t: shape(loads_checked(body, first)), text)
    refused = isinstance(expected, tuple) and expected[0] == "refused"
    assert checked == (expected if refused else shape(expected))
    if refused and expected[1].startswith("number is infinity"):
        with pytest.raises(orjson.JSONDecodeError) as caught:
            loads_with_big_numbers(body, first)
        assert NUMBER.match(text, caught.value.pos), "the refusal is placed at the number, in the body"


def test_a_refusal_is_placed_in_the_body() -> None:
    with pytest.raises(BadRequest) as caught:
        parse_json(b'{"a": [1e400, 1e400, x]}')
    assert caught.value.message.endswith("line 1 column 22 (char 21)")
    many = ("[" + ",".join(["1e400"] * (MAX_NUMBERS + 1)) + "]").encode()
    with pytest.raises(BadRequest) as caught:
        parse_json(many)
    assert caught.value.message == (
        f"request body is not valid JSON: number is infinity when parsed as double: line 1 column "
        f"{6 * MAX_NUMBERS + 2} (char {6 * MAX_NUMBERS + 1})"
    )


# --------------------------------------------------------------------------- reviews full of them

THIRTY_TWO = payloads.OUT_OF_RANGE_OBJECTS["32 × 1e400"]
IN_THE_REVIEW = "a[0]: json: cannot unmarshal number 1e400 into Go value of type float64 (objects[0])"


def large_review(objects: list[bytes]) -> bytes:
    body = payloads.encoded_conversion_review(objects)
    assert len(body) > OFFLOAD_BYTES  # read one object at a time
    return body


def test_a_large_review_of_such_objects_is_answered_in_the_review() -> None:
    outcome = review_conversion_body(large_review([THIRTY_TWO] * 2000))
    assert (outcome.allowed, outcome.message) == (False, IN_THE_REVIEW)
    answer = orjson.loads(b"".join(outcome.pieces()))["response"]
    assert answer["result"] == {"status": "Failure", "message": IN_THE_REVIEW}


@pytest.mark.parametrize(
    ("last", "words"),
    [
        (
            b'{"a":[' + b",".join([b"1e400"] * (MAX_NUMBERS + 1)) + b"]}",
            "number is infinity when parsed as double",
        ),
        (b'{"a":[1e400,x]}', "unexpected character"),
        (b'{"a":[1e400,"1e400\\q"]}', "invalid escaped sequence in string"),
    ],
)
def test_a_later_object_that_is_not_json_makes_it_a_400(last: bytes, words: str) -> None:
    """The objects after the one that fails the review are only checked (their numbers read as
    others), with the verdict a decode gives: one more number than an object may hold, or
    anything else wrong, is a body that is not JSON."""
    with pytest.raises(BadRequest) as caught:
        review_conversion_body(large_review([THIRTY_TWO] * 2000 + [last]))
    assert caught.value.code == 400
    assert caught.value.message.startswith(f"request body is not valid JSON: {words}")


def test_numbers_in_strings_and_near_the_range_are_left_alone() -> None:
    near = b'{"a":["1e400 \\" 1e400",1e300,1.7976931348623157e308,1e-400,' + b"1" + b"0" * 300 + b"e-300]}"
    outcome = review_conversion_body(large_review([THIRTY_TWO, *[near] * 2000]))
    assert (outcome.allowed, outcome.message) == (False, IN_THE_REVIEW)
    doc = parse_json(b'{"x":' + near + b',"y":1e400}')
    assert doc["x"]["a"] == ['1e400 " 1e400', 1e300, 1.7976931348623157e308, 0.0, 1.0]
    assert doc["y"].literal == "1e400"


@pytest.mark.parametrize("objects", [3, 150])
def test_an_untyped_field_fails_the_review_the_same_way_read_whole_or_not(objects: int) -> None:
    listed = [orjson.dumps(obj) for obj in payloads.list_review(objects)["request"]["objects"]]
    listed[1] = listed[1][:-1] + b',"extra":{"x":[1,' + b",".join([b"-1e400"] * 31) + b"]}}"
    outcome = assert_same_answer(payloads.encoded_conversion_review(listed))
    assert isinstance(outcome, Outcome) and not outcome.allowed
    assert outcome.message.startswith(
        "extra.x[1]: json: cannot unmarshal number -1e400 into Go value of type float64"
    )


@pytest.mark.parametrize("shift", [-12, -7, -4, -2, -1, 0, 1, 3, 6, 5000])
@pytest.mark.parametrize("count", [MAX_NUMBERS, MAX_NUMBERS + 1])
@pytest.mark.parametrize("last", ["1e400", "1e400 :", "1e400x", "1e4000000"])
def test_a_long_document_is_read_a_piece_at_a_time_as_a_whole(shift: int, count: int, last: str) -> None:
    """Numbers across the end of the first piece read (16 KiB), a key's colon past it, more than
    may be: the same as one number at a time."""
    pad = 16 * 1024 - 6 * count - 10 + shift
    text = f'{{"a":["{"x" * pad}",' + "1e400," * (count - 1) + f"{last}]}}"
    with pytest.raises(orjson.JSONDecodeError) as caught:
        orjson.loads(text)
    found = outcome(lambda t: normal(loads_with_big_numbers(t.encode(), caught.value)), text)
    assert found == outcome(one_number_at_a_time, text)
