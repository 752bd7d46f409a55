"""``python -m bench.bench_list``: a large cluster's read path through the conversion webhook, the
operator's handlers beside the service (both builds).

One real control plane (etcd + kube-apiserver from ``scripts/kube-testenv``, as the end-to-end suite
runs it) with the pinned CRDs (:func:`tools.opdiff.drive.install_crds`). The DynamoGraphDeployments
are seeded stored as v1alpha1: the CRD's storage version switched to v1alpha1 (conversion ``None``),
the published manifests created in v1alpha1 with the metadata objects carry on a real cluster (labels,
``kubectl apply``'s last-applied annotation; the API server adds uid, managedFields and the rest),
spread over ten namespaces (:func:`bench.cluster_tools.seed`). Then the storage version is v1beta1
again and the CRD's conversion webhook points at each webhook in turn:

* the operator's own handlers (``opdiff``, the Go program ``tools/opdiff/prepare`` builds; its path
  from ``--operator-webhook`` or ``$DYNAMO_WEBHOOK_OPDIFF``; left out, saying so, when not built);
* ``dynamo-webhook serve`` from the sources (the Python build) and from ``scripts/compiled``.

Every webhook serves the same TLS pair. Each read starts from a cold watch cache: kube-apiserver is
restarted before it (same etcd, same flags), so the objects are converted anew. The reads, each as
v1beta1 across all namespaces: ``kubectl get --chunk-size=0`` (one unpaginated LIST),
``kubectl get --chunk-size=500`` (paginated), and a WATCH from resourceVersion 0 (until every object
has arrived as ADDED). A read the API server answers "storage is (re)initializing" (429) or does not
serve yet is retried, as clients do, and timed from the first attempt. For each read: the seconds,
the webhook's CPU seconds (user + system from ``/proc/PID/stat``, before the restart and once the API
server has stopped calling it) per object read, the ConversionReviews the API server sent and the
seconds it waited on them (its own ``apiserver_crd_conversion_webhook_duration_seconds``), and for
the service its own count of reviews and converted objects. On a shared machine the wall times are
noisy; the CPU seconds per object are the figure to compare.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from app.server.build import build_kind
from bench.cluster_tools import NAMESPACES, PLURAL, seed
from bench.harness import ROOT, ServerProcess, children, cpu_seconds, ensure_certs, free_port, start_webhook
from tests.e2e.legacy import etcd_entries
from tests.e2e.testenv import ControlPlane, Kubectl, binaries, control_plane, wait_until
from tools.opdiff.drive import PRINCIPAL, install_crds

SIZES = (1000,)
BUILDS = ("python", "compiled")
OPERATOR_ENV = "DYNAMO_WEBHOOK_OPDIFF"
#: Where the sources are when this process runs from the compiled tree (scripts/bench exports it).
SOURCE_ENV = "DYNAMO_WEBHOOK_SOURCE_TREE"
CRD = f"{PLURAL}.nvidia.com"
CRD_PATH = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD}"
BETA_LIST = f"/apis/nvidia.com/v1beta1/{PLURAL}"
CHUNK = 500
#: What a read answers while the API server is (re)starting the kind's storage: retried.
TRANSIENT = (
    "TooManyRequests",
    "storage is (re)initializing",
    "doesn't have a resource type",
    "the server could not find the requested resource",
    "connection refused",
)
#: How long one read may take, retries included, before the run gives up on it.
READ_TIMEOUT = 900.0
READS = ("kubectl --chunk-size=0", f"kubectl --chunk-size={CHUNK}", "WATCH from resourceVersion 0")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Webhook:
    """One conversion webhook under test: the operator's handlers or the service."""

    name: str
    build: str
    server: ServerProcess
    metrics_port: int | None = None

    @property
    def label(self) -> str:
        return self.name if self.metrics_port is None else f"{self.name} ({self.build})"


# --------------------------------------------------------------------------- what is measured


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its children (the service's workers, when it has any)."""
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in children(pid))


def sample_total(text: str, name: str, must: str = "") -> float:
    """The sum of every sample of metric ``name`` in a Prometheus text exposition whose line holds
    ``must`` (a label, e.g. ``crd_name="..."``)."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and line[len(name) : len(name) + 1] in ("{", " ") and must in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def apiserver_reviews(cp: ControlPlane) -> tuple[float, float]:
    """(ConversionReviews sent for the DGD CRD, seconds spent waiting on them) since the API server
    started, from its own metrics."""
    status, body = cp.raw("GET", "/metrics", timeout=60)
    if status != 200:
        raise RuntimeError(f"kube-apiserver /metrics answered {status}")
    text = body.decode()
    must = f'crd_name="{CRD}"'
    name = "apiserver_crd_conversion_webhook_duration_seconds"
    return sample_total(text, f"{name}_count", must), sample_total(text, f"{name}_sum", must)


def service_counts(webhook: Webhook) -> tuple[float, float]:
    """(ConversionReviews answered, DGDs converted) by the service so far, from its metrics; zeros
    for the operator, whose handlers export none here."""
    if webhook.metrics_port is None:
        return 0.0, 0.0
    with urllib.request.urlopen(f"http://127.0.0.1:{webhook.metrics_port}/metrics", timeout=30) as resp:
        text = resp.read().decode()
    reviews = sample_total(text, "controller_runtime_webhook_requests_total", 'webhook="/convert"')
    return reviews, sample_total(text, "dynamo_webhook_conversions_total", 'kind="DynamoGraphDeployment"')


def service_build(metrics_port: int) -> str:
    """The build the service reports (``dynamo_webhook_build_info``)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=30) as resp:
        text = resp.read().decode()
    for build in BUILDS:
        if sample_total(text, "dynamo_webhook_build_info", f'build="{build}"'):
            return build
    return "unknown"


def kubectl_list(kubectl: Kubectl, chunk: int, expected: int) -> tuple[float, int, int]:
    """``kubectl get`` of every DGD as v1beta1 with ``--chunk-size``: (seconds, items, attempts)."""
    started = time.perf_counter()
    attempts = 0
    while True:
        attempts += 1
        out = kubectl(
            "get",
            f"{PLURAL}.v1beta1.nvidia.com",
            "-A",
            f"--chunk-size={chunk}",
            "-o",
            "json",
            check=False,
            timeout=READ_TIMEOUT,
        )
        if out.returncode == 0:
            break
        if not any(word in out.stderr for word in TRANSIENT) or time.perf_counter() - started > READ_TIMEOUT:
            raise RuntimeError(f"kubectl get --chunk-size={chunk}: {out.stderr.strip().splitlines()[-1:]}")
        time.sleep(0.2)
    seconds = time.perf_counter() - started
    items = out.json()["items"]
    if {item["apiVersion"] for item in items} - {"nvidia.com/v1beta1"}:
        raise RuntimeError(f"kubectl get --chunk-size={chunk}: an item not in v1beta1")
    return seconds, len(items), attempts


def watch_all(cp: ControlPlane, expected: int) -> tuple[float, int, int]:
    """A WATCH of every DGD as v1beta1 from resourceVersion 0, read until ``expected`` ADDED events
    have arrived: (seconds, ADDED events, attempts)."""
    started = time.perf_counter()
    attempts = 0
    while True:
        attempts += 1
        request = urllib.request.Request(f"{cp.url}{BETA_LIST}?watch=1&resourceVersion=0")
        try:
            with urllib.request.urlopen(request, context=cp.ssl_context(), timeout=READ_TIMEOUT) as resp:
                added = 0
                for line in resp:
                    event = orjson.loads(line)
                    if event["type"] == "ERROR":
                        raise RuntimeError(f"WATCH: {event['object'].get('message', event)}")
                    if event["type"] == "ADDED":
                        if event["object"]["apiVersion"] != "nvidia.com/v1beta1":
                            raise RuntimeError("WATCH: an object not in v1beta1")
                        added += 1
                        if added == expected:
                            return time.perf_counter() - started, added, attempts
                raise RuntimeError(f"WATCH ended after {added} of {expected} objects")
        except urllib.error.HTTPError as err:
            if err.code not in (404, 429, 503) or time.perf_counter() - started > READ_TIMEOUT:
                raise RuntimeError(f"WATCH: HTTP {err.code}") from None
            time.sleep(0.2)


def served(cp: ControlPlane) -> bool:
    """Whether the API server serves the DGDs as v1beta1 (discovery lists them)."""
    status, body = cp.raw("GET", "/apis/nvidia.com/v1beta1")
    return status == 200 and f'"{PLURAL}"' in body.decode()


def quiet(cp: ControlPlane) -> float:
    """Wait until the API server has stopped calling the webhook (its count of ConversionReviews
    unchanged across two reads half a second apart: a watch cache still filling after the read was
    answered is counted with it); returns that count."""
    last = [-1.0]

    def settled() -> bool:
        now = apiserver_reviews(cp)[0]
        done = now == last[0]
        last[0] = now
        return done

    wait_until(settled, READ_TIMEOUT, "the API server done calling the conversion webhook", 0.5)
    return last[0]


def measure_read(
    cp: ControlPlane, kubectl: Kubectl, webhook: Webhook, read: str, objects: int
) -> dict[str, Any]:
    """One read from a cold watch cache (the API server restarted first) with ``webhook`` converting."""
    cpu_before = process_cpu(webhook.server.pid)
    counts_before = service_counts(webhook)
    cp.restart_apiserver()
    wait_until(lambda: served(cp), 120, "DGDs served as v1beta1 after the restart", 0.25)
    if read.startswith("WATCH"):
        seconds, items, attempts = watch_all(cp, objects)
    else:
        seconds, items, attempts = kubectl_list(kubectl, int(read.rsplit("=", 1)[1]), objects)
    reviews = quiet(cp)
    review_seconds = apiserver_reviews(cp)[1]
    cpu = process_cpu(webhook.server.pid) - cpu_before
    counts_after = service_counts(webhook)
    row: dict[str, Any] = {
        "webhook": webhook.label,
        "objects": objects,
        "read": read,
        "items": items,
        "attempts": attempts,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "cpu_ms_per_object": cpu / objects * 1000,
        "apiserver_reviews": int(reviews),
        "apiserver_review_seconds": round(review_seconds, 3),
        "cpu_ms_per_review": cpu / reviews * 1000 if reviews else 0.0,
    }
    if webhook.metrics_port is not None:
        row["service_reviews"] = int(counts_after[0] - counts_before[0])
        row["service_objects"] = int(counts_after[1] - counts_before[1])
    log(
        f"  {webhook.label}, {objects} objects, {read}: {seconds:.1f} s, {row['cpu_ms_per_object']:.3f} CPU ms/object, "
        f"{row['apiserver_reviews']} reviews"
    )
    return row


# --------------------------------------------------------------------------- the cluster


def configure_crd(cp: ControlPlane, storage: str, conversion: dict[str, Any]) -> None:
    """Set the DGD CRD's storage version and conversion (a read-modify-write, retried on conflict)."""

    def put() -> bool:
        status, body = cp.raw("GET", CRD_PATH)
        if status != 200:
            raise RuntimeError(f"reading the CRD {CRD}: HTTP {status}")
        crd = orjson.loads(body)
        for version in crd["spec"]["versions"]:
            version["storage"] = version["name"] == storage
        crd["spec"]["conversion"] = conversion
        status, body = cp.raw("PUT", CRD_PATH, orjson.dumps(crd))
        if status not in (200, 409):
            raise RuntimeError(f"updating the CRD {CRD}: HTTP {status} {body[:300]!r}")
        return status == 200

    wait_until(put, 60, f"{CRD} updated", 0.2)


def webhook_conversion(port: int, cafile: Path) -> dict[str, Any]:
    """The CRD's conversion through the webhook on loopback ``port``, trusting ``cafile``."""
    import base64

    return {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": f"https://127.0.0.1:{port}/convert",
                "caBundle": base64.b64encode(cafile.read_bytes()).decode(),
            },
        },
    }


def cluster_metadata(doc: dict[str, Any]) -> dict[str, Any]:
    """What a DGD applied with ``kubectl apply`` by a deployment pipeline carries: labels, and the
    last-applied annotation holding the manifest itself."""
    meta = doc["metadata"]
    return {
        "labels": {
            "app.kubernetes.io/name": meta["name"],
            "app.kubernetes.io/part-of": "dynamo",
            "app.kubernetes.io/managed-by": "kubectl",
            "team": meta["namespace"],
        },
        "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": orjson.dumps(doc).decode() + "\n"
        },
    }


def seed_alpha(cp: ControlPlane, objects: int) -> dict[str, Any]:
    """``objects`` DGDs stored as v1alpha1 (the storage version switched to v1alpha1 for the
    seeding, conversion ``None``); returns what the seeding took and the mean stored object's size."""
    configure_crd(cp, "v1alpha1", {"strategy": "None"})
    for i in range(NAMESPACES):
        cp.raw(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{i}"}},
        )
    # The API server takes the new storage version up asynchronously: the seeding starts once a
    # write lands in etcd as v1alpha1 (the first object, re-created until it does).

    def landed() -> bool:
        cp.raw("DELETE", f"/apis/nvidia.com/v1alpha1/namespaces/bench-0/{PLURAL}/dgd-00000")
        seed(cp, 1, 1, cluster_metadata)
        return bool(etcd_entries(cp, PLURAL)["bench-0/dgd-00000"][1]["apiVersion"] == "nvidia.com/v1alpha1")

    wait_until(landed, 60, "DGDs stored as v1alpha1", 0.5)
    cp.raw("DELETE", f"/apis/nvidia.com/v1alpha1/namespaces/bench-0/{PLURAL}/dgd-00000")
    seconds = seed(cp, objects, 6, cluster_metadata)
    stored = etcd_entries(cp, PLURAL)
    versions = {obj["apiVersion"] for _, obj in stored.values()}
    if len(stored) != objects or versions != {"nvidia.com/v1alpha1"}:
        raise RuntimeError(f"seeded {len(stored)} of {objects} DGDs, stored as {sorted(versions)}")
    sizes = [len(orjson.dumps(obj)) for _, obj in stored.values()]
    return {"seed_seconds": round(seconds, 1), "stored_bytes_per_object": round(sum(sizes) / len(sizes))}


# --------------------------------------------------------------------------- the webhooks


def operator_binary(given: str | None) -> tuple[Path | None, str]:
    """The operator's webhook binary (``--operator-webhook``, else ``$DYNAMO_WEBHOOK_OPDIFF``), or
    None and the one line saying why it is not measured."""
    path = given or os.environ.get(OPERATOR_ENV, "")
    if not path:
        return None, (
            f"operator webhook not measured: not given (build it with tools/opdiff/prepare; "
            f"pass --operator-webhook PATH or set {OPERATOR_ENV})"
        )
    if not os.access(path, os.X_OK):
        return (
            None,
            f"operator webhook not measured: {path} is not an executable (tools/opdiff/prepare builds it)",
        )
    return Path(path), ""


def build_tree(build: str) -> tuple[Path | None, str]:
    """The directory the service of ``build`` runs from (its PYTHONPATH), or None and why not."""
    here = build_kind()
    if build == here == "compiled":
        return ROOT, ""
    if here == "compiled" and SOURCE_ENV not in os.environ:
        return (
            None,
            f"{build} build not measured: this runs from the compiled tree and ${SOURCE_ENV} is not set",
        )
    source = Path(os.environ.get(SOURCE_ENV, ROOT))
    if build == "python":
        return source, ""
    proc = subprocess.run([str(source / "scripts" / "compiled")], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return (
            None,
            f"compiled build not measured: scripts/compiled failed: {proc.stderr.strip().splitlines()[-1:]}",
        )
    return Path(proc.stdout.strip().splitlines()[-1]), ""


@contextmanager
def webhook_process(
    kind: str, where: Path, cp: ControlPlane, cert_dir: Path, work: Path
) -> Iterator[Webhook]:
    """The operator's handlers (``kind`` "operator", ``where`` its binary) or the service of build
    ``kind`` (run from ``where``), serving the TLS pair in ``cert_dir``."""
    if kind == "operator":
        port = free_port()
        argv = [
            str(where),
            "--kubeconfig",
            str(cp.kubeconfig),
            "--port",
            str(port),
            "--cert-dir",
            str(cert_dir),
            "--operator-principal",
            PRINCIPAL,
        ]
        webhook = Webhook(
            "operator", "Go", ServerProcess("operator", argv, port, work / f"operator-{port}.log")
        )
    else:
        metrics_port = free_port()
        server = start_webhook(cert_dir, work, metrics_port=metrics_port, env={"PYTHONPATH": str(where)})
        webhook = Webhook("service", kind, server, metrics_port)
        running = service_build(metrics_port)
        if running != kind:
            server.stop()
            raise RuntimeError(f"the service started from {where} runs the {running} build, not {kind}")
    try:
        yield webhook
    finally:
        webhook.server.stop()


def measure(sizes: tuple[int, ...], builds: tuple[str, ...], operator: Path | None) -> dict[str, Any]:
    """Every size, every webhook (the operator's binary when given, the service of each build),
    every read; the notes say what was left out and why."""
    notes: list[str] = []
    targets: list[tuple[str, Path]] = [] if operator is None else [("operator", operator)]
    for build in builds:
        tree, why = build_tree(build)
        if tree is None:
            notes.append(why)
            log(why)
        else:
            targets.append((build, tree))
    out: dict[str, Any] = {"notes": notes, "runs": []}
    kubectl_exe = binaries() / "kubectl"
    for objects in sizes:
        with control_plane() as cp, tempfile.TemporaryDirectory(prefix="dynamo-webhook-bench-list-") as tmp:
            work = Path(tmp)
            cert_dir = work / "certs"
            cafile = ensure_certs(cert_dir)
            install_crds(cp)
            log(f"LIST benchmark: seeding {objects} DGDs stored as v1alpha1")
            run: dict[str, Any] = {"objects": objects, **seed_alpha(cp, objects), "rows": []}
            kubectl = Kubectl(kubectl_exe, cp.kubeconfig)
            for kind, where in targets:
                with webhook_process(kind, where, cp, cert_dir, work) as webhook:
                    configure_crd(cp, "v1beta1", webhook_conversion(webhook.server.port, cafile))
                    for read in READS:
                        run["rows"].append(measure_read(cp, kubectl, webhook, read, objects))
            out["runs"].append(run)
    return out


def measure_with(sizes: tuple[int, ...], builds: tuple[str, ...], operator: str | None) -> dict[str, Any]:
    """:func:`measure` with the operator's binary looked up (:func:`operator_binary`): when it is not
    there, one line says so (logged and first of the notes) and the service is measured alone."""
    binary, why = operator_binary(operator)
    if why:
        log(why)
    result = measure(sizes, builds, binary)
    if why:
        result["notes"].insert(0, why)
    return result


def parse_sizes(text: str) -> tuple[int, ...]:
    """``1000,10000`` as sizes; ValueError naming what is not a positive number."""
    sizes = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        if not word.isdigit() or int(word) < 1:
            raise ValueError(f"not a positive number of objects: {word!r}")
        sizes.append(int(word))
    return tuple(sizes)


# --------------------------------------------------------------------------- the report


def table(result: dict[str, Any]) -> str:
    """The figures as a Markdown table, one row per size, webhook and read."""
    lines = [
        "| objects | webhook | read | seconds | webhook CPU s | CPU ms/object read | reviews (API server) "
        "| CPU ms/review | API server's wait per review, ms | objects/review (service) | stored bytes/object |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in result["runs"]:
        for row in run["rows"]:
            per_review = (
                f"{row['service_objects'] / row['service_reviews']:.1f}"
                if row.get("service_reviews")
                else "—"
            )
            wait = (
                f"{row['apiserver_review_seconds'] / row['apiserver_reviews'] * 1000:.2f}"
                if row["apiserver_reviews"]
                else "—"
            )
            lines.append(
                f"| {row['objects']} | {row['webhook']} | {row['read']} | {row['seconds']:.1f} | "
                f"{row['cpu_seconds']:.2f} | {row['cpu_ms_per_object']:.3f} | {row['apiserver_reviews']} | "
                f"{row['cpu_ms_per_review']:.3f} | {wait} | {per_review} | {run['stored_bytes_per_object']} |"
            )
    return "\n".join([*lines, *(f"\n{note}" for note in result["notes"])]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_list", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, SIZES)),
        help="DGDs stored as v1alpha1, a control plane each (default %(default)s)",
    )
    parser.add_argument(
        "--builds", default=",".join(BUILDS), help="builds of the service to measure (default %(default)s)"
    )
    parser.add_argument(
        "--operator-webhook",
        default=None,
        metavar="PATH",
        help=f"the operator's webhook binary (tools/opdiff/prepare; default ${OPERATOR_ENV}); "
        "without it the service alone is measured",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes)
    except ValueError as err:
        parser.error(f"--sizes: {err}")
    builds = tuple(b for b in args.builds.split(",") if b)
    if set(builds) - set(BUILDS):
        parser.error(f"--builds takes {', '.join(BUILDS)}, not {args.builds!r}")
    load = os.getloadavg()
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.platform()} ({os.cpu_count()} CPUs, load average at start {load[0]:.2f})",
        "command": " ".join(["python -m bench.bench_list", *(argv if argv is not None else sys.argv[1:])]),
    }
    result.update(measure_with(sizes, builds, args.operator_webhook))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "list.json").write_text(json.dumps(result, indent=1) + "\n")
    text = f"# LIST through the conversion webhook\n\n{result['date']}, {result['machine']}: `{result['command']}`\n\n"
    (args.out / "list.md").write_text(text + table(result))
    print(text + table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
