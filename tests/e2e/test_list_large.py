"""The largest reads a cluster sends, with the service held to the memory its Deployment gets
(deploy/base/deployment.yaml's limit): 10,000 DGDs stored as v1alpha1 listed as v1beta1 without
pagination (``kubectl get --chunk-size=0``) through the real API server, and a ConversionReview
near the documented 64 MiB limit sent to the service directly (what an unpaginated LIST of tens of
thousands of objects is, in one review).

The service process is moved into a memory cgroup with that limit when the machine lets this test
make one (cgroup v1 or v2, as root), so that going past it is an OOM kill; either way its peak
resident memory (``VmHWM``, reset before each step) is read from /proc and held to the limit.
"""

from __future__ import annotations

import contextlib
import copy
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from bench import payloads
from bench.bench_large import post
from bench.harness import peak_rss_kib, status_kib
from tests.e2e.cluster import Cluster
from tests.e2e.legacy import set_storage_version, stored_versions
from tests.e2e.objects import ALPHA, BETA, namespace
from tests.e2e.pod import memory_limit
from tests.e2e.testenv import ROOT

COUNT = 10_000
#: Creating the 10,000 DGDs (the first test's setup) takes about 2 minutes here, twice that on a
#: busy machine: past pytest's 300 s default, which counts the setup in.
pytestmark = pytest.mark.timeout(900)
PLURAL = "dynamographdeployments"
SOURCE = ROOT / "examples" / "manifests" / "dgd-agg-v1alpha1.yaml"
BETA_SOURCE = ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml"
#: The API server's timeout for a webhook call (and the longest it lets a conversion take).
WEBHOOK_TIMEOUT = 30.0
#: Objects of the review near the limit (about 1.9 KiB each: 61 MiB).
LARGE_REVIEW_OBJECTS = 33_000


def peak_rss(pid: int) -> int:
    return peak_rss_kib(pid) * 1024


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the kernel's reset of VmHWM


@contextlib.contextmanager
def memory_cgroup(pid: int, limit: int) -> Iterator[str]:
    """Hold ``pid`` to ``limit`` bytes of memory in a cgroup of its own while the block runs
    (yields what it did, for the figures; nothing when cgroups cannot be made here). Where the
    kernel no longer moves a process's memory with it (cgroup v1's ``move_charge_at_immigrate``
    is gone from recent kernels), what the process holds stays charged where it was, so the new
    cgroup gets the limit less that."""
    own = Path("/proc/self/cgroup").read_text().splitlines()
    v1 = next((line.split(":", 2)[2] for line in own if line.split(":")[1] == "memory"), None)
    v2 = next((line.split(":", 2)[2] for line in own if line.startswith("0::")), None)
    made: Path | None = None
    described = ""
    try:
        if v1 is not None and Path("/sys/fs/cgroup/memory").is_dir():
            made = Path("/sys/fs/cgroup/memory") / v1.lstrip("/") / f"dynamo-webhook-e2e-{os.getpid()}"
            made.mkdir()
            try:
                (made / "memory.move_charge_at_immigrate").write_text("3")
                room, how = limit, ""
            except OSError:
                room, how = limit - status_kib(pid, "VmRSS") * 1024, ", less what it held when moved in"
            (made / "memory.limit_in_bytes").write_text(str(room))
            (made / "cgroup.procs").write_text(str(pid))
            described = f"cgroup v1 memory limit {limit // 2**20} MiB{how}"
        elif v2 is not None and Path("/sys/fs/cgroup/cgroup.controllers").is_file():
            made = Path("/sys/fs/cgroup") / v2.lstrip("/") / f"dynamo-webhook-e2e-{os.getpid()}"
            made.mkdir()
            (made / "memory.max").write_text(str(limit))
            (made / "cgroup.procs").write_text(str(pid))
            described = f"cgroup v2 memory.max {limit // 2**20} MiB"
        else:
            raise OSError("no memory cgroup hierarchy")
    except OSError as err:
        described = f"no cgroup ({err}): peak RSS read from /proc only"
        if made is not None:
            with contextlib.suppress(OSError):
                made.rmdir()
            made = None
    try:
        yield described
    finally:
        if made is not None:
            with contextlib.suppress(OSError):
                (made.parent / "cgroup.procs").write_text(str(pid))
            with contextlib.suppress(OSError):
                made.rmdir()


def _dgd(base: dict[str, Any], ns: str, index: int) -> bytes:
    obj = copy.deepcopy(base)
    obj["metadata"] = {"name": f"dgd-{index:05d}", "namespace": ns}
    return orjson.dumps(obj)


@pytest.fixture(scope="module")
def stored_alpha(cluster: Cluster, e2e_figures: list[str]) -> str:
    """A namespace holding COUNT DGDs stored as v1alpha1 (created while v1alpha1 was the storage
    version, through the service's admission webhooks like any write)."""
    ns = namespace(cluster.kubectl, "e2e-list-large")
    base = yaml.safe_load(SOURCE.read_text())
    path = f"/apis/nvidia.com/v1alpha1/namespaces/{ns}/{PLURAL}"
    set_storage_version(cluster, PLURAL, "v1alpha1")
    start = time.perf_counter()
    try:
        with ThreadPoolExecutor(8) as pool:
            statuses = list(
                pool.map(
                    lambda i: cluster.cp.raw("POST", path, _dgd(base, ns, i), timeout=60)[0], range(COUNT)
                )
            )
    finally:
        set_storage_version(cluster, PLURAL, "v1beta1")
    elapsed = time.perf_counter() - start
    assert statuses.count(201) == COUNT, {s: statuses.count(s) for s in set(statuses)}
    stored = stored_versions(cluster.cp, PLURAL)
    assert {stored[f"{ns}/dgd-{i:05d}"] for i in range(0, COUNT, 97)} == {"v1alpha1"}
    e2e_figures.append(
        f"CREATE {COUNT} v1alpha1 DGDs (8 at a time, through both admission webhooks): {elapsed:.1f} s"
    )
    return ns


def list_as_beta(cluster: Cluster, ns: str) -> tuple[Any, float]:
    """``kubectl get --chunk-size=0`` of the namespace's DGDs as v1beta1, and its seconds. The
    storage version switch re-created the kind's storage, whose cache answers 429 "storage is
    (re)initializing" until it has loaded every object (through the conversion webhook): that
    answer is retried, as clients do, and the LIST that is answered is timed."""
    deadline = time.monotonic() + 180
    while True:
        start = time.perf_counter()
        out = cluster.kubectl(
            "get",
            f"{PLURAL}.v1beta1.nvidia.com",
            "-n",
            ns,
            "--chunk-size=0",
            "-o",
            "json",
            timeout=WEBHOOK_TIMEOUT * 4,
            check=False,
        )
        elapsed = time.perf_counter() - start
        if out.returncode == 0 or "TooManyRequests" not in out.stderr or time.monotonic() > deadline:
            return out, elapsed
        time.sleep(0.5)


def test_list_of_10000_stored_as_v1alpha1_read_as_v1beta1_within_the_limits(
    cluster: Cluster, stored_alpha: str, e2e_figures: list[str]
) -> None:
    service = cluster.service
    assert service.proc is not None and service.proc.popen is not None
    pid = service.proc.popen.pid
    limit = memory_limit()
    reset_peak(pid)
    with memory_cgroup(pid, limit) as held:
        out, elapsed = list_as_beta(cluster, stored_alpha)
        peak = peak_rss(pid)
    items = out.json()["items"]
    assert len(items) == COUNT
    assert {item["apiVersion"] for item in items} == {BETA}
    assert all(item["spec"].get("components") for item in items[:: COUNT // 50])
    assert service.proc.popen.poll() is None, "the service died"
    # Answered whole: every conversion call it made was answered within the API server's 30 s.
    # How long the LIST takes (kubectl's decoding included) is the benchmark's to say: on a busy
    # machine it took 35 s.
    assert peak <= limit, f"peak RSS {peak / 2**20:.0f} MiB over the limit of {limit / 2**20:.0f} MiB"
    e2e_figures.append(
        f"LIST {COUNT} DGDs stored as v1alpha1 as v1beta1 (kubectl --chunk-size=0): {elapsed:.1f} s; "
        f"service peak RSS {peak / 2**20:.0f} MiB ({held})"
    )


def list_review(objects: int) -> bytes:
    """A ConversionReview of ``objects`` stored v1alpha1 DGDs to v1beta1 (bench.payloads)."""
    return orjson.dumps(payloads.list_review(objects))


def test_a_review_near_the_size_limit_is_answered_in_time_within_the_memory_limit(
    cluster: Cluster, e2e_figures: list[str]
) -> None:
    service = cluster.service
    assert service.proc is not None and service.proc.popen is not None
    pid = service.proc.popen.pid
    body = list_review(LARGE_REVIEW_OBJECTS)
    assert 48 * 2**20 < len(body) <= 64 * 2**20
    limit = memory_limit()
    reset_peak(pid)
    with memory_cgroup(pid, limit) as held:
        start = time.perf_counter()
        status, answer = post(service.port, service.cert_dir / "ca.crt", body)
        elapsed = time.perf_counter() - start
        peak = peak_rss(pid)
    assert status == 200, answer[:500]
    response = orjson.loads(answer)["response"]
    assert response["result"] == {"status": "Success"}
    converted = response["convertedObjects"]
    assert len(converted) == LARGE_REVIEW_OBJECTS
    assert {obj["apiVersion"] for obj in converted} == {BETA}
    assert service.proc.popen.poll() is None, "the service died"
    # In time for the API server, whose conversion call gives up after 30 s; how fast is the
    # benchmark's to say (bench/bench_large.py), not a test's on a machine of any speed.
    assert elapsed < WEBHOOK_TIMEOUT, f"answered after {elapsed:.1f} s"
    assert peak <= limit, f"peak RSS {peak / 2**20:.0f} MiB over the limit of {limit / 2**20:.0f} MiB"
    e2e_figures.append(
        f"ConversionReview of {LARGE_REVIEW_OBJECTS} v1alpha1 DGDs ({len(body) / 2**20:.0f} MiB) to v1beta1: "
        f"{elapsed:.1f} s, service peak RSS {peak / 2**20:.0f} MiB ({held})"
    )
    assert ALPHA not in {obj["apiVersion"] for obj in converted}


#: The API server's timeout for an admission webhook call (the webhook configurations' timeoutSeconds).
ADMISSION_TIMEOUT = 10.0
CONCURRENT_LISTS = 4


def _writes(cluster: Cluster, ns: str, stop: threading.Event) -> list[tuple[str, int, float]]:
    """Create a v1beta1 DGD, then scale it, again and again until ``stop``: (what, status, seconds)
    of each write, every one through both admission webhooks."""
    base = yaml.safe_load(BETA_SOURCE.read_text())
    path = f"/apis/nvidia.com/v1beta1/namespaces/{ns}/{PLURAL}"
    done: list[tuple[str, int, float]] = []
    index = 0
    while not stop.is_set():
        name = f"written-{index:04d}"
        obj = copy.deepcopy(base)
        obj["metadata"] = {"name": name, "namespace": ns}
        start = time.perf_counter()
        status, _ = cluster.cp.raw("POST", path, orjson.dumps(obj), timeout=60)
        done.append(("create", status, time.perf_counter() - start))
        patch = {"metadata": {"labels": {"written": str(index)}}}
        start = time.perf_counter()
        status, _ = cluster.cp.raw(
            "PATCH",
            f"{path}/{name}",
            orjson.dumps(patch),
            content_type="application/merge-patch+json",
            timeout=60,
        )
        done.append(("update", status, time.perf_counter() - start))
        index += 1
    return done


def test_four_unpaginated_lists_at_once_beside_writes_within_the_limits(
    cluster: Cluster, stored_alpha: str, e2e_figures: list[str]
) -> None:
    """Four clients LIST the 10,000 DGDs at once while another creates and updates DGDs: the
    service, in its pod's memory limit with the budget it takes from it, answers every LIST and
    every write within its webhook timeout, and is neither restarted nor killed."""
    service = cluster.service
    assert service.proc is not None and service.proc.popen is not None
    pid = service.proc.popen.pid
    limit = memory_limit()
    writes_ns = namespace(cluster.kubectl, "e2e-list-large-writes")
    stop = threading.Event()
    reset_peak(pid)
    with memory_cgroup(pid, limit) as held, ThreadPoolExecutor(CONCURRENT_LISTS + 1) as pool:
        writer = pool.submit(_writes, cluster, writes_ns, stop)
        try:
            lists = list(pool.map(lambda _: list_as_beta(cluster, stored_alpha), range(CONCURRENT_LISTS)))
        finally:
            stop.set()
        writes = writer.result()
        peak = peak_rss(pid)
    assert service.proc.popen.poll() is None, "the service died"
    for out, _ in lists:
        assert out.returncode == 0, out.stderr
        assert len(out.json()["items"]) == COUNT  # answered whole: each conversion call within its 30 s
    assert writes and {status for _, status, _ in writes} <= {200, 201}, writes
    slowest = max(seconds for _, _, seconds in writes)
    assert slowest < ADMISSION_TIMEOUT, f"a write took {slowest:.1f} s"
    assert peak <= limit, f"peak RSS {peak / 2**20:.0f} MiB over the limit of {limit / 2**20:.0f} MiB"
    seconds = sorted(elapsed for _, elapsed in lists)
    e2e_figures.append(
        f"{CONCURRENT_LISTS} LISTs at once of {COUNT} DGDs stored as v1alpha1 as v1beta1 (--chunk-size=0): "
        f"{seconds[0]:.1f}-{seconds[-1]:.1f} s; beside them {len(writes)} writes, slowest {slowest:.2f} s; "
        f"service peak RSS {peak / 2**20:.0f} MiB ({held})"
    )
