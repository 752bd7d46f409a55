"""A ConversionReview answered from its bytes, one object at a time.

An unpaginated LIST of a large cluster in the non-storage version reaches the conversion webhook
as one review of tens of thousands of objects (up to ``max_conversion_bytes``, 64 MiB). Decoded
whole, with the converted objects beside it, such a review needs ten to fifteen times its size.
Here the body is walked without being decoded (:mod:`app.review.jsonscan`): the envelope's small
members are decoded and checked as :mod:`app.review.reviews` checks a decoded review, the span of each
of ``request.objects`` is noted, and then each object is decoded, converted and encoded on its
own (:func:`app.review.dispatch.converted_with_direction`), so that only the body, one object and the encoded answer
are held. The answer is kept as pieces of about :data:`PIECE_BYTES`, packed past
:data:`PACK_AFTER_BYTES`, and sent as they are (:attr:`app.review.dispatch.Outcome.parts`), never
joined into one copy.

The answer is the one :func:`app.review.dispatch.review_conversion` gives for the decoded body, byte for
byte (``tests/app/review/test_conversion_stream.py`` holds the two to each other), with the same
all-or-nothing rule: a failure at any object fails the whole review naming it, and no converted
object is sent. What is not a review at all is a :class:`~app.review.errors.BadRequest`, the body not
being valid JSON first among them: like a decode of the whole body, every object is still read
after a failure, so an invalid one later in the body makes the answer a 400. Only the words of
that 400 differ from a whole decode's: the byte offset of the problem instead of its line and
column.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import orjson

from app.review.dispatch import Outcome, converted_with_direction
from app.review.errors import Abandoned, BadRequest, ReviewFailure
from app.review.jsonscan import (
    VALIDATE_WHOLE,
    Buffer,
    ScanError,
    TooDeep,
    TooMany,
    decode,
    document_end,
    elements,
    loads,
    members,
    skip_ws,
    validate,
    value_end,
)
from app.review.reviews import (
    MAX_DEPTH,
    Packed,
    Part,
    check_depth,
    conversion_input,
    conversion_review,
    conversion_review_parts,
    read_conversion_review,
)

#: Encoded objects are joined into pieces of about this many bytes (a piece is sent as one body
#: message; joining more would only copy more at once).
PIECE_BYTES = 1024 * 1024
#: The most objects one review may list: far more than the 64 MiB body limit holds of objects a
#: cluster stores (a few hundred bytes at the least), and a bound on what the walk notes of them
#: (16 bytes each) whatever the limit is set to, however small the elements.
MAX_OBJECTS = 1_000_000
#: The most members the review, or its request, may hold (a review has three of each): a bound on
#: what the walk holds of them.
MAX_MEMBERS = 1000
#: How often (in objects) a review asks whether its caller still waits: a few milliseconds of work.
STOP_EVERY = 64
#: Once the pieces held come to this many bytes, each further piece is held packed
#: (:class:`~app.review.reviews.Packed`): the answer of a 64 MiB review is about 80 MiB encoded, which
#: would double what the review holds; packed, it is a tenth of that. Smaller answers do not pay
#: for packing.
PACK_AFTER_BYTES = 8 * 1024 * 1024


class _Envelope:
    """What the walk of a body found: the review with ``request.objects`` left empty, and the
    spans of those objects (``None``: the review has no list of objects to read piece by piece;
    whatever ``request.objects`` holds then is in the review as decoded)."""

    __slots__ = ("review", "spans")

    def __init__(self) -> None:
        self.review: Any = None
        self.spans: array[int] | None = None


def _small(buf: Buffer, start: int, end: int, depth: int) -> Any:
    """A member of the envelope, decoded; a container larger than :data:`VALIDATE_WHOLE` (no
    review member the answer reads is one) is only checked and stands as an empty one of its
    type, which is all a message about it says."""
    if end - start > VALIDATE_WHOLE and buf[start] in b"[{":
        validate(buf, start, end, depth)
        return [] if buf[start] == 0x5B else {}
    return loads(buf, start, end)


def _walk(buf: Buffer) -> _Envelope:
    """The envelope of ``buf`` (raises :class:`ScanError` when it is not valid JSON)."""
    found = _Envelope()
    start = skip_ws(buf, 0)
    if start >= len(buf) or buf[start] != 0x7B:  # not an object: no review (it is said so)
        end = value_end(buf, start, MAX_DEPTH)
        document_end(buf, end)
        found.review = _small(buf, start, end, MAX_DEPTH)
        return found
    request: dict[str, Any] = {}

    def walk_objects(buf: Buffer, at: int) -> int:
        if _opens(buf, at) != 0x5B:
            found.spans = None
            return value_end(buf, at, MAX_DEPTH - 2)
        found.spans = array("q")
        return elements(buf, at, OBJECT_DEPTH, found.spans, MAX_OBJECTS)

    def walk_request(buf: Buffer, at: int) -> int:
        if _opens(buf, at) != 0x7B:
            return value_end(buf, at, MAX_DEPTH - 1)
        listed, end = members(buf, at, MAX_DEPTH - 2, {"objects": walk_objects}, most=MAX_MEMBERS)
        request.clear()
        for name, (a, b) in _last(listed).items():
            # The spans noted are the last list's: the one a decoder keeps, when it is the last.
            is_list = name == "objects" and buf[a] == 0x5B
            request[name] = [] if is_list else _small(buf, a, b, MAX_DEPTH - 2)
        if "objects" not in request or request["objects"] != []:
            found.spans = None
        return end

    listed, end = members(buf, start, MAX_DEPTH - 1, {"request": walk_request}, most=MAX_MEMBERS)
    document_end(buf, end)
    review: dict[str, Any] = {}
    for name, (a, b) in _last(listed).items():
        if name == "request" and buf[a] == 0x7B:
            review[name] = request  # as the last walk (of this member) left it
        else:
            review[name] = _small(buf, a, b, MAX_DEPTH - 1)
    if not isinstance(review.get("request"), dict):
        found.spans = None
    found.review = review
    return found


def _opens(buf: Buffer, at: int) -> int:
    """The byte a value starts with (-1 past the end, which :func:`value_end` then refuses)."""
    return buf[at] if at < len(buf) else -1


def _last(listed: list[tuple[str, int, int]]) -> dict[str, tuple[int, int]]:
    """Each member name with the span of its last value (a decoder keeps the last), in the
    order of the names' first appearance, as a decoder's dict has them."""
    last: dict[str, tuple[int, int]] = {}
    for name, a, b in listed:
        last[name] = (a, b)
    return last


def _bad_json(exc: ScanError) -> BadRequest:
    if isinstance(exc, TooMany):  # request.objects, or an object of the envelope
        return BadRequest(f"request body is too large a review: {exc}", 413)
    if isinstance(exc, TooDeep):
        return BadRequest(f"JSON nesting deeper than {MAX_DEPTH} levels")
    return BadRequest(f"request body is not valid JSON: {exc}")


#: The levels an object of ``request.objects`` may span (the review, its request and the list
#: take three).
OBJECT_DEPTH = MAX_DEPTH - 3


def _object(buf: Buffer, spans: array[int], index: int, checking: bool = False) -> tuple[Any, bool]:
    """Object ``index``, and whether it holds numbers past a double's range
    (:func:`app.review.jsonscan.decode`; not JSON: the 400), checked for depth (a span the walk found by
    its guess was not; one that opens no more containers than it may nest is not counted).
    ``checking``: only the checks are wanted (such numbers may then be read as others, and the
    strings that hold their like; not in an object whose depth is checked: its keys must stay)."""
    start, end = spans[2 * index], spans[2 * index + 1]
    deep = buf.count(b"{", start, end) + buf.count(b"[", start, end) > OBJECT_DEPTH
    try:
        found = decode(buf, start, end, checking and not deep)
    except ScanError as exc:
        raise _bad_json(exc) from None
    if deep:
        check_depth([[[found[0]]]])
    return found


def _check_rest(buf: Buffer, spans: array[int] | None, first: int) -> None:
    """Every object from ``first`` on decodes (a 400 otherwise), as a whole decode would have
    found before any answer. Only checked: a review that fails at one object holding numbers past
    a double's range may hold them in every other, each checked in C."""
    if spans is None:
        return
    for index in range(first, len(spans) // 2):
        _object(buf, spans, index, checking=True)


def _piece(batch: list[bytes], held: int) -> Part:
    """Encoded objects joined into one piece, packed once ``held`` bytes are held before it."""
    piece = b",".join(batch)
    return Packed(piece) if held >= PACK_AFTER_BYTES else piece


def review_conversion_body(body: Buffer, stop: Callable[[], bool] | None = None) -> Outcome:
    """Answer one ConversionReview body. Raises ``BadRequest`` when it is no review, and
    :class:`~app.review.errors.Abandoned` when ``stop`` (asked every :data:`STOP_EVERY` objects)
    says that nobody waits for the answer any more."""
    if not body:
        raise BadRequest("request body is empty")
    try:
        found = _walk(body)
    except ScanError as exc:
        raise _bad_json(exc) from None
    spans = found.spans
    try:
        env = read_conversion_review(found.review)
    except BadRequest:
        _check_rest(body, spans, 0)
        raise
    index = decoded = 0  # the objects converted, and those decoded
    try:
        desired, listed = conversion_input(env)
        count = len(spans) // 2 if spans is not None else len(listed)
        pieces: list[Part] = []
        batch: list[bytes] = []
        batch_bytes = held = 0
        done: list[tuple[str, str]] = []
        directions: dict[tuple[str, str], tuple[str, str]] = {}
        while index < count:
            if stop is not None and index % STOP_EVERY == 0 and stop():
                raise Abandoned(f"stopped after {index} of {count} objects")
            obj, big_numbers = _object(body, spans, index) if spans is not None else (listed[index], False)
            decoded += 1
            out, direction = converted_with_direction(obj, index, desired, big_numbers)
            direction = directions.setdefault(direction, direction)  # one tuple per kind and way
            del obj
            encoded = orjson.dumps(out)
            del out
            batch.append(encoded)
            batch_bytes += len(encoded)
            done.append(direction)
            index += 1
            if batch_bytes >= PIECE_BYTES:
                pieces.append(_piece(batch, held))
                held += batch_bytes
                batch.clear()
                batch_bytes = 0
        if batch:
            pieces.append(_piece(batch, held))
    except ReviewFailure as exc:
        _check_rest(body, spans, decoded)
        return Outcome(
            conversion_review(env.api_version, env.uid, None, exc.message),
            uid=env.uid,
            allowed=False,
            code=exc.code,
            message=exc.message,
            operation="CONVERT",
        )
    return Outcome(
        b"",
        uid=env.uid,
        kind=",".join(sorted({k for k, _ in done})),
        operation="CONVERT",
        conversions=done,
        parts=conversion_review_parts(env.api_version, env.uid, pieces),
    )
