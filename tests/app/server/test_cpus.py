"""app/server/cpus.py: the CPUs a process may use, from cgroup v2 and v1 files under a fake root,
and the default worker count they and the memory limit give."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.server import cpus
from app.server.budget import FLOOR, RESIDENT, SUPERVISOR, default_budget
from app.server.settings import Settings

MiB = 1024 * 1024


@pytest.mark.parametrize(
    ("text", "quota"),
    [
        ("200000 100000\n", 2.0),
        ("150000 100000", 1.5),
        ("50000 100000\n", 0.5),
        ("max 100000\n", None),
        ("", None),
        ("junk", None),
        ("100000 0", None),
        ("-1 100000", None),
    ],
)
def test_cpu_max_v2(text: str, quota: float | None) -> None:
    assert cpus.parse_cpu_max(text) == quota


@pytest.mark.parametrize(
    ("quota_text", "period_text", "quota"),
    [
        ("200000\n", "100000\n", 2.0),
        ("250000", "100000", 2.5),
        ("-1\n", "100000\n", None),
        ("x", "100000", None),
    ],
)
def test_cfs_quota_v1(quota_text: str, period_text: str, quota: float | None) -> None:
    assert cpus.parse_cfs(quota_text, period_text) == quota


@pytest.mark.parametrize(
    ("quota", "whole"), [(0.1, 1), (0.5, 1), (1.0, 1), (1.5, 2), (2.0, 2), (2.01, 3), (3.9, 4)]
)
def test_a_quota_is_rounded_up_to_at_least_one(quota: float, whole: int) -> None:
    assert cpus.whole_cpus(quota) == whole


def test_cgroup_paths_of_v2_v1_and_hybrid() -> None:
    assert cpus.cgroup_paths("0::/kubepods.slice/pod1/cri-1.scope\n") == (
        "/kubepods.slice/pod1/cri-1.scope",
        None,
    )
    v1 = "12:memory:/kubepods/pod1/c1\n4:cpu,cpuacct:/kubepods/pod1/c1\n1:name=systemd:/x\n"
    assert cpus.cgroup_paths(v1) == (None, "/kubepods/pod1/c1")
    assert cpus.cgroup_paths("3:cpuacct:/a\n1:cpu:/b\n0::/c\n") == ("/c", "/b")
    assert cpus.cgroup_paths("") == (None, None)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _cgroup(tmp_path: Path, proc_text: str, files: dict[str, str]) -> tuple[Path, Path]:
    """A fake cgroup root holding ``files`` (path under the root: text) and the process's
    ``/proc/self/cgroup``; returns (root, that file)."""
    root = tmp_path / "cgroup"
    for name, text in files.items():
        _write(root / name, text)
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(proc_text)
    return root, proc


def test_v2_quota_at_the_process_path(tmp_path: Path) -> None:
    root, proc = _cgroup(
        tmp_path,
        "0::/kubepods/pod1/c1\n",
        {
            "cpu.max": "max 100000\n",
            "kubepods/pod1/cpu.max": "max 100000\n",
            "kubepods/pod1/c1/cpu.max": "150000 100000\n",
        },
    )
    assert cpus.quota_cpus(root, proc) == 1.5
    assert cpus.available_cpus(root, proc) == 2


def test_v2_the_smallest_quota_along_the_path_binds(tmp_path: Path) -> None:
    files = {"slice/cpu.max": "100000 100000\n", "slice/svc/cpu.max": "400000 100000\n"}
    assert cpus.available_cpus(*_cgroup(tmp_path, "0::/slice/svc\n", files)) == 1


@pytest.mark.parametrize("path", ["/", "/kubepods/pod1/c1"])
def test_v2_in_a_cgroup_namespace_reads_the_mount_root(tmp_path: Path, path: str) -> None:
    """The mount's root is the container's cgroup; the path named may be the host's, not mounted."""
    assert cpus.available_cpus(*_cgroup(tmp_path, f"0::{path}\n", {"cpu.max": "200000 100000\n"})) == 2


def test_v1_quota_under_the_cpu_controller(tmp_path: Path) -> None:
    files = {"cpu,cpuacct/cpu.cfs_quota_us": "250000\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}
    root, proc = _cgroup(tmp_path, "4:cpu,cpuacct:/docker/abc\n0::/\n", files)
    assert cpus.quota_cpus(root, proc) == 2.5
    assert cpus.available_cpus(root, proc) == 3


@pytest.mark.parametrize(
    ("proc_text", "files"),
    [
        ("2:cpu:/\n", {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}),
        ("0::/\n", {"cpu.max": "max 100000\n"}),
    ],
)
def test_no_quota_falls_back_to_the_affinity(tmp_path: Path, proc_text: str, files: dict[str, str]) -> None:
    root, proc = _cgroup(tmp_path, proc_text, files)
    assert cpus.quota_cpus(root, proc) is None
    assert cpus.available_cpus(root, proc) == len(os.sched_getaffinity(0))


def test_missing_files_fall_back_to_the_affinity_then_the_cpu_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, proc = tmp_path / "none", tmp_path / "no-proc-file"
    assert cpus.quota_cpus(root, proc) is None
    assert cpus.available_cpus(root, proc) == len(os.sched_getaffinity(0))
    monkeypatch.setattr(cpus, "affinity_cpus", lambda: None)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert cpus.available_cpus(root, proc) == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert cpus.available_cpus(root, proc) == 1


def _pod(tmp_path: Path, cpu_max: str, memory_max: str) -> tuple[Path, Path]:
    return _cgroup(tmp_path, "0::/\n", {"cpu.max": cpu_max, "memory.max": memory_max})


def test_the_default_workers_are_the_cpus_when_the_memory_holds_them(tmp_path: Path) -> None:
    assert cpus.default_workers(*_pod(tmp_path, "200000 100000\n", f"{1024 * MiB}\n")) == 2
    assert cpus.default_workers(*_pod(tmp_path, "100000 100000\n", f"{1024 * MiB}\n")) == 1
    assert cpus.default_workers(*_pod(tmp_path, "400000 100000\n", "max\n")) == 4


def test_the_default_workers_are_no_more_than_the_memory_holds(tmp_path: Path) -> None:
    """A 256Mi pod with 2 CPUs serves with one process: two workers and their supervisor at rest
    would leave no budget (the default budget stays true)."""
    root, proc = _pod(tmp_path, "200000 100000\n", f"{256 * MiB}\n")
    assert cpus.default_workers(root, proc) == 1
    assert default_budget(1, 256 * MiB) + RESIDENT <= 256 * MiB
    two = SUPERVISOR + 2 * (RESIDENT + FLOOR)
    assert cpus.default_workers(*_pod(tmp_path, "200000 100000\n", f"{two}\n")) == 2
    assert cpus.default_workers(*_pod(tmp_path, "200000 100000\n", f"{two - 1}\n")) == 1


def test_the_default_is_at_most_the_settings_maximum(tmp_path: Path) -> None:
    assert cpus.default_workers(*_pod(tmp_path, "9600000 100000\n", "max\n")) == cpus.MAX_WORKERS
    assert [m.le for m in Settings.model_fields["workers"].metadata if hasattr(m, "le")] == [cpus.MAX_WORKERS]


def test_the_settings_default_is_the_default_worker_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DYNAMO_WEBHOOK_WORKERS", raising=False)
    assert Settings().workers == cpus.default_workers()
    monkeypatch.setenv("DYNAMO_WEBHOOK_WORKERS", "1")
    assert Settings().workers == 1
