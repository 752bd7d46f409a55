"""Differential test of dynamo-webhook against the pinned operator's own webhook handlers.

    python -m tools.opdiff.drive --opdiff /path/to/opdiff --bases DIR [DIR ...] [--count 2500] [--seed 1]
        [--fixtures tests/fixtures/opdiff/cases.jsonl.xz] [--report report.txt]

Starts etcd and kube-apiserver (the end-to-end suite's binaries) with the pinned CRDs (conversion
``None``, no webhooks), the operator's handlers (``opdiff``, built by tools/opdiff/prepare) and
``dynamo-webhook serve``. Every manifest found under the ``--bases`` folders and ``--count`` seeded
random edits of them (:mod:`tools.opdiff.edits`) are first created with ``dryRun=All`` so that only
objects a cluster can deliver are compared (the API server's answer, pruned and defaulted, is what
the webhooks get). For each such object both servers answer the same reviews:

* a ConversionReview to the other served version, and one converting that answer back;
* on kinds with a mutating webhook, a CREATE and an UPDATE (the old object: the unedited manifest)
  to the kind's path; the objects of hub-registered webhooks are first converted to v1beta1 by the
  operator, as the API server would have the operator convert them;
* on kinds with a validating webhook, the same CREATE and UPDATE, with the object the operator's
  mutating webhook left, without status (the API server resets it before validating admission).

Answers are compared on what the API server reads of them: ``allowed``, the status's code, reason
and message, ``warnings``, the object after the patch is applied (exactly), and each converted
object (metadata: labels and annotations, which is all the API server takes from a conversion),
under the equality of the verified conversion vectors (:func:`app.review.compare.normalize`: payload
annotations compared as JSON, the Go zero-value artefacts the API server's storage never keeps
left out). Disagreements are listed in the report;
every review and the operator's answer are written to ``--fixtures``, which
tests/app/test_operator_replay.py replays against the service in CI.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import lzma
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.review.compare import normalize  # noqa: E402
from tests.e2e.admission import HUB_REGISTERED, MUTATING, VALIDATING  # noqa: E402
from tests.e2e.objects import ALPHA, BETA, PLURALS  # noqa: E402
from tests.e2e.testenv import ControlPlane, Proc, control_plane, free_port, wait_until  # noqa: E402
from tools.opdiff.edits import edited  # noqa: E402

Obj = dict[str, Any]
NAMESPACE = "opdiff"
CRDS = ROOT / "tests" / "fixtures" / "crds"
PRINCIPAL = "system:serviceaccount:dynamo-system:dynamo-operator"
SERVED = {
    "DynamoGraphDeployment": (ALPHA, BETA),
    "DynamoComponentDeployment": (ALPHA, BETA),
    "DynamoGraphDeploymentRequest": (ALPHA, BETA),
    "DynamoGraphDeploymentScalingAdapter": (ALPHA, BETA),
    "DynamoModel": (ALPHA,),
}
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")


# --------------------------------------------------------------------------- inputs


def load_bases(folders: list[Path]) -> list[Obj]:
    found: list[Obj] = []
    for folder in folders:
        for path in sorted(folder.rglob("*.y*ml")):
            try:
                docs = list(yaml.safe_load_all(path.read_text()))
            except yaml.YAMLError:
                continue
            for doc in docs:
                if (
                    isinstance(doc, dict)
                    and doc.get("kind") in SERVED
                    and doc.get("apiVersion") in SERVED[doc["kind"]]
                ):
                    doc.setdefault("metadata", {})["namespace"] = NAMESPACE
                    doc["metadata"].setdefault("name", path.stem.lower().replace("_", "-")[:50])
                    found.append(doc)
    return found


def gate(cp: ControlPlane, obj: Obj) -> Obj | None:
    """The object as the API server hands it to the webhooks (pruned, defaulted), or None when it
    refuses it."""
    body = {k: v for k, v in obj.items() if k != "status"}
    version = obj["apiVersion"].split("/")[1]
    status, raw = cp.raw(
        "POST",
        f"/apis/nvidia.com/{version}/namespaces/{NAMESPACE}/{PLURALS[obj['kind']]}?dryRun=All&fieldValidation=Ignore",
        body,
    )
    if status != 201:
        return None
    out: Obj = json.loads(raw)
    meta = out["metadata"]
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    out.pop("status", None)
    return out


# --------------------------------------------------------------------------- reviews


def admission_review(path: str, obj: Obj, old: Obj | None, request_version: str) -> Obj:
    group, version = obj["apiVersion"].split("/")
    plural = PLURALS[obj["kind"]]
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "00000000-0000-0000-0000-000000000001",
            "kind": {"group": group, "version": version, "kind": obj["kind"]},
            "resource": {"group": group, "version": version, "resource": plural},
            "requestKind": {"group": group, "version": request_version, "kind": obj["kind"]},
            "requestResource": {"group": group, "version": request_version, "resource": plural},
            "name": obj["metadata"]["name"],
            "namespace": NAMESPACE,
            "operation": "UPDATE" if old is not None else "CREATE",
            "userInfo": {
                "username": "kubernetes-admin",
                "groups": ["system:masters", "system:authenticated"],
            },
            "object": obj,
            "oldObject": old,
            "dryRun": False,
        },
    }


def conversion_review(objs: list[Obj], desired: str) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "00000000-0000-0000-0000-000000000002",
            "desiredAPIVersion": desired,
            "objects": objs,
        },
    }


def admission_view(response: Obj, obj: Obj) -> Obj:
    """An AdmissionReview response as compared: ``allowed``, the status's code, reason and message,
    the warnings and the object after the patch is applied (what the API server reads of it)."""
    status = response.get("status") or {}
    out: Obj = {
        "allowed": response.get("allowed"),
        "status": {k: status[k] for k in ("code", "reason", "message") if status.get(k)},
        "warnings": response.get("warnings") or [],
    }
    patched = obj
    if "patch" in response:
        patched = jsonpatch.apply_patch(obj, json.loads(base64.b64decode(response["patch"])))
    out["patched"] = patched
    return out


def conversion_view(response: Obj) -> Obj:
    """A ConversionReview response as compared: metadata reduced to labels and annotations."""
    objs = []
    for obj in response.get("convertedObjects") or []:
        meta = obj.get("metadata") or {}
        objs.append(
            normalize({**obj, "metadata": {k: meta[k] for k in ("labels", "annotations") if meta.get(k)}})
        )
    result = response.get("result") or {}
    return {"status": result.get("status"), "message": result.get("message", ""), "objects": objs}


class Servers:
    def __init__(self, operator_url: str, service_url: str) -> None:
        self.operator_url = operator_url
        self.service_url = service_url
        self.client = httpx.Client(verify=False, timeout=60)

    def ask(self, base: str, path: str, review: Obj) -> Obj:
        resp = self.client.post(
            base + path, content=json.dumps(review), headers={"Content-Type": "application/json"}
        )
        if resp.status_code != 200:  # compared like any answer: the code and the first line
            return {"httpStatus": resp.status_code, "body": resp.text.split("\n")[0][:300]}
        answer: Obj = resp.json()["response"]
        return answer

    def both(self, path: str, review: Obj) -> tuple[Obj, Obj]:
        return self.ask(self.operator_url, path, review), self.ask(self.service_url, path, review)


# --------------------------------------------------------------------------- one object


def cases(servers: Servers, obj: Obj, base: Obj) -> Iterator[tuple[str, str, Obj, Obj, Obj]]:
    """(name, path, review, operator's answer, service's answer) of every review of ``obj``."""
    kind = obj["kind"]
    for desired in SERVED[kind]:
        if desired == obj["apiVersion"]:
            continue
        review = conversion_review([obj], desired)
        theirs, ours = servers.both("/convert", review)
        yield "convert", "/convert", review, theirs, ours
        converted = theirs.get("convertedObjects") or []
        if converted:
            back = conversion_review([converted[0]], obj["apiVersion"])
            theirs_back, ours_back = servers.both("/convert", back)
            yield "convert-back", "/convert", back, theirs_back, ours_back
    hub, old = obj, base
    if kind in HUB_REGISTERED and obj["apiVersion"] != BETA:
        hub = _to_hub(servers, obj)
        old = _to_hub(servers, base) if base is not None else None
        if hub is None:
            return
    for operation_old in (None, old):
        sent = hub
        if kind in MUTATING:
            mutate_in = copy.deepcopy(hub)
            if "status" in obj:
                mutate_in["status"] = obj["status"]
            review = admission_review(
                MUTATING[kind], mutate_in, operation_old, obj["apiVersion"].split("/")[1]
            )
            theirs, ours = servers.both(MUTATING[kind], review)
            yield "mutate", MUTATING[kind], review, theirs, ours
            if not theirs.get("allowed"):
                continue
            sent = admission_view(theirs, mutate_in)["patched"]
            sent.pop("status", None)
        if kind in VALIDATING:
            path = VALIDATING[kind][1]
            review = admission_review(path, sent, operation_old, obj["apiVersion"].split("/")[1])
            theirs, ours = servers.both(path, review)
            yield "validate", path, review, theirs, ours


def _to_hub(servers: Servers, obj: Obj | None) -> Obj | None:
    if obj is None:
        return None
    answer = servers.ask(servers.operator_url, "/convert", conversion_review([obj], BETA))
    converted = answer.get("convertedObjects") or []
    return converted[0] if converted else None


def view(name: str, review: Obj, answer: Obj) -> Obj:
    if "httpStatus" in answer:
        return answer
    if name.startswith("convert"):
        return conversion_view(answer)
    return admission_view(answer, review["request"]["object"])


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return (
                    f"{path}/{key}: {'absent' if key not in a else json.dumps(a[key])[:300]} vs "
                    f"{'absent' if key not in b else json.dumps(b[key])[:300]}"
                )
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}/{i}")
            if found:
                return found
        return None
    if a == b and type(a) is type(b):
        return None
    if {type(a), type(b)} == {int, float} and float(a) == float(b):
        # numbers compare as the float64 the API server reads (the conversion vectors' equality):
        # Go writes 2**64 as 18446744073709551616's shortest digits, 18446744073709552000; the
        # service, whose encoder writes integers up to 64 bits, writes 1.8446744073709552e+19
        return None
    return f"{path}: {json.dumps(a)[:300]} vs {json.dumps(b)[:300]}"


# --------------------------------------------------------------------------- the run


def install_crds(cp: ControlPlane) -> None:
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        crd["spec"]["conversion"] = {"strategy": "None"}
        status, body = cp.raw("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert status == 201, body[:500]
    for path in sorted(CRDS.glob("*.yaml")):
        name = yaml.safe_load(path.read_text())["metadata"]["name"]

        def established(crd_name: str = name) -> bool:
            status, body = cp.raw(
                "GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}"
            )
            conditions = json.loads(body).get("status", {}).get("conditions", []) if status == 200 else []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        wait_until(established, 60, f"{name} established")
    status, body = cp.raw(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
    )
    assert status == 201, body


def start_servers(cp: ControlPlane, opdiff: Path, workdir: Path) -> tuple[Servers, list[Proc]]:
    cert_dir = workdir / "certs"
    port, metrics_port, op_port = free_port(), free_port(), free_port()
    service = Proc(
        "dynamo-webhook",
        [
            str(ROOT / ".venv" / "bin" / "dynamo-webhook"),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--kubeconfig",
            str(cp.kubeconfig),
            "--cert-mode",
            "dev",
            "--metrics-port",
            str(metrics_port),
            "--cert-dir",
            str(cert_dir),
            "--workers",
            "1",
        ],
        workdir / "service.log",
    )
    service.start(
        env={
            **os.environ,
            "DYNAMO_WEBHOOK_OPERATOR_PRINCIPAL": PRINCIPAL,
            "DYNAMO_WEBHOOK_PRINT_CURL": "false",
        }
    )
    wait_until(
        lambda: (cert_dir / "tls.crt").exists() and (cert_dir / "tls.key").exists(), 60, "service cert"
    )
    operator = Proc(
        "opdiff",
        [
            str(opdiff),
            "--kubeconfig",
            str(cp.kubeconfig),
            "--port",
            str(op_port),
            "--cert-dir",
            str(cert_dir),
            "--operator-principal",
            PRINCIPAL,
        ],
        workdir / "opdiff.log",
    )
    operator.start()
    servers = Servers(f"https://127.0.0.1:{op_port}", f"https://127.0.0.1:{port}")

    def up(url: str) -> bool:
        if not (operator.alive() and service.alive()):
            raise RuntimeError("a server exited")
        try:
            servers.client.post(url + "/convert", content=b"{}")
        except httpx.HTTPError:
            return False
        return True

    try:
        wait_until(
            lambda: up(servers.operator_url) and up(servers.service_url), 120, "both servers answering", 0.5
        )
    except (TimeoutError, RuntimeError):
        for proc in (operator, service):
            print(proc.log_tail(30), file=sys.stderr)
            proc.stop()
        raise
    return servers, [operator, service]


def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    bases = load_bases([Path(b) for b in args.bases])
    print(f"opdiff: {len(bases)} manifests", file=sys.stderr)
    tally: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    report: list[str] = []
    fixtures: list[Obj] = []
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="opdiff-") as tmp:
        install_crds(cp)
        servers, procs = start_servers(cp, Path(args.opdiff), Path(tmp))
        try:
            gated_bases = [(b, gate(cp, b)) for b in bases]
            inputs: list[tuple[Obj, Obj | None, str]] = [
                (g, g, "base") for b, g in gated_bases if g is not None
            ]
            refused = 0
            started = time.monotonic()
            while len(inputs) < args.count + len(bases) and refused < 20 * args.count:
                base, gated_base = rng.choice(gated_bases)
                if gated_base is None:
                    continue
                candidate = edited(rng, base, bases)
                gated = gate(cp, candidate)
                if gated is None:
                    refused += 1
                    continue
                if "status" in candidate:
                    gated["status"] = candidate["status"]
                inputs.append((gated, gated_base, "edit"))
            print(
                f"opdiff: {len(inputs)} inputs accepted by the API server, {refused} refused "
                f"({time.monotonic() - started:.0f} s)",
                file=sys.stderr,
            )
            for n, (obj, base_obj, origin) in enumerate(inputs):
                for name, path, review, theirs, ours in cases(servers, obj, base_obj):
                    label = f"{name} {obj['apiVersion'].split('/')[1]} {obj['kind']}"
                    tally[label] += 1
                    diff = first_difference(view(name, review, theirs), view(name, review, ours))
                    if diff is None:
                        agree[label] += 1
                    else:
                        report.append(f"#{n} {origin} {label} {path}: {diff}")
                    fixtures.append({"case": f"{n}-{name}", "path": path, "review": review, "answer": theirs})
        finally:
            for proc in procs:
                proc.stop()
    lines = [f"{label}: {agree[label]}/{tally[label]} agree" for label in sorted(tally)]
    text = "\n".join([*lines, f"inputs: {len(inputs)}", "", *report]) + "\n"
    Path(args.report).write_text(text)
    print("\n".join(lines), file=sys.stderr)
    print(
        f"opdiff: {sum(agree.values())}/{sum(tally.values())} answers agree; report: {args.report}",
        file=sys.stderr,
    )
    if args.fixtures:
        out = Path(args.fixtures)
        out.parent.mkdir(parents=True, exist_ok=True)
        with lzma.open(out, "wt", preset=9) as f:
            for case in fixtures:
                f.write(json.dumps(case, separators=(",", ":")) + "\n")
    return 0 if sum(agree.values()) == sum(tally.values()) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opdiff", required=True, help="the binary tools/opdiff/prepare built")
    parser.add_argument("--bases", nargs="+", required=True, help="folders of manifests to start from")
    parser.add_argument("--count", type=int, default=2500, help="random edits accepted by the API server")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fixtures", default="", help="write every review and the operator's answer here")
    parser.add_argument("--report", default="opdiff-report.txt")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
