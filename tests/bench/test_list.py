"""The LIST benchmark (bench/bench_list.py) measures what it says, against a real API server: a few
DGDs stored as v1alpha1, the service of the build this run imports converting them, every read
answered whole from a cold watch cache, its CPU time and the reviews the API server sent counted.
Without the operator's binary the benchmark says so in one line and measures the service alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.server.build import build_kind
from bench import bench_list

OBJECTS = 20


#: A real control plane, like the end-to-end suite's; the benchmark's code is Python in both builds.
@pytest.mark.e2e
@pytest.mark.one_build
@pytest.mark.timeout(600)
def test_the_reads_of_a_few_dgds_through_the_service_are_counted_and_timed() -> None:
    result = bench_list.measure((OBJECTS,), (build_kind(),), None)
    assert result["notes"] == []
    [run] = result["runs"]
    assert run["objects"] == OBJECTS
    assert run["stored_bytes_per_object"] > 1000  # the manifest, its labels and last-applied annotation
    rows = run["rows"]
    assert [row["read"] for row in rows] == list(bench_list.READS)
    for row in rows:
        assert row["webhook"] == f"service ({build_kind()})"
        assert row["items"] == OBJECTS, row
        assert row["seconds"] > 0 and row["cpu_seconds"] > 0, row
        assert row["cpu_ms_per_object"] == pytest.approx(row["cpu_seconds"] / OBJECTS * 1000, rel=0.01)
        # From a cold cache every object is converted again: the API server's count of the
        # reviews it sent and the service's count of those it answered agree.
        assert row["service_objects"] >= OBJECTS, row
        assert row["apiserver_reviews"] == row["service_reviews"] > 0, row
    table = bench_list.table(result)
    assert table.count(f"| {OBJECTS} | service ({build_kind()}) |") == len(bench_list.READS)


def test_without_the_operators_binary_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(bench_list.OPERATOR_ENV, raising=False)
    binary, why = bench_list.operator_binary(None)
    assert (
        binary is None and "\n" not in why and "--operator-webhook" in why and bench_list.OPERATOR_ENV in why
    )
    missing = tmp_path / "opdiff"
    binary, why = bench_list.operator_binary(str(missing))
    assert binary is None and str(missing) in why and "\n" not in why
    missing.write_text("#!/bin/sh\n")
    missing.chmod(0o755)
    monkeypatch.setenv(bench_list.OPERATOR_ENV, str(missing))
    assert bench_list.operator_binary(None) == (missing, "")
    assert os.access(missing, os.X_OK)


@pytest.mark.parametrize("sizes", ["ten", "0", "1000,-5"])
def test_a_size_that_is_not_a_positive_number_is_refused_in_one_line(
    sizes: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        bench_list.main(["--sizes", sizes])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("python -m bench.bench_list: error: --sizes: not a positive number of objects")
