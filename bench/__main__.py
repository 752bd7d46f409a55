"""``python -m bench``: the webhook against a bare Starlette+orjson echo server, side by side.

Both servers run at once on loopback with the same TLS pair (one process each); they are loaded
one after the other by the same load generator (:mod:`bench.loadgen`, a separate process) with
the same reviews. For each scenario: closed-loop throughput and latency at ``--connections``,
and open-loop latency at a fixed ``--rate``. Then in-process timings (validate + default of a
typical DGD, conversion per object). Prints a table and writes ``report.md``, ``results.json``
and ``throughput.png`` (when matplotlib is installed: ``scripts/bootstrap bench``) to
``--out`` (default ``bench/results``).
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kinds
from bench import payloads
from bench.harness import (
    PYTHON,
    ROOT,
    ServerProcess,
    cpu_seconds,
    ensure_certs,
    rss_kib,
    run_loadgen,
    start_echo,
    start_webhook,
    write_spec,
)

TARGETS = {
    "validate_throughput_ratio": 0.60,
    "mutate_throughput_ratio": 0.50,
    "p99_ratio": 2.0,
    "conversion_ms_per_object": 0.25,
    "conversion_review_ms": 150.0,
    "rss_mib": 120.0,
    "inprocess_validate_default_ms": 0.3,
}


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    path: str
    build: Callable[[], dict[str, Any]]
    expect: str
    connections: int
    rate: float
    target_ratio: float | None = None


SCENARIOS = (
    Scenario(
        "validate",
        "DGD UPDATE /validate",
        "/validate",
        payloads.dgd_update,
        '"allowed":true',
        16,
        200,
        TARGETS["validate_throughput_ratio"],
    ),
    Scenario(
        "mutate",
        "DGD CREATE /mutate",
        "/mutate",
        payloads.dgd_create,
        '"allowed":true',
        16,
        200,
        TARGETS["mutate_throughput_ratio"],
    ),
    Scenario("dgdr", "DGDR CREATE /validate", "/validate", payloads.dgdr_create, '"allowed":true', 16, 200),
    Scenario(
        "convert500",
        "ConversionReview 500 DGDs /convert",
        "/convert",
        payloads.conversion_review,
        '"status":"Success"',
        2,
        1,
    ),
)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def measure(
    server: ServerProcess,
    cafile: Path,
    sc: Scenario,
    spec: Path,
    work: Path,
    args: argparse.Namespace,
    rss: dict[str, list[int]],
) -> dict[str, Any]:
    out = work / f"{server.name}-{sc.name}.json"
    quick = args.quick
    warm = 1.0 if quick else 2.0
    run_loadgen(server.port, cafile, spec, out, connections=sc.connections, duration=warm)
    cpu_before = cpu_seconds(server.pid)
    closed = run_loadgen(server.port, cafile, spec, out, connections=sc.connections, duration=args.duration)
    cpu = cpu_seconds(server.pid) - cpu_before
    # CPU time per answered request: unlike req/s, not skewed by other load on a shared machine.
    closed["cpu_ms_per_request"] = cpu / closed["ok"] * 1000 if closed["ok"] else 0.0
    rss[server.name].append(rss_kib(server.pid))
    result: dict[str, Any] = {"closed": closed}
    if sc.name == "convert500":
        # One review at a time: the latency the apiserver sees for a large list conversion.
        result["single"] = run_loadgen(
            server.port, cafile, spec, out, connections=1, duration=max(2.0, args.duration / 2)
        )
    else:
        result["open"] = run_loadgen(
            server.port, cafile, spec, out, connections=8, rate=sc.rate, duration=max(2.0, args.duration / 2)
        )
    rss[server.name].append(rss_kib(server.pid))
    return result


def inprocess(budget: float) -> dict[str, float]:
    """Per-call timings inside one process (no HTTP): validate+default of a typical DGD, the
    whole admission dispatch, and conversion per object."""
    from app.dispatch import review_admission, review_conversion
    from app.reviews import admission_input, read_admission_review
    from app.settings import Settings
    from domain.admission import AdmissionContext

    ctx = AdmissionContext(settings=Settings().admission_settings())
    create = payloads.dgd_create()
    inp = admission_input(read_admission_review(create))
    update = payloads.dgd_update()
    upd = admission_input(read_admission_review(update))
    conv = payloads.conversion_review(500)
    objects = conv["request"]["objects"]
    desired = conv["request"]["desiredAPIVersion"]

    def per_call(fn: Callable[[], object]) -> float:
        fn()
        n, start = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                return elapsed / n * 1000

    def convert_all() -> None:
        for obj in objects:
            kinds.convert(obj, desired)

    return {
        "validate_default_create_ms": per_call(
            lambda: (kinds.default(inp, ctx), kinds.validate(inp, ctx))
        ),
        "validate_update_ms": per_call(lambda: kinds.validate(upd, ctx)),
        "dispatch_validate_update_ms": per_call(lambda: review_admission(update, "validate", ctx)),
        "dispatch_mutate_create_ms": per_call(lambda: review_admission(create, "mutate", ctx)),
        "conversion_ms_per_object": per_call(convert_all) / len(objects),
        "conversion_review_500_ms": per_call(lambda: review_conversion(conv)),
    }


def domain_benches() -> dict[str, str]:
    """Output of the domain packages' own micro-benchmarks (when present)."""
    out: dict[str, str] = {}
    for module in ("bench.bench_conversion", "bench.bench_validation"):
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


def ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def build_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for sc in SCENARIOS:
        web, echo = results["scenarios"][sc.name]["webhook"], results["scenarios"][sc.name]["echo"]
        wc, ec = web["closed"], echo["closed"]
        row = {
            "scenario": sc.title,
            "name": sc.name,
            "rps": wc["rps"],
            "echo_rps": ec["rps"],
            "rps_ratio": ratio(wc["rps"], ec["rps"]),
            "p50": wc["p50_ms"],
            "p99": wc["p99_ms"],
            "echo_p50": ec["p50_ms"],
            "echo_p99": ec["p99_ms"],
            "p99_ratio": ratio(wc["p99_ms"], ec["p99_ms"]),
            "cpu_ms": wc["cpu_ms_per_request"],
            "echo_cpu_ms": ec["cpu_ms_per_request"],
            "cpu_ratio": ratio(ec["cpu_ms_per_request"], wc["cpu_ms_per_request"]),
            "errors": wc["errors"] + web.get("open", web.get("single", {})).get("errors", 0),
            "echo_errors": ec["errors"] + echo.get("open", echo.get("single", {})).get("errors", 0),
            "target_ratio": sc.target_ratio,
        }
        extra = web.get("open") or web.get("single")
        extra_echo = echo.get("open") or echo.get("single")
        row["lat_mode"] = "open" if "open" in web else "single"
        row["lat_p50"], row["lat_p99"] = extra["p50_ms"], extra["p99_ms"]
        row["echo_lat_p50"], row["echo_lat_p99"] = extra_echo["p50_ms"], extra_echo["p99_ms"]
        row["lat_p99_ratio"] = ratio(extra["p99_ms"], extra_echo["p99_ms"])
        rows.append(row)
    return rows


def verdicts(results: dict[str, Any], rows: list[dict[str, Any]]) -> list[tuple[str, str, str, bool]]:
    out: list[tuple[str, str, str, bool]] = []
    by = {r["name"]: r for r in rows}
    for name, key in (("validate", "validate_throughput_ratio"), ("mutate", "mutate_throughput_ratio")):
        got = by[name]["rps_ratio"]
        out.append(
            (
                f"{name} throughput vs echo (req/s)",
                f">= {TARGETS[key]:.0%}",
                f"{got:.0%}",
                got >= TARGETS[key],
            )
        )
        got = by[name]["cpu_ratio"]
        out.append(
            (
                f"{name} throughput vs echo (CPU per request)",
                f">= {TARGETS[key]:.0%}",
                f"{got:.0%}",
                got >= TARGETS[key],
            )
        )
    for name in ("validate", "mutate", "dgdr"):
        got = by[name]["p99_ratio"]
        out.append(
            (f"{name} p99 vs echo (closed loop)", "<= 2.0x", f"{got:.2f}x", got <= TARGETS["p99_ratio"])
        )
        got = by[name]["lat_p99_ratio"]
        out.append((f"{name} p99 vs echo (open loop)", "<= 2.0x", f"{got:.2f}x", got <= TARGETS["p99_ratio"]))
    ip = results["inprocess"]
    got = ip["conversion_ms_per_object"]
    out.append(
        (
            "conversion per object (in process)",
            "<= 0.25 ms",
            f"{got:.3f} ms",
            got <= TARGETS["conversion_ms_per_object"],
        )
    )
    got = by["convert500"]["lat_p50"]
    out.append(
        (
            "500-object ConversionReview over HTTPS (p50, one at a time)",
            "<= 150 ms",
            f"{got:.1f} ms",
            got <= TARGETS["conversion_review_ms"],
        )
    )
    got = ip["validate_default_create_ms"]
    out.append(
        (
            "validate + default of a typical DGD (in process)",
            "<= 0.3 ms",
            f"{got:.3f} ms",
            got <= TARGETS["inprocess_validate_default_ms"],
        )
    )
    got = results["rss"]["webhook_steady_mib"]
    out.append(
        ("webhook RSS, steady (end of run)", "<= 120 MiB", f"{got:.1f} MiB", got <= TARGETS["rss_mib"])
    )
    return out


def table(results: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | webhook req/s | echo req/s | ratio | CPU ms/req (echo) | CPU ratio | p50 ms (echo) | "
        "p99 ms (echo) | p99 ratio | latency mode: p50 / p99 ms (echo p99) | errors (echo) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        mode = f"{r['lat_mode']}: {r['lat_p50']:.2f} / {r['lat_p99']:.2f} ({r['echo_lat_p99']:.2f})"
        lines.append(
            f"| {r['scenario']} | {r['rps']:.0f} | {r['echo_rps']:.0f} | {r['rps_ratio']:.2f} | "
            f"{r['cpu_ms']:.3f} ({r['echo_cpu_ms']:.3f}) | {r['cpu_ratio']:.2f} | "
            f"{r['p50']:.2f} ({r['echo_p50']:.2f}) | {r['p99']:.2f} ({r['echo_p99']:.2f}) | {r['p99_ratio']:.2f} | "
            f"{mode} | {r['errors']} ({r['echo_errors']}) |"
        )
    rss = results["rss"]
    lines.append("")
    lines.append(
        f"RSS: webhook steady {rss['webhook_steady_mib']:.1f} MiB (max {rss['webhook_max_mib']:.1f}), "
        f"echo steady {rss['echo_steady_mib']:.1f} MiB (ratio {rss['ratio']:.2f})"
    )
    return "\n".join(lines)


def chart(rows: list[dict[str, Any]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = [r["name"] for r in rows]
    x = range(len(rows))
    w = 0.38
    ax1.bar([i - w / 2 for i in x], [r["rps"] for r in rows], w, label="dynamo-webhook")
    ax1.bar([i + w / 2 for i in x], [r["echo_rps"] for r in rows], w, label="echo (Starlette+orjson)")
    ax1.set_xticks(list(x), names)
    ax1.set_ylabel("requests/s (closed loop)")
    ax1.set_yscale("log")
    ax1.set_title("Throughput, one process")
    ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2, fontsize=8)
    for i, r in enumerate(rows):
        ax1.annotate(f"{r['rps_ratio']:.0%}", (i - w / 2, r["rps"]), ha="center", va="bottom", fontsize=8)
    ax2.bar([i - w / 2 for i in x], [r["p99"] for r in rows], w, label="webhook p99")
    ax2.bar([i + w / 2 for i in x], [r["echo_p99"] for r in rows], w, label="echo p99")
    ax2.set_xticks(list(x), names)
    ax2.set_yscale("log")
    ax2.set_ylabel("ms")
    ax2.set_title("p99 latency (closed loop)")
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def report(results: dict[str, Any], rows: list[dict[str, Any]], out: Path, has_chart: bool) -> str:
    v = verdicts(results, rows)
    meta = results["meta"]
    lines = [
        "# dynamo-webhook benchmark",
        "",
        f"Run {meta['date']} on {meta['machine']} ({meta['cpus']} CPUs, load average at start "
        f"{meta['loadavg_start']}), Python {meta['python']}. Command: `{meta['command']}`.",
        "",
        f"One process each, TLS, keep-alive HTTP/1.1; closed loop for {meta['duration']:g} s per scenario "
        f"(16 connections; 2 for conversion), then latency either open loop at a fixed rate "
        f"(200 req/s, 8 connections) or one request at a time (conversion). The webhook runs as deployed "
        f'(log level info: one JSON log line per review). "CPU ratio" is echo CPU time per request over the '
        f"webhook's: the throughput ratio the two would reach with a core each, independent of other load on "
        f"the machine.",
        "",
        table(results, rows),
        "",
        "## Targets",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---|---|",
    ]
    lines += [f"| {name} | {want} | {got} | {'yes' if ok else '**no**'} |" for name, want, got, ok in v]
    lines += ["", "## In process", "", "| timing | ms |", "|---|---:|"]
    lines += [f"| {k} | {val:.4f} |" for k, val in results["inprocess"].items()]
    for module, text in results.get("domain_benches", {}).items():
        lines += ["", f"`python -m {module}`:", "", "```", text, "```"]
    if has_chart:
        lines += ["", "![throughput and p99](throughput.png)"]
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--duration", type=float, default=8.0, help="seconds of closed-loop load per scenario"
    )
    parser.add_argument("--quick", action="store_true", help="short run (2 s per phase) for a smoke check")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--no-domain-benches", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.duration = 2.0
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "meta": {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "python": platform.python_version(),
            "duration": args.duration,
            "command": "python -m bench"
            + (" --quick" if args.quick else "")
            + (f" --duration {args.duration:g}" if not args.quick and args.duration != 8.0 else ""),
        },
        "scenarios": {},
    }
    rss: dict[str, list[int]] = {"dynamo-webhook": [], "echo": []}
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-bench-") as tmp:
        work = Path(tmp)
        cert_dir = work / "certs"
        cafile = ensure_certs(cert_dir)
        log("starting dynamo-webhook serve (1 worker) and the echo server")
        with start_webhook(cert_dir, work) as webhook, start_echo(cert_dir, work) as echo:
            for sc in SCENARIOS:
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
                entry = {}
                for server, key in ((webhook, "webhook"), (echo, "echo")):
                    log(f"  {sc.title}: {key}")
                    entry[key] = measure(server, cafile, sc, spec, work, args, rss)
                results["scenarios"][sc.name] = entry
            web_rss = rss["dynamo-webhook"]
            echo_rss = rss["echo"]
            results["rss"] = {
                "webhook_steady_mib": rss_kib(webhook.pid) / 1024,
                "webhook_max_mib": max(web_rss) / 1024,
                "webhook_samples_kib": web_rss,
                "echo_steady_mib": rss_kib(echo.pid) / 1024,
                "echo_samples_kib": echo_rss,
            }
            results["rss"]["ratio"] = ratio(
                results["rss"]["webhook_steady_mib"], results["rss"]["echo_steady_mib"]
            )
    log("in-process timings")
    results["inprocess"] = inprocess(0.5 if args.quick else 2.0)
    if not args.no_domain_benches and not args.quick:
        results["domain_benches"] = domain_benches()
    rows = build_rows(results)
    has_chart = chart(rows, args.out / "throughput.png")
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    text = report(results, rows, args.out, has_chart)
    print(text)
    if not has_chart:
        log("matplotlib not installed: no chart (scripts/bootstrap bench installs it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
