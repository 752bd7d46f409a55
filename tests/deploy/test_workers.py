"""The worker count of a pod comes from its CPU limit through the cgroup: deploy/ and the chart set
no count, and for the CPU limit of each, the cgroup files the kubelet writes give the service the
figure the downward API would (``limits.cpu``, divisor 1: rounded up), as many as the memory
limit holds (docs/operations.md "Limits")."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from app.server.budget import default_budget
from app.server.cpus import default_workers
from gocompat.quantity import parse_quantity
from tests.deploy.chart import CHART, one, render
from tests.deploy.manifests import OVERLAYS, ROOT, Obj, build

MiB = 1024 * 1024
#: The CFS period the kubelet sets (µs), and the least quota it writes (µs).
PERIOD_US = 100_000
MIN_QUOTA_US = 1_000


def amount(quantity: str) -> Fraction:
    parsed = parse_quantity(quantity)
    return Fraction(parsed.unscaled) * Fraction(10) ** parsed.exp10


def downward_api_cpus(limit: str) -> int:
    """What ``resourceFieldRef: {resource: limits.cpu, divisor: "1"}`` gives: the limit in CPUs,
    rounded up."""
    return math.ceil(amount(limit))


def kubelet_cgroup(root: Path, cpu: str, memory: str, version: int) -> tuple[Path, Path]:
    """A container's cgroup as the kubelet writes it for these limits (the CFS quota is the limit's
    millicores times the period over 1000, at least 1 ms), cgroup v2 or v1, under the host's path
    as ``/proc/self/cgroup`` names it; returns (cgroup root, that file)."""
    quota = max(int(amount(cpu) * 1000) * PERIOD_US // 1000, MIN_QUOTA_US)
    path = "kubepods.slice/kubepods-burstable.slice/pod1/cri-containerd-1.scope"
    proc = root / "proc-self-cgroup"
    if version == 2:
        directory = root / "cgroup" / path
        directory.mkdir(parents=True)
        (directory / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
        # The memory limit as the container sees it (the cgroup namespace's root).
        (root / "cgroup" / "memory.max").write_text(f"{int(amount(memory))}\n")
        proc.write_text(f"0::/{path}\n")
    else:
        # No cgroup namespace: the container's own cgroup is mounted at the controller's root.
        (root / "cgroup" / "cpu,cpuacct").mkdir(parents=True)
        (root / "cgroup" / "cpu,cpuacct" / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        (root / "cgroup" / "cpu,cpuacct" / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
        (root / "cgroup" / "memory").mkdir()
        (root / "cgroup" / "memory" / "memory.limit_in_bytes").write_text(f"{int(amount(memory))}\n")
        proc.write_text(f"4:cpu,cpuacct:/{path}\n3:memory:/{path}\n")
    return root / "cgroup", proc


def _container(objects: list[Obj]) -> Obj:
    container: Obj = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    return container


def _sources() -> dict[str, Obj]:
    sources = {f"deploy/overlays/{o}": build(o).container for o in OVERLAYS}
    sources["the chart"] = _container(render())
    return sources


def test_no_manifest_sets_a_worker_count() -> None:
    for where, container in _sources().items():
        assert "DYNAMO_WEBHOOK_WORKERS" not in [v["name"] for v in container.get("env", [])], where
        assert not any(str(arg).startswith("--workers") for arg in container.get("args", [])), where


@pytest.mark.parametrize("version", [1, 2])
def test_the_cpu_limit_of_each_gives_the_downward_api_figure(tmp_path: Path, version: int) -> None:
    for n, (where, container) in enumerate(_sources().items()):
        limits = container["resources"]["limits"]
        root, proc = kubelet_cgroup(tmp_path / str(n), str(limits["cpu"]), str(limits["memory"]), version)
        assert default_workers(root, proc) == downward_api_cpus(str(limits["cpu"])) == 1, where


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize(
    ("cpu", "workers"), [("100m", 1), ("1", 1), ("1500m", 2), ("2", 2), ("2.5", 3), ("4", 4)]
)
def test_a_chart_cpu_limit_sets_the_workers(tmp_path: Path, version: int, cpu: str, workers: int) -> None:
    """Each CPU limit, rendered by the chart with the memory values.yaml asks for it (96Mi + N x
    256Mi), runs the downward API's count of workers, each with the 1-CPU pod's 128 MiB budget."""
    memory = "256Mi" if workers == 1 else f"{96 + workers * 256}Mi"
    limits = _container(render(f"resources.limits.cpu={cpu}", f"resources.limits.memory={memory}"))[
        "resources"
    ]["limits"]
    assert (str(limits["cpu"]), limits["memory"]) == (cpu, memory)
    root, proc = kubelet_cgroup(tmp_path, cpu, memory, version)
    assert default_workers(root, proc) == downward_api_cpus(cpu) == workers
    assert default_budget(workers, int(amount(memory))) == 128 * MiB


@pytest.mark.parametrize(("memory", "workers"), [("256Mi", 1), ("415Mi", 1), ("416Mi", 2), ("608Mi", 2)])
def test_the_memory_limit_holds_the_workers_back(tmp_path: Path, memory: str, workers: int) -> None:
    root, proc = kubelet_cgroup(tmp_path, "2", memory, 2)
    assert default_workers(root, proc) == workers


def test_the_sizing_is_stated_where_the_limits_are_set() -> None:
    for path in (CHART / "values.yaml", ROOT / "deploy" / "base" / "deployment.yaml"):
        text = " ".join(line.strip().lstrip("#").strip() for line in path.read_text().splitlines())
        assert "For N CPUs give 96Mi + N x 256Mi of memory (2 CPUs: 608Mi)" in text, path
    operations = " ".join((ROOT / "docs" / "operations.md").read_text().split())
    assert (
        "(2 CPUs: 608Mi); a smaller limit runs fewer workers (2 CPUs under 416Mi: one process)" in operations
    )
