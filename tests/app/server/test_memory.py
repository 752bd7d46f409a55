"""app.server.memory: glibc's arenas capped and freed memory returned (a no-op without glibc); the
garbage collector tuned for a server."""

from __future__ import annotations

import gc
import platform
import weakref
from collections.abc import Iterator

import orjson
import pytest

from app.server import memory


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


@pytest.fixture
def restore_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.mark.usefixtures("restore_gc")
def test_tune_gc_freezes_start_up_objects_and_sets_the_youngest_threshold() -> None:
    _, older, oldest = gc.get_threshold()
    memory.tune_gc(12_345)
    assert gc.get_threshold() == (12_345, older, oldest)
    assert gc.get_freeze_count() > 10_000  # the modules, tables and registry imported so far
    assert gc.get_count()[0] < 100  # collected just before freezing


@pytest.mark.usefixtures("restore_gc")
def test_tune_gc_zero_keeps_the_threshold() -> None:
    before = gc.get_threshold()
    memory.tune_gc(0)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() > 0


@pytest.mark.usefixtures("restore_gc")
def test_cycles_are_still_collected_after_tuning() -> None:
    memory.tune_gc(1_000)

    class Node:
        peer: Node | None = None

    collected = []
    a, b = Node(), Node()
    a.peer, b.peer = b, a
    weakref.finalize(a, collected.append, "a")
    del a, b
    assert collected == []
    kept = [[] for _ in range(2_000)]  # more live container allocations than the threshold
    assert collected == ["a"]
    del kept
