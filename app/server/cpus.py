"""How many CPUs this process may use: the default of ``serve --workers``.

A container's CPU limit is not what ``os.cpu_count()`` says (the node's CPUs). Kubernetes, Docker
and systemd enforce a CPU limit as a CFS bandwidth quota on the process's cgroup: cgroup v2's
``cpu.max`` (``"<quota> <period>"``, or ``"max <period>"`` for none), cgroup v1's
``cpu.cfs_quota_us`` (``-1`` for none) over ``cpu.cfs_period_us``. The quota divided by the period
is the CPUs' worth of time the cgroup may use per period; every ancestor's quota binds too, so the
smallest along the path counts. Rounded up (a 1.5-CPU limit keeps two processes busy part of the
time; the Kubernetes downward API's ``limits.cpu`` with divisor 1 rounds the same way), at least 1.

The cgroup path comes from ``/proc/self/cgroup``; the cgroup of the process is looked for under
the mount (v2: the mount itself; v1: its ``cpu`` controller's directory) at that path and each of
its parents, down to the mount's root, which is the container's own cgroup when the runtime
mounts it there (cgroup v1, or v2 without a cgroup namespace, where the path named is the host's).

Without a quota, the CPUs the scheduler lets the process run on (``os.sched_getaffinity``: a
cpuset, ``taskset``, the kubelet's static CPU manager), else ``os.cpu_count()``.

:func:`default_workers` takes the smaller of that and the workers the cgroup's memory limit holds
(:func:`app.server.budget.workers_that_fit`), so the default keeps every worker's memory budget
true.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
#: The most worker processes ``serve`` runs (the ``--workers`` setting's maximum).
MAX_WORKERS = 64
#: Where cgroup v1 mounts the cpu controller (its own directory or one shared with cpuacct).
V1_CPU_DIRS = ("cpu", "cpu,cpuacct", "cpuacct,cpu")


def parse_cpu_max(text: str) -> float | None:
    """cgroup v2 ``cpu.max``: the CPUs the quota gives, or None for ``max`` (no quota) or a text
    that is not ``<quota> <period>``."""
    fields = text.split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    return _ratio(fields[0], fields[1])


def parse_cfs(quota_text: str, period_text: str) -> float | None:
    """cgroup v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``: the CPUs the quota gives, or None
    for ``-1`` (no quota) or a text that is not a number."""
    return _ratio(quota_text.strip(), period_text.strip())


def _ratio(quota: str, period: str) -> float | None:
    if not (quota.isdigit() and period.isdigit()) or int(period) == 0 or int(quota) == 0:
        return None
    return int(quota) / int(period)


def cgroup_paths(text: str) -> tuple[str | None, str | None]:
    """The process's cgroup paths from ``/proc/self/cgroup`` (``<id>:<controllers>:<path>`` lines):
    the v2 one (id 0, no controllers) and the v1 one of the cpu controller, each None when absent."""
    v2 = v1 = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _ancestry(mount: Path, path: str) -> list[Path]:
    """The directories of ``path`` under ``mount``, deepest first, down to ``mount`` itself."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    return [mount.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _smallest(quotas: list[float | None]) -> float | None:
    found = [q for q in quotas if q is not None]
    return min(found) if found else None


def quota_cpus(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """The CPUs the cgroup quota of this process gives (the smallest along its path; v2, then v1),
    or None when no quota binds it or nothing can be read."""
    v2, v1 = cgroup_paths(_read(proc_cgroup) or "")
    if v2 is not None:
        found = _smallest([parse_cpu_max(_read(d / "cpu.max") or "") for d in _ancestry(root, v2)])
        if found is not None:
            return found
    if v1 is None:
        return None
    quotas: list[float | None] = []
    for name in V1_CPU_DIRS:
        for d in _ancestry(root / name, v1):
            quota, period = _read(d / "cpu.cfs_quota_us"), _read(d / "cpu.cfs_period_us")
            if quota is not None and period is not None:
                quotas.append(parse_cfs(quota, period))
    return _smallest(quotas)


def whole_cpus(quota: float) -> int:
    """A quota in CPUs, rounded up, at least 1."""
    return max(1, math.ceil(round(quota, 6)))


def affinity_cpus() -> int | None:
    """The CPUs the scheduler lets this process run on, or None where that cannot be asked."""
    try:
        return len(os.sched_getaffinity(0)) or None
    except (AttributeError, OSError):
        return None


def available_cpus(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """The CPUs this process may use: its cgroup quota rounded up, else its CPU affinity, else the
    machine's CPUs, at least 1."""
    quota = quota_cpus(root, proc_cgroup)
    if quota is not None:
        return whole_cpus(quota)
    return affinity_cpus() or os.cpu_count() or 1


def default_workers(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """``serve``'s default worker count: the CPUs this process may use, as many as the cgroup's
    memory limit holds (at most :data:`MAX_WORKERS`)."""
    from app.server.budget import cgroup_limit, workers_that_fit

    fit = workers_that_fit(cgroup_limit((root / "memory.max", root / "memory" / "memory.limit_in_bytes")))
    return max(1, min(available_cpus(root, proc_cgroup), MAX_WORKERS if fit is None else fit, MAX_WORKERS))
