"""Reading a large JSON document piece by piece: the byte spans of its members and elements,
each decoded on its own.

A ConversionReview of a LIST in a large cluster holds tens of thousands of objects in up to
64 MiB of JSON. Decoded whole, that is ten to fifteen times the body in Python objects, all
alive at once. This scanner walks the body's structure without decoding it: it finds where each
member or element starts and ends, so that the caller decodes (``orjson``) and drops one piece
at a time, and peak memory grows with the largest piece, not with the document.

The walk is a regular expression that passes over everything but brackets and strings in C
(:data:`_SKIP`), and a loop in Python that counts the brackets it stops at: a few dozen steps for
a Kubernetes object of a few KiB. It checks the structure it walks (brackets that match,
commas, colons, no trailing bytes) and the nesting depth; what it passes over (strings, numbers,
literals, UTF-8) is checked by the decoder of the piece that holds it, or by :func:`validate`.
Every problem is a :class:`ScanError` with the byte offset it was found at.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Generator, Mapping
from typing import Any

import orjson

from app.review.bignumbers import loads_checked, loads_with_big_numbers

Buffer = bytes | bytearray

#: Whitespace between tokens (JSON's four characters).
_WS = re.compile(rb"[ \t\n\r]*")
#: A string token, escapes included (its content is checked by the decoder).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: Everything up to the next bracket, strings (and brackets in them) included.
_SKIP = re.compile(rb'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*', re.DOTALL)
#: Containers up to this many levels deep are passed over by one match of :data:`_NESTED`.
NESTED_LEVELS = 4


def _nested(levels: int) -> bytes:
    """A pattern for a container at most ``levels`` deep, brackets matched by kind. Possessive
    throughout: every alternative starts with a byte of its own, so nothing is ever tried twice,
    and a deeper container fails the match where it starts nesting too deep."""
    string = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
    inner = rb'[^"\[\]{}]++|' + string
    if levels > 1:
        inner += b"|" + _nested(levels - 1)
    return rb"\{(?:" + inner + rb")*+\}|\[(?:" + inner + rb")*+\]"


_NESTED = re.compile(b"(?:" + _nested(NESTED_LEVELS) + b")", re.DOTALL)
#: A number or literal: up to the next delimiter (checked by the decoder).
_SCALAR = re.compile(rb"[^ \t\n\r,\]}:\[{\"]+")

_OPEN = frozenset(b"[{")

#: Spans up to this many bytes are validated by decoding them whole (:func:`validate`).
VALIDATE_WHOLE = 1024 * 1024


class ScanError(ValueError):
    """The body is not valid JSON (or nests too deep): ``message`` and the byte ``offset``."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at byte {offset}")
        self.message = message
        self.offset = offset


class TooDeep(ScanError):
    """The value nests deeper than the levels it may span."""


class TooMany(ScanError):
    """An array holds more elements than its reader takes."""


def skip_ws(buf: Buffer, pos: int) -> int:
    """The offset of the first byte at or after ``pos`` that is not whitespace."""
    match = _WS.match(buf, pos)
    assert match is not None  # matches the empty string
    return match.end()


def _byte(buf: Buffer, pos: int, what: str) -> int:
    if pos >= len(buf):
        raise ScanError(f"unexpected end of data, expected {what}", pos)
    return buf[pos]


def value_end(buf: Buffer, pos: int, depth: int) -> int:
    """Where the value starting at ``pos`` (not whitespace) ends; ``depth``: how many levels of
    containers it may span (itself included)."""
    first = _byte(buf, pos, "a value")
    if first in _OPEN:
        return _container_end(buf, pos, depth)
    if first == 0x22:  # '"'
        match = _STRING.match(buf, pos)
        if match is None:
            raise ScanError("unterminated string", pos)
        return match.end()
    match = _SCALAR.match(buf, pos)
    if match is None:
        raise ScanError(f"unexpected character {chr(first)!r}", pos)
    return match.end()


def _container_end(buf: Buffer, pos: int, depth: int) -> int:
    closers = bytearray()
    skip = _SKIP.match
    whole = _NESTED.match
    size = len(buf)
    while True:
        byte = buf[pos]
        if byte == 0x5B or byte == 0x7B:  # '[' '{'
            level = len(closers)
            match = whole(buf, pos) if level + NESTED_LEVELS <= depth else None
            if match is not None:  # the whole container, in one step
                if not level:
                    return match.end()
                pos = match.end() - 1  # its closing bracket: skipped below as any closed one
            elif level >= depth:
                raise TooDeep("JSON nesting too deep", pos)
            else:
                closers.append(byte + 2)  # ']' and '}' follow '[' and '{' by two
        elif byte == 0x5D or byte == 0x7D:
            if closers.pop() != byte:
                raise ScanError(f"unexpected {chr(byte)!r}", pos)
            if not closers:
                return pos + 1
        else:  # the quote of a string that never ends
            raise ScanError("unterminated string", pos)
        match = skip(buf, pos + 1)
        assert match is not None  # matches the empty string
        pos = match.end()
        if pos >= size:
            raise ScanError("unexpected end of data in a container", pos)


def _after_item(buf: Buffer, pos: int, closer: int, what: str) -> tuple[int, bool]:
    """Past the separator after an item: (offset, whether the container ended there)."""
    pos = skip_ws(buf, pos)
    byte = _byte(buf, pos, f"',' or {chr(closer)!r}")
    if byte == 0x2C:  # ','
        return skip_ws(buf, pos + 1), False
    if byte == closer:
        return pos + 1, True
    raise ScanError(f"expected ',' or {chr(closer)!r} after {what}", pos)


Descend = Callable[[Buffer, int], int]


def each_element(buf: Buffer, pos: int, depth: int) -> Generator[tuple[int, int], None, int]:
    """The (start, end) of each element of the array starting at ``pos``, in order; returns where
    the array ends (``StopIteration.value``). ``depth``: the levels each element may span; the
    walk checks it, but not for an element found by :class:`_Like`, which the caller checks when
    it decodes the element."""
    if _byte(buf, pos, "'['") != 0x5B:
        raise ScanError("expected '['", pos)
    pos = skip_ws(buf, pos + 1)
    if _byte(buf, pos, "a value or ']'") == 0x5D:
        return pos + 1
    like = _Like(buf, pos, depth)
    while True:
        end = like.end(pos)
        if end < 0:
            end = value_end(buf, pos, depth)
        yield pos, end
        pos, done = _after_item(buf, end, 0x5D, "an array element")
        if done:
            return pos


def elements(buf: Buffer, pos: int, depth: int, spans: array[int], most: int = 0) -> int:
    """:func:`each_element`'s spans appended to ``spans`` (two entries per element); returns
    where the array ends. ``most``: when not 0, more elements than that raise :class:`TooMany`
    (``spans`` takes 16 bytes for each)."""
    walk = each_element(buf, pos, depth)
    while True:
        try:
            start, end = next(walk)
        except StopIteration as stop:
            return int(stop.value)
        spans.append(start)
        spans.append(end)
        if most and len(spans) > 2 * most:
            raise TooMany(f"more than {most} elements", start)


class _Like:
    """Where the objects of a list like its first one end, found without walking them.

    The objects of a LIST are alike: written by one encoder, each starts with the same members
    (``{"apiVersion":"nvidia.com/v1alpha1","kind":"DynamoGraphDeployment",``). So the object at
    ``pos`` most likely ends just before the next ``},`` that is followed by that same start, and
    it does exactly when its bytes up to there decode as one value (a strict prefix of a JSON
    value is never one whole value, and more than one value is never decoded as one). The
    decode is a C call over the object, where the walk would be a Python step per bracket. When
    the guess fails (no such start follows, or the bytes up to it are not one value), the caller
    walks the element (:func:`value_end`), so a guess only ever saves time."""

    __slots__ = ("_buf", "_failures", "_found", "_next", "_tail")

    def __init__(self, buf: Buffer, first: int, depth: int) -> None:
        self._buf = buf
        self._next: re.Pattern[bytes] | None = None
        self._found = -1  # where the last search found the next start (-1: not searched yet)
        self._failures = 0
        self._tail = True  # the last element not yet tried (see end())
        if buf[first] != 0x7B:
            return
        try:
            listed, _ = members(buf, first, depth - 1, stop_after=2)
        except ScanError:
            return
        if len(listed) == 2 and listed[1][2] - first <= 256:
            start = re.escape(bytes(buf[first : listed[1][2]]))
            self._next = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*" + start)

    def end(self, pos: int) -> int:
        """The end of the object at ``pos`` when the guess holds, else -1. Each search starts
        where the last one found nothing yet, guesses stop after :data:`GUESS_FAILURES` wrong
        ones in a row, and a guess is only checked on up to :data:`GUESS_BYTES`, so that the
        guesses cost at most a pass over the body and a bounded decode per element."""
        pattern = self._next
        if pattern is None or pos >= len(self._buf) or self._buf[pos] != 0x7B:
            return -1
        if self._found < pos:
            match = pattern.search(self._buf, pos)
            self._found = match.start() + 1 if match is not None else len(self._buf)
        end = self._found
        if end == len(self._buf):  # no like object follows: this is the last one, or unlike
            if not self._tail:
                return -1
            self._tail = False
            end = self._last_end(pos)
            if end < 0:
                return -1
        if end - pos > GUESS_BYTES or not _one_value(self._buf, pos, end):
            self._failures += 1
            if self._failures >= GUESS_FAILURES:
                self._next = None
            return -1
        self._failures = 0
        return end

    def _last_end(self, pos: int) -> int:
        """Where the last element of the list ends if the list closes the body's last ``]``."""
        buf = self._buf
        close = buf.rfind(b"]", pos)
        end = close
        while end > pos and buf[end - 1] in b" \t\n\r":
            end -= 1
        return end if end > pos and buf[end - 1] == 0x7D else -1


#: Wrong guesses in a row after which a list's elements are walked (:class:`_Like`).
GUESS_FAILURES = 16
#: The longest element a guess is checked on (a larger one is walked).
GUESS_BYTES = 256 * 1024


def _one_value(buf: Buffer, start: int, end: int) -> bool:
    """Whether ``buf[start:end]`` is one JSON value."""
    try:
        orjson.loads(memoryview(buf)[start:end])
    except orjson.JSONDecodeError:
        return False
    return True


def each_member(
    buf: Buffer, pos: int, depth: int, descend: Mapping[str, Descend] | None = None
) -> Generator[tuple[str, int, int], None, int]:
    """The (name, start, end) of each member's value of the object starting at ``pos``, in
    order (a repeated name each time; a decoder keeps the last); returns where the object ends
    (``StopIteration.value``). ``depth``: the levels each value may span. A member named in
    ``descend`` is walked by that function (given the buffer and the value's start, it returns
    the value's end), so that a caller reading inside a large value does not walk it twice."""
    if _byte(buf, pos, "'{'") != 0x7B:
        raise ScanError("expected '{'", pos)
    pos = skip_ws(buf, pos + 1)
    if _byte(buf, pos, "a string or '}'") == 0x7D:
        return pos + 1
    while True:
        if _byte(buf, pos, "a member name") != 0x22:
            raise ScanError("expected a member name", pos)
        match = _STRING.match(buf, pos)
        if match is None:
            raise ScanError("unterminated string", pos)
        name = loads(buf, pos, match.end())
        pos = skip_ws(buf, match.end())
        if _byte(buf, pos, "':'") != 0x3A:
            raise ScanError("expected ':' after a member name", pos)
        start = skip_ws(buf, pos + 1)
        walk = descend.get(name) if descend else None
        end = walk(buf, start) if walk is not None else value_end(buf, start, depth)
        yield name, start, end
        pos, done = _after_item(buf, end, 0x7D, "an object member")
        if done:
            return pos


def members(
    buf: Buffer,
    pos: int,
    depth: int,
    descend: Mapping[str, Descend] | None = None,
    stop_after: int = 0,
    most: int = 0,
) -> tuple[list[tuple[str, int, int]], int]:
    """:func:`each_member`'s members as a list, and where the object ends. ``stop_after``: when
    not 0, the walk stops after that many members (the end returned is then that member's end);
    ``most``: when not 0, more members than that raise :class:`TooMany`."""
    found: list[tuple[str, int, int]] = []
    walk = each_member(buf, pos, depth, descend)
    while True:
        try:
            member = next(walk)
        except StopIteration as stop:
            return found, int(stop.value)
        found.append(member)
        if len(found) == stop_after:
            return found, member[2]
        if most and len(found) > most:
            raise TooMany(f"more than {most} members", member[1])


def decode(buf: Buffer, start: int, end: int, checking: bool = False) -> tuple[Any, bool]:
    """The value in ``buf[start:end]``, decoded by orjson, numbers past a double's range
    included, and whether it holds any (:mod:`app.review.bignumbers`); a problem: :class:`ScanError`
    with orjson's words. ``checking``: the value is wanted only for whether it decodes, and those
    numbers may be read as others, and strings that hold their like changed
    (:func:`~app.review.bignumbers.loads_checked`)."""
    view = memoryview(buf)[start:end]
    try:
        return orjson.loads(view), False
    except orjson.JSONDecodeError as exc:
        try:
            return (loads_checked if checking else loads_with_big_numbers)(view, exc), True
        except orjson.JSONDecodeError as refusal:
            raise ScanError(str(refusal), start + refusal.pos) from None
    finally:
        view.release()


def loads(buf: Buffer, start: int, end: int) -> Any:
    """The value in ``buf[start:end]`` (:func:`decode`)."""
    return decode(buf, start, end)[0]


def validate(buf: Buffer, start: int, end: int, depth: int) -> None:
    """Check that ``buf[start:end]`` (one value, as found by :func:`value_end`) is valid JSON,
    without holding more than one piece of :data:`VALIDATE_WHOLE` bytes decoded at a time."""
    if end - start <= VALIDATE_WHOLE or buf[start] not in _OPEN:
        decode(buf, start, end, checking=True)
        return
    if buf[start] == 0x5B:
        for a, b in each_element(buf, start, depth - 1):
            validate(buf, a, b, depth - 1)
    else:
        for _, a, b in each_member(buf, start, depth - 1):
            validate(buf, a, b, depth - 1)


def document_end(buf: Buffer, end: int) -> None:
    """Nothing but whitespace may follow the document's value, which ends at ``end``."""
    pos = skip_ws(buf, end)
    if pos != len(buf):
        raise ScanError("trailing characters after the document", pos)
