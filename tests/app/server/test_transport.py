"""The coalescing transport: the writes of one event-loop turn reach the connection as one
write, in order; closing passes on what is held, aborting drops it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.server.runtime import uvicorn_config
from app.server.settings import Settings
from app.server.tls import CertReloader
from app.server.transport import JOIN_LIMIT, CoalescingHttpToolsProtocol, CoalescingTransport
from certs.dev import ensure_dev_certs


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closing = False
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closing
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = self.closed = True

    def abort(self) -> None:
        self.closing = self.aborted = True

    def get_write_buffer_size(self) -> int:
        return 7

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 9443)}.get(name, default)


async def _turn() -> None:
    await asyncio.sleep(0)


def _run(test: Any) -> None:
    asyncio.run(test())


def test_writes_of_one_turn_are_one_write_in_order() -> None:
    async def test() -> None:
        raw = FakeTransport()
        t = CoalescingTransport(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        t.write(b"")
        t.write(bytearray(b"{}"))
        assert raw.writes == []
        assert t.get_write_buffer_size() == 7 + 40
        await _turn()
        assert raw.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
        t.write(b"next")
        await _turn()
        assert raw.writes[1:] == [b"next"]

    _run(test)


def test_large_writes_are_passed_on_as_they_are_in_order() -> None:
    async def test() -> None:
        raw = FakeTransport()
        t = CoalescingTransport(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        body = b"x" * (JOIN_LIMIT + 1)
        t.writelines([b"head", body])
        await _turn()
        assert raw.writes == [b"head", body]

    _run(test)


def test_close_passes_on_what_is_held_first() -> None:
    async def test() -> None:
        raw = FakeTransport()
        t = CoalescingTransport(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"a")
        t.write(b"b")
        t.close()
        assert raw.writes == [b"ab"] and raw.closed
        await _turn()  # the scheduled flush finds nothing more
        assert raw.writes == [b"ab"]

    _run(test)


def test_abort_drops_what_is_held() -> None:
    async def test() -> None:
        raw = FakeTransport()
        t = CoalescingTransport(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"a")
        t.abort()
        await _turn()
        assert raw.writes == [] and raw.aborted

    _run(test)


def test_nothing_is_written_to_a_closing_connection() -> None:
    async def test() -> None:
        raw = FakeTransport()
        t = CoalescingTransport(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"a")
        raw.closing = True  # the peer went away in the meantime
        await _turn()
        assert raw.writes == []

    _run(test)


def test_everything_else_is_the_real_transports() -> None:
    raw = FakeTransport()
    t = CoalescingTransport(raw, asyncio.new_event_loop())  # type: ignore[arg-type]
    assert t.get_extra_info("sockname") == ("127.0.0.1", 9443)
    assert t.is_closing() is False
    raw.closing = True
    assert t.is_closing() is True
    with pytest.raises(AttributeError):
        t.no_such_method  # noqa: B018


def test_the_server_uses_the_coalescing_protocol(tmp_path: Any) -> None:
    settings = Settings(cert_dir=tmp_path)
    ensure_dev_certs(tmp_path, "dynamo-webhook", "default")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    reloader = CertReloader(cert, key)
    reloader.load()
    config = uvicorn_config(settings, object(), reloader, cert, key)
    assert config.http_protocol_class is CoalescingHttpToolsProtocol
