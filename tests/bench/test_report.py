"""The benchmark's figures from closed-loop rounds: each server's median round, and each ratio the
median of the rounds' ratios (a round beside the same round of the other server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import combine_rounds
from bench.report import build_rows, paired_ratio, report
from tests.bench.helpers import results_meta


def _round(rps: float, cpu: float, ok: int = 100, errors: int = 0) -> dict[str, Any]:
    return {
        "rps": rps,
        "p50_ms": cpu * 10,
        "p99_ms": cpu * 20,
        "cpu_ms_per_request": cpu,
        "ok": ok,
        "errors": errors,
    }


def test_a_server_s_figures_are_its_median_round_and_its_totals() -> None:
    got = combine_rounds([_round(100, 0.3), _round(300, 0.1, errors=1), _round(200, 0.2, ok=50)])
    assert (got["rps"], got["cpu_ms_per_request"], got["p50_ms"], got["p99_ms"]) == (200, 0.2, 2.0, 4.0)
    assert (got["ok"], got["errors"], len(got["rounds"])) == (250, 1, 3)


def test_ratios_pair_each_round_with_the_same_round() -> None:
    # The machine is twice as slow in the second round, for both servers alike.
    web = combine_rounds([_round(50, 0.2), _round(25, 0.4), _round(50, 0.2)])
    echo = combine_rounds([_round(100, 0.1), _round(50, 0.2), _round(100, 0.1)])
    assert paired_ratio(echo, web, "cpu_ms_per_request") == pytest.approx(0.5)
    assert paired_ratio(web, echo, "rps") == pytest.approx(0.5)
    # A burst that hits the webhook's round alone moves the median ratio by one round at most.
    web = combine_rounds([_round(50, 0.2), _round(10, 1.0), _round(50, 0.2)])
    assert paired_ratio(echo, web, "cpu_ms_per_request") == pytest.approx(0.5)
    # Without rounds: the whole runs' ratio.
    assert paired_ratio({"rps": 30.0}, {"rps": 60.0}, "rps") == 0.5


def test_rows_use_the_paired_ratios() -> None:
    web = combine_rounds([_round(50, 0.2), _round(25, 0.4), _round(40, 0.25)])
    echo = combine_rounds([_round(100, 0.1), _round(50, 0.2), _round(100, 0.1)])
    floor = combine_rounds([_round(80, 0.125), _round(40, 0.25), _round(80, 0.125)])
    results: dict[str, Any] = {
        "scenarios": {
            "mutate": {
                "webhook": {"closed": web, "open": {"p50_ms": 1.0, "p99_ms": 2.0, "errors": 0}},
                "echo": {"closed": echo, "open": {"p50_ms": 1.0, "p99_ms": 2.0, "errors": 0}},
                "floor": {"closed": floor},
            }
        }
    }
    (row,) = build_rows(results)
    assert row["cpu_ratio"] == pytest.approx(0.5)  # rounds: 0.5, 0.5, 0.4
    assert row["rps_ratio"] == pytest.approx(0.5)  # rounds: 0.5, 0.5, 0.4
    assert row["floor_ratio"] == pytest.approx(0.8)
    assert row["cpu_ms"] == 0.25 and row["echo_cpu_ms"] == 0.1


def test_the_whole_machine_is_reported_beside_the_per_core_figure(tmp_path: Path) -> None:
    """A scenario measured on the whole machine has its 2-CPU throughput in the main table beside the
    per-core one, with the paired scaling, and its own section; the others leave the cell empty."""
    web = combine_rounds([_round(100, 0.2), _round(50, 0.4), _round(100, 0.2)])
    echo = combine_rounds([_round(200, 0.1), _round(100, 0.2), _round(200, 0.1)])
    latency = {"p50_ms": 1.0, "p99_ms": 2.0, "errors": 0}
    # Rounds of the two-worker webhook beside the pinned one's: 1.8, 1.6 and 1.9 times.
    machine = {
        "per_core": combine_rounds([_round(100, 0.2), _round(50, 0.4), _round(100, 0.2)]),
        "whole": combine_rounds([_round(180, 0.22), _round(80, 0.4), _round(190, 0.21, errors=2)]),
    }
    entry = {"webhook": {"closed": web, "open": latency}, "echo": {"closed": echo, "open": latency}}
    results: dict[str, Any] = {
        "meta": results_meta(machine_seconds=61.2),
        "scenarios": {"validate-migrated": {**entry, "machine": machine}, "mutate": entry},
    }
    rows = {row["name"]: row for row in build_rows(results)}
    migrated = rows["validate-migrated"]
    assert migrated["machine_rps"] == 180 and migrated["machine_per_core_rps"] == 100
    assert migrated["machine_scaling"] == pytest.approx(1.8)
    assert migrated["machine_errors"] == 2
    assert rows["mutate"]["machine_rps"] is None
    text = report(results, list(rows.values()), tmp_path, has_chart=False)
    lines = text.split("## The whole machine", 1)[0].splitlines()
    header = next(line for line in lines if line.startswith("| scenario | webhook req/s"))
    assert header.split(" | ")[1:3] == ["webhook req/s", "2 CPUs req/s (x per core)"]
    cells = {
        line.split(" | ")[0].lstrip("| "): line.split(" | ")[1:3]
        for line in lines
        if line.startswith("| DGD")
    }
    assert cells[migrated["scenario"]] == ["100", "180 (1.80x)"]
    assert cells[rows["mutate"]["scenario"]] == ["100", ""]
    section = text.split("## The whole machine", 1)[1]
    assert "`serve --workers 2`" in section and "2 load generator processes at once, not pinned" in section
    assert "The whole-machine run took 61 s." in section
    assert f"| {migrated['scenario']} | 100 | 180 | 1.80 | 0.200 | 0.220 |" in section
    assert rows["mutate"]["scenario"] not in section.split("## Targets")[0]
