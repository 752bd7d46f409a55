"""Bodies full of numbers past a double's range: what a ConversionReview of such objects costs per
byte, beside realistic objects of the same review size.

A number past a double's range (``1e400``) is valid JSON that orjson refuses, so every object
holding one is read again by :mod:`app.review.bignumbers`; a review of many such objects, sent
on purpose, must cost about what realistic objects of its size cost. Each row is one review,
answered in process as the server answers it: one object at a time from its bytes past 256 KiB
(:func:`app.review.conversion_stream.review_conversion_body`, the *streamed* rows), decoded whole
below (:func:`app.review.reviews.parse_json` and :func:`app.review.dispatch.review_conversion`,
the *whole* rows). The realistic objects are the stored v1alpha1 DGDs of
:func:`bench.payloads.list_review` (converted: the review is allowed); the others are
:data:`bench.payloads.OUT_OF_RANGE_OBJECTS` (refused). The figure is the best of a few runs'
process CPU time (the machine is shared); "× realistic" is the row's CPU time per byte over the
realistic row's of the same path.

Run alone with ``python -m bench.bench_numbers [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from app.review.conversion_stream import review_conversion_body
from app.review.dispatch import Outcome, review_conversion
from app.review.errors import BadRequest
from app.review.reviews import parse_json
from app.server.routes import OFFLOAD_BYTES
from bench import payloads

REALISTIC = "realistic (stored DGDs)"
#: Body sizes: streamed reviews of about this much, and the largest review decoded whole.
STREAMED_BYTES = 4 * 1024 * 1024
WHOLE_BYTES = OFFLOAD_BYTES - 8192


def answer(body: bytes) -> Outcome:
    """The server's answer to a ConversionReview ``body`` (raises ``BadRequest`` as it does)."""
    if len(body) > OFFLOAD_BYTES:
        return review_conversion_body(body)
    return review_conversion(parse_json(body))


def summary(body: bytes) -> str:
    """What ``body`` is answered with, in short."""
    try:
        outcome = answer(body)
    except BadRequest as exc:
        return f"HTTP {exc.code}: {exc.message[:70]}"
    if outcome.allowed:
        return "converted"
    return f"failed in the review: {outcome.message[:70]}"


def cpu_seconds(body: bytes, runs: int) -> float:
    """The least process CPU time of ``runs`` answers to ``body``."""
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        with contextlib.suppress(BadRequest):
            answer(body)
        best = min(best, time.process_time() - start)
    return best


def shapes() -> dict[str, list[bytes]]:
    """One or a few objects of each shape, as JSON text: a review repeats them."""
    realistic = [orjson.dumps(obj) for obj in payloads.list_review(30)["request"]["objects"]]
    return {REALISTIC: realistic, **{name: [obj] for name, obj in payloads.OUT_OF_RANGE_OBJECTS.items()}}


def review_of(objects: list[bytes], size: int) -> tuple[bytes, int]:
    """A review of ``objects`` repeated to at least ``size`` bytes, and its count."""
    each = sum(len(obj) for obj in objects) / len(objects)
    count = max(1, math.ceil(size / (each + 1)))
    return payloads.encoded_conversion_review([objects[i % len(objects)] for i in range(count)]), count


def row(name: str, path: str, body: bytes, count: int, runs: int) -> dict[str, Any]:
    seconds = cpu_seconds(body, runs)
    return {
        "shape": name,
        "path": path,
        "objects": count,
        "object_bytes": len(body) / count,
        "body_mib": len(body) / 2**20,
        "us_per_object": seconds / count * 1e6,
        "mb_per_s": len(body) / seconds / 1e6 if seconds else float("inf"),
        "ns_per_byte": seconds / len(body) * 1e9,
        "answer": summary(body),
    }


def measure(quick: bool = False) -> list[dict[str, Any]]:
    """One row per shape and path (see the module's notes)."""
    runs = 1 if quick else 3
    streamed = OFFLOAD_BYTES + 64 * 1024 if quick else STREAMED_BYTES
    answer(payloads.encoded_conversion_review(shapes()[REALISTIC]))  # warm: first-use imports
    rows: list[dict[str, Any]] = []
    for name, objects in shapes().items():
        rows.append(row(name, "streamed", *review_of(objects, streamed), runs))
    for name in (REALISTIC, "32 × 1e400"):
        rows.append(row(name, "whole", *review_of(shapes()[name], WHOLE_BYTES), runs))
    for r in rows:
        base = next(b for b in rows if b["shape"] == REALISTIC and b["path"] == r["path"])
        r["ratio"] = r["ns_per_byte"] / base["ns_per_byte"]
    return rows


#: The table's columns: title, alignment, and the cell of a row.
COLUMNS: tuple[tuple[str, str, Callable[[dict[str, Any]], str]], ...] = (
    ("objects", "---", lambda r: str(r["shape"])),
    ("path", "---", lambda r: str(r["path"])),
    ("bytes each", "---:", lambda r: f"{r['object_bytes']:.0f}"),
    ("count", "---:", lambda r: str(r["objects"])),
    ("µs per object", "---:", lambda r: f"{r['us_per_object']:.1f}"),
    ("MB/s", "---:", lambda r: f"{r['mb_per_s']:.1f}"),
    ("× realistic per byte", "---:", lambda r: f"{r['ratio']:.2f}"),
    ("answer", "---", lambda r: str(r["answer"]).replace("|", "/")),
)


def table(rows: list[dict[str, Any]]) -> str:
    cells = [[title for title, _, _ in COLUMNS], [align for _, align, _ in COLUMNS]]
    cells += [[cell(r) for _, _, cell in COLUMNS] for r in rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_numbers", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument("--quick", action="store_true", help="one run of reviews just past 256 KiB")
    print(table(measure(parser.parse_args(argv).quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
