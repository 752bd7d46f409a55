"""Numbers past a double's range (``1e400``): valid JSON, which no Go number type decodes.

orjson refuses a document holding such a number (``number is infinity when parsed as double``),
so a review holding one would be answered as if it were not JSON at all (HTTP 400). It is JSON,
and the operator's webhook server reads the review and answers it: the typed decode of the
object fails on that field with Go's ``json: cannot unmarshal number 1e400 into Go struct field
… of type float64`` (or ``int32`` …), which controller-runtime answers inside the review, code 400.

Here a body orjson refuses for such a number is decoded again with each of those numbers stood in
by a string only this decode can make, then put back as an :class:`OutOfRange` (an infinite float
that keeps the literal). Every other problem of the body is still orjson's: the stand-ins change
nothing else, and each is only made where orjson said the number is. A review so decoded is
marked (:class:`MarkedDict`, by :func:`app.review.reviews.parse_json`), so that its answer looks for the
numbers (and only then: a document orjson decoded holds none); :mod:`app.review.schema` tells the typed
fields with Go's words, and :func:`first_out_of_range` finds one anywhere else.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import orjson

#: The most such numbers one document may hold (each costs a decode of the document).
MAX_NUMBERS = 32
_REFUSAL = "number is infinity when parsed as double"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


class OutOfRange(float):
    """A JSON number no double holds: infinite, with the ``literal`` as it was written."""

    __slots__ = ("literal",)

    literal: str

    def __new__(cls, literal: str) -> OutOfRange:
        value = super().__new__(cls, "-inf" if literal.startswith("-") else "inf")
        value.literal = literal
        return value

    def __repr__(self) -> str:
        return self.literal


class MarkedDict(dict[str, Any]):
    """The top object of a document that holds :class:`OutOfRange` numbers."""


def refused_for_a_number(exc: orjson.JSONDecodeError) -> bool:
    return exc.msg.startswith(_REFUSAL)


def loads_with_big_numbers(body: bytes | bytearray | memoryview, first: orjson.JSONDecodeError) -> Any:
    """``body`` decoded with its numbers past a double's range as :class:`OutOfRange`; ``first``
    is orjson's refusal of it. Raises orjson's error for anything else wrong with the body (``first``
    itself when that refusal is not for such a number, or for more than :data:`MAX_NUMBERS` of
    them)."""
    if not refused_for_a_number(first):
        raise first
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError:
        raise first from None
    tag = f"\\u0000{secrets.token_hex(8)}:"  # in a JSON string: a NUL no body can hold unescaped
    exc = first
    for _ in range(MAX_NUMBERS):
        match = _NUMBER.match(text, exc.pos)
        if not refused_for_a_number(exc) or match is None:
            raise exc
        text = f'{text[: exc.pos]}"{tag}{match.group()}"{text[match.end():]}'
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError as again:
            exc = again
            continue
        return _restored(doc, "\x00" + tag[6:])
    raise exc


def _restored(value: Any, tag: str) -> Any:
    if type(value) is str:
        return OutOfRange(value[len(tag):]) if value.startswith(tag) else value
    if type(value) is dict:
        return {key: _restored(child, tag) for key, child in value.items()}
    if type(value) is list:
        return [_restored(child, tag) for child in value]
    return value


def first_out_of_range(value: Any, path: str) -> tuple[str, OutOfRange] | None:
    """The path and value of the first :class:`OutOfRange` number in ``value``, in document order."""
    if type(value) is OutOfRange:
        return path, value
    if isinstance(value, dict):
        for key, child in value.items():
            found = first_out_of_range(child, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found = first_out_of_range(child, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def out_of_range_text(path: str, number: OutOfRange) -> str:
    """What a number past range anywhere is answered with: Go's decode error for a number into
    an untyped value (``float64``), after the path of the field that holds it."""
    return f"{path}: json: cannot unmarshal number {number.literal} into Go value of type float64"
