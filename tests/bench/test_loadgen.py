"""The load generator reads both kinds of HTTP/1.1 body: with a Content-Length, and chunked (as Go's
net/http sends an answer larger than its buffer, the operator's handlers among them)."""

from __future__ import annotations

import asyncio

import pytest

from bench.loadgen import read_response


def _read(raw: bytes) -> tuple[int, bytes, bool]:
    async def run() -> tuple[int, bytes, bool]:
        reader = asyncio.StreamReader()
        reader.feed_data(raw)
        reader.feed_eof()
        return await read_response(reader)

    return asyncio.run(run())


def test_a_body_with_its_length() -> None:
    assert _read(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello") == (200, b"hello", True)


def test_a_chunked_body_is_joined() -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n"
    )
    assert _read(raw) == (200, b"hello, world", False)


def test_a_chunked_body_cut_short_is_an_error() -> None:
    with pytest.raises(asyncio.IncompleteReadError):
        _read(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
