"""HTTPS load generator: asyncio (uvloop when available), keep-alive HTTP/1.1, one process.

Runs as its own process so its CPU use is not charged to the server under test::

    python -m bench.loadgen --port 9443 --cafile ca.crt --spec spec.json --connections 16 --duration 10

``spec.json`` lists the requests to send, each picked by weight::

    [{"name": "validate", "path": "/validate", "body_file": "review.json", "status": 200,
      "expect": "uid-1", "weight": 1, "content_type": "application/json"}]

A request counts as an error when it gets no complete response, a status other than
``status``, or a body without ``expect`` (when given). Without ``--rate`` every connection
sends its next request as soon as the previous answer arrives (closed loop, for throughput);
with ``--rate`` requests are sent on a fixed schedule and latency is measured from the
scheduled time (open loop, so a slow server cannot hide its queueing). The run always ends
after ``--duration`` seconds (plus a bounded wait for the last answers) or ``--max-requests``.
The summary is one JSON object on stdout (or ``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import ssl
import sys
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Seconds a request may take before it counts as an error (the apiserver's default webhook timeout).
REQUEST_TIMEOUT = 10.0


@dataclass
class Kind:
    name: str
    request: bytes
    status: int
    expect: bytes
    weight: float
    latencies: array[float] = field(default_factory=lambda: array("d"))
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    timeline: dict[int, list[int]] = field(default_factory=dict)  # second -> [ok, errors]

    def record(self, second: int, ok: bool, latency: float, reason: str = "") -> None:
        slot = self.timeline.setdefault(second, [0, 0])
        if ok:
            self.latencies.append(latency)
            slot[0] += 1
        else:
            self.errors += 1
            slot[1] += 1
            if len(self.error_samples) < 5:
                self.error_samples.append(reason)


def build_request(path: str, body: bytes, content_type: str, host: str) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def load_spec(spec: list[dict[str, Any]], host: str) -> list[Kind]:
    kinds = []
    for entry in spec:
        # "body": inline, one character per byte (latin-1), so any byte sequence can be sent.
        body = (
            Path(entry["body_file"]).read_bytes()
            if "body_file" in entry
            else entry.get("body", "").encode("latin-1")
        )
        kinds.append(
            Kind(
                name=str(entry["name"]),
                request=build_request(
                    str(entry["path"]), body, str(entry.get("content_type", "application/json")), host
                ),
                status=int(entry.get("status", 200)),
                expect=str(entry.get("expect", "")).encode(),
                weight=float(entry.get("weight", 1.0)),
            )
        )
    return kinds


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """(status, body, keep_alive) of one response with a Content-Length body or a chunked one
    (as Go's net/http sends an answer larger than its buffer: the operator's handlers)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = 0
    keep_alive = True
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        lname = name.strip().lower()
        if lname == b"content-length":
            length = int(value)
        elif lname == b"connection" and value.strip().lower() == b"close":
            keep_alive = False
        elif lname == b"transfer-encoding" and value.strip().lower() == b"chunked":
            chunked = True
    if chunked:
        return status, await read_chunks(reader), keep_alive
    body = await reader.readexactly(length) if length else b""
    return status, body, keep_alive


async def read_chunks(reader: asyncio.StreamReader) -> bytes:
    """A chunked body, its chunks joined (trailers skipped)."""
    chunks = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


@dataclass
class Run:
    host: str
    port: int
    ctx: ssl.SSLContext
    kinds: list[Kind]
    duration: float
    rate: float | None
    connections: int
    max_requests: int | None
    new_connection_every: int
    started: float = 0.0
    sent: int = 0
    connect_errors: int = 0
    connections_opened: int = 0

    def pick(self, rng: random.Random) -> Kind:
        if len(self.kinds) == 1:
            return self.kinds[0]
        return rng.choices(self.kinds, weights=[k.weight for k in self.kinds])[0]

    def more(self) -> bool:
        if self.max_requests is not None and self.sent >= self.max_requests:
            return False
        return time.perf_counter() - self.started < self.duration

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(
                self.host, self.port, ssl=self.ctx, server_hostname="localhost", limit=1 << 26
            ),
            REQUEST_TIMEOUT,
        )
        self.connections_opened += 1
        return reader, writer

    async def worker(self, index: int) -> None:
        rng = random.Random(index)
        interval = self.connections / self.rate if self.rate else 0.0
        next_at = self.started + rng.random() * interval
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        used = 0
        try:
            while self.more():
                if interval:
                    delay = next_at - time.perf_counter()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    if not self.more():
                        break
                    scheduled = next_at
                    next_at += interval
                else:
                    scheduled = time.perf_counter()
                kind = self.pick(rng)
                self.sent += 1
                if conn is None:
                    try:
                        conn = await self.connect()
                        used = 0
                    except (OSError, TimeoutError, ssl.SSLError) as exc:
                        self.connect_errors += 1
                        kind.record(int(scheduled - self.started), False, 0.0, f"connect: {exc!r}")
                        await asyncio.sleep(0.05)
                        continue
                reader, writer = conn
                try:
                    writer.write(kind.request)
                    status, body, keep_alive = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT)
                except (
                    OSError,
                    TimeoutError,
                    asyncio.IncompleteReadError,
                    asyncio.LimitOverrunError,
                    ssl.SSLError,
                    ValueError,
                    IndexError,
                ) as exc:
                    kind.record(int(scheduled - self.started), False, 0.0, f"request: {exc!r}")
                    writer.close()
                    conn = None
                    continue
                latency = time.perf_counter() - scheduled
                ok = status == kind.status and (not kind.expect or kind.expect in body)
                reason = "" if ok else f"status {status}: {body[:200]!r}"
                kind.record(int(scheduled - self.started), ok, latency, reason)
                used += 1
                if not keep_alive or (self.new_connection_every and used >= self.new_connection_every):
                    writer.close()
                    conn = None
        finally:
            if conn is not None:
                conn[1].close()

    async def run(self) -> None:
        self.started = time.perf_counter()
        tasks = [asyncio.create_task(self.worker(i)) for i in range(self.connections)]
        # Bounded: every task stops by itself at the deadline; the timeout is a second guard.
        done, pending = await asyncio.wait(tasks, timeout=self.duration + REQUEST_TIMEOUT + 5)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for task in done:
            exc = task.exception()
            if exc is not None:
                raise exc


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summarize(run: Run, elapsed: float) -> dict[str, Any]:
    kinds: dict[str, Any] = {}
    total_ok = total_err = 0
    for kind in run.kinds:
        lat = list(kind.latencies)
        total_ok += len(lat)
        total_err += kind.errors
        kinds[kind.name] = {
            "ok": len(lat),
            "errors": kind.errors,
            "error_samples": kind.error_samples,
            "rps": len(lat) / elapsed if elapsed else 0.0,
            "p50_ms": percentile(lat, 50) * 1000,
            "p90_ms": percentile(lat, 90) * 1000,
            "p99_ms": percentile(lat, 99) * 1000,
            "max_ms": max(lat) * 1000 if lat else 0.0,
            "mean_ms": sum(lat) / len(lat) * 1000 if lat else 0.0,
            "timeline": {str(k): v for k, v in sorted(kind.timeline.items())},
        }
    all_lat = [x for kind in run.kinds for x in kind.latencies]
    return {
        "elapsed_s": elapsed,
        "connections": run.connections,
        "rate": run.rate,
        "ok": total_ok,
        "errors": total_err,
        "connect_errors": run.connect_errors,
        "connections_opened": run.connections_opened,
        "rps": total_ok / elapsed if elapsed else 0.0,
        "p50_ms": percentile(all_lat, 50) * 1000,
        "p99_ms": percentile(all_lat, 99) * 1000,
        "kinds": kinds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cafile", required=True)
    parser.add_argument("--spec", required=True, help="JSON file listing the requests (see module doc)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds (hard upper bound 3600)")
    parser.add_argument("--rate", type=float, default=None, help="total requests/s (open loop)")
    parser.add_argument("--max-requests", type=int, default=None)
    parser.add_argument(
        "--new-connection-every",
        type=int,
        default=0,
        help="close and reopen a connection after this many requests (0: keep)",
    )
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("only loopback targets are allowed")
    loop_factory = None
    with contextlib.suppress(ImportError):
        import uvloop

        loop_factory = uvloop.new_event_loop
    ctx = ssl.create_default_context(cafile=args.cafile)
    run = Run(
        host=args.host,
        port=args.port,
        ctx=ctx,
        kinds=load_spec(json.loads(Path(args.spec).read_text()), args.host),
        duration=min(float(args.duration), 3600.0),
        rate=args.rate,
        connections=args.connections,
        max_requests=args.max_requests,
        new_connection_every=args.new_connection_every,
    )
    started = time.perf_counter()
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(run.run())
    summary = summarize(
        run,
        min(time.perf_counter() - started, run.duration)
        if run.max_requests is None
        else time.perf_counter() - started,
    )
    text = json.dumps(summary)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
