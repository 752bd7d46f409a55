"""The hostile mix's rows run and report (small reviews here; ``python -m bench.bench_hostile``
gives the figures): promised bodies and abandoned callers leave a fresh server within the pod's
limit, its write probe answered."""

from __future__ import annotations

from bench import bench_hostile


def test_rows_run_against_a_fresh_server_and_report() -> None:
    results = bench_hostile.measure(only=("bodies promised", "a caller giving up"), objects=300)
    assert [r["row"] for r in results] == [
        "bodies promised, never sent",
        "a caller giving up after 1.5 s, 5 times",
    ]
    promised, abandoned = results
    assert promised["outcome"].endswith("a conversion meanwhile: HTTP 503")
    assert abandoned["outcome"].startswith("5 callers gone after 1.5 s each")
    for r in results:
        assert r["within_limit"] and r["probes"] > 0 and r["probes_failed"] == 0, r
    text = bench_hostile.table(results)
    assert "| bodies promised, never sent | 16 promises of 64 MiB held 3 s" in text
