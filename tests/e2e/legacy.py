"""A cluster holding Dynamo objects of every age, for the cluster tools (``audit``, ``storage-migrate``).

- Objects created in ``nvidia.com/v1alpha1`` while the four convertible CRDs had v1alpha1 as their
  storage version (switched mid-test, then back), so etcd holds them as v1alpha1 and the CRDs'
  ``status.storedVersions`` lists both versions; and objects created in v1beta1 afterwards.
- Namespace ``legacy`` holds objects today's rules refuse: they were created while a valid
  ``dynamo-operator-namespace-scope`` Lease excluded the namespace from the service (as when a
  namespace-restricted operator owned it), and the Lease is gone afterwards.
- Namespace ``apps`` holds objects today's rules admit; ``bulk`` optionally many plain v1alpha1 DGDs.

The version an object is stored in is read from etcd itself (its v3 JSON gateway on the control plane's
client port): the Kubernetes API does not expose it.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import os
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from app.review.roundtrip import convert_one
from tests.e2e.cluster import EXE, NAMESPACE, Cluster, service_account_kubeconfig
from tests.e2e.conftest import start_cluster
from tests.e2e.objects import LEASE_NAME, PLURALS, scope_lease
from tests.e2e.testenv import ROOT, ControlPlane, Kubectl, control_plane, wait_until

Obj = dict[str, Any]

ALPHA, BETA = "v1alpha1", "v1beta1"
LEGACY, APPS, BULK = "legacy", "apps", "bulk"
CONVERTIBLE_PLURALS = (
    "dynamographdeployments",
    "dynamocomponentdeployments",
    "dynamographdeploymentrequests",
    "dynamographdeploymentscalingadapters",
)
EXAMPLES = ROOT / "examples" / "manifests"
#: An object of each convertible kind that today's rules admit.
EXAMPLE_OF = {
    "dynamographdeployments": EXAMPLES / "dgd-agg-v1beta1.yaml",
    "dynamocomponentdeployments": EXAMPLES / "dcd-v1beta1.yaml",
    "dynamographdeploymentrequests": EXAMPLES / "dgdr-v1beta1.yaml",
    "dynamographdeploymentscalingadapters": EXAMPLES / "dgdsa-v1beta1.yaml",
}
FIXTURES = ROOT / "tests" / "fixtures" / "admission" / "manifests"
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


@dataclass(frozen=True)
class Seeded:
    kind: str
    namespace: str
    name: str
    created_as: str  # the version it was created in

    @property
    def plural(self) -> str:
        return PLURALS[self.kind]

    @property
    def ref(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    def path(self, version: str) -> str:
        return f"/apis/nvidia.com/{version}/namespaces/{self.namespace}/{self.plural}/{self.name}"


def load(path: Path) -> Obj:
    doc: Obj = yaml.safe_load(path.read_text())
    return doc


def placed(doc: Obj, namespace: str, name: str | None = None, version: str | None = None) -> Obj:
    """``doc`` in ``namespace`` (renamed, converted to ``version`` with the service's converter)."""
    out = copy.deepcopy(doc)
    out["metadata"]["namespace"] = namespace
    if name:
        out["metadata"]["name"] = name
    if version and not out["apiVersion"].endswith("/" + version):
        out = convert_one(out, f"nvidia.com/{version}")
    return out


def without_replicas(doc: Obj) -> Obj:
    out = copy.deepcopy(doc)
    for component in out["spec"]["components"]:
        component.pop("replicas", None)
    return out


# --- what gets created -------------------------------------------------------------------------------


def alpha_manifests() -> list[Obj]:
    """Created in v1alpha1 while v1alpha1 is the storage version."""
    dgd_agg = load(EXAMPLES / "dgd-agg-v1alpha1.yaml")
    return [
        placed(dgd_agg, APPS, "llama-agg"),
        placed(load(EXAMPLES / "dgd-disagg-v1alpha1.yaml"), APPS, "llama-disagg"),
        placed(load(EXAMPLES / "dcd-v1beta1.yaml"), APPS, "decode-worker", ALPHA),
        placed(load(EXAMPLES / "dgdr-v1beta1.yaml"), APPS, "qwen-sla", ALPHA),
        placed(load(EXAMPLES / "dgdsa-v1beta1.yaml"), APPS, "llama-agg-worker", ALPHA),
        # Refused by today's runtime-version rule on CREATE (the image tags are not semantic versions).
        placed(
            load(
                FIXTURES / "v1alpha1/DynamoGraphDeployment/vllm-agg__utils-tests-fixtures-v1alpha1-agg.yaml"
            ),
            LEGACY,
            "vllm-agg-alpha",
        ),
        placed(
            load(
                FIXTURES / "v1alpha1/DynamoGraphDeploymentRequest/sla-online__profiler-profile_sla_dgdr.yaml"
            ),
            LEGACY,
            "sla-online",
        ),
    ]


def beta_manifests() -> list[Obj]:
    """Created in v1beta1 once v1beta1 is the storage version again."""
    dgd_beta = load(EXAMPLES / "dgd-agg-v1beta1.yaml")
    return [
        placed(dgd_beta, APPS, "llama-agg-beta"),
        placed(load(EXAMPLES / "dynamomodel-lora.yaml"), APPS, "qwen-support-lora"),
        placed(
            load(FIXTURES / "v1beta1/DynamoGraphDeploymentRequest/qwen-planner.yaml"), APPS, "qwen-planner"
        ),
        # Refused on CREATE (runtime-version rule).
        placed(
            load(FIXTURES / "v1beta1/DynamoGraphDeployment/vllm-agg__vllm-agg.yaml"), LEGACY, "vllm-agg-beta"
        ),
        # Refused on UPDATE and CREATE: checkpointing is off by default.
        placed(
            load(FIXTURES / "v1beta1/DynamoGraphDeployment/qwen3-0-6b-trtllm-snapshot-restore.yaml"),
            LEGACY,
            "qwen3-snapshot",
        ),
        # Admitted, but its next update defaults the replicas it never got.
        placed(without_replicas(dgd_beta), LEGACY, "no-replicas"),
    ]


def bulk_manifests(count: int) -> list[Obj]:
    doc = load(EXAMPLES / "dgd-agg-v1alpha1.yaml")
    return [placed(doc, BULK, f"bulk-{i:03d}") for i in range(count)]


# --- cluster operations --------------------------------------------------------------------------------


def etcd_entries(cp: ControlPlane, plural: str) -> dict[str, tuple[int, Obj]]:
    """Every stored object of ``plural`` as etcd holds it, with its modification revision, by
    ``namespace/name``."""
    prefix = f"/registry/nvidia.com/{plural}/".encode()
    end = prefix[:-1] + bytes([prefix[-1] + 1])
    body = json.dumps({"key": base64.b64encode(prefix).decode(), "range_end": base64.b64encode(end).decode()})
    req = urllib.request.Request(
        f"http://127.0.0.1:{cp.etcd_port}/v3/kv/range", data=body.encode(), method="POST"
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        kvs = json.loads(resp.read()).get("kvs") or []
    return {
        base64.b64decode(kv["key"]).decode()[len(prefix) :]: (
            int(kv["mod_revision"]),
            json.loads(base64.b64decode(kv["value"])),
        )
        for kv in kvs
    }


def stored_versions(cp: ControlPlane, plural: str) -> dict[str, str]:
    """``namespace/name`` -> the API version etcd holds the object in."""
    return {key: obj["apiVersion"].rpartition("/")[2] for key, (_, obj) in etcd_entries(cp, plural).items()}


def crd_stored_versions(kubectl: Kubectl, plural: str) -> list[str]:
    crd = kubectl.get("crd", f"{plural}.nvidia.com")
    return list(crd["status"]["storedVersions"])


def set_storage_version(cluster: Cluster, plural: str, version: str) -> None:
    """Make ``version`` the storage version of the CRD and wait until new writes are stored in it."""
    kubectl = cluster.kubectl
    crd = kubectl.get("crd", f"{plural}.nvidia.com")
    ops = [
        {"op": "replace", "path": f"/spec/versions/{i}/storage", "value": v["name"] == version}
        for i, v in enumerate(crd["spec"]["versions"])
    ]
    kubectl("patch", "crd", f"{plural}.nvidia.com", "--type=json", "-p", json.dumps(ops))
    # The API server picks the new storage version up asynchronously: probe with an object of
    # our own until a fresh write lands in etcd in the new version.
    probe = placed(load(EXAMPLE_OF[plural]), NAMESPACE, "storage-probe", version)

    def landed() -> bool:
        kubectl("delete", plural, "storage-probe", "-n", NAMESPACE, "--ignore-not-found", "--wait")
        kubectl("create", "-f", "-", input=json.dumps(probe))
        return stored_versions(cluster.cp, plural).get(f"{NAMESPACE}/storage-probe") == version

    wait_until(landed, 30, f"{plural} stored as {version}", interval=0.5)
    kubectl("delete", plural, "storage-probe", "-n", NAMESPACE, "--wait")


def create(kubectl: Kubectl, docs: list[Obj]) -> list[Seeded]:
    kubectl("create", "-f", "-", input=yaml.safe_dump_all(docs))
    return [
        Seeded(
            d["kind"], d["metadata"]["namespace"], d["metadata"]["name"], d["apiVersion"].rpartition("/")[2]
        )
        for d in docs
    ]


def dry_run_create(cp: ControlPlane, doc: Obj) -> tuple[int, Obj]:
    version = doc["apiVersion"].rpartition("/")[2]
    meta = doc["metadata"]
    path = f"/apis/nvidia.com/{version}/namespaces/{meta['namespace']}/{PLURALS[doc['kind']]}?dryRun=All"
    status, body = cp.raw("POST", path, doc)
    return status, json.loads(body)


def exclude_namespace(kubectl: Kubectl, cp: ControlPlane, namespace: str, probe: Obj, excluded: bool) -> None:
    """Create (or delete) the namespace-scope Lease and wait until the service acts on it: ``probe``,
    an object today's rules refuse, is admitted exactly while the namespace is excluded."""
    if excluded:
        kubectl.apply(scope_lease(namespace))
    else:
        kubectl("delete", "lease", LEASE_NAME, "-n", namespace)
    probe = placed(probe, namespace, "exclusion-probe")
    wait_until(
        lambda: (dry_run_create(cp, probe)[0] == 201) == excluded,
        30,
        f"namespace {namespace} {'excluded' if excluded else 'admitted again'}",
        interval=0.25,
    )


def seed(cluster: Cluster, bulk: int = 0) -> list[Seeded]:
    """Create every object (see the module docstring); returns them in creation order."""
    kubectl = cluster.kubectl
    for ns in (LEGACY, APPS, *([BULK] if bulk else [])):
        kubectl("create", "namespace", ns)
    refused_probe = load(FIXTURES / "v1beta1/DynamoGraphDeployment/vllm-agg__vllm-agg.yaml")
    exclude_namespace(kubectl, cluster.cp, LEGACY, refused_probe, excluded=True)
    for plural in CONVERTIBLE_PLURALS:
        set_storage_version(cluster, plural, ALPHA)
    seeded = create(kubectl, alpha_manifests())
    if bulk:
        seeded += create(kubectl, bulk_manifests(bulk))
    for plural in CONVERTIBLE_PLURALS:
        set_storage_version(cluster, plural, BETA)
    seeded += create(kubectl, beta_manifests())
    exclude_namespace(kubectl, cluster.cp, LEGACY, refused_probe, excluded=False)
    return seeded


@contextlib.contextmanager
def seeded_cluster(
    bin_dir: Path, role: str, bulk: int = 0
) -> Iterator[tuple[Cluster, list[Seeded], Path, Path]]:
    """A control plane of its own (the seed changes CRD storage versions), the service registered and
    serving, the objects of :func:`seed`, and a kubeconfig for ClusterRole ``role`` of deploy/tools.
    Yields (cluster, objects, kubeconfig, a work directory)."""
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix=f"{role}-e2e-") as tmp:
        workdir = Path(tmp)
        cluster = start_cluster(cp, Kubectl(bin_dir / "kubectl", cp.kubeconfig), workdir)
        try:
            objects = seed(cluster, bulk)
            yield cluster, objects, tool_kubeconfig(cluster, role, workdir / f"{role}.kubeconfig"), workdir
        finally:
            cluster.service.stop()


def tool_kubeconfig(cluster: Cluster, role: str, path: Path) -> Path:
    """A kubeconfig for a ServiceAccount bound (cluster-wide) to ClusterRole ``role`` of deploy/tools only."""
    kubectl = cluster.kubectl
    kubectl("apply", "-k", str(ROOT / "deploy" / "tools"))
    kubectl("create", "serviceaccount", role, "-n", NAMESPACE)
    kubectl(
        "create", "clusterrolebinding", role, f"--clusterrole={role}", f"--serviceaccount={NAMESPACE}:{role}"
    )
    return service_account_kubeconfig(cluster.cp, kubectl, path, role)


def read(cp: ControlPlane, obj: Seeded, version: str) -> Obj:
    status, body = cp.raw("GET", obj.path(version))
    assert status == 200, (obj, version, body[:300])
    out: Obj = json.loads(body)
    return out


def comparable(obj: Obj) -> Obj:
    """An object without what every write changes (resourceVersion)."""
    out = copy.deepcopy(obj)
    out["metadata"].pop("resourceVersion", None)
    return out


def manifest(obj: Obj) -> Obj:
    out = {k: copy.deepcopy(v) for k, v in obj.items() if k != "status"}
    out["metadata"] = {k: v for k, v in out["metadata"].items() if k not in SERVER_METADATA}
    return out


def run_tool(
    kubeconfig: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``dynamo-webhook <args> --kubeconfig <kubeconfig>`` with no DYNAMO_WEBHOOK_* settings from outside."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DYNAMO_WEBHOOK_")}
    return subprocess.run(
        [str(EXE), *args, "--kubeconfig", str(kubeconfig)],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
