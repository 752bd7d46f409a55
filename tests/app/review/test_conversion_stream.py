"""A ConversionReview read one object at a time answers exactly as the review decoded whole:
the same bytes, or a 400 for the same bodies; and its memory grows with one object, not with
the review."""

from __future__ import annotations

import copy
import json
import tracemalloc
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.review.conversion_stream import PIECE_BYTES, STOP_EVERY, review_conversion_body
from app.review.dispatch import Outcome, review_conversion
from app.review.errors import Abandoned, BadRequest
from app.review.reviews import MAX_DEPTH, parse_json
from bench import payloads
from tests.conversion.vector_helpers import load_vectors
from tests.fuzz.test_envelope import conversion_reviews

ALPHA, BETA = payloads.ALPHA, payloads.BETA


def whole(body: bytes) -> Outcome | BadRequest:
    try:
        return review_conversion(parse_json(body))
    except BadRequest as exc:
        return exc


def streamed(body: bytes) -> Outcome | BadRequest:
    try:
        return review_conversion_body(bytearray(body))
    except BadRequest as exc:
        return exc


def assert_same_answer(body: bytes) -> Outcome | BadRequest:
    expected, actual = whole(body), streamed(body)
    if isinstance(expected, BadRequest):
        assert isinstance(actual, BadRequest), (expected.message, b"".join(actual.pieces())[:300])
        assert actual.code == expected.code
        assert _reason(actual.message) == _reason(expected.message), (actual.message, expected.message)
        return actual
    assert isinstance(actual, Outcome), actual.message
    assert b"".join(actual.pieces()) == expected.body
    assert (actual.uid, actual.allowed, actual.code, actual.message) == (
        expected.uid,
        expected.allowed,
        expected.code,
        expected.message,
    )
    assert actual.conversions == expected.conversions
    assert actual.kind == expected.kind
    return actual


def _reason(message: str) -> str:
    """What a 400 says, beside its words: too deep (a whole decode past orjson's own limit of
    1024 levels says so in orjson's words, which name the depth too), not JSON, or its message."""
    if (
        message.startswith(f"JSON nesting deeper than {MAX_DEPTH} levels")
        or "depth limit exceeded" in message
    ):
        return "too deep"
    if message.startswith("request body is not valid JSON: "):
        return "not JSON"
    return message


def review(objects: list[Any], desired: str = BETA, uid: str = "c-1", **request: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects, **request},
    }


def stored_dgds(n: int, desired: str = BETA) -> list[dict[str, Any]]:
    return payloads.conversion_review(n, desired)["request"]["objects"]  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- same answers


@pytest.mark.parametrize("desired", [BETA, ALPHA])
@pytest.mark.parametrize("indent", [False, True])
def test_a_list_of_stored_objects_is_answered_alike(desired: str, indent: bool) -> None:
    body = orjson.dumps(payloads.conversion_review(120, desired), option=orjson.OPT_INDENT_2 if indent else 0)
    outcome = assert_same_answer(body)
    assert isinstance(outcome, Outcome) and len(outcome.conversions) == 120


@pytest.mark.parametrize(
    "name", ["vectors_dgd.jsonl", "vectors_dcd.jsonl", "dgdr_vectors.jsonl", "dgdsa_vectors.jsonl"]
)
def test_every_conversion_vector_in_one_review(name: str) -> None:
    vectors = load_vectors(name)
    for key in ("input", "src", "source", "in"):
        if key in vectors[0]:
            break
    else:
        pytest.skip(f"{name}: no input member in {sorted(vectors[0])}")
    for desired in (BETA, ALPHA):
        objects = [v[key] for v in vectors if isinstance(v.get(key), dict)]
        assert_same_answer(orjson.dumps(review(objects, desired)))
        for obj in objects[:40]:  # one at a time too: the last element has no like one after it
            assert_same_answer(orjson.dumps(review([obj], desired)))


def test_objects_of_several_kinds_and_unlike_starts() -> None:
    dgds = stored_dgds(6)
    dcds = payloads.alpha_dcds()[:6]
    mixed = [dgds[0], dcds[0], dgds[1], {"kind": dgds[2]["kind"], **dgds[2]}, dcds[1], dgds[3]]
    assert_same_answer(orjson.dumps(review(mixed)))
    # an object holding a list of objects that start like the list's own (two owners)
    owned = copy.deepcopy(dgds[:3])
    start = {"apiVersion": owned[0]["apiVersion"], "kind": owned[0]["kind"]}
    owned[0]["metadata"]["ownerReferences"] = [
        {**start, "name": "a", "uid": "1"},
        {**start, "name": "b", "uid": "2"},
    ]
    assert_same_answer(orjson.dumps(review(owned)))


def test_envelope_members_in_any_order_and_repeated() -> None:
    objects = stored_dgds(5)
    request = {"objects": objects, "desiredAPIVersion": BETA, "uid": "late"}
    doc = {"request": request, "kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1"}
    assert_same_answer(orjson.dumps(doc))
    text = orjson.dumps(review(objects)).decode()
    inner = text[text.index('"request":') + len('"request":') : -1]
    repeated = [
        # a later request replaces the first, whatever each holds
        text[:-1] + ',"request":{"uid":"second","desiredAPIVersion":"nvidia.com/v1alpha1","objects":[]}}',
        text[:-1] + ',"request":"gone"}',
        '{"request":"first",' + text[1:],
        '{"request":' + inner + "," + text[1:],
        # a later objects member replaces the list
        text.replace('"objects":[', '"objects":"x","objects":[', 1),
        text.replace('"objects":[', '"objects":[1,2],"objects":[', 1),
        text[:-2] + ',"objects":[]}}',
        text[:-2] + ',"objects":{}}}',
        text[:-2] + ',"desiredAPIVersion":"nvidia.com/v1alpha1"}}',
        text[:-2] + ',"uid":7}}',
    ]
    for variant in repeated:
        json.loads(variant)  # each is valid JSON
        assert_same_answer(variant.encode())


@pytest.mark.parametrize(
    "objects",
    [
        [],
        None,
        "many",
        {"a": 1},
        [1, "x", None, []],
        [{}],
        [{"apiVersion": BETA}],
    ],
)
def test_odd_object_lists(objects: Any) -> None:
    assert_same_answer(orjson.dumps(review(objects)))


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b"[]",
        b'"x"',
        b"{}",
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}',
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":[]}',
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":""}}',
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u"}}',
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","objects":[]}}',
        b'{"apiVersion":"v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"x","objects":[]}}',
    ],
)
def test_bodies_that_are_no_review(body: bytes) -> None:
    assert_same_answer(body)


def _broken(body: bytes) -> list[bytes]:
    """Ways to make a valid review body invalid JSON, at its start, middle and end."""
    middle = len(body) // 2
    variants = [
        body + b"x",
        body + b"}",
        body[:-1],
        body[:middle],
        body[: body.index(b"},{") + 2],  # cut after the comma between two objects
        body[:middle] + b"\xff" + body[middle:],
        body.replace(b'"uid":', b'"uid" ', 1),
        body.replace(b"},{", b"},,{", 1),
        body.replace(b"},{", b"}{", 1),
        body.replace(b"},{", b"],{", 1),
        body.replace(b'"objects":[', b'"objects":[,', 1),
        body[: body.rindex(b"]")] + b",]" + body[body.rindex(b"]") + 1 :],
        body.replace(b'"name":', b'"name\\x":', 1),
    ]
    assert len(set(variants)) == len(variants) and body not in variants
    return variants


def test_invalid_json_anywhere_is_a_400_even_after_a_failed_object() -> None:
    objects = stored_dgds(8)
    bad = copy.deepcopy(objects)
    bad[2]["spec"]["services"] = "not a map"  # fails its conversion (a type error)
    for doc in (review(objects), review(bad), review(objects, uid=""), review(objects, desired="")):
        body = orjson.dumps(doc)
        assert_same_answer(body)
        for broken in _broken(body):
            answer = assert_same_answer(broken)
            assert isinstance(answer, BadRequest) and answer.code == 400


def test_a_failure_names_its_object_and_sends_no_list() -> None:
    objects = stored_dgds(50)
    objects[37]["spec"]["services"] = ["not", "a", "map"]
    outcome = assert_same_answer(orjson.dumps(review(objects)))
    assert isinstance(outcome, Outcome) and not outcome.allowed
    answer = orjson.loads(b"".join(outcome.pieces()))["response"]
    assert answer["convertedObjects"] is None and answer["result"]["status"] == "Failure"
    assert "objects[37]" in answer["result"]["message"]


def nested(levels: int) -> bytes:
    """``levels`` objects, one in the other."""
    return b'{"a":' * levels + b"0" + b"}" * levels


@pytest.mark.parametrize("levels", [MAX_DEPTH - 4, MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH + 10, 5000])
def test_nesting_is_limited_as_for_a_whole_review(levels: int) -> None:
    objects = stored_dgds(3)
    for where in range(3):
        deep = copy.deepcopy(objects)
        deep[where]["spec"]["deep"] = "DEEP"
        # the object and its spec count as two levels
        assert_same_answer(orjson.dumps(review(deep)).replace(b'"DEEP"', nested(levels - 2)))
    body = orjson.dumps(review([])).replace(b'"uid":"c-1"', b'"uid":"c-1","x":' + nested(levels - 2))
    assert_same_answer(body)
    assert_same_answer(nested(levels))


@settings(max_examples=150, deadline=None)
@given(conversion_reviews(), st.data())
def test_any_conversion_document_is_answered_alike(doc: Any, data: st.DataObject) -> None:
    body = json.dumps(doc, indent=data.draw(st.sampled_from([None, 1]))).encode()
    assert_same_answer(body)
    cut = data.draw(st.integers(0, len(body)))
    noise = data.draw(st.binary(max_size=3))
    assert_same_answer(body[:cut] + noise + body[cut:])
    assert_same_answer(body[:cut])


@pytest.mark.parametrize("objects", [0, 1, 3])
def test_a_body_cut_anywhere_is_a_400(objects: int) -> None:
    body = orjson.dumps(review(stored_dgds(objects)))
    for cut in range(len(body)):
        answer = assert_same_answer(body[:cut])
        assert isinstance(answer, BadRequest) and answer.code == 400


# --------------------------------------------------------------------------- pieces and memory


def test_a_large_answer_comes_in_pieces_that_join_to_it() -> None:
    body = orjson.dumps(payloads.conversion_review(700))
    outcome = review_conversion_body(body)
    pieces = outcome.pieces()
    assert len(pieces) > 3
    assert all(len(p) < 2 * PIECE_BYTES for p in pieces)
    assert b"".join(pieces) == review_conversion(orjson.loads(body)).body


def _peak_above(fn: Any, body: bytearray) -> tuple[int, int]:
    """(peak traced bytes allocated while ``fn(body)`` ran, bytes of its answer)."""
    tracemalloc.start()
    try:
        outcome = fn(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, sum(len(p) for p in outcome.pieces())


def test_memory_grows_with_one_object_not_with_the_review() -> None:
    """Beside the answer it builds, a review read one object at a time allocates about as
    much for 2,000 objects as for 200 (decoded whole, the review would need ten times its size)."""
    small = bytearray(orjson.dumps(payloads.conversion_review(200)))
    large = bytearray(orjson.dumps(payloads.conversion_review(2000)))
    review_conversion_body(small)  # imports and caches first
    peak_small, answer_small = _peak_above(review_conversion_body, small)
    peak_large, answer_large = _peak_above(review_conversion_body, large)
    work_small, work_large = peak_small - answer_small, peak_large - answer_large
    assert work_large < work_small + 2 * 1024 * 1024, (work_small, work_large)
    assert peak_large < 1.5 * answer_large
    # decoded whole, the same review allocates many times its size
    peak_whole, _ = _peak_above(lambda b: review_conversion(parse_json(b)), large)
    assert peak_whole > 4 * len(large)


def test_a_review_listing_too_many_objects_or_members_is_a_413(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the walk notes of a body is bounded however small its elements are: a list of more
    objects than MAX_OBJECTS, or an envelope object of more members than MAX_MEMBERS, is refused."""
    from app.review import conversion_stream

    monkeypatch.setattr(conversion_stream, "MAX_OBJECTS", 50)
    monkeypatch.setattr(conversion_stream, "MAX_MEMBERS", 10)
    fine = orjson.dumps(review([1] * 50))
    assert isinstance(streamed(fine), Outcome)
    for body in (
        orjson.dumps(review([1] * 51)),
        orjson.dumps(review([], **{f"x{i}": i for i in range(10)})),
        orjson.dumps({**review([]), **{f"y{i}": i for i in range(8)}}),
    ):
        answer = streamed(body)
        assert isinstance(answer, BadRequest) and answer.code == 413
        assert answer.message.startswith("request body is too large a review: more than ")


def test_a_review_nobody_waits_for_stops_at_the_next_object() -> None:
    body = orjson.dumps(payloads.list_review(3 * STOP_EVERY))
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) == 2  # the caller leaves after the first batch of objects

    with pytest.raises(Abandoned, match=f"^stopped after {STOP_EVERY} of {3 * STOP_EVERY} objects$"):
        review_conversion_body(body, stop)
    # Asked for nothing, it answers as without the question.
    assert review_conversion_body(body, lambda: False).parts == review_conversion_body(body).parts
