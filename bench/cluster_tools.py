"""``python -m bench.cluster_tools``: how long ``audit`` and ``storage-migrate`` take on a cluster with
thousands of DynamoGraphDeployments.

A dedicated real control plane (etcd + kube-apiserver from ``scripts/kube-testenv``, as the end-to-end
suite runs it) with the service registered as deploy/ registers it and serving. The DGDs are seeded the
fast way: with the DGD CRD's storage version switched to v1alpha1 and the admission webhook
configurations removed for the time of the seeding (a control plane of its own: nothing else is
admitted meanwhile), created in v1alpha1 by a few parallel clients, spread over ten namespaces; one in
ten is a published example today's rules refuse to create. Then the webhooks are registered again, the
storage version is back to v1beta1, and the tools run as users run them (the installed
``dynamo-webhook`` command, admin kubeconfig):

1. ``audit -A -o json``: every DGD listed as v1beta1 through the conversion webhook;
2. ``storage-migrate --qps 0`` (no rate limit): every DGD rewritten as v1beta1, storedVersions set;
3. ``storage-migrate`` again (nothing to do), and ``audit -A -o json`` again (nothing converted on LIST).

Writes ``cluster-tools.json`` and ``cluster-tools.md`` to ``--out`` (default ``bench/results``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from bench.harness import ROOT, WEBHOOK_EXE
from tests.e2e.cluster import MUTATING, VALIDATING, ca_bundles
from tests.e2e.conftest import start_cluster
from tests.e2e.legacy import FIXTURES, set_storage_version, stored_versions
from tests.e2e.testenv import Kubectl, binaries, control_plane, wait_until

PLURAL = "dynamographdeployments"
NAMESPACES = 10
ALLOWED = ROOT / "examples" / "manifests" / "dgd-agg-v1alpha1.yaml"
REFUSED = FIXTURES / "v1alpha1" / "DynamoGraphDeployment" / "vllm-agg__utils-tests-fixtures-v1alpha1-agg.yaml"


def seed(
    cp: Any, count: int, workers: int = 6, dress: Callable[[dict[str, Any]], dict[str, Any]] | None = None
) -> float:
    """Create ``count`` v1alpha1 DGDs with raw POSTs; returns the seconds it took. ``dress``: more
    metadata for each (labels, annotations: what objects on a real cluster carry), given the
    manifest as it is about to be sent."""
    allowed, refused = (yaml.safe_load(p.read_text()) for p in (ALLOWED, REFUSED))

    def create(i: int) -> None:
        doc = copy.deepcopy(refused if i % 10 == 9 else allowed)
        namespace = f"bench-{i % NAMESPACES}"
        doc["metadata"] = {"name": f"dgd-{i:05d}", "namespace": namespace}
        if dress is not None:
            doc["metadata"].update(dress(doc))
        status, body = cp.raw("POST", f"/apis/nvidia.com/v1alpha1/namespaces/{namespace}/{PLURAL}", doc)
        if status != 201:
            raise RuntimeError(f"creating dgd-{i:05d}: {status} {body[:300]!r}")

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(create, range(count)))
    return time.monotonic() - started


def timed(argv: list[str]) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the tool's process, exit code, stdout)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYNAMO_WEBHOOK_")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=3600, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    load = os.getloadavg()
    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.platform()} ({os.cpu_count()} CPUs, load average at start "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}), Python {platform.python_version()}",
        "command": "python -m bench.cluster_tools " + " ".join(sys.argv[1:]),
        "objects": args.objects,
    }
    kubectl_exe = binaries() / "kubectl"
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="dynamo-webhook-bench-tools-") as tmp:
        kubectl = Kubectl(kubectl_exe, cp.kubeconfig)
        cluster = start_cluster(cp, kubectl, Path(tmp))
        try:
            for i in range(NAMESPACES):
                kubectl("create", "namespace", f"bench-{i}")
            set_storage_version(cluster, PLURAL, "v1alpha1")
            kubectl("delete", "validatingwebhookconfiguration", VALIDATING)
            kubectl("delete", "mutatingwebhookconfiguration", MUTATING)
            results["seed_seconds"] = round(seed(cp, args.objects), 1)
            kubectl.apply([o for o in cluster.registration if "Webhook" in o["kind"]], "--server-side")
            wait_until(lambda: all(ca_bundles(kubectl).values()), 60, "caBundles injected again", 0.5)
            set_storage_version(cluster, PLURAL, "v1beta1")
            stored = stored_versions(cp, PLURAL)
            assert sum(v == "v1alpha1" for v in stored.values()) == args.objects, (
                "seed not stored as v1alpha1"
            )

            base = [str(WEBHOOK_EXE)]
            kc = ["--kubeconfig", str(cp.kubeconfig)]
            runs = (
                ("audit", [*base, "audit", *kc, "-A", "-o", "json"]),
                (
                    "storage_migrate",
                    [*base, "storage-migrate", *kc, "--qps", "0", "--no-state", "-o", "json"],
                ),
                ("storage_migrate_again", [*base, "storage-migrate", *kc, "--no-state", "-o", "json"]),
                ("audit_after_migration", [*base, "audit", *kc, "-A", "-o", "json"]),
            )
            for name, argv in runs:
                seconds, cpu, code, out = timed(argv)
                doc = json.loads(out)
                entry: dict[str, Any] = {
                    "command": " ".join(["dynamo-webhook", *argv[1:]]).replace(
                        str(cp.kubeconfig), "<admin kubeconfig>"
                    ),
                    "exit": code,
                    "wall_seconds": round(seconds, 2),
                    "tool_cpu_seconds": round(cpu, 2),
                }
                if name.startswith("audit"):
                    totals = doc["totals"]
                    entry.update(
                        objects=totals["objects"], refused=totals["refused"], reported_seconds=doc["seconds"]
                    )
                else:
                    dgd = next(c for c in doc["crds"] if c["crd"] == f"{PLURAL}.nvidia.com")
                    entry.update(
                        objects=dgd["objects"],
                        rewritten=dgd["rewritten"],
                        stored_versions_after=dgd["storedVersionsAfter"],
                        reported_seconds=dgd["seconds"],
                    )
                results[name] = entry
                print(name, json.dumps(entry), flush=True)
            assert set(stored_versions(cp, PLURAL).values()) == {"v1beta1"}
        finally:
            cluster.service.stop()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cluster-tools.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "cluster-tools.md").write_text(report(results))
    print(report(results))
    return 0


def report(r: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| {name.replace('_', ' ')} | `{e['command']}` | {e['objects']} | {e['wall_seconds']:.1f} | "
        f"{e['tool_cpu_seconds']:.1f} | {(e['objects'] / e['wall_seconds']) if e['objects'] else 0:.0f} | "
        f"{e['exit']} |"
        for name, e in (
            (k, r[k]) for k in ("audit", "storage_migrate", "storage_migrate_again", "audit_after_migration")
        )
    )
    return (
        "# Cluster tools on many objects\n\n"
        f"Run {r['date']} on {r['machine']}. Command: `{r['command']}`.\n\n"
        f"{r['objects']} DynamoGraphDeployments in 10 namespaces, stored as v1alpha1 (seeded in "
        f"{r['seed_seconds']} s), one in ten refused by today's rules on re-creation; a real kube-apiserver "
        "and etcd on loopback with the service registered (conversion webhook and admission webhooks) on "
        "the same machine. Wall time of the whole command, as run from a shell, and the CPU time of the tool's "
        "own process (the rest is the API server, etcd and the service).\n\n"
        "| run | command | objects handled | seconds | tool CPU s | objects/s | exit |\n|---|---|---:|---:|---:|---:|---:|\n"
        f"{rows}\n\n"
        "The second storage-migrate finds every CRD's storedVersions already at the storage version and "
        "lists nothing.\n"
        f"storage-migrate with the default `--qps 50` is bounded by the rate limit: about "
        f"{r['objects'] / 50:.0f} s for {r['objects']} objects (one request each).\n"
    )


if __name__ == "__main__":
    raise SystemExit(main())
