"""Keeping a serving process's resident memory flat (glibc's allocator; a no-op elsewhere), and
its garbage collector off the review path.

Large reviews (a 500-object ConversionReview is a few MB of JSON and ten times that as Python
objects) are answered on worker threads. glibc gives each thread that allocates its own arena
and keeps freed memory in it, so every thread that ever answered a large review would hold tens
of MB for good. Two measures: at start-up the number of arenas is capped
(:func:`limit_arenas`, ``mallopt(M_ARENA_MAX)``, what ``MALLOC_ARENA_MAX`` does), and after a
large review the memory it freed is handed back to the system (:func:`release`,
``malloc_trim(0)``; from the event loop, :func:`release_in_background`).

A review is a tree of dicts and lists, freed by reference counting as soon as it is answered; it
makes no cycles for the garbage collector to find. Yet with Python's defaults the collector runs
every 700 container allocations and walks the young objects, and every tenth and hundredth run
also the older ones, which include everything imported at start-up (the Go type tables, the
schemas, the kind registry: about 100,000 objects). A 24-component DGD review allocates several
thousand containers, a 500-object ConversionReview a few hundred thousand; profiled, collection
was a quarter of the former's CPU time. :func:`tune_gc`, run once when the server is ready,
freezes the start-up objects (``gc.freeze``: never walked again) and collects the youngest
generation every ``gc_threshold`` allocations instead (setting ``--gc-threshold``). What a cycle
holds is still freed, a little later: at most that many allocations' worth.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
import threading

log = logging.getLogger("dynamo_webhook.memory")

M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 2


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt  # noqa: B018  (glibc only: musl has neither function)
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas (before threads start); False where that is not possible."""
    libc = _libc()
    if libc is None:
        return False
    ok = bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas)))
    if not ok:
        log.warning("cannot limit malloc arenas", extra={"arenas": arenas})
    return ok


def release() -> None:
    """Hand the memory the allocator holds free back to the system."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(ctypes.c_size_t(0))


_RELEASING = threading.Lock()


def release_in_background() -> None:
    """:func:`release` on a thread of its own (none when one is under way): trimming a heap that
    just held a large review takes up to hundreds of milliseconds, which the event loop must not
    spend (``malloc_trim`` runs without the interpreter's lock)."""
    if not _RELEASING.acquire(blocking=False):
        return

    def run() -> None:
        try:
            release()
        finally:
            _RELEASING.release()

    threading.Thread(target=run, name="malloc-trim", daemon=True).start()


def tune_gc(threshold: int) -> None:
    """Freeze what start-up allocated out of garbage collection and, when ``threshold`` is not 0,
    collect the youngest generation every ``threshold`` allocations (the older generations keep
    their ratios)."""
    gc.collect()
    gc.freeze()
    if threshold:
        _, older, oldest = gc.get_threshold()
        gc.set_threshold(threshold, older, oldest)
