"""``python -m bench``: the webhook against a bare Starlette+orjson echo server, side by side.

Both servers run at once on loopback with the same TLS pair (one process each); they are loaded
one after the other by the same load generator (:mod:`bench.loadgen`, a separate process) with
the same reviews (:mod:`bench.scenarios`, built by :mod:`bench.payloads` from the upstream
manifests). For each scenario: closed-loop throughput, latency and CPU time per request at the
scenario's connections (in rounds, the webhook, echo and the floor server taking turns), then
open-loop latency at a fixed rate (or one request at a time for ConversionReviews). For two of
them, the whole machine: ``serve --workers 2`` on both CPUs beside the per-core figure
(:mod:`bench.bench_machine`). Then in-process timings: each scenario's review dispatch, and conversion per object of every kind both
ways (:mod:`bench.bench_conversion`), and ConversionReviews of numbers past a double's range beside
realistic ones (:mod:`bench.bench_numbers`). Prints the report and writes
``report.md``, ``results.json`` and ``throughput.png`` (when matplotlib is installed:
``scripts/bootstrap bench``) to ``--out`` (default ``bench/results``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from app.review.reviews import parse_json
from app.server.build import build_kind
from bench import (
    bench_conversion,
    bench_hostile,
    bench_large,
    bench_list,
    bench_machine,
    bench_numbers,
    payloads,
)
from bench.harness import (
    PYTHON,
    ROOT,
    ServerProcess,
    cpu_split,
    ensure_certs,
    loaded_round,
    rss_kib,
    run_loadgen,
    start_echo,
    start_webhook,
    write_spec,
)
from bench.report import build_rows, chart, ratio, report
from bench.scenarios import SCENARIOS, Scenario, dispatcher

DURATION = 5.0
QUICK_DURATION = 1.5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def latency_duration(duration: float) -> float:
    """Seconds of the latency run (open loop, or one review at a time): a percentile needs fewer
    seconds than a throughput figure."""
    return max(1.5, round(duration * 0.6, 1))


ROUNDS = 5


def _pinning_text(split: tuple[set[int], set[int]] | None) -> str:
    """How the servers and the load generator share the CPUs, for the report."""
    if split is None:
        return ""
    servers, loadgen = split
    return f"each server on CPU {', '.join(map(str, sorted(servers)))}, the load generator on CPU {', '.join(map(str, sorted(loadgen)))}"


def closed_rounds(
    servers: list[ServerProcess],
    cafile: Path,
    sc: Scenario,
    spec: Path,
    work: Path,
    args: argparse.Namespace,
    cpus: set[int] | None = None,
) -> dict[str, dict[str, Any]]:
    """Closed-loop load on each server, ``--rounds`` slices of ``duration / rounds`` seconds each,
    the servers taking turns and their order rotating from round to round (each runs first, in
    the middle and last in turn). Every slice records the server's CPU time per answered request.
    A burst of other load on a shared machine then falls on every server alike, and the report
    compares each round's figures with the same round's echo (the median of those ratios) instead
    of one server's whole run with another's seconds later. ``cpus``: where the load generator
    runs (:func:`bench.harness.cpu_split`). Returns each server's figures
    (:func:`combine_rounds`), by server name."""
    for server in servers:  # warm-up
        run_loadgen(
            server.port,
            cafile,
            spec,
            work / "warm.json",
            connections=sc.connections,
            duration=0.5 if args.quick else 1.0,
            cpus=cpus,
        )
    rounds: dict[str, list[dict[str, Any]]] = {server.name: [] for server in servers}
    seconds = args.duration / args.rounds
    for index in range(args.rounds):
        shift = index % len(servers)
        for server in servers[shift:] + servers[:shift]:
            out = work / f"{server.name}-{sc.name}.json"
            got = loaded_round(
                server, cafile, spec, out, connections=sc.connections, duration=seconds, cpus=cpus
            )
            rounds[server.name].append(got)
    return {name: combine_rounds(got) for name, got in rounds.items()}


def combine_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One server's closed-loop figures from its rounds: the median round's throughput, latency
    percentiles and CPU time per request, the requests and errors of all, and the rounds."""
    return {
        "rps": statistics.median(r["rps"] for r in rounds),
        "p50_ms": statistics.median(r["p50_ms"] for r in rounds),
        "p99_ms": statistics.median(r["p99_ms"] for r in rounds),
        "cpu_ms_per_request": statistics.median(r["cpu_ms_per_request"] for r in rounds),
        "ok": sum(r["ok"] for r in rounds),
        "errors": sum(r["errors"] for r in rounds),
        "rounds": rounds,
    }


def latency_run(
    server: ServerProcess,
    cafile: Path,
    sc: Scenario,
    spec: Path,
    work: Path,
    args: argparse.Namespace,
    cpus: set[int] | None = None,
) -> dict[str, Any]:
    """Open-loop latency at the scenario's rate, or one review at a time for ConversionReviews
    (the load generator on ``cpus``)."""
    out = work / f"{server.name}-{sc.name}.json"
    seconds = latency_duration(args.duration)
    if sc.rate:
        return {
            "open": run_loadgen(
                server.port, cafile, spec, out, connections=8, rate=sc.rate, duration=seconds, cpus=cpus
            )
        }
    # One review at a time: the latency the apiserver sees for a large list conversion.
    return {"single": run_loadgen(server.port, cafile, spec, out, connections=1, duration=seconds, cpus=cpus)}


def whole_machine(
    scenarios: list[Scenario],
    per_core: ServerProcess,
    cert_dir: Path,
    cafile: Path,
    work: Path,
    args: argparse.Namespace,
    loadgen_cpus: set[int] | None,
    results: dict[str, Any],
) -> None:
    """Each of ``scenarios`` on the whole machine beside the pinned webhook (:mod:`bench.bench_machine`):
    the figures of each go to the scenario's entry, under ``machine``."""
    log(
        f"the whole machine: serve --workers {bench_machine.WORKERS}, not pinned, beside the per-core webhook"
    )
    started = time.monotonic()
    with bench_machine.start(cert_dir, work) as whole:
        for sc in scenarios:
            log(f"  {sc.title}: {bench_machine.ROUNDS} rounds each")
            spec = work / f"{sc.name}-spec.json"
            rounds = bench_machine.measure(
                per_core, whole, cafile, spec, work, sc.connections, args.quick, loadgen_cpus
            )
            results["scenarios"][sc.name]["machine"] = {
                key: combine_rounds(got) for key, got in rounds.items()
            }
    results["meta"]["machine_seconds"] = round(time.monotonic() - started, 1)


def _cpu_per_call(
    prepare: Callable[[], Any], call: Callable[[Any], object], budget: float, rounds: int = 5
) -> float:
    """Process CPU time of ``call(prepare())`` in ms, ``prepare`` not counted: the median of
    ``rounds`` rounds' means, over about ``budget`` seconds of CPU in all (after a few warm-up
    calls). The median of rounds keeps a burst of other load on a shared machine out of it."""
    for _ in range(3):
        call(prepare())
    means = []
    for _ in range(rounds):
        n, spent = 0, 0.0
        while spent < budget / rounds or n < 2:
            arg = prepare()
            start = time.process_time()
            call(arg)
            spent += time.process_time() - start
            n += 1
        means.append(spent / n * 1000)
    return statistics.median(means)


def inprocess(scenarios: list[Scenario], budget: float, quick: bool) -> dict[str, Any]:
    """CPU time per review inside one process (no HTTP): JSON decode of each scenario's body
    (alone, and with the nesting check, as the server reads it) and its whole dispatch
    (``review_admission`` / ``review_conversion`` on the decoded review, as the server calls it),
    and conversion per object of every kind both ways."""
    timings: dict[str, Any] = {}
    for sc in scenarios:
        body = orjson.dumps(sc.build())
        dispatch = dispatcher(sc)
        per_review = budget * (4 if sc.objects else 1)
        timings[sc.name] = {
            "body_kib": len(body) / 1024,
            "decode_ms": _cpu_per_call(functools.partial(bytes, body), orjson.loads, per_review / 4),
            # What the server does with the body before the dispatch: the decode and the nesting check.
            "parse_ms": _cpu_per_call(functools.partial(bytes, body), parse_json, per_review / 4),
            "dispatch_ms": _cpu_per_call(functools.partial(orjson.loads, body), dispatch, per_review),
        }
    conversion = bench_conversion.measure(5, 0.04) if quick else bench_conversion.measure(10, 0.08)
    return {"scenarios": timings, "conversion": conversion}


def domain_benches() -> dict[str, str]:
    """Output of the validation micro-benchmark (when present)."""
    out: dict[str, str] = {}
    for module in ("bench.bench_validation",):
        if not (ROOT / (module.replace(".", "/") + ".py")).exists():
            continue
        try:
            proc = subprocess.run(
                [PYTHON, "-m", module], cwd=ROOT, capture_output=True, text=True, timeout=300
            )
            out[module] = proc.stdout.strip() or proc.stderr.strip()[-2000:]
        except subprocess.TimeoutExpired:
            out[module] = "timed out"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--duration",
        type=float,
        default=DURATION,
        help=f"seconds of closed-loop load per scenario and server (default {DURATION:g}; the latency "
        "run takes 0.6 of it)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help=f"slices the closed-loop load is cut into, the servers taking turns (default {ROUNDS})",
    )
    parser.add_argument(
        "--quick", action="store_true", help=f"short run ({QUICK_DURATION:g} s per phase) for a smoke check"
    )
    parser.add_argument(
        "--scenarios",
        default="",
        help="comma-separated scenario names to run (default all: "
        + ", ".join(sc.name for sc in SCENARIOS)
        + ")",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--no-domain-benches", action="store_true")
    parser.add_argument(
        "--large-sizes",
        default=",".join(map(str, bench_large.SIZES)),
        help="objects per large ConversionReview (bench.bench_large; default %(default)s; empty: none)",
    )
    parser.add_argument(
        "--list-sizes",
        default=None,
        help="DGDs stored as v1alpha1 the LIST benchmark reads through a real kube-apiserver "
        f"(bench.bench_list; default {','.join(map(str, bench_list.SIZES))}, 100 with --quick; "
        "e.g. 1000,10000; empty: none)",
    )
    parser.add_argument(
        "--operator-webhook",
        default=None,
        metavar="PATH",
        help="the operator's webhook binary (tools/opdiff/prepare) the LIST benchmark measures beside "
        f"the service (default ${bench_list.OPERATOR_ENV}); without it, the service alone, saying so",
    )
    parser.add_argument(
        "--no-hostile",
        action="store_true",
        help="leave out the hostile mix (bench.bench_hostile, a few minutes)",
    )
    parser.add_argument(
        "--no-machine",
        action="store_true",
        help="leave out the whole-machine run (bench.bench_machine: serve --workers 2 on both CPUs, about a minute)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.duration = QUICK_DURATION
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    try:
        bench_list.parse_sizes(args.list_sizes or "")
    except ValueError as err:
        parser.error(f"--list-sizes: {err}")
    wanted = [s for s in args.scenarios.split(",") if s]
    unknown = set(wanted) - {sc.name for sc in SCENARIOS}
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    scenarios = [sc for sc in SCENARIOS if not wanted or sc.name in wanted]
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    # Where the servers and the load generator run: what the report says is what the run does.
    split = cpu_split()
    server_cpus, loadgen_cpus = split if split is not None else (None, None)
    results: dict[str, Any] = {
        "meta": {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "python": platform.python_version(),
            "build": build_kind(),
            "pinned": _pinning_text(split),
            "duration": args.duration,
            "latency_duration": latency_duration(args.duration),
            "rounds": args.rounds,
            "command": " ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])]),
        },
        "scenarios": {},
    }
    rss: dict[str, list[int]] = {"dynamo-webhook": [], "echo": []}
    admission_rss = 0  # the webhook's RSS before the first (large) ConversionReview
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-bench-") as tmp:
        work = Path(tmp)
        cert_dir = work / "certs"
        cafile = ensure_certs(cert_dir)
        log("starting dynamo-webhook serve (1 worker), its floor (no rules) and the echo server")
        with (
            start_webhook(cert_dir, work, cpus=server_cpus) as webhook,
            start_echo(cert_dir, work, cpus=server_cpus) as echo,
            start_webhook(cert_dir, work, floor=True, cpus=server_cpus) as floor,
        ):
            for sc in scenarios:
                if sc.objects and not admission_rss:
                    admission_rss = rss_kib(webhook.pid)
                body = payloads.dump(sc.build(), work / f"{sc.name}.json")
                spec = write_spec(
                    work / f"{sc.name}-spec.json",
                    [
                        {
                            "name": sc.name,
                            "path": sc.path,
                            "body_file": str(body),
                            "status": 200,
                            "expect": sc.expect,
                        }
                    ],
                )
                log(f"  {sc.title}: closed loop, {args.rounds} rounds")
                closed = closed_rounds([webhook, echo, floor], cafile, sc, spec, work, args, loadgen_cpus)
                entry: dict[str, Any] = {"floor": {"closed": closed[floor.name]}}
                for server, key in ((webhook, "webhook"), (echo, "echo")):
                    log(f"  {sc.title}: {key} latency")
                    rss[server.name].append(rss_kib(server.pid))
                    latency = latency_run(server, cafile, sc, spec, work, args, loadgen_cpus)
                    entry[key] = {"closed": closed[server.name], **latency}
                    rss[server.name].append(rss_kib(server.pid))
                results["scenarios"][sc.name] = entry
            machine = [sc for sc in scenarios if sc.name in bench_machine.SCENARIOS and not args.no_machine]
            if machine:
                whole_machine(machine, webhook, cert_dir, cafile, work, args, loadgen_cpus, results)
            web_rss = rss["dynamo-webhook"]
            results["rss"] = {
                "webhook_steady_mib": rss_kib(webhook.pid) / 1024,
                "webhook_max_mib": max(web_rss) / 1024,
                "webhook_before_conversion_mib": (admission_rss or rss_kib(webhook.pid)) / 1024,
                "webhook_samples_kib": web_rss,
                "echo_steady_mib": rss_kib(echo.pid) / 1024,
                "echo_samples_kib": rss["echo"],
            }
            results["rss"]["ratio"] = ratio(
                results["rss"]["webhook_steady_mib"], results["rss"]["echo_steady_mib"]
            )
    sizes = tuple(int(n) for n in args.large_sizes.split(",") if n)
    if sizes:
        log(f"large ConversionReviews: {', '.join(map(str, sizes))} objects, a server each")
        results["large_reviews"] = bench_large.measure(sizes)
    list_sizes = (
        args.list_sizes
        if args.list_sizes is not None
        else ("100" if args.quick else ",".join(map(str, bench_list.SIZES)))
    )
    if list_sizes:
        log(f"LIST through the conversion webhook: {list_sizes} DGDs")
        results["list"] = bench_list.measure_with(
            bench_list.parse_sizes(list_sizes), bench_list.BUILDS, args.operator_webhook
        )
    if not args.no_hostile:
        log("the hostile mix: a server each row")
        results["hostile"] = bench_hostile.measure(args.quick)
    log("in-process timings")
    results["inprocess"] = inprocess(scenarios, 0.3 if args.quick else 1.0, args.quick)
    results["numbers"] = bench_numbers.measure(args.quick)
    if not args.no_domain_benches and not args.quick:
        results["domain_benches"] = domain_benches()
    results["meta"]["run_seconds"] = round(time.monotonic() - started, 1)
    rows = build_rows(results)
    has_chart = chart(rows, args.out / "throughput.png", results.get("large_reviews", []))
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    text = report(results, rows, args.out, has_chart)
    print(text)
    log(f"run took {results['meta']['run_seconds']:.0f} s")
    if not has_chart:
        log("matplotlib not installed: no chart (scripts/bootstrap bench installs it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
