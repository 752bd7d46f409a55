"""``dynamo-webhook storage-migrate`` against a real API server with the service registered: objects
stored as v1alpha1 (created while it was the storage version) and v1beta1, rewritten while other clients
update and delete objects, interrupted and resumed. etcd itself says which version each object is stored
in and that what was stored is exactly what the API served; the API serves every object unchanged in both
versions afterwards, up to what its own read path fills in differently for an object stored as v1beta1
(see test_every_object_reads_the_same_in_both_versions)."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.review.compare import PAYLOAD_KEYS, diff_paths, normalize
from tests.e2e.cluster import EXE, Cluster
from tests.e2e.legacy import (
    ALPHA,
    BETA,
    BULK,
    CONVERTIBLE_PLURALS,
    Seeded,
    comparable,
    crd_stored_versions,
    etcd_entries,
    read,
    run_tool,
    seeded_cluster,
    stored_versions,
    tool_kubeconfig,
)
from tests.e2e.testenv import wait_until

#: What is judged is the rewrite (its pages, its resumption, etcd's stored versions): Python in both
#: builds. The conversions it makes the API server ask for are the conversion scenarios', which run in
#: both builds. So: the Python-build run only.
pytestmark = pytest.mark.one_build

ROLE = "dynamo-webhook-storage-migrate"
BULK_COUNT = 60
LABELLED = [f"bulk-{i:03d}" for i in range(50, 55)]  # updated by another client during the run
DELETED = [f"bulk-{i:03d}" for i in range(55, 60)]  # deleted by another client during the run
QPS = "5"  # slow enough for the concurrent changes to land before the tool reaches them


@dataclass
class Env:
    cluster: Cluster
    objects: list[Seeded]
    kubeconfig: Path
    workdir: Path
    before: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    etcd_before: dict[str, dict[str, tuple[int, Any]]] = field(default_factory=dict)

    @property
    def state_file(self) -> Path:
        return self.workdir / "state.json"

    def migrate_args(self, *args: str) -> list[str]:
        return [
            str(EXE),
            "storage-migrate",
            "--kubeconfig",
            str(self.kubeconfig),
            "--state-file",
            str(self.state_file),
            "-o",
            "json",
            *args,
        ]


def versions_of(obj: Seeded) -> tuple[str, ...]:
    return (ALPHA,) if obj.kind == "DynamoModel" else (ALPHA, BETA)


def snapshot(env: Env) -> dict[tuple[str, str, str], dict[str, Any]]:
    cp = env.cluster.cp
    return {o.ref: {v: comparable(read(cp, o, v)) for v in versions_of(o)} for o in env.objects}


@pytest.fixture(scope="module")
def env(bin_dir: Path) -> Iterator[Env]:
    with seeded_cluster(bin_dir, ROLE, bulk=BULK_COUNT) as (cluster, objects, kubeconfig, workdir):
        e = Env(cluster, objects, kubeconfig, workdir)
        e.before = snapshot(e)
        e.etcd_before = {p: etcd_entries(cluster.cp, p) for p in {o.plural for o in objects}}
        yield e


def stored_everywhere(env: Env) -> dict[str, dict[str, str]]:
    return {p: stored_versions(env.cluster.cp, p) for p in CONVERTIBLE_PLURALS}


def run_json(env: Env, *args: str) -> tuple[int, Any]:
    proc = subprocess.run(
        env.migrate_args(*args),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("DYNAMO_WEBHOOK_")},
    )
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return proc.returncode, json.loads(proc.stdout)


def test_the_seed_is_stored_in_both_versions(env: Env) -> None:
    stored = stored_everywhere(env)
    assert set(stored["dynamographdeployments"].values()) == {ALPHA, BETA}
    for plural in CONVERTIBLE_PLURALS:
        assert ALPHA in stored[plural].values(), plural
        assert crd_stored_versions(env.cluster.kubectl, plural) == [BETA, ALPHA]


def test_dry_run_only_reports(env: Env) -> None:
    before = stored_everywhere(env)
    code, out = run_json(env, "--dry-run")
    assert code == 0
    assert out["dryRun"] is True
    dgd = next(c for c in out["crds"] if c["kind"] == "DynamoGraphDeployment")
    count = sum(1 for o in env.objects if o.kind == "DynamoGraphDeployment")
    assert dgd["objects"] == count
    assert (
        dgd["note"] == f"would rewrite {count} of {count} object(s) (0 rewritten by an earlier run), "
        "then set storedVersions to [v1beta1]"
    )
    assert stored_everywhere(env) == before
    assert not env.state_file.exists()
    for plural in CONVERTIBLE_PLURALS:
        assert crd_stored_versions(env.cluster.kubectl, plural) == [BETA, ALPHA]


def test_the_read_only_audit_role_cannot_migrate(env: Env) -> None:
    audit_config = tool_kubeconfig(env.cluster, "dynamo-webhook-audit", env.workdir / "audit.kubeconfig")
    before = stored_everywhere(env)
    proc = run_tool(audit_config, "storage-migrate", "--no-state")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "403" in proc.stderr and "forbidden" in proc.stderr.lower()
    assert stored_everywhere(env) == before


def bulk_rewritten(env: Env) -> int:
    stored = stored_versions(env.cluster.cp, "dynamographdeployments")
    return sum(1 for key, version in stored.items() if key.startswith(f"{BULK}/") and version == BETA)


def test_an_interrupted_run_keeps_its_progress(env: Env) -> None:
    assert bulk_rewritten(env) == 0
    proc = subprocess.Popen(
        env.migrate_args("--qps", QPS), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: bulk_rewritten(env) >= 5, 60, "five bulk objects rewritten")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "progress is saved" in err
    state = json.loads(env.state_file.read_text())
    (entry,) = [e for e in state["crds"].values() if e["crd"] == "dynamographdeployments.nvidia.com"]
    assert len(entry["done"]) >= 5
    assert crd_stored_versions(env.cluster.kubectl, "dynamographdeployments") == [BETA, ALPHA]


def test_the_rerun_finishes_while_objects_are_updated_and_deleted(env: Env) -> None:
    done_before = bulk_rewritten(env)
    kubectl = env.cluster.kubectl
    proc = subprocess.Popen(
        env.migrate_args("--qps", QPS), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        # Once it has listed and started rewriting, other clients change objects it has yet to reach.
        wait_until(lambda: bulk_rewritten(env) > done_before, 60, "the rerun rewriting")
        kubectl("label", "dgd", "-n", BULK, *LABELLED, "touched=yes")
        kubectl("delete", "dgd", "-n", BULK, *DELETED, "--wait=false")
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err + out
    crds = {c["kind"]: c for c in json.loads(out)["crds"]}
    dgd = crds["DynamoGraphDeployment"]
    assert dgd["rewrittenEarlier"] >= 5
    assert dgd["deleted"] == len(DELETED)
    assert dgd["conflicts"] >= len(LABELLED)
    assert dgd["failed"] == []
    assert dgd["rewritten"] + dgd["rewrittenEarlier"] + dgd["deleted"] == dgd["objects"]
    for c in crds.values():
        if c["kind"] in ("DynamoModel", "DynamoCheckpoint"):
            continue
        assert c["storedVersionsSet"] is True, c
        assert c["storedVersionsAfter"] == [BETA]
        assert c["note"].startswith("storedVersions set to [v1beta1] (was [v1beta1, v1alpha1])")
    for plural in CONVERTIBLE_PLURALS:
        assert crd_stored_versions(kubectl, plural) == [BETA]
        assert set(stored_versions(env.cluster.cp, plural).values()) == {BETA}, plural
    assert json.loads(env.state_file.read_text())["crds"] == {}


def test_each_object_was_stored_exactly_as_served(env: Env) -> None:
    """The tool changed no content: what etcd holds now is, field for field, the v1beta1 form the API
    served before the run; objects already stored as v1beta1 were not written at all."""
    for plural, entries in env.etcd_before.items():
        now = etcd_entries(env.cluster.cp, plural)
        for obj in (o for o in env.objects if o.plural == plural and o.name not in DELETED):
            key = f"{obj.namespace}/{obj.name}"
            revision, stored = entries[key]
            if obj.name in LABELLED:
                assert now[key][1]["metadata"]["labels"]["touched"] == "yes"
            elif stored["apiVersion"] == f"nvidia.com/{BETA}" or obj.kind == "DynamoModel":
                assert now[key][0] == revision, key
            else:
                assert now[key][1] == env.before[obj.ref][BETA], key


def test_every_object_reads_the_same_in_both_versions(env: Env) -> None:
    """Both versions read the same as before (compared as the conversion tests compare, Go zero values
    equal to absence), except what the API server's read path fills in differently for an object now
    stored as v1beta1: the defaults of the schema of the version read (applied to stored v1beta1 objects,
    no longer to stored v1alpha1 ones, and carried in the v1alpha1 payload annotations), and the initial
    status the v1beta1 form of an object created without status has."""
    crds = {p: env.cluster.kubectl.get("crd", f"{p}.nvidia.com") for p in {o.plural for o in env.objects}}
    changed = []
    for obj in env.objects:
        if obj.name in DELETED:
            continue
        for version, before in env.before[obj.ref].items():
            now = comparable(read(env.cluster.cp, obj, version))
            if obj.name in LABELLED:
                assert now["metadata"]["labels"].pop("touched") == "yes"
                before, now = without_write_metadata(before), without_write_metadata(now)
            a, b = (
                settled(x, crds[obj.plural], version, had_status="status" in before) for x in (before, now)
            )
            if a != b:
                changed.append(f"{obj.ref} {version}: {diff_paths(a, b)}")
    assert not changed, "\n".join(changed)
    for name in DELETED:
        status, _ = env.cluster.cp.raw(
            "GET", f"/apis/nvidia.com/v1beta1/namespaces/{BULK}/dynamographdeployments/{name}"
        )
        assert status == 404


def without_write_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("managedFields", "labels")}
    return {**obj, "metadata": meta}


def schema_of(crd: dict[str, Any], version: str) -> dict[str, Any]:
    entry = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    schema: dict[str, Any] = entry["schema"]["openAPIV3Schema"]
    return schema


def without_defaults(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` without the fields that hold their schema default (absent and defaulted read alike)."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, child in value.items():
            sub = props.get(key) or (extra if isinstance(extra, dict) else {})
            if "default" in sub and child == sub["default"]:
                continue
            out[key] = without_defaults(child, sub)
        return out
    if isinstance(value, list):
        return [without_defaults(item, schema.get("items") or {}) for item in value]
    return value


def settled(obj: dict[str, Any], crd: dict[str, Any], version: str, had_status: bool) -> Any:
    obj = copy.deepcopy(obj)
    other = BETA if version == ALPHA else ALPHA
    other_schema = schema_of(crd, other) if any(v["name"] == other for v in crd["spec"]["versions"]) else {}
    annotations = obj["metadata"].get("annotations") or {}
    for key in PAYLOAD_KEYS:
        if key in annotations:
            payload = json.loads(annotations[key])
            parts = {
                k: without_defaults(v, (other_schema.get("properties") or {}).get(k) or {})
                for k, v in payload.items()
                if k != "version"
            }
            annotations[key] = json.dumps({**payload, **parts})
    if not had_status:
        obj.pop("status", None)
    out = normalize(without_defaults(obj, schema_of(crd, version)))
    # A payload annotation left with nothing but its version says nothing.
    annotations = out["metadata"].get("annotations") or {}
    for key in PAYLOAD_KEYS:
        if isinstance(annotations.get(key), dict) and not any(
            v for k, v in annotations[key].items() if k != "version"
        ):
            del annotations[key]
    if not annotations:
        out["metadata"].pop("annotations", None)
    return out


def test_a_rerun_has_nothing_to_do(env: Env) -> None:
    before = {p: stored_versions(env.cluster.cp, p) for p in CONVERTIBLE_PLURALS}
    code, out = run_json(env)
    assert code == 0
    assert all(c["note"] == "nothing to do: storedVersions is already [v1beta1]" for c in out["crds"])
    assert {p: stored_versions(env.cluster.cp, p) for p in CONVERTIBLE_PLURALS} == before


def test_the_role_can_only_rewrite_through_status(env: Env) -> None:
    kubectl = env.cluster.kubectl
    who = f"--as=system:serviceaccount:dynamo-system:{ROLE}"

    def can(*args: str) -> bool:
        return kubectl("auth", "can-i", *args, who, check=False).stdout.strip() == "yes"

    assert can("update", "dynamographdeployments.nvidia.com", "--subresource=status", "-A")
    assert can("list", "dynamographdeployments.nvidia.com", "-A")
    for verb in ("create", "update", "patch", "delete"):
        assert not can(verb, "dynamographdeployments.nvidia.com", "-A"), verb
    assert can(
        "patch",
        "customresourcedefinitions.apiextensions.k8s.io/dynamographdeployments.nvidia.com",
        "--subresource=status",
    )
    assert not can(
        "patch", "customresourcedefinitions.apiextensions.k8s.io/dynamographdeployments.nvidia.com"
    )
    assert not can("update", "dynamomodels.nvidia.com", "--subresource=status", "-A")
