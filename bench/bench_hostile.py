"""The hostile mix: what a cluster under load, or a client meaning harm, sends a serving process
at once, and whether the process stays within its pod's memory limit and keeps answering writes.

Each row runs against a fresh ``dynamo-webhook serve`` given the memory budget a 256Mi pod gives
it (:func:`app.server.budget.default_budget`) and its connection limit, while a probe sends a small AdmissionReview
(a DGD UPDATE) every 50 ms: the row reports the probe's p99 (what a write waits), the server's
peak resident memory (``VmHWM``) against the limit, and what the row's own requests got.

Rows: bodies promised by ``Content-Length`` and never sent; whole bodies sent by 120 connections
while the budget is held; request lines and headers of tens of
MiB; 2, 4 and 8 large ConversionReviews at once; a client that gives up after 1.5 s and sends its
review again, five times; large admission reviews while large conversions run; and a mixed load
on 64 keep-alive connections.

Run alone with ``python -m bench.bench_hostile [--quick]``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import random
import socket
import ssl
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from app.server.budget import default_budget, default_max_connections
from bench import payloads
from bench.harness import ServerProcess, cpu_seconds, ensure_certs, peak_rss_kib, rss_kib, start_webhook

MiB = 1024 * 1024
POD_LIMIT = 256 * MiB
VALIDATE = "/validate/nvidia.com/v1beta1/dynamographdeployments"
MUTATE = "/mutate/nvidia.com/v1beta1/dynamographdeployments"
PROBE_INTERVAL = 0.05


class Target:
    """One fresh server and how to reach it."""

    def __init__(self, server: ServerProcess, cafile: Path) -> None:
        self.server = server
        self.context = ssl.create_default_context(cafile=str(cafile))

    def connection(self, timeout: float = 120) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(
            "127.0.0.1", self.server.port, context=self.context, timeout=timeout
        )

    def tls(self) -> ssl.SSLSocket:
        raw = socket.create_connection(("127.0.0.1", self.server.port), timeout=60)
        return self.context.wrap_socket(raw, server_hostname="localhost")


def post(conn: http.client.HTTPSConnection, path: str, body: bytes) -> tuple[int, bytes, float]:
    start = time.perf_counter()
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    return response.status, data, time.perf_counter() - start


def post_once(target: Target, path: str, body: bytes) -> tuple[int, bytes, float]:
    conn = target.connection()
    try:
        return post(conn, path, body)
    except OSError as exc:
        return 0, repr(exc).encode(), 0.0
    finally:
        conn.close()


@contextmanager
def probe(target: Target, body: bytes, path: str = VALIDATE) -> Iterator[list[float]]:
    """Send ``body`` every PROBE_INTERVAL while the block runs; yields the latencies (a failed
    probe counts as infinite)."""
    latencies: list[float] = []
    stop = threading.Event()

    def run() -> None:
        conn = target.connection(timeout=30)
        while not stop.is_set():
            try:
                status, _, seconds = post(conn, path, body)
                latencies.append(seconds if status == 200 else float("inf"))
            except (OSError, http.client.HTTPException):
                latencies.append(float("inf"))
                conn.close()
                conn = target.connection(timeout=30)
            stop.wait(PROBE_INTERVAL)
        conn.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield latencies
    finally:
        stop.set()
        thread.join()


def p99(latencies: list[float]) -> float:
    if not latencies:
        return float("nan")
    return sorted(latencies)[min(len(latencies) - 1, int(len(latencies) * 0.99))]


def _promised_bodies(target: Target, bodies: Bodies) -> str:
    socks = []
    for _ in range(16):
        sock = target.tls()
        sock.sendall(
            b"POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 67108864\r\n\r\n"
        )
        socks.append(sock)
    late = post_once(target, "/convert?timeout=4s", bodies.small_conversion)
    time.sleep(3)
    for sock in socks:
        sock.close()
    return f"16 promises of 64 MiB held 3 s; a conversion meanwhile: HTTP {late[0]}"


def _sent_while_waiting(connections: int) -> Callable[[Target, Bodies], str]:
    """``connections`` clients each sending a whole 2 MiB ConversionReview while a promised 60 MiB
    body holds the conversion lane's budget: what the waiting requests' connections hold."""

    def row(target: Target, bodies: Bodies) -> str:
        body = bodies.conversion_500
        with target.tls() as holder:
            holder.sendall(
                b"POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % (60 * MiB)
            )
            before = rss_kib(target.server.pid) / 1024
            head = b"POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"

            def send(_: int) -> ssl.SSLSocket:
                sock = target.tls()
                sock.sendall(head % len(body))
                sock.settimeout(5)
                with contextlib.suppress(OSError):
                    sock.sendall(body)  # the kernel's buffers take what the server does not read
                return sock

            with ThreadPoolExecutor(32) as pool:
                socks = list(pool.map(send, range(connections)))
            held = rss_kib(target.server.pid) / 1024 - before
            for sock in socks:
                sock.close()
        return (
            f"{connections} bodies of {len(body) // 1024} KiB sent while the budget is held: "
            f"{held * 1024 / connections:.0f} KiB held per waiting connection"
        )

    return row


def _send_head(target: Target, head: bytes, filler: bytes, total: int) -> tuple[str, float]:
    """Send ``head`` then ``total`` bytes of ``filler`` 1 MiB at a time; what came back, and when."""
    start = time.perf_counter()
    with target.tls() as sock:
        try:
            sock.sendall(head)
            piece = filler * (MiB // len(filler))
            for _ in range(total // MiB):
                sock.sendall(piece)
            sock.sendall(b"\r\n\r\n")
        except OSError:
            pass
        try:
            answer = sock.recv(4096)
        except OSError as exc:
            answer = repr(exc).encode()
    status = answer.split(b"\r\n", 1)[0].decode("latin-1", "replace") or "closed"
    return status, time.perf_counter() - start


def _huge_heads(target: Target, bodies: Bodies) -> str:
    rows = [
        ("URL", *_send_head(target, b"GET /healthz?", b"a", 32 * MiB)),
        (
            "header value",
            *_send_head(target, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: ", b"v", 32 * MiB),
        ),
        ("header name", *_send_head(target, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-", b"n", 32 * MiB)),
    ]
    return "; ".join(f"{what}: {status} after {seconds:.1f} s" for what, status, seconds in rows)


def _concurrent(count: int, body: bytes) -> Callable[[Target, Bodies], str]:
    def row(target: Target, bodies: Bodies) -> str:
        start = time.perf_counter()
        with ThreadPoolExecutor(count) as pool:
            answers = list(pool.map(lambda _: post_once(target, "/convert", body), range(count)))
        last = time.perf_counter() - start
        codes = sorted(status for status, _, _ in answers)
        return f"HTTP {codes}; last answer after {last:.1f} s"

    return row


def _abandoned(target: Target, bodies: Bodies) -> str:
    pid = target.server.pid
    for _ in range(5):
        with target.tls() as sock:
            sock.sendall(
                b"POST /convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(bodies.largest) + bodies.largest
            )
            time.sleep(1.5)
    # Until the server is idle: what it spent after the last caller had left.
    left = last = cpu_seconds(pid)
    while True:
        time.sleep(0.5)
        now = cpu_seconds(pid)
        if now - last < 0.05:
            break
        last = now
    return f"5 callers gone after 1.5 s each; CPU after the last left: {now - left:.1f} s"


def _admission_during_conversions(target: Target, bodies: Bodies) -> str:
    stop = threading.Event()
    latencies: list[float] = []

    def admit() -> None:
        conn = target.connection()
        while not stop.is_set():
            status, _, seconds = post(conn, MUTATE, bodies.large_admission)
            latencies.append(seconds if status == 200 else float("inf"))
        conn.close()

    with ThreadPoolExecutor(4) as pool:
        admitting = pool.submit(admit)
        converted = list(pool.map(lambda _: post_once(target, "/convert", bodies.largest), range(3)))
        stop.set()
        admitting.result()
    return (
        f"{len(latencies)} DGD CREATEs of {len(bodies.large_admission) // 1024} KiB: p99 "
        f"{p99(latencies) * 1000:.0f} ms; conversions HTTP {sorted(s for s, _, _ in converted)}"
    )


def _mixed(seconds: float) -> Callable[[Target, Bodies], str]:
    def row(target: Target, bodies: Bodies) -> str:
        deadline = time.monotonic() + seconds
        tallies: dict[str, int] = {}
        lock = threading.Lock()
        choices = (
            [("admission", VALIDATE, bodies.admission)] * 60
            + [("conversion", "/convert", bodies.small_conversion)] * 30
            + [("500 DGDs", "/convert", bodies.conversion_500)] * 3
            + [("malformed", VALIDATE, b"{not json")] * 7
        )

        def client(seed: int) -> None:
            rng = random.Random(seed)
            conn = target.connection(timeout=60)
            while time.monotonic() < deadline:
                _, path, body = rng.choice(choices)
                try:
                    status, _, _ = post(conn, path, body)
                except (OSError, http.client.HTTPException):
                    status = 0
                    conn.close()
                    conn = target.connection(timeout=60)
                key = "5xx" if status >= 500 else str(status)
                with lock:
                    tallies[key] = tallies.get(key, 0) + 1
            conn.close()

        with ThreadPoolExecutor(64) as pool:
            list(pool.map(client, range(64)))
        time.sleep(1)
        after = rss_kib(target.server.pid) / 1024
        return f"{sum(tallies.values())} requests, by status {dict(sorted(tallies.items()))}; RSS after {after:.0f} MiB"

    return row


class Bodies:
    """The reviews the rows send, built once."""

    def __init__(self, objects: int) -> None:
        self.largest = orjson.dumps(payloads.list_review(objects))
        self.half = orjson.dumps(payloads.list_review(objects // 2))
        self.conversion_500 = orjson.dumps(payloads.conversion_review(500))
        self.small_conversion = orjson.dumps(payloads.list_review(2))
        self.admission = orjson.dumps(payloads.dgd_migrated_update())
        self.large_admission = orjson.dumps(
            payloads.admission(
                payloads.creating(payloads.migrated(payloads.large_alpha_dgd(300))), None, "CREATE"
            )
        )


def rows(quick: bool, bodies: Bodies) -> list[tuple[str, Callable[[Target, Bodies], str]]]:
    big, half = len(bodies.largest) // MiB, len(bodies.half) // MiB
    return [
        ("bodies promised, never sent", _promised_bodies),
        ("bodies sent while the budget is held", _sent_while_waiting(50 if quick else 120)),
        ("request line and headers of 32 MiB", _huge_heads),
        (f"2 x {big} MiB conversions at once", _concurrent(2, bodies.largest)),
        (f"4 x {big} MiB conversions at once", _concurrent(4, bodies.largest)),
        (f"8 x {half} MiB conversions at once", _concurrent(8, bodies.half)),
        ("a caller giving up after 1.5 s, 5 times", _abandoned),
        ("large admission reviews during 3 conversions", _admission_during_conversions),
        ("mixed load on 64 connections", _mixed(8 if quick else 30)),
    ]


def measure(
    quick: bool = False, only: tuple[str, ...] = (), objects: int | None = None
) -> list[dict[str, Any]]:
    """One result per row (``only``: the rows whose names start so), the largest reviews of
    ``objects`` DGDs (default: 33,000, about 61 MiB; 8,000 with ``quick``)."""
    budget = default_budget(1, POD_LIMIT)
    bodies = Bodies(objects or (8_000 if quick else 33_000))
    results = []
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-bench-hostile-") as tmp:
        work = Path(tmp)
        cafile = ensure_certs(work / "certs")
        for name, row in rows(quick, bodies):
            if only and not name.startswith(only):
                continue
            connections = default_max_connections(1, POD_LIMIT, budget)
            extra = ("--memory-budget", str(budget), "--max-connections", str(connections))
            with start_webhook(work / "certs", work, extra=extra, log_level="warning") as server:
                target = Target(server, cafile)
                post_once(target, "/convert", bodies.small_conversion)  # warm: first-use imports
                idle = rss_kib(server.pid) / 1024
                with probe(target, bodies.admission) as latencies:
                    outcome = row(target, bodies)
                peak = peak_rss_kib(server.pid) / 1024
                alive = server.proc.poll() is None
            failed = sum(1 for x in latencies if x == float("inf"))
            results.append(
                {
                    "row": name,
                    "outcome": outcome,
                    "idle_rss_mib": idle,
                    "peak_rss_mib": peak,
                    "within_limit": peak * MiB <= POD_LIMIT and alive,
                    "probe_p99_ms": p99(latencies) * 1000,
                    "probe_median_ms": statistics.median(latencies) * 1000 if latencies else float("nan"),
                    "probes": len(latencies),
                    "probes_failed": failed,
                }
            )
            print(f"{name}: {outcome}; peak RSS {peak:.0f} MiB", file=sys.stderr, flush=True)
    return results


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        f"Budget {default_budget(1, POD_LIMIT) // MiB} MiB and "
        f"{default_max_connections(1, POD_LIMIT, default_budget(1, POD_LIMIT))} connections (a 256Mi pod's); "
        "probe: a DGD UPDATE review every 50 ms.",
        "",
        "| row | what the row's requests got | peak RSS MiB | within 256 MiB | probe p99 ms | probes failed |",
        "|---|---|---:|---|---:|---:|",
    ]
    lines += [
        f"| {r['row']} | {r['outcome']} | {r['peak_rss_mib']:.0f} | {'yes' if r['within_limit'] else '**no**'} | "
        f"{r['probe_p99_ms']:.0f} | {r['probes_failed']} of {r['probes']} |"
        for r in results
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bench_hostile", description=__doc__.split("\n", 1)[0]
    )
    parser.add_argument("--quick", action="store_true", help="smaller reviews and a shorter mixed load")
    args = parser.parse_args(argv)
    results = measure(args.quick)
    print(table(results))
    return 0 if all(r["within_limit"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
