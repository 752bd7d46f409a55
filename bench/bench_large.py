"""The largest ConversionReviews, as an unpaginated LIST of a big cluster sends them: seconds and
peak memory of one ``dynamo-webhook serve`` answering one review of 1,000, 10,000 and 33,000
stored v1alpha1 DGDs (to v1beta1; about 1.9 KiB each, so that 33,000 come to 61 MiB, near the
64 MiB ``max_conversion_bytes``).

Each size gets a server of its own, started fresh, so that its peak resident memory (the kernel's
``VmHWM``) is that review's and nothing earlier's; the review is sent over HTTPS from this process
and timed from the first byte sent to the last byte read. The figures go into the benchmark's
report (:mod:`bench.__main__`), with the targets :data:`bench.scenarios.TARGETS`
``large_review_seconds`` and ``large_review_peak_mib`` checked at the largest size (the memory
limit of deploy/'s Deployment).

Run alone with ``python -m bench.bench_large [--sizes 1000,10000,33000]``.
"""

from __future__ import annotations

import argparse
import http.client
import ssl
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench import payloads
from bench.harness import cpu_seconds, ensure_certs, peak_rss_kib, rss_kib, start_webhook

SIZES = (1_000, 10_000, 33_000)


def post(port: int, cafile: Path, body: bytes) -> tuple[int, bytes]:
    context = ssl.create_default_context(cafile=str(cafile))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=600)
    try:
        conn.request("POST", "/convert", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def measure_one(objects: int, work: Path, cert_dir: Path, cafile: Path) -> dict[str, Any]:
    body = orjson.dumps(payloads.list_review(objects))
    with start_webhook(cert_dir, work, log_level="warning") as server:
        idle = rss_kib(server.pid)
        post(server.port, cafile, orjson.dumps(payloads.list_review(1)))  # warm: first-use imports
        cpu = cpu_seconds(server.pid)
        start = time.perf_counter()
        status, answer = post(server.port, cafile, body)
        seconds = time.perf_counter() - start
        cpu = cpu_seconds(server.pid) - cpu
        peak = peak_rss_kib(server.pid)
        after = rss_kib(server.pid)
    response = orjson.loads(answer).get("response", {}) if status == 200 else {}
    converted = response.get("convertedObjects") or []
    if status != 200 or len(converted) != objects:
        raise RuntimeError(f"{objects} objects: HTTP {status}, {len(converted)} converted: {answer[:300]!r}")
    return {
        "objects": objects,
        "body_mib": len(body) / 2**20,
        "answer_mib": len(answer) / 2**20,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "idle_rss_mib": idle / 1024,
        "peak_rss_mib": peak / 1024,
        "after_rss_mib": after / 1024,
    }


def measure(sizes: tuple[int, ...] = SIZES, work: Path | None = None) -> list[dict[str, Any]]:
    """One row per size (see the module's notes)."""
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-bench-large-") as tmp:
        base = work or Path(tmp)
        cert_dir = base / "certs-large"
        cafile = ensure_certs(cert_dir)
        return [measure_one(n, base, cert_dir, cafile) for n in sizes]


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| objects | body MiB | answer MiB | seconds | server CPU s | RSS idle MiB | peak RSS MiB | RSS after MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['objects']} | {r['body_mib']:.1f} | {r['answer_mib']:.1f} | {r['seconds']:.2f} | "
        f"{r['cpu_seconds']:.2f} | {r['idle_rss_mib']:.0f} | {r['peak_rss_mib']:.0f} | {r['after_rss_mib']:.0f} |"
        for r in rows
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_large", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument(
        "--sizes", default=",".join(map(str, SIZES)), help="objects per review, comma-separated"
    )
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(",") if s)
    print(table(measure(sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
