"""The benchmark of numbers past a double's range measures what it says: every shape on the path
it names, realistic objects converted and the others refused, and each row in the table."""

from __future__ import annotations

from app.server.routes import OFFLOAD_BYTES
from bench import bench_numbers, payloads
from bench.bench_numbers import REALISTIC


def test_every_shape_is_answered_on_its_path_and_tabled() -> None:
    rows = bench_numbers.measure(quick=True)
    streamed = [r for r in rows if r["path"] == "streamed"]
    assert [r["shape"] for r in streamed] == [REALISTIC, *payloads.OUT_OF_RANGE_OBJECTS]
    assert {r["shape"] for r in rows if r["path"] == "whole"} == {REALISTIC, "32 × 1e400"}
    for r in rows:
        assert r["body_mib"] * 2**20 > OFFLOAD_BYTES or r["path"] == "whole"
        assert r["answer"] == "converted" if r["shape"] == REALISTIC else r["answer"] != "converted"
        assert r["ratio"] > 0 and r["objects"] >= 1
    text = bench_numbers.table(rows)
    assert all(f"| {name} | streamed |" in text for name in payloads.OUT_OF_RANGE_OBJECTS)


def test_a_review_repeats_its_objects_to_the_size_asked() -> None:
    body, count = bench_numbers.review_of([b"{}", b"[1]"], 1000)
    assert count > 200 and 1000 < len(body) < 1200
    assert payloads.OUT_OF_RANGE_OBJECTS["32 × 1e400"].count(b"1e400") == 32
