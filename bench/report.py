"""The benchmark's report: per-scenario rows against echo, the targets, ``report.md`` and the chart."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from bench import bench_hostile, bench_large, bench_list, bench_machine, bench_numbers
from bench.scenarios import CONVERSION_CPU_SHARE, SCENARIOS, TARGETS, Scenario


def ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def paired_ratio(a: dict[str, Any], b: dict[str, Any], key: str) -> float:
    """``a[key] / b[key]`` of two servers' closed loops: the median of the ratios of their rounds
    (each round's figures beside the same round's, see ``bench.__main__.closed_rounds``), or of
    the whole runs when they were not measured in rounds."""
    ra, rb = a.get("rounds"), b.get("rounds")
    if ra and rb and len(ra) == len(rb):
        return statistics.median(ratio(x[key], y[key]) for x, y in zip(ra, rb, strict=True))
    return ratio(a[key], b[key])


def _latency(entry: dict[str, Any]) -> dict[str, Any]:
    return dict(entry.get("open") or entry.get("single") or {})


def build_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per scenario measured: the webhook's figures beside echo's."""
    rows = []
    inprocess = results.get("inprocess", {}).get("scenarios", {})
    for sc in SCENARIOS:
        entry = results["scenarios"].get(sc.name)
        if entry is None:
            continue
        web, echo = entry["webhook"], entry["echo"]
        wc, ec = web["closed"], echo["closed"]
        wl, el = _latency(web), _latency(echo)
        dispatch = inprocess.get(sc.name, {}).get("dispatch_ms")
        fc = entry.get("floor", {}).get("closed", {})
        floor = fc.get("cpu_ms_per_request")
        row: dict[str, Any] = {
            "scenario": sc.title,
            "name": sc.name,
            "objects": sc.objects,
            "rps": wc["rps"],
            "echo_rps": ec["rps"],
            "rps_ratio": paired_ratio(wc, ec, "rps"),
            "p50": wc["p50_ms"],
            "p99": wc["p99_ms"],
            "echo_p50": ec["p50_ms"],
            "echo_p99": ec["p99_ms"],
            "cpu_ms": wc["cpu_ms_per_request"],
            "echo_cpu_ms": ec["cpu_ms_per_request"],
            "cpu_ratio": paired_ratio(ec, wc, "cpu_ms_per_request"),
            "dispatch_ms": dispatch,
            "overhead_ms": wc["cpu_ms_per_request"] - dispatch if dispatch is not None else None,
            "floor_cpu_ms": floor,
            "floor_ratio": paired_ratio(ec, fc, "cpu_ms_per_request") if floor else None,
            "errors": wc["errors"] + wl.get("errors", 0),
            "echo_errors": ec["errors"] + el.get("errors", 0),
            "lat_mode": "open" if "open" in web else "single",
            "lat_p50": wl.get("p50_ms", 0.0),
            "lat_p99": wl.get("p99_ms", 0.0),
            "echo_lat_p50": el.get("p50_ms", 0.0),
            "echo_lat_p99": el.get("p99_ms", 0.0),
            **_machine(entry.get("machine")),
        }
        rows.append(row)
    return rows


def _machine(machine: dict[str, Any] | None) -> dict[str, Any]:
    """A row's whole-machine figures (:mod:`bench.bench_machine`; None when not measured): the
    two-worker webhook's on both CPUs, the pinned one-process webhook's of the same rounds, and the
    median of the rounds' throughput ratios."""
    if machine is None:
        return {"machine_rps": None}
    whole, per_core = machine["whole"], machine["per_core"]
    return {
        "machine_rps": whole["rps"],
        "machine_per_core_rps": per_core["rps"],
        "machine_scaling": paired_ratio(whole, per_core, "rps"),
        "machine_cpu_ms": whole["cpu_ms_per_request"],
        "machine_per_core_cpu_ms": per_core["cpu_ms_per_request"],
        "machine_p99": whole["p99_ms"],
        "machine_per_core_p99": per_core["p99_ms"],
        "machine_errors": whole["errors"] + per_core["errors"],
    }


def _machine_cell(row: dict[str, Any]) -> str:
    if row.get("machine_rps") is None:
        return ""
    return f"{row['machine_rps']:.0f} ({row['machine_scaling']:.2f}x)"


def machine_table(rows: list[dict[str, Any]]) -> str:
    """The whole-machine rows (:mod:`bench.bench_machine`), or an empty string."""
    measured = [r for r in rows if r.get("machine_rps") is not None]
    if not measured:
        return ""
    lines = [
        "| scenario | per core req/s | 2 CPUs req/s | 2 CPUs / per core | CPU ms/req per core | CPU ms/req 2 CPUs "
        "| p99 ms per core | p99 ms 2 CPUs | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['scenario']} | {r['machine_per_core_rps']:.0f} | {r['machine_rps']:.0f} | {r['machine_scaling']:.2f} | "
        f"{r['machine_per_core_cpu_ms']:.3f} | {r['machine_cpu_ms']:.3f} | {r['machine_per_core_p99']:.2f} | "
        f"{r['machine_p99']:.2f} | {r['machine_errors']} |"
        for r in measured
    ]
    return "\n".join(lines)


def _machine_section(rows: list[dict[str, Any]], seconds: float | None) -> list[str]:
    measured = machine_table(rows)
    if not measured:
        return []
    took = f" The whole-machine run took {seconds:.0f} s." if seconds is not None else ""
    return [
        "",
        "## The whole machine",
        "",
        f"`serve --workers {bench_machine.WORKERS}` (the default on two CPUs), not pinned, loaded by "
        f"{bench_machine.LOADGENS} load generator processes at once, not pinned either (each half the "
        f"connections): the servers and the clients share both CPUs, so the clients' CPU time is taken "
        f'from the servers\'. "Per core" is the pinned one-process webhook of the table above (its load '
        f"generator on the other CPU: the same two CPUs, one for the server and one for its client; a "
        f"ratio of 1 is two workers answering as much as one process with a CPU of its own), measured "
        f"again in rounds that alternate with the two-worker ones "
        f'({bench_machine.ROUNDS} each): figures are the median round\'s, "2 CPUs / per core" the median '
        f"of the rounds' throughput ratios. CPU ms/req is the server's processes' (supervisor and "
        f"workers) from /proc.{took}",
        "",
        measured,
    ]


def _rule_budget(row: dict[str, Any], target: float) -> str:
    """The floor ratio, and what the rules cost beside what they may cost at ``target``: the
    CPU per request the target allows (echo's over the target ratio) less the floor's."""
    floor = row["floor_cpu_ms"]
    budget = row["echo_cpu_ms"] / target - floor
    text = f"floor {row['floor_ratio']:.1%}"
    if budget <= 0:
        return f"{text}: the target is not below it"
    return f"{text}; rules {row['cpu_ms'] - floor:.3f} ms of a {budget:.3f} ms budget"


def _p99_limit(echo_p99: float) -> float:
    return TARGETS["p99_factor"] * echo_p99 + TARGETS["p99_slack_ms"]


def verdicts(results: dict[str, Any], rows: list[dict[str, Any]]) -> list[tuple[str, str, str, bool]]:
    """(target, wanted, measured, met) for every target whose figures were measured."""
    out: list[tuple[str, str, str, bool]] = []
    by = {r["name"]: r for r in rows}
    scenarios: dict[str, Scenario] = {sc.name: sc for sc in SCENARIOS}
    for name, row in by.items():
        sc = scenarios[name]
        if sc.target is None:
            continue
        wanted = f">= {sc.target:.0%}" + (f" ({sc.target_note})" if sc.target_note else "")
        for label, key in (("req/s", "rps_ratio"), ("CPU per request", "cpu_ratio")):
            got = row[key]
            measured = f"{got:.1%}"
            if key == "cpu_ratio" and row["floor_ratio"] is not None:
                measured += f" ({_rule_budget(row, sc.target)})"
            out.append((f"{sc.title}: throughput vs echo ({label})", wanted, measured, got >= sc.target))
        if sc.p99_target:
            factor, slack = TARGETS["p99_factor"], TARGETS["p99_slack_ms"]
            wanted = f"<= {factor:g}x echo p99 + {slack:g} ms"
            for label, got, echo_p99 in (
                ("closed loop", row["p99"], row["echo_p99"]),
                (f"open loop, {sc.rate:g} req/s", row["lat_p99"], row["echo_lat_p99"]),
            ):
                limit = _p99_limit(echo_p99)
                out.append(
                    (
                        f"{sc.title}: p99 ({label})",
                        wanted,
                        f"{got:.2f} ms (limit {limit:.2f} ms)",
                        got <= limit,
                    )
                )
    limit = TARGETS["conversion_ms_per_object"]
    for conv in results.get("inprocess", {}).get("conversion", []):
        got = conv["ms_per_object"]
        out.append(
            (
                f"conversion per object, {conv['kind']} {conv['direction']} (in process)",
                f"<= {limit:g} ms",
                f"{got:.3f} ms",
                got <= limit,
            )
        )
    limit = TARGETS["conversion_review_ms_per_object"]
    build = results.get("meta", {}).get("build", "python")
    share = CONVERSION_CPU_SHARE[build]
    for name, row in by.items():
        n = row["objects"]
        if not n:
            continue
        sc = scenarios[name]
        direction = name.rpartition("-to-")[2]
        what = f"{n}-object ConversionReview to {direction} over HTTPS, per object"
        if n > 1:  # one object's latency is the round trip's, not the object's
            got = row["lat_p50"] / n
            out.append(
                (
                    f"{what} (p50 latency, one review at a time)",
                    f"<= {limit:g} ms",
                    f"{got:.3f} ms",
                    got <= limit,
                )
            )
        if sc.operator_ms is not None:
            cpu_limit = sc.operator_ms * share
            got = row["cpu_ms"] / n
            wanted = (
                f"<= {cpu_limit:.3f} ms ({share:.2g} of the operator's {sc.operator_ms:g} ms, {build} build)"
            )
            out.append((f"{what} (CPU)", wanted, f"{got:.3f} ms", got <= cpu_limit))
    large = results.get("large_reviews") or []
    if large:
        top = max(large, key=lambda r: r["objects"])
        what = f"ConversionReview of {top['objects']} DGDs ({top['body_mib']:.0f} MiB) over HTTPS"
        for label, key, unit, limit in (
            ("answered in", "seconds", "s", TARGETS["large_review_seconds"]),
            ("peak RSS", "peak_rss_mib", "MiB", TARGETS["large_review_peak_mib"]),
        ):
            got = top[key]
            out.append((f"{what}: {label}", f"<= {limit:g} {unit}", f"{got:.1f} {unit}", got <= limit))
    if "rss" in results:
        got = results["rss"]["webhook_steady_mib"]
        out.append(
            (
                "webhook RSS, steady (end of run)",
                f"<= {TARGETS['rss_mib']:g} MiB",
                f"{got:.1f} MiB",
                got <= TARGETS["rss_mib"],
            )
        )
    return out


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _floor(row: dict[str, Any]) -> str:
    if row["floor_cpu_ms"] is None:
        return ""
    return f"{row['floor_cpu_ms']:.3f} ({row['floor_ratio']:.2f})"


def table(results: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | webhook req/s | 2 CPUs req/s (x per core) | echo req/s | ratio | CPU ms/req (echo) | CPU ratio "
        "| in-process dispatch ms | HTTP+logging ms | floor CPU ms/req (ratio) | p50 ms (echo) | p99 ms (echo) "
        "| latency mode: p50 / p99 ms (echo p99) | errors (echo) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        mode = f"{r['lat_mode']}: {r['lat_p50']:.2f} / {r['lat_p99']:.2f} ({r['echo_lat_p99']:.2f})"
        lines.append(
            f"| {r['scenario']} | {r['rps']:.0f} | {_machine_cell(r)} | {r['echo_rps']:.0f} | {r['rps_ratio']:.2f} | "
            f"{r['cpu_ms']:.3f} ({r['echo_cpu_ms']:.3f}) | {r['cpu_ratio']:.2f} | {_ms(r['dispatch_ms'])} | "
            f"{_ms(r['overhead_ms'])} | {_floor(r)} | {r['p50']:.2f} ({r['echo_p50']:.2f}) | "
            f"{r['p99']:.2f} ({r['echo_p99']:.2f}) | "
            f"{mode} | {r['errors']} ({r['echo_errors']}) |"
        )
    if "rss" in results:
        rss = results["rss"]
        lines.append("")
        lines.append(
            f"RSS: webhook steady {rss['webhook_steady_mib']:.1f} MiB (max {rss['webhook_max_mib']:.1f}; "
            f"{rss['webhook_before_conversion_mib']:.1f} before the ConversionReviews), "
            f"echo steady {rss['echo_steady_mib']:.1f} MiB (ratio {rss['ratio']:.2f})"
        )
    return "\n".join(lines)


def chart(rows: list[dict[str, Any]], path: Path, large: list[dict[str, Any]] | None = None) -> bool:
    """Webhook beside echo per scenario: throughput, p99 and CPU per request (log scales); and
    with ``large`` (:mod:`bench.bench_large`), a fourth panel: seconds and peak RSS by objects."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 4 if large else 3, figsize=(24 if large else 18, 5.5))
    names = [r["name"] for r in rows]
    x = list(range(len(rows)))
    w = 0.38
    panels = (
        ("rps", "echo_rps", "requests/s (closed loop)", "Throughput, one process", "rps_ratio"),
        ("p99", "echo_p99", "ms", "p99 latency (closed loop)", None),
        ("cpu_ms", "echo_cpu_ms", "CPU ms per request", "CPU time per request", "cpu_ratio"),
    )
    for ax, (web_key, echo_key, ylabel, title, ratio_key) in zip(axes, panels, strict=False):
        ax.bar([i - w / 2 for i in x], [r[web_key] for r in rows], w, label="dynamo-webhook")
        ax.bar([i + w / 2 for i in x], [r[echo_key] for r in rows], w, label="echo (Starlette+orjson)")
        ax.set_xticks(x, names, rotation=35, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if ratio_key:
            for i, r in enumerate(rows):
                ax.annotate(
                    f"{r[ratio_key]:.0%}", (i - w / 2, r[web_key]), ha="center", va="bottom", fontsize=7
                )
        ax.legend(loc="upper left", fontsize=8)
    if large:
        _large_panel(axes[3], large)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _large_panel(ax: Any, large: list[dict[str, Any]]) -> None:
    """Seconds (left axis) and peak RSS (right axis) of the large ConversionReviews by objects,
    with the targets as dashed lines."""
    objects = [r["objects"] for r in large]
    ax.plot(objects, [r["seconds"] for r in large], "o-", color="tab:blue", label="seconds")
    ax.axhline(TARGETS["large_review_seconds"], color="tab:blue", ls="--", lw=0.8)
    ax.set_xlabel("objects in one ConversionReview (v1alpha1 DGDs -> v1beta1)")
    ax.set_ylabel("seconds to answer", color="tab:blue")
    ax.set_title("Large ConversionReviews")
    rss = ax.twinx()
    rss.plot(objects, [r["peak_rss_mib"] for r in large], "s-", color="tab:red", label="peak RSS")
    rss.axhline(TARGETS["large_review_peak_mib"], color="tab:red", ls="--", lw=0.8)
    rss.set_ylabel("peak RSS MiB (dashed: limit)", color="tab:red")
    rss.set_ylim(0, TARGETS["large_review_peak_mib"] * 1.15)
    ax.set_ylim(0, TARGETS["large_review_seconds"] * 1.15)


BUILDS = {
    "compiled": "compiled (the rule layer's C extensions made by mypyc, as the image runs; `scripts/compiled`)",
    "python": "Python (the rule layer from its sources, as `scripts/serve` runs)",
    "mixed": "mixed (some rule modules compiled, some from source: not a build that is shipped)",
}


def report(results: dict[str, Any], rows: list[dict[str, Any]], out: Path, has_chart: bool) -> str:
    v = verdicts(results, rows)
    meta = results["meta"]
    lines = [
        "# dynamo-webhook benchmark",
        "",
        f"Run {meta['date']} on {meta['machine']} ({meta['cpus']} CPUs, load average at start "
        f"{meta['loadavg_start']}), Python {meta['python']}. Command: `{meta['command']}`.",
        "",
        f"Build: {BUILDS[meta.get('build', 'python')]}.",
        "",
        "One process each, TLS, keep-alive HTTP/1.1"
        + (f" ({meta['pinned']})" if meta.get("pinned") else "")
        + f"; closed loop for {meta['duration']:g} s per scenario "
        f"and server (16 connections; 2 for conversion) in {meta.get('rounds', 1)} rounds, the webhook, echo "
        f"and the floor taking turns in an order that rotates: each figure is the median round's, and each "
        f"ratio the median of the rounds' ratios (a round's figures beside the same round's echo), so a "
        f"burst of other load on the machine falls on all three alike; then latency either open loop at a "
        f"fixed rate (8 connections) or one request at a time (conversion) for {meta['latency_duration']:g} s. "
        f"The reviews are built from the upstream manifests with cluster metadata (managedFields, status); "
        f"migrated objects are v1alpha1 manifests converted to v1beta1, carrying the payload annotation. "
        f"The webhook runs as deployed (log level info: one JSON log line per review). "
        f'"CPU ratio" is echo CPU time per request over the webhook\'s: the throughput ratio the two would '
        f'reach with a core each, independent of other load on the machine. "In-process dispatch" is the '
        f'CPU time of `review_admission` / `review_conversion` on the decoded review; "HTTP+logging" is the '
        f"rest of the webhook's CPU per request (TLS, HTTP, JSON decode, metrics, the log line). "
        f'"Floor" is the same server with the rules taken out (`bench/floor_server.py`: the review is '
        f"read, decoded and checked as deployed, then allowed, or its objects returned unchanged; counted "
        f"and logged): its CPU ratio is the most any rule set can reach, so a throughput target above "
        f"the floor ratio needs a cheaper HTTP layer, not cheaper rules. Beside each CPU target: the "
        f"floor ratio, and what the rules cost per request (webhook less floor) against what they may "
        f'cost at the target (echo\'s CPU over the target ratio, less the floor). "2 CPUs": the whole '
        f"machine, below.",
        "",
        table(results, rows),
        *_machine_section(rows, meta.get("machine_seconds")),
        "",
        "## Targets",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---|---|",
    ]
    lines += [f"| {name} | {want} | {got} | {'yes' if ok else '**no**'} |" for name, want, got, ok in v]
    ip = results.get("inprocess", {})
    if ip.get("scenarios"):
        lines += [
            "",
            "## In process",
            "",
            "CPU time per review, no HTTP (median of five rounds' means).",
            "",
            "| scenario | body KiB | JSON decode ms | decode + nesting check ms | dispatch ms | dispatch ms per object |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for sc in SCENARIOS:
            t = ip["scenarios"].get(sc.name)
            if t is None:
                continue
            per_object = f"{t['dispatch_ms'] / sc.objects:.4f}" if sc.objects else ""
            parse = f"{t['parse_ms']:.4f}" if "parse_ms" in t else ""
            lines.append(
                f"| {sc.title} | {t['body_kib']:.1f} | {t['decode_ms']:.4f} | {parse} | {t['dispatch_ms']:.4f} "
                f"| {per_object} |"
            )
    if ip.get("conversion"):
        lines += [
            "",
            "Conversion per object (`kinds.convert`, best of rounds, typical stored objects built from the "
            "fixtures; v1beta1 → v1alpha1 converts their migrated forms):",
            "",
            "| kind | direction | objects | ms per object |",
            "|---|---|---:|---:|",
        ]
        lines += [
            f"| {c['kind']} | {c['direction']} | {c['objects']} | {c['ms_per_object']:.4f} |"
            for c in ip["conversion"]
        ]
    if results.get("large_reviews"):
        lines += [
            "",
            "## Large ConversionReviews",
            "",
            "One review of an unpaginated LIST's size each, to a server of its own started fresh "
            "(`bench/bench_large.py`): stored v1alpha1 DGDs to v1beta1, about 1.9 KiB each; seconds from "
            "the first byte sent to the last byte read; peak RSS is the server's `VmHWM`.",
            "",
            bench_large.table(results["large_reviews"]),
        ]
    if results.get("hostile"):
        lines += [
            "",
            "## The hostile mix",
            "",
            "What a cluster under load, or a client meaning harm, sends at once (`bench/bench_hostile.py`): "
            "each row against a fresh server, beside a probe sending a DGD UPDATE review every 50 ms.",
            "",
            bench_hostile.table(results["hostile"]),
        ]
    if results.get("numbers"):
        lines += [
            "",
            "## Numbers past a double's range",
            "",
            "ConversionReviews of objects holding numbers past a double's range (`1e400`, valid JSON that "
            "orjson refuses) beside realistic objects, in process (`bench/bench_numbers.py`): CPU time of "
            "the answer, streamed past 256 KiB and decoded whole below.",
            "",
            bench_numbers.table(results["numbers"]),
        ]
    if results.get("list"):
        lines += [
            "",
            "## LIST through the conversion webhook",
            "",
            "DGDs stored as v1alpha1 read as v1beta1 through a real kube-apiserver, each read from a cold "
            "watch cache (`bench/bench_list.py`): the operator's handlers beside the service's builds. "
            "CPU ms per object: the webhook's user + system time from /proc, the figure to compare on a "
            "shared machine.",
            "",
            bench_list.table(results["list"]),
        ]
    for module, text in results.get("domain_benches", {}).items():
        lines += ["", f"`python -m {module}`:", "", "```", text, "```"]
    if has_chart:
        lines += ["", "![throughput, p99 and CPU per request](throughput.png)"]
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text
