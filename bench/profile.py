"""Where a webhook request's CPU time goes: samples ``dynamo-webhook serve`` with py-spy while
the load generator drives one scenario, and prints the share of samples per area::

    pip install py-spy
    python -m bench.profile validate-migrated   # or any scenario of bench/scenarios.py

Each sample is charged to the first area (in the order below) found on its stack.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import payloads
from bench.harness import ensure_certs, finish_loadgen, run_loadgen, start_loadgen, start_webhook, write_spec
from bench.scenarios import SCENARIOS

AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("schema type check (app/review/schema.py)", ("app/review/schema.py",)),
    ("validation rules (validation/)", ("validation/",)),
    ("defaulting rules (defaulting/)", ("defaulting/",)),
    ("conversion (conversion/)", ("conversion/",)),
    (
        "JSON patch (app/review/reviews.py)",
        ("json_patch (app/review/reviews.py", "_diff (app/review/reviews.py"),
    ),
    ("review log line (logging)", ("logging/", "app/server/observability.py")),
    ("metrics (prometheus_client)", ("prometheus_client/",)),
    ("JSON decode + depth check", ("parse_json (app/review/reviews.py",)),
    (
        "envelope + answer encoding (app/review/reviews.py, app/review/dispatch.py)",
        ("app/review/reviews.py", "app/review/dispatch.py"),
    ),
    ("response write (HTTP + TLS)", ("RequestResponseCycle.send",)),
    ("request read (app/server/routes.py _read_body)", ("_read_body (app/server/routes.py",)),
    ("framework (Starlette/FastAPI routing, request objects)", ("starlette/", "fastapi/")),
    ("HTTP parsing, TLS read, event loop", ("",)),
)


def categorize(raw: Path) -> tuple[int, collections.Counter[str]]:
    counts: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        total += int(n)
        for area, needles in AREAS:
            if any(needle in stack for needle in needles):
                counts[area] += int(n)
                break
    return total, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n", 1)[0])
    parser.add_argument("scenario", choices=[s.name for s in SCENARIOS])
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        print("py-spy is not installed: pip install py-spy", file=sys.stderr)
        return 2
    sc = next(s for s in SCENARIOS if s.name == args.scenario)
    with tempfile.TemporaryDirectory(prefix="dynamo-webhook-profile-") as tmp:
        work = Path(tmp)
        cafile = ensure_certs(work / "certs")
        body = payloads.dump(sc.build(), work / "body.json")
        spec = write_spec(
            work / "spec.json",
            [{"name": sc.name, "path": sc.path, "body_file": str(body), "expect": sc.expect}],
        )
        with start_webhook(work / "certs", work) as server:
            run_loadgen(server.port, cafile, spec, work / "warm.json", connections=sc.connections, duration=2)
            load = start_loadgen(
                server.port,
                cafile,
                spec,
                work / "load.json",
                connections=sc.connections,
                duration=args.seconds + 2,
            )
            raw = work / "samples.txt"
            subprocess.run(
                [
                    spy,
                    "record",
                    "-p",
                    str(server.pid),
                    "-d",
                    str(int(args.seconds)),
                    "-r",
                    "250",
                    "-f",
                    "raw",
                    "-o",
                    str(raw),
                ],
                check=False,
                capture_output=True,
                timeout=args.seconds + 60,
            )
            summary = finish_loadgen(load, work / "load.json", timeout=args.seconds + 60)
        total, counts = categorize(raw)
    print(f"{sc.title}: {summary['rps']:.0f} req/s under profiling, {total} samples")
    for area, _ in AREAS:
        if counts[area]:
            print(f"  {counts[area] / total:6.1%}  {area}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
