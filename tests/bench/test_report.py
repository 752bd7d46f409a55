"""The benchmark's figures from closed-loop rounds: each server's median round, and each ratio the
median of the rounds' ratios (a round beside the same round of the other server)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.__main__ import combine_rounds
from bench.report import build_rows, paired_ratio


def _round(rps: float, cpu: float, ok: int = 100, errors: int = 0) -> dict[str, Any]:
    return {"rps": rps, "p50_ms": cpu * 10, "p99_ms": cpu * 20, "cpu_ms_per_request": cpu, "ok": ok, "errors": errors}


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
