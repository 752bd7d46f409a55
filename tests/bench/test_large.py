"""The large-review benchmark measures what it says: a fresh server per size, the answer read
whole and checked, and its rows in the report's targets and table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import bench_large
from bench.report import verdicts
from bench.scenarios import TARGETS


def test_each_size_is_answered_by_a_server_of_its_own(tmp_path: Path) -> None:
    rows = bench_large.measure((20, 300), work=tmp_path)
    assert [r["objects"] for r in rows] == [20, 300]
    small, large = rows
    assert large["body_mib"] > small["body_mib"] * 10
    for row in rows:
        assert row["seconds"] > 0 and row["cpu_seconds"] >= 0  # CPU time is counted in clock ticks
        assert row["peak_rss_mib"] >= row["idle_rss_mib"] > 0
    text = bench_large.table(rows)
    assert "| 300 |" in text and "| 20 |" in text


def _row(objects: int, seconds: float, peak: float) -> dict[str, Any]:
    return {
        "objects": objects,
        "body_mib": objects / 540,
        "answer_mib": objects / 420,
        "seconds": seconds,
        "cpu_seconds": seconds,
        "idle_rss_mib": 80.0,
        "peak_rss_mib": peak,
        "after_rss_mib": 90.0,
    }


@pytest.mark.parametrize(
    ("seconds", "peak", "met"), [(4.8, 170.0, (True, True)), (11.0, 300.0, (False, False))]
)
def test_the_largest_size_is_held_to_the_targets(seconds: float, peak: float, met: tuple[bool, bool]) -> None:
    results = {"large_reviews": [_row(1000, 0.2, 100.0), _row(33000, seconds, peak)]}
    found = [v for v in verdicts(results, []) if "33000 DGDs" in v[0]]
    assert [v[3] for v in found] == list(met)
    assert f"{TARGETS['large_review_seconds']:g} s" in found[0][1]
    assert f"{TARGETS['large_review_peak_mib']:g} MiB" in found[1][1]
