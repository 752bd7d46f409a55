"""Small helpers for the bench tests: HTTPS calls to a served webhook (one new connection per call),
examples, metrics, and the meta block of a results file the report tests build."""

from __future__ import annotations

import glob
import json
import os
import re
import socket
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def results_meta(**extra: Any) -> dict[str, Any]:
    """The ``meta`` of a bench results file, as ``python -m bench`` writes it, with ``extra`` added."""
    return {
        "date": "today",
        "machine": "test",
        "cpus": 2,
        "loadavg_start": "0",
        "python": "3",
        "duration": 1,
        "latency_duration": 1,
        "command": "python -m bench",
        **extra,
    }


def context(ca_file: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca_file))


def post(port: int, ca_file: Path, path: str, body: bytes, timeout: float = 15) -> tuple[int, bytes]:
    req = urllib.request.Request(
        f"https://127.0.0.1:{port}{path}",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, context=context(ca_file), timeout=timeout) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()


def get(url: str, ca_file: Path | None = None, timeout: float = 10) -> tuple[int, bytes]:
    ctx = context(ca_file) if ca_file is not None else None
    try:
        with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()


def peer_cert(port: int, ca_file: Path) -> bytes:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context(ca_file).wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
        assert der is not None
        return der


def metric(text: str, name: str, labels: dict[str, str]) -> float:
    """Value of one sample in a Prometheus text exposition (0 when absent)."""
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}", 1)[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def requests_by_pid(multiproc_dir: Path, webhook: str) -> dict[int, float]:
    """controller_runtime_webhook_requests_total of ``webhook`` per process, from the
    prometheus-client multiprocess files (counter_<pid>.db)."""
    from prometheus_client.mmap_dict import MmapedDict

    out: dict[int, float] = {}
    for path in glob.glob(os.path.join(multiproc_dir, "counter_*.db")):
        pid = int(Path(path).stem.split("_")[-1])
        total = 0.0
        for key, value, _ts, _pos in MmapedDict.read_all_values_from_file(path):
            _name, sample, labels, _help = json.loads(key)
            if sample == "controller_runtime_webhook_requests_total" and labels.get("webhook") == webhook:
                total += value
        out[pid] = total
    return out


def example(name: str) -> bytes:
    return (EXAMPLES / name).read_bytes()


def admission_uid(body: bytes) -> Any:
    return json.loads(body)["response"]["uid"]
