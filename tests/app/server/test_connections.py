"""The connection watch in one event loop: the allocator's free memory is handed back once many
connections have closed, and when the last one has (the live behaviour is in test_limits.py)."""

from __future__ import annotations

import asyncio

import pytest

from app.server import connections
from app.server.connections import ConnectionWatch, Limits


def test_memory_is_released_after_many_closes_and_when_the_last_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    releases: list[int] = []

    async def main() -> None:
        watch = ConnectionWatch(Limits(max_connections=1000), asyncio.get_running_loop())
        monkeypatch.setattr(connections.memory, "release", lambda: releases.append(watch.open()))
        for _ in range(300):  # 300 handshakes in progress
            assert watch.admit()
            watch.handshaking += 1
        watch.handshaking -= connections.RELEASE_AFTER - 1
        watch._sweep()
        assert releases == []  # fewer than RELEASE_AFTER closed
        watch.handshaking -= 1
        watch._sweep()
        assert releases == [300 - connections.RELEASE_AFTER]
        watch.handshaking = 0  # the last ones closed
        watch._sweep()
        assert releases == [300 - connections.RELEASE_AFTER, 0]
        assert watch._timer is None
        watch._sweep()  # idle: nothing more to release
        assert len(releases) == 2

    asyncio.run(main())
