"""app.memory: glibc's arenas capped and freed memory returned; a no-op without glibc."""

from __future__ import annotations

import platform

import orjson
import pytest

from app import memory


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator only")
def test_release_returns_freed_memory_to_the_system() -> None:
    assert memory.limit_arenas()
    memory.release()
    before = _rss_kib()
    # Many small objects, as a decoded review is; freed, then handed back.
    blob = orjson.dumps([{"k": i, "v": "x" * 100} for i in range(200_000)])
    doc = orjson.loads(blob)
    grown = _rss_kib()
    del doc, blob
    memory.release()
    after = _rss_kib()
    assert grown - before > 20_000
    assert after - before < (grown - before) / 2


def test_without_glibc_both_are_no_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_libc", lambda: None)
    assert memory.limit_arenas() is False
    memory.release()
