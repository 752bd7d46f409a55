"""Numbers past a double's range (``1e400``): valid JSON, which no Go number type decodes.

orjson refuses a document holding such a number (``number is infinity when parsed as double``),
so a review holding one would be answered as if it were not JSON at all (HTTP 400). It is JSON,
and the operator's webhook server reads the review and answers it: the typed decode of the
object fails on that field with Go's ``json: cannot unmarshal number 1e400 into Go struct field
… of type float64`` (or ``int32`` …), which controller-runtime answers inside the review, code 400.

Here a body orjson refuses for such a number is read once more, in one pass: a regular expression
splits it (:data:`_SCAN`), passing over strings and other numbers in C, at the numbers that may be
past range, which ``float`` then tells. Each number past range is stood in by a string only this
decode can make, the text is decoded once, and the stand-ins are put back as :class:`OutOfRange`
(an infinite float that keeps the literal). So the cost is a pass of the body and a decode,
whatever the numbers: trying orjson again after each one would decode the body once per number. Every other problem of the body is still orjson's, at its place
in the body: the stand-ins change nothing else. A review so decoded is marked (:class:`MarkedDict`,
by :func:`app.review.reviews.parse_json`), so that its answer looks for the numbers (and only
then: a document orjson decoded holds none); :mod:`app.review.schema` tells the typed fields with
Go's words, and :func:`first_out_of_range` finds one anywhere else. :func:`loads_checked` decodes
such a body only for its verdict, all in C, for a review that only checks the objects after the
one that failed it.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Iterable
from itertools import compress, repeat
from operator import add, is_not
from typing import Any

import orjson

#: The most such numbers one document may hold: one with more is answered as a body that is not
#: JSON (orjson's refusal of the first number past them, at its place in the body).
MAX_NUMBERS = 32
_REFUSAL = "number is infinity when parsed as double"
_WS = " \t\n\r"
#: The first piece of a document read for its numbers past range (then four times as much, …).
_WINDOW = 16 * 1024
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")

#: An exponent of 200 or more (after its ``e``).
_BIG_EXPONENT = r"\+?+0*+(?:[2-9][0-9]{2}|[1-9][0-9]{3})"
#: A number that cannot be past a double's range: an integer part of at most 99 digits and an
#: exponent under 200 (so below 10**(99 + 199), far inside the range); possessive throughout.
_SMALL = (
    r"-?+(?:0|[1-9][0-9]{0,98}+(?![0-9]))(?:\.[0-9]++)?+"
    rf"(?:[eE](?!{_BIG_EXPONENT})[+-]?+[0-9]++)?+(?![eE])"
)
#: Where a number that may be past range starts (one of 100 integer digits, or a big exponent).
_MAY_BE_PAST = rf"(?<![0-9A-Za-z.+\-\\])(?=-?+[1-9][0-9]{{99}}|[-.0-9]*+[eE]{_BIG_EXPONENT})"
#: Its first digit (sign included), and the rest of it, as a whole token, and not where a key is
#: (a string there would be read as one).
_FIRST = r"-?+(?:0(?![0-9])|[1-9])"
_REST = r"[0-9]*+(?:\.[0-9]++)?+(?:[eE][+-]?+[0-9]++)?+(?![0-9A-Za-z.+\-])(?![ \t\n\r]*+:)"
#: A string, escapes included, or one left open to the end of the text.
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)'
#: Everything but a number that may be past range: strings and other numbers whole.
_RUN = rf'(?:[^"0-9\-]++|{_STRING}|{_SMALL})*+'
#: Split by, a text is: what is between two matches (a character no JSON holds there, if any),
#: the run up to a number that may be past range (group 1), and that number (group 2; ``None`` at
#: the end). One pass in C, each character read once.
_SCAN = re.compile(rf"({_RUN})({_MAY_BE_PAST}{_FIRST}{_REST})?", re.DOTALL)
#: The same in bytes, the number as its first digit (group 2) and the rest (group 3).
_SCAN_BYTES = re.compile(rf"({_RUN})(?:{_MAY_BE_PAST}({_FIRST})({_REST}))?".encode(), re.DOTALL)
#: Split by, a body is: what is between, and of each big exponent after a digit, its ``e`` and
#: its first two digits (what follows them dropped).
_BIG_EXPONENT_BYTES = re.compile(rf"([eE])(?<=[0-9][eE])(?={_BIG_EXPONENT})(\+?+[0-9]{{2}})[0-9]++".encode())
#: Every number with a big exponent, its sign left out, wherever it stands (strings too: a count
#: of those past range is at least theirs). Only a digit after no digit or point starts one.
_BIG_EXPONENT_NUMBERS = re.compile(
    rf"[0-9](?<![0-9.][0-9])[0-9]*+(?:\.[0-9]++)?+[eE]{_BIG_EXPONENT}[0-9]*+".encode()
)
_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 100


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
    itself when that refusal is not for such a number), or its refusal of the number past
    :data:`MAX_NUMBERS` of them, at its place in the body."""
    if not refused_for_a_number(first):
        raise first
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError:
        raise first from None
    tag = f"\\u0000{secrets.token_hex(8)}:"  # in a JSON string: a NUL no body can hold unescaped
    spans = past_range(text)
    told: set[tuple[int, int]] = set()  # the spans orjson itself refused as values
    refusal = first
    # Mostly one decode. In a body that is not JSON, a span next to or past the problem may not
    # stand where a value does (the walk cannot tell): such spans are let go and the text
    # decoded again, and a number orjson refuses then is stood in as it says, as a decode that
    # stands in one refused number at a time would have: a few decodes, each stopped at the problem.
    for _ in range(2 * MAX_NUMBERS + 2):
        try:
            doc = orjson.loads(stood_in(text, spans, tag))
        except orjson.JSONDecodeError as exc:
            at = in_body(exc.pos, spans, len(tag) + 2)
            refusal = orjson.JSONDecodeError(exc.msg, text, at)
        else:
            return _restored(doc, "\x00" + tag[6:], len(spans))
        sure = [span for span in spans if span in told or (span[1] < at and text[span[1] : at].strip(_WS))]
        match = _NUMBER.match(text, at)
        if len(sure) < len(spans):
            spans = sure
        elif refused_for_a_number(refusal) and match is not None and len(spans) < MAX_NUMBERS:
            spans.append(match.span())
            told.add(match.span())
        else:
            break
    raise refusal


def past_range(text: str) -> list[tuple[int, int]]:
    """The spans of the first :data:`MAX_NUMBERS` numbers past a double's range in ``text``, in
    order. Read a growing start of the text at a time (a body that holds more than it may is
    refused at the first past them, wherever it ends); see :func:`_spans`."""
    size = _WINDOW
    while size < len(text):
        window = text[:size]
        # Only spans with more than blanks after them in the window: a number at its end may go on.
        spans = [span for span in _spans(window) if window[span[1] :].strip(_WS)]
        if len(spans) == MAX_NUMBERS:
            return spans
        size *= 4
    return _spans(text)


def _spans(text: str) -> list[tuple[int, int]]:
    """The spans of the first :data:`MAX_NUMBERS` numbers past a double's range in ``text``: split
    in C, the numbers that may be past range told by ``float`` in C, so that only those past it
    cost a step in Python."""
    parts = _SCAN.split(text)
    numbers = _numbers(parts, 2)
    sizes = list(map(abs, map(float, map(parts.__getitem__, numbers))))
    spans: list[tuple[int, int]] = []
    offset = counted = 0  # the length of parts[:counted]
    at = -1
    while len(spans) < MAX_NUMBERS:
        try:
            at = sizes.index(math.inf, at + 1)
        except ValueError:
            break
        index = numbers[at]
        offset += sum(map(len, filter(None, parts[counted:index])))
        spans.append((offset, offset + len(parts[index])))
        counted = index
    return spans


def _numbers(parts: list[Any], groups: int) -> list[int]:
    """Where in ``parts`` (a text split by a pattern of ``groups`` groups whose second is a number
    that may be past range) those numbers are."""
    step = groups + 1
    return list(compress(range(2, len(parts), step), map(is_not, parts[2::step], repeat(None))))


def stood_in(text: str, spans: list[tuple[int, int]], tag: str) -> str:
    """``text`` with each span made a JSON string: ``tag`` and the span's text."""
    pieces: list[str] = []
    last = 0
    for a, b in spans:
        pieces += (text[last:a], '"', tag, text[a:b], '"')
        last = b
    pieces.append(text[last:])
    return "".join(pieces)


def in_body(pos: int, spans: list[tuple[int, int]], longer: int) -> int:
    """Where in the text the position ``pos`` of its :func:`stood_in` form is (each stand-in is
    ``longer`` characters longer than the number; a position inside one is the number's)."""
    shift = 0
    for a, b in spans:
        if a + shift >= pos:
            break
        if pos < b + shift + longer:
            return a
        shift += longer
    return pos - shift


def _restored(doc: Any, tag: str, count: int) -> Any:
    """``doc`` with its ``count`` stand-ins (strings that start with ``tag``) put back as
    :class:`OutOfRange`, in place; the walk stops at the last."""
    if type(doc) is str:
        return OutOfRange(doc[len(tag) :]) if doc.startswith(tag) else doc
    left = count
    stack = [doc]
    while left and stack:
        node = stack.pop()
        for key, child in node.items() if type(node) is dict else enumerate(node):
            if type(child) is str:
                if child.startswith(tag):
                    node[key] = OutOfRange(child[len(tag) :])
                    left -= 1
                    if not left:
                        break
            elif type(child) is dict or type(child) is list:
                stack.append(child)
    return doc


def loads_checked(body: bytes | bytearray | memoryview, first: orjson.JSONDecodeError) -> Any:
    """``body``, which orjson refused (``first``), decoded for its verdict only, all in C: the
    verdict is :func:`loads_with_big_numbers`'s, whose refusal this raises; the values are not
    the body's, and strings (keys too) may differ.

    Each big exponent after a digit is cut to its first two digits (``1e400`` is read as
    ``1e40``), in strings too, where it is only text (a ``\\u`` escape keeps its four). A number
    keeps its kind and its place, so the body decodes just when it would with its numbers past
    range, which are now in range: a body with at most :data:`MAX_NUMBERS` big exponents and no
    run of 100 digits is answered so. Any other is split at the numbers that may be past range,
    each stood in by its first digit (strings kept)."""
    if not refused_for_a_number(first):
        return loads_with_big_numbers(body, first)
    if bytes(body).translate(_DIGITS_AS_ZEROS).find(_LONG_RUN) < 0:
        parts = _BIG_EXPONENT_BYTES.split(body)
        if len(parts) // 3 <= MAX_NUMBERS or _past(_BIG_EXPONENT_NUMBERS.findall(body)) <= MAX_NUMBERS:
            return _checked(parts, body, first)
    parts = _SCAN_BYTES.split(body)
    numbers = _numbers(parts, 3)
    literals = map(add, map(parts.__getitem__, numbers), map(parts.__getitem__, map((1).__add__, numbers)))
    if _past(literals) > MAX_NUMBERS:
        return loads_with_big_numbers(body, first)
    del parts[3::4]
    return _checked(parts, body, first)


def _past(literals: Iterable[str | bytes]) -> int:
    """How many of ``literals`` (JSON numbers) are past a double's range, told in C."""
    return list(map(abs, map(float, literals))).count(math.inf)


def _checked(
    parts: list[bytes | None], body: bytes | bytearray | memoryview, first: orjson.JSONDecodeError
) -> Any:
    """The pieces of a body joined and decoded; when they do not decode, the body's refusal."""
    try:
        return orjson.loads(b"".join(filter(None, parts)))
    except orjson.JSONDecodeError:
        return loads_with_big_numbers(body, first)


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
