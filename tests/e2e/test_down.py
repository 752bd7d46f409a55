"""The webhook down and back, judged by the API server: with the service stopped, writes of the
kinds its webhooks cover are refused or let through exactly as each webhook's failurePolicy in
deploy/ says, and reads that need the conversion webhook fail; started again, everything works;
SIGTERM drains (readiness turns false first, calls keep being answered for ``--drain-seconds``,
then the process exits 0).

The module has a control plane of its own (it stops and starts the service)."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.cluster import Cluster, Obj
from tests.e2e.conftest import start_cluster
from tests.e2e.ops import Traffic, example, failures, log_records
from tests.e2e.testenv import Kubectl, Result, control_plane, wait_until

#: What is judged is the API server's failurePolicy with the service gone and the server's drain,
#: Python in both builds; the calls through the service only carry it, and the rules that answer them
#: are the admission and conversion scenarios', which run in both builds. So: the Python-build run only.
pytestmark = pytest.mark.one_build

NS = "e2e-down"
DRAIN = 3.0
STORED = "stored"
CHECKPOINT = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoCheckpoint",
    "metadata": {"name": "ckpt", "namespace": NS},
    "spec": {
        "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
        "job": {
            "podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": "registry.example/w:1"}]}}
        },
    },
}
# A pod the operator stamped: the checkpoint-restore mutator (failurePolicy Ignore) selects it.
RESTORE_CANDIDATE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "worker-0",
        "namespace": NS,
        "labels": {
            "nvidia.com/dynamo-component": "worker",
            "nvidia.com/dynamo-namespace": "llama",
            "nvidia.com/selector": "llama-worker",
        },
    },
    "spec": {"containers": [{"name": "main", "image": "registry.example/w:1"}]},
}


@pytest.fixture(scope="module")
def cluster(bin_dir: Path) -> Iterator[Cluster]:
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="dynamo-webhook-e2e-down-") as tmp:
        kubectl = Kubectl(bin_dir / "kubectl", cp.kubeconfig)
        c = start_cluster(cp, kubectl, Path(tmp), "--drain-seconds", str(DRAIN), "--feature-checkpoint")
        try:
            kubectl("create", "namespace", NS)
            kubectl.apply(example("dgd-agg-v1beta1.yaml", NS, STORED))
            yield c
        finally:
            c.service.stop()


def webhook(cluster: Cluster, name: str) -> Obj:
    """The webhook ``name`` as deploy/ registers it."""
    for config in cluster.registration:
        for hook in config.get("webhooks", []):
            if hook["name"] == name:
                return dict(hook)
    raise KeyError(name)


def create(kubectl: Kubectl, obj: Obj, *extra: str) -> Result:
    return kubectl("create", "-o", "name", *extra, "-f", "-", input=yaml.safe_dump(obj), check=False)


def read_as_v1alpha1(kubectl: Kubectl, name: str = STORED) -> Result:
    return kubectl(
        "get", "dynamographdeployments.v1alpha1.nvidia.com", name, "-n", NS, "-o", "name", check=False
    )


def unreachable(url: str, port: int, timeout: int = 10) -> str:
    return f'Post "{url}?timeout={timeout}s": dial tcp 127.0.0.1:{port}: connect: connection refused'


def conversion_url(cluster: Cluster, crd: str) -> str:
    for obj in cluster.crds:
        if obj["metadata"]["name"] == crd:
            return str(obj["spec"]["conversion"]["webhook"]["clientConfig"]["url"])
    raise KeyError(crd)


#: (manifest, the webhook the API server calls first for its CREATE)
GUARDED: list[tuple[Callable[[], Obj], str]] = [
    (lambda: example("dgd-agg-v1beta1.yaml", NS, "down-dgd"), "mdynamographdeployment.kb.io"),
    (lambda: example("dcd-v1beta1.yaml", NS, "down-dcd"), "mdynamocomponentdeploymentv1beta1.kb.io"),
    (lambda: example("dgdr-v1beta1.yaml", NS, "down-dgdr"), "mdynamographdeploymentrequestv1beta1.kb.io"),
    (lambda: example("dynamomodel-lora.yaml", NS, "down-model"), "vdynamomodel.kb.io"),
    (lambda: dict(CHECKPOINT), "vdynamocheckpoint.kb.io"),
]


def test_writes_refused_as_the_failure_policy_says_and_back_after_restart(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    kubectl.apply(example("dgd-agg-v1beta1.yaml", NS, "doomed"))
    assert read_as_v1alpha1(kubectl).returncode == 0
    service.stop()

    for manifest, name in GUARDED:
        hook = webhook(cluster, name)
        assert hook["failurePolicy"] == "Fail"
        refused = create(kubectl, manifest())
        url = hook["clientConfig"]["url"]
        assert refused.returncode == 1
        assert refused.stderr.strip().endswith(
            f'Internal error occurred: failed calling webhook "{name}": failed to call webhook: '
            + unreachable(url, service.port)
        ), refused.stderr
    # An UPDATE is covered as well; a DELETE is not (deploy/ registers CREATE and UPDATE only).
    updated = kubectl("label", "dgd", STORED, "-n", NS, "tier=gold", check=False)
    assert (
        updated.returncode == 1 and 'failed calling webhook "mdynamographdeployment.kb.io"' in updated.stderr
    )
    kubectl("delete", "dgd", "doomed", "-n", NS)
    # The restore mutator for pods fails open (failurePolicy Ignore): the pod is created as sent.
    assert webhook(cluster, "mpodcheckpointrestore.kb.io")["failurePolicy"] == "Ignore"
    pod = create(kubectl, RESTORE_CANDIDATE)
    assert pod.returncode == 0, pod.stderr
    # A kind without admission webhooks is stored in its storage version without any call.
    assert create(kubectl, example("dgdsa-v1beta1.yaml", NS, "down-adapter")).returncode == 0
    # Reads in the stored version work; in the other version they need the conversion webhook.
    kubectl("get", "dgd", STORED, "-n", NS)
    convert = unreachable(
        conversion_url(cluster, "dynamographdeployments.nvidia.com"), service.port, timeout=30
    )
    read = read_as_v1alpha1(kubectl)
    assert read.returncode == 1, read.stdout
    assert read.stderr.strip().endswith(
        f"Error from server: conversion webhook for nvidia.com/v1beta1, Kind=DynamoGraphDeployment failed: {convert}"
    ), read.stderr
    # A v1alpha1 CREATE is converted first (to the hub the webhooks are registered for, matchPolicy
    # Equivalent, and to the storage version): refused by the conversion.
    alpha = create(kubectl, example("dgd-agg-v1alpha1.yaml", NS, "down-alpha"))
    assert alpha.returncode == 1
    assert alpha.stderr.strip().endswith(
        "Internal error occurred: Internal error occurred: conversion webhook for nvidia.com/v1alpha1, "
        f"Kind=DynamoGraphDeployment failed: {convert}"
    ), alpha.stderr

    service.start()
    service.wait_ready()
    for manifest, name in GUARDED:
        created = create(kubectl, manifest())
        assert created.returncode == 0, (name, created.stderr)
    assert kubectl("label", "dgd", STORED, "-n", NS, "tier=gold", check=False).returncode == 0
    assert read_as_v1alpha1(kubectl).returncode == 0
    assert create(kubectl, example("dgd-agg-v1alpha1.yaml", NS, "down-alpha")).returncode == 0


def test_sigterm_drains_with_readiness_false_first(cluster: Cluster) -> None:
    kubectl, service = cluster.kubectl, cluster.service
    service.wait_ready()
    assert service.proc is not None and service.proc.popen is not None
    popen = service.proc.popen
    dry_run = example("dgd-agg-v1beta1.yaml", NS, "probe")
    traffic = Traffic(
        [
            ("create --dry-run=server", lambda: create(kubectl, dry_run, "--dry-run=server")),
            ("get as v1alpha1", lambda: read_as_v1alpha1(kubectl)),
        ],
        threads=2,
    )
    with traffic.running():
        traffic.wait_for_calls(4)
        t0 = time.monotonic()
        os.kill(popen.pid, signal.SIGTERM)
        wait_until(
            lambda: service.readyz() == (503, {"status": "not ready", "reasons": ["shutting down"]}),
            2.0,
            "readiness false after SIGTERM",
            0.02,
        )
        unready_at = time.monotonic()
        code = popen.wait(DRAIN + 30)
        exited_at = time.monotonic()
        wait_until(
            lambda: sum(c.started > exited_at for c in traffic.snapshot()) >= 2, 30, "calls after the exit"
        )
    done = traffic.snapshot()
    assert code == 0
    assert exited_at - t0 >= DRAIN - 0.1, "exited before the drain ended"
    # Every call the API server made before the drain ended was answered, including those that
    # started after readiness had turned false.
    answered = [c for c in done if c.started < t0 + DRAIN - 0.5]
    assert failures(answered) == []
    assert sum(c.started > unready_at for c in answered) >= 2
    # After the exit nothing listens: the API server says so.
    late = [c for c in done if c.started > exited_at]
    assert late and all(not c.ok and "connect: connection refused" in c.result.stderr for c in late)
    drain_log = [r for r in log_records(service) if r.get("msg") == "shutting down: readiness is now false"]
    assert drain_log[-1]["drain_seconds"] == DRAIN and drain_log[-1]["signal"] == signal.SIGTERM
    straddling = [c for c in done if t0 + DRAIN - 0.5 <= c.started <= exited_at]
    print(
        f"{len(answered)} calls answered during the {DRAIN:g} s drain window (readiness false "
        f"{unready_at - t0:.2f} s after SIGTERM); exit {exited_at - t0:.2f} s after SIGTERM; around the "
        f"listener close: {[(c.what, c.ok, c.result.stderr.strip()[-80:]) for c in straddling]}"
    )

    service.stop()
    service.start()
    service.wait_ready()
    assert create(kubectl, dry_run, "--dry-run=server").returncode == 0
    assert read_as_v1alpha1(kubectl).returncode == 0
