"""bench/harness.py: servers under test and the load generator pinned to CPUs apart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import harness
from bench.harness import cpu_split, finish_loadgen, start_echo, start_loadgen, write_spec


def test_the_first_cpu_goes_to_the_servers_and_the_others_to_the_load_generator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(harness.os, "sched_getaffinity", lambda pid: {5, 2, 7})
    assert cpu_split() == ({2}, {5, 7})
    monkeypatch.setattr(harness.os, "sched_getaffinity", lambda pid: {3})
    assert cpu_split() is None  # one CPU: nothing to pin apart


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_a_server_and_the_load_generator_run_on_the_cpus_given(
    certs: tuple[Path, Path], tmp_path: Path
) -> None:
    cert_dir, ca_file = certs
    split = cpu_split()
    assert split is not None
    servers, loadgen = split
    body = tmp_path / "review.json"
    body.write_text('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}')
    spec = write_spec(
        tmp_path / "spec.json", [{"name": "r", "path": "/validate", "body_file": str(body), "status": 200}]
    )
    with start_echo(cert_dir, tmp_path, cpus=servers) as echo:
        assert os.sched_getaffinity(echo.pid) == servers
        proc = start_loadgen(
            echo.port, ca_file, spec, tmp_path / "out.json", connections=1, duration=1.0, cpus=loadgen
        )
        try:
            assert os.sched_getaffinity(proc.pid) == loadgen
        finally:
            summary = finish_loadgen(proc, tmp_path / "out.json", timeout=30)
        assert summary["ok"] > 0 and summary["errors"] == 0
