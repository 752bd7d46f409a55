"""``dynamo-webhook audit`` against a real API server with the service registered: objects created in
both versions (some stored as v1alpha1), some refused by today's rules. What the audit says is checked
against what the API server itself answers to the same requests (server-side dry runs)."""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.cluster import Cluster
from tests.e2e.legacy import (
    ALPHA,
    APPS,
    BETA,
    EXAMPLES,
    FIXTURES,
    LEGACY,
    Seeded,
    crd_stored_versions,
    dry_run_create,
    exclude_namespace,
    load,
    manifest,
    placed,
    read,
    run_tool,
    seeded_cluster,
    stored_versions,
)
from tests.e2e.objects import LEASE_NAME, scope_lease

#: What is judged is the audit's walk of a cluster (pagination, versions, RBAC, its report) against the
#: API server's own answers: Python in both builds. The rules it applies are the same functions the
#: service runs, checked in both builds by the admission and conversion scenarios and the unit suite.
#: So: the Python-build run only.
pytestmark = pytest.mark.one_build

ROLE = "dynamo-webhook-audit"
#: (kind, namespace, name, operation) today's rules refuse.
EXPECTED_REFUSED = {
    ("DynamoGraphDeployment", LEGACY, "vllm-agg-alpha", "CREATE"),
    ("DynamoGraphDeploymentRequest", LEGACY, "sla-online", "CREATE"),
    ("DynamoGraphDeployment", LEGACY, "vllm-agg-beta", "CREATE"),
    ("DynamoGraphDeployment", LEGACY, "qwen3-snapshot", "UPDATE"),
    ("DynamoGraphDeployment", LEGACY, "qwen3-snapshot", "CREATE"),
}


@dataclass
class Env:
    cluster: Cluster
    objects: list[Seeded]
    kubeconfig: Path

    def audit(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
        proc = run_tool(self.kubeconfig, "audit", *args, env=env)
        assert proc.returncode in (0, 1), proc.stderr
        out = json.loads(proc.stdout) if "json" in args else proc.stdout
        return proc.returncode, out


@pytest.fixture(scope="module")
def env(bin_dir: Path) -> Iterator[Env]:
    with seeded_cluster(bin_dir, ROLE) as (cluster, objects, kubeconfig, _):
        yield Env(cluster, objects, kubeconfig)


def api_server_verdicts(env: Env) -> dict[tuple[str, str, str, str], str]:
    """What the API server answers (as admin, dry run) to a no-op UPDATE of each object in the version it
    was created in, and to creating it again from its manifest: the refusals with their messages."""
    cp = env.cluster.cp
    refused: dict[tuple[str, str, str, str], str] = {}
    for obj in env.objects:
        current = read(cp, obj, obj.created_as)
        status, body = cp.raw("PUT", obj.path(obj.created_as) + "?dryRun=All", current)
        if status != 200:
            refused[(*obj.ref, "UPDATE")] = json.loads(body)["message"]
        status, answer = dry_run_create(cp, manifest(current))
        if not (status == 409 and answer["reason"] == "AlreadyExists"):
            refused[(*obj.ref, "CREATE")] = answer["message"]
    return refused


def audit_refusals(report: Any) -> dict[tuple[str, str, str, str], str]:
    return {
        (o["kind"], o["namespace"], o["name"], op): o[op.lower()]["error"]
        for o in report["objects"]
        for op in ("UPDATE", "CREATE")
        if not o[op.lower()]["allowed"]
    }


def test_the_seed_is_stored_in_both_versions(env: Env) -> None:
    stored = stored_versions(env.cluster.cp, "dynamographdeployments")
    assert stored[f"{APPS}/llama-agg"] == ALPHA
    assert stored[f"{APPS}/llama-agg-beta"] == BETA
    assert crd_stored_versions(env.cluster.kubectl, "dynamographdeployments") == [BETA, ALPHA]


def test_audit_reports_exactly_what_the_api_server_refuses(env: Env) -> None:
    code, report = env.audit("--all-namespaces", "-o", "json")
    assert code == 1
    expected = api_server_verdicts(env)
    assert set(expected) == EXPECTED_REFUSED
    assert audit_refusals(report) == expected
    # Every object was checked in the version it was written in, and nothing else was reported.
    checked = {(o["kind"], o["namespace"], o["name"]): o["checkedAs"] for o in report["objects"]}
    assert checked == {obj.ref: f"nvidia.com/{obj.created_as}" for obj in env.objects}
    totals = report["totals"]
    assert (totals["objects"], totals["refused"], totals["refusedOnUpdate"], totals["refusedOnCreate"]) == (
        len(env.objects),
        4,
        1,
        4,
    )
    assert totals["byNamespace"][APPS]["refused"] == 0
    assert totals["byKind"]["DynamoGraphDeploymentRequest"]["refusedOnCreate"] == 1


def test_audit_reports_defaulting_round_trips_and_stored_versions(env: Env) -> None:
    _, report = env.audit("-A", "-o", "json")
    by_name = {(o["namespace"], o["name"]): o for o in report["objects"]}
    changes = by_name[(LEGACY, "no-replicas")]["update"]["changes"]
    assert changes == ["add /spec/components/0/replicas", "add /spec/components/1/replicas"]
    # The API server's own dry run of that update adds the same fields.
    cp = env.cluster.cp
    obj = next(o for o in env.objects if o.name == "no-replicas")
    status, body = cp.raw("PUT", obj.path(BETA) + "?dryRun=All", read(cp, obj, BETA))
    assert status == 200
    assert [c.get("replicas") for c in json.loads(body)["spec"]["components"]] == [1, 1]
    assert [k for k, o in by_name.items() if o["update"].get("changes")] == [(LEGACY, "no-replicas")]
    # Everything round-trips through both versions.
    assert all(not paths for o in report["objects"] for paths in o["roundTrip"].values())
    assert {o["kind"] for o in report["objects"] if o["roundTrip"]} == {
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
    }
    kinds = {k["kind"]: k for k in report["kinds"]}
    assert kinds["DynamoGraphDeployment"]["storedVersions"] == ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]
    assert kinds["DynamoGraphDeployment"]["singleStoredVersion"] is False
    assert kinds["DynamoModel"]["storedVersions"] == ["nvidia.com/v1alpha1"]
    assert kinds["DynamoModel"]["singleStoredVersion"] is True
    assert by_name[(APPS, "llama-agg")]["storedAs"] == ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]
    assert by_name[(APPS, "qwen-support-lora")]["storedAs"] == ["nvidia.com/v1alpha1"]
    assert "storedVersions" in report["storedVersionsBasis"]


def test_audit_writes_nothing_and_its_role_cannot(env: Env) -> None:
    cp = env.cluster.cp
    before = {p: stored_versions(cp, p) for p in ("dynamographdeployments", "dynamographdeploymentrequests")}
    revisions = {o.ref: read(cp, o, o.created_as)["metadata"]["resourceVersion"] for o in env.objects}
    env.audit("-A", "-o", "json")
    assert {o.ref: read(cp, o, o.created_as)["metadata"]["resourceVersion"] for o in env.objects} == revisions
    assert {p: stored_versions(cp, p) for p in before} == before
    kubectl = env.cluster.kubectl
    who = f"--as=system:serviceaccount:dynamo-system:{ROLE}"
    for verb in ("create", "update", "patch", "delete"):
        for resource in (
            "dynamographdeployments.nvidia.com",
            "dynamographdeployments.nvidia.com/status",
            "customresourcedefinitions.apiextensions.k8s.io",
        ):
            answer = kubectl("auth", "can-i", verb, resource, "-A", who, check=False).stdout.strip()
            assert answer == "no", (verb, resource)
    assert (
        kubectl("auth", "can-i", "list", "dynamographdeployments.nvidia.com", "-A", who).stdout.strip()
        == "yes"
    )


def test_tls_and_authentication_failures_are_one_line(env: Env) -> None:
    config = yaml.safe_load(env.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    server = cluster["server"].removeprefix("https://")

    def audit_with(path: Path, **changes: Any) -> subprocess.CompletedProcess[str]:
        changed = copy.deepcopy(config)
        for key, value in changes.items():
            target = changed["users"][0]["user"] if key == "token" else changed["clusters"][0]["cluster"]
            if value is None:
                target.pop(key, None)
            else:
                target[key] = value
        path.write_text(yaml.safe_dump(changed))
        return run_tool(path, "audit", "-A", "-o", "json")

    insecure = audit_with(
        env.kubeconfig.with_name("insecure.kubeconfig"),
        **{"certificate-authority-data": None, "insecure-skip-tls-verify": True},
    )
    assert insecure.returncode in (0, 1)
    assert insecure.stderr == (
        f"warning: the API server {server} is used without checking its certificate "
        "(insecure-skip-tls-verify in the kubeconfig)\n"
    )
    untrusted = audit_with(
        env.kubeconfig.with_name("untrusted.kubeconfig"), **{"certificate-authority-data": None}
    )
    assert untrusted.returncode == 2
    assert untrusted.stderr.startswith(
        f"dynamo-webhook audit: cannot read the cluster: unable to connect to the "
        f"server {server}: TLS certificate verification failed: "
    )
    assert untrusted.stderr.count("\n") == 1
    stranger = audit_with(env.kubeconfig.with_name("stranger.kubeconfig"), token="not-a-token")
    assert (stranger.returncode, stranger.stderr) == (
        2,
        (
            f"dynamo-webhook audit: cannot read the cluster: you must be logged in to the server {server} "
            "(401 Unauthorized): Unauthorized\n"
        ),
    )


def test_table_output_and_namespace_scope(env: Env) -> None:
    code, table = env.audit("--namespace", APPS)
    assert code == 0, table
    assert f"in namespace {APPS}" in table
    assert "Result: 0 of 8 object(s) would be refused" in table
    code, table = env.audit("-n", LEGACY)
    assert code == 1
    for (_, namespace, name, operation), error in api_server_verdicts(env).items():
        assert f"{namespace}/{name} (" in table and operation in table
        assert f"    {error}\n" in table
    assert "Result: 4 of 5 object(s) would be refused (1 on their next update, 4 if created again)" in table


def test_settings_answer_what_if_questions(env: Env) -> None:
    """The checkpoint DGD is refused only because the gate is off: with it on (flag or environment, as
    for serve), its next update would pass."""
    for args, extra in (
        (("--feature-checkpoint",), None),
        ((), {"DYNAMO_WEBHOOK_FEATURE_CHECKPOINT": "true"}),
    ):
        _, report = env.audit("-n", LEGACY, "-o", "json", *args, env=extra)
        refusals = audit_refusals(report)
        assert ("DynamoGraphDeployment", LEGACY, "qwen3-snapshot", "UPDATE") not in refusals, refusals
        assert report["settings"]["feature_checkpoint"] is True


def test_namespaces_claimed_by_a_namespace_restricted_operator_are_not_judged(env: Env) -> None:
    kubectl = env.cluster.kubectl
    kubectl.apply(scope_lease(LEGACY))
    try:
        code, report = env.audit("-n", LEGACY, "-o", "json")
    finally:
        kubectl("delete", "lease", LEASE_NAME, "-n", LEGACY)
    assert code == 0
    assert report["excludedNamespaces"] == [LEGACY]
    assert all(o["excluded"] and o["update"]["allowed"] and o["create"]["allowed"] for o in report["objects"])


UPGRADE, UPGRADE_CLEAN = "upgrade", "upgrade-clean"
LEGACY_HOOK = "preflight-v1alpha1-path"
STANDBY = {"name": "DYN_SNAPSHOT_RESTORE_STANDBY", "value": "1"}
CUSTOM_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:custom"


def upgrade_objects() -> dict[tuple[str, str], Any]:
    """(kind, name) -> an object in UPGRADE that one 1.5 preflight rule reports."""
    dgd = load(EXAMPLES / "dgd-agg-v1beta1.yaml")

    def variant(name: str, index: int, **fields: Any) -> Any:
        out = placed(dgd, UPGRADE, name)
        out["spec"]["components"][index].update(fields)
        return out

    worker_env = placed(dgd, UPGRADE, "standby-env")
    worker_env["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["env"] = [STANDBY]
    epp = placed(dgd, UPGRADE, "epp-config")
    epp["spec"]["components"].append(
        {
            "name": "Epp",
            "type": "epp",
            "replicas": 1,
            "eppConfig": {"configMapRef": {"name": "epp", "key": "config.yaml"}},
        }
    )
    versionless = placed(dgd, UPGRADE, "image-without-version")
    versionless["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["image"] = CUSTOM_IMAGE
    # Created in v1alpha1: the preflight reads it as the API server lists it, converted.
    elastic = placed(load(EXAMPLES / "dgd-agg-v1alpha1.yaml"), UPGRADE, "elastic-ep-no-command")
    elastic["spec"]["backendFramework"] = "vllm"
    worker = elastic["spec"]["services"]["Worker"]["extraPodSpec"]["mainContainer"]
    del worker["command"]
    worker["args"] += ["--enable-elastic-ep", "--data-parallel-backend=ray"]
    docs = [
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoCheckpoint",
            "metadata": {"name": "ckpt", "namespace": UPGRADE},
            "spec": {},
        },
        variant("checkpoint-ref", 1, experimental={"checkpoint": {"enabled": True, "checkpointRef": "ckpt"}}),
        epp,
        variant("multinode-frontend", 0, multinode={"nodeCount": 2}),
        worker_env,
        versionless,
        elastic,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "standby-pod", "namespace": UPGRADE},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36", "env": [STANDBY]}]},
        },
    ]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def clean_objects() -> list[Any]:
    return [
        placed(load(EXAMPLES / "dgd-agg-v1beta1.yaml"), UPGRADE_CLEAN, "clean"),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "clean-pod", "namespace": UPGRADE_CLEAN},
            "spec": {
                "containers": [
                    {"name": "main", "image": "busybox:1.36", "env": [{"name": "A", "value": "1"}]}
                ]
            },
        },
    ]


def legacy_path_hook() -> Any:
    """A registration on the v1alpha1 DCD path that can affect nothing: no such Service, failures
    ignored, and a namespace selector no namespace matches."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": LEGACY_HOOK},
        "webhooks": [
            {
                "name": "vdynamocomponentdeployment-v1alpha1.preflight.example.com",
                "clientConfig": {
                    "service": {
                        "namespace": "nowhere",
                        "name": "nothing",
                        "path": "/validate-nvidia-com-v1alpha1-dynamocomponentdeployment",
                    }
                },
                "rules": [
                    {
                        "apiGroups": ["nvidia.com"],
                        "apiVersions": ["v1alpha1"],
                        "operations": ["CREATE"],
                        "resources": ["dynamocomponentdeployments"],
                    }
                ],
                "failurePolicy": "Ignore",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "namespaceSelector": {"matchLabels": {"dynamo-webhook-preflight": "matches-nothing"}},
            }
        ],
    }


@pytest.fixture
def upgrade_cluster(env: Env) -> Iterator[dict[tuple[str, str], Any]]:
    """UPGRADE holds one object per 1.5 preflight rule (created while the namespace is excluded from the
    service, as some are refused today), UPGRADE_CLEAN only objects no rule reports; removed after."""
    kubectl, cp = env.cluster.kubectl, env.cluster.cp
    seeded = upgrade_objects()
    for ns in (UPGRADE, UPGRADE_CLEAN):
        kubectl("create", "namespace", ns)
    probe = load(FIXTURES / "v1beta1/DynamoGraphDeployment/vllm-agg__vllm-agg.yaml")
    exclude_namespace(kubectl, cp, UPGRADE, probe, excluded=True)
    kubectl(
        "create",
        "-f",
        "-",
        input=yaml.safe_dump_all([*seeded.values(), *clean_objects(), legacy_path_hook()]),
    )
    exclude_namespace(kubectl, cp, UPGRADE, probe, excluded=False)
    try:
        yield seeded
    finally:
        kubectl("delete", "validatingwebhookconfiguration", LEGACY_HOOK)
        for ns in (UPGRADE, UPGRADE_CLEAN):
            kubectl(
                "delete", "pods,dynamographdeployments,dynamocheckpoints", "--all", "-n", ns, "--wait=false"
            )


def test_upgrade_preflight_reports_each_seeded_breakage_once_and_the_clean_namespace_not_at_all(
    env: Env, upgrade_cluster: dict[tuple[str, str], Any]
) -> None:
    code, out = env.audit("--upgrade-to", "1.5", "-A", "-o", "json")
    assert code == 1
    found = [(f["kind"], f["namespace"], f["name"]) for f in out["findings"]]
    assert sorted(f for f in found if f[1] == UPGRADE) == sorted((k, UPGRADE, n) for k, n in upgrade_cluster)
    assert [f for f in found if f[1] == UPGRADE_CLEAN] == []
    # Of the module's seed: the DGD with checkpointing enabled, and one finding per component whose
    # image tag (my-tag) is not a version in the three DGDs admitted only while LEGACY was excluded.
    assert sorted(f for f in found if f[1] in (LEGACY, APPS)) == sorted(
        [("DynamoGraphDeployment", LEGACY, "qwen3-snapshot")] * 3
        + [("DynamoGraphDeployment", LEGACY, n) for n in ("vllm-agg-alpha", "vllm-agg-beta")] * 2
    )
    by_name = {f["name"]: f for f in out["findings"] if f["namespace"] == UPGRADE}
    versionless = by_name["image-without-version"]
    assert versionless["breaks"].startswith(
        f"component Worker: image {CUSTOM_IMAGE} has no semantic-version tag"
    )
    assert versionless["fix"].startswith("set spec.components[1].runtimeVersionOverride ")
    assert versionless["source"] == "https://github.com/ai-dynamo/dynamo/pull/10494"
    elastic = by_name["elastic-ep-no-command"]
    assert elastic["breaks"].startswith("component Worker: vLLM Elastic EP with Ray")
    assert elastic["fix"].startswith("set podTemplate.spec.containers[main].command ")
    assert elastic["source"] == "https://github.com/ai-dynamo/dynamo/pull/12943"
    assert found.count(("ValidatingWebhookConfiguration", "", LEGACY_HOOK)) == 1
    assert all(
        f["source"].startswith(("https://docs.nvidia.com/dynamo/v1.5.0/", "https://github.com/ai-dynamo/"))
        and f["fix"]
        for f in out["findings"]
    )

    crds = [f["name"] for f in out["findings"] if f["kind"] == "CustomResourceDefinition"]
    assert "dynamographdeployments.nvidia.com" in crds and len(crds) == len(set(crds))
    assert "dynamocheckpoints.nvidia.com" not in crds  # single-version: it only ever stores v1alpha1
    for name in crds:
        assert "v1alpha1" in crd_stored_versions(env.cluster.kubectl, name.removesuffix(".nvidia.com"))
    assert all(
        f["fix"] == "dynamo-webhook storage-migrate"
        for f in out["findings"]
        if f["kind"] == "CustomResourceDefinition"
    )

    code, clean = env.audit("--upgrade-to", "1.5", "-n", UPGRADE_CLEAN, "-o", "json")
    assert [f for f in clean["findings"] if f["namespace"]] == []
    assert {f["kind"] for f in clean["findings"]} <= {
        "CustomResourceDefinition",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    }

    proc = run_tool(env.kubeconfig, "audit", "--upgrade-to", "1.5", "-n", UPGRADE, "-o", "github")
    assert proc.returncode == 1, proc.stderr
    assert (
        sum(
            line.startswith(f"::warning title=Pod {UPGRADE}/standby-pod::")
            for line in proc.stdout.splitlines()
        )
        == 1
    )
