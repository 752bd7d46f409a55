"""``helm install`` of charts/dynamo-webhook into a real API server, on a control plane of its own
(the chart's cluster-scoped objects have the names the shared registration uses), then ``helm test``,
``helm upgrade`` while a client writes, and ``helm uninstall``.

The release is installed with the README's command, as an admin pastes it beside the Dynamo platform
chart, on a control plane without the prometheus-operator CRDs, with these changes for a control plane
without a kubelet, where no pod ever runs:

- no ``--wait`` (the Deployment's pods never become ready) and a shorter ``--timeout`` for the hooks;
- the admission webhooks' ``clientConfig`` goes to the service run as a local process
  (``url: https://127.0.0.1:<port>/<path>``), by a post-renderer (``helm_post_render.py``);
- the hooks and the test Pod are run by Helm, and their containers by a stand-in for the kubelet and
  the Job controller (``kubelet.py``): the real kubectl and ``dynamo-webhook`` with a token of the
  pod's ServiceAccount, the outcome written into the Job's or Pod's status, so Helm's own flow
  decides (an uninstall stopped by its pre-delete hook stays stopped). The CRDs' conversion is pointed
  at the local process by URL, and handed back to the Service reference around each hook.

The local ``dynamo-webhook serve`` gets the settings the chart gives the pod (the Deployment's
``DYNAMO_WEBHOOK_*`` values as stored by the API server) and runs with a token of the chart's
ServiceAccount, so the chart's RBAC is what lets it inject the caBundles. Then server dry-run
creates go through the chart's webhooks: defaulting, validation (a gate set by a chart value) and
conversion. The module's tests run in order: the last uninstalls the release.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.chart import CHART, CRD_JOB, RELEASE_JOB
from tests.deploy.test_chart import readme_install
from tests.e2e.admission import as_sent, mutated
from tests.e2e.cluster import (
    CONVERTIBLE,
    CRD_DIR,
    EXE,
    NAMESPACE,
    STAND_INS,
    Service,
    ca_bundles,
    service_account_kubeconfig,
)
from tests.e2e.kubelet import Kubelet, Routing
from tests.e2e.objects import ALPHA, user_view
from tests.e2e.testenv import ROOT, ControlPlane, Kubectl, Result, control_plane, free_port, wait_until

#: The chart, the packaging or the image: the same in both builds (tests/conftest.py).
pytestmark = pytest.mark.one_build

Obj = dict[str, Any]

RELEASE = "dynamo-webhook"
APPS = "apps"
POST_RENDER = Path(__file__).with_name("helm_post_render.py")
#: Where the platform chart's operator points the conversion before this chart takes it over.
OPERATOR_SERVICE = "dynamo-platform-dynamo-operator-webhook-service"
#: What the test sets beside the README's command: the Checkpoint gate, for a case it admits.
VALUES = ("features.checkpoint=true",)
#: Settings the local process takes from the installed Deployment (the rest are its flags).
POD_SETTINGS = ("DYNAMO_WEBHOOK_SERVICE_NAME", "DYNAMO_WEBHOOK_SECRET_NAME", "DYNAMO_WEBHOOK_CERT_MODE")
WEBHOOK_SERVICE = {
    "name": "dynamo-operator-webhook-service",
    "namespace": NAMESPACE,
    "path": "/convert",
    "port": 443,
}
HOOK_TIMEOUT = ("--timeout", "120s")


@dataclass
class Release:
    cp: ControlPlane
    kubectl: Kubectl
    helm: Path
    home: Path
    service: Service
    kubelet: Kubelet
    base: str
    install: Result
    install_args: list[str]
    install_seconds: float
    manifest: list[Obj]
    conversion_after_hook: dict[str, Obj]
    bundles_when_ready: dict[str, str]

    def run_helm(self, *args: str) -> Result:
        return run_helm(self.helm, self.cp, self.home, *args)

    @property
    def post_render(self) -> list[str]:
        return [
            "--post-renderer",
            sys.executable,
            "--post-renderer-args",
            str(POST_RENDER),
            "--post-renderer-args",
            self.base,
        ]


def run_helm(helm: Path, cp: ControlPlane, home: Path, *args: str) -> Result:
    env = {
        **os.environ,
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    proc = subprocess.run(
        [str(helm), "--kubeconfig", str(cp.kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def platform_crds() -> list[Obj]:
    """The CRDs as the platform chart leaves them: conversion pointed at the operator's Service."""
    crds: list[Obj] = []
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["metadata"]["name"] in CONVERTIBLE:
            crd["spec"]["conversion"]["webhook"]["clientConfig"] = {
                "service": {"name": OPERATOR_SERVICE, "namespace": NAMESPACE, "path": "/convert", "port": 443}
            }
        crds.append(crd)
    crds.extend(d for d in yaml.safe_load_all(STAND_INS.read_text()) if d)
    return crds


def readme_command() -> list[str]:
    """The README's ``helm install`` line, word for word, without ``--wait`` and its ``--timeout``
    (no pod becomes ready without a kubelet)."""
    block = readme_install().split("```sh", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    words = block.split()
    assert words[:2] == ["helm", "install"] and "--wait" in words, words
    words.remove("--wait")
    at = words.index("--timeout")
    del words[at : at + 2]
    return words[1:]


def image_of(args: list[str]) -> str:
    """The service's image the release runs (the README's repository, the chart's appVersion)."""
    repository = next(a.split("=", 1)[1] for a in args if a.startswith("image.repository="))
    return f"{repository}:{yaml.safe_load((CHART / 'Chart.yaml').read_text())['appVersion']}"


def pod_settings(kubectl: Kubectl) -> dict[str, str]:
    deployment = kubectl.get("deployment", "dynamo-webhook", NAMESPACE)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {
        v["name"]: v["value"]
        for v in container["env"]
        if "value" in v and (v["name"] in POD_SETTINGS or v["name"].startswith("DYNAMO_WEBHOOK_FEATURE_"))
    }


@pytest.fixture(scope="module")
def release(bin_dir: Path) -> Iterator[Release]:
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="dynamo-webhook-e2e-helm-") as tmp:
        work = Path(tmp)
        kubectl = Kubectl(bin_dir / "kubectl", cp.kubeconfig)
        crds = platform_crds()
        kubectl.apply(crds, "--server-side")
        for crd in crds:
            kubectl("wait", "--for=condition=Established", "--timeout=60s", f"crd/{crd['metadata']['name']}")
        port = free_port()
        base = f"https://127.0.0.1:{port}"
        command = readme_command()
        args = [
            *command,
            *HOOK_TIMEOUT,
            "--post-renderer",
            sys.executable,
            "--post-renderer-args",
            str(POST_RENDER),
            "--post-renderer-args",
            base,
        ]
        for value in VALUES:
            args += ["--set", value]
        (work / "kubelet").mkdir()
        with Kubelet(cp, kubectl, NAMESPACE, work / "kubelet", image_of(command)) as kubelet:
            started = time.monotonic()
            install = run_helm(bin_dir / "helm", cp, work, *args)
            seconds = time.monotonic() - started
            assert install.returncode == 0, install.stderr + install.stdout + "\n".join(kubelet.errors)
            manifest = [
                d
                for d in yaml.safe_load_all(
                    run_helm(bin_dir / "helm", cp, work, "get", "manifest", RELEASE, "-n", NAMESPACE).stdout
                )
                if d
            ]
            after_hook = conversion_of(kubectl)
            kubelet.routing = Routing(kubectl, WEBHOOK_SERVICE, f"{base}/convert")
            kubelet.routing.to_url()
            sa_config = service_account_kubeconfig(cp, kubectl, work / "sa.kubeconfig")
            service = Service(work, sa_config, port=port, env=pod_settings(kubectl))
            service.start()
            try:
                service.wait_ready()
                when_ready = ca_bundles(kubectl)
                wait_until(lambda: all(ca_bundles(kubectl).values()), 60, "every caBundle injected", 0.5)
                yield Release(
                    cp,
                    kubectl,
                    bin_dir / "helm",
                    work,
                    service,
                    kubelet,
                    base,
                    install,
                    args,
                    seconds,
                    manifest,
                    after_hook,
                    when_ready,
                )
            except BaseException:
                print(service.log_tail(200))
                raise
            finally:
                service.stop()


def dry_run(r: Release, obj: Obj) -> Result:
    return r.kubectl(
        "create", "--dry-run=server", "-o", "json", "-f", "-", input=yaml.safe_dump(obj), check=False
    )


def load(path: str, name: str) -> Obj:
    obj: Obj = yaml.safe_load((ROOT / path).read_text())
    obj["metadata"].update(name=name, namespace=APPS)
    return obj


def checkpoint(name: str, gms: bool) -> Obj:
    container = {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.0"}
    spec: Obj = {
        "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
        "job": {"podTemplateSpec": {"spec": {"containers": [container]}}},
    }
    if gms:  # GMS without its wiring: no shared volume, no server sidecar, no claim
        spec["gpuMemoryService"] = {"enabled": True}
    return {
        "apiVersion": ALPHA,
        "kind": "DynamoCheckpoint",
        "metadata": {"name": name, "namespace": APPS},
        "spec": spec,
    }


def conversions(service: Service) -> float:
    """``dynamo_webhook_conversions_total`` of the local process, all series added up."""
    with urllib.request.urlopen(f"http://127.0.0.1:{service.metrics_port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("dynamo_webhook_conversions_total{")
    )


@pytest.fixture(scope="module")
def apps(release: Release) -> str:
    release.kubectl("create", "namespace", APPS)
    return APPS


def read_back(release: Release, obj: Obj, check: bool = True) -> Result:
    """``kubectl get`` of a release object as the API server holds it (JSON)."""
    namespaced = ("-n", NAMESPACE) if "namespace" in obj["metadata"] else ()
    return release.kubectl(
        "get", obj["kind"].lower(), obj["metadata"]["name"], *namespaced, "-o", "json", check=check
    )


def test_the_readme_command_installs_without_monitoring_crds(
    release: Release, e2e_figures: list[str]
) -> None:
    e2e_figures.append(
        f"helm install of charts/dynamo-webhook (the README's command): {release.install_seconds:.1f} s"
    )
    assert (
        release.kubectl("api-resources", "--api-group=monitoring.coreos.com", "-o", "name").stdout.strip()
        == ""
    )
    assert "STATUS: deployed" in release.install.stdout
    assert "kubectl create --dry-run=server" in release.install.stdout  # NOTES
    kinds = {o["kind"] for o in release.manifest}
    assert {
        "Deployment",
        "Service",
        "ServiceAccount",
        "ClusterRole",
        "Role",
        "PodDisruptionBudget",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    } <= kinds
    assert not kinds & {"ServiceMonitor", "PrometheusRule"}
    for obj in release.manifest:
        stored = read_back(release, obj).json()
        assert stored["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert stored["metadata"]["labels"]["app.kubernetes.io/instance"] == RELEASE
        assert stored["metadata"]["annotations"]["meta.helm.sh/release-name"] == RELEASE
    status = release.run_helm("status", RELEASE, "-n", NAMESPACE, "-o", "json")
    assert json.loads(status.stdout)["info"]["status"] == "deployed"


def test_crd_hook_points_the_conversion_at_the_service(release: Release) -> None:
    (ran,) = release.kubelet.of(CRD_JOB)
    assert ran.returncode == 0, ran.output
    assert ran.argv[1:3] == ("patch", "customresourcedefinitions.apiextensions.k8s.io")
    for crd, conversion in release.conversion_after_hook.items():
        assert conversion["strategy"] == "Webhook", crd
        assert conversion["webhook"]["clientConfig"]["service"] == WEBHOOK_SERVICE, crd
    # Helm deleted the Job once it succeeded (hook-succeeded).
    wait_until(lambda: not jobs(release), 30, "the hook Job deleted")


def jobs(release: Release) -> list[str]:
    items = release.kubectl("get", "jobs", "-n", NAMESPACE, "-o", "json").json()["items"]
    return [j["metadata"]["name"] for j in items]


def test_ready_means_the_admission_webhooks_carry_the_ca(release: Release) -> None:
    """No window with an empty caBundle after ``helm install --wait``: the pod turns ready (the
    readiness probe Helm waits on) only after its first certificate pass has injected the CA into
    both webhook configurations, and the CRD hook runs after that wait."""
    admission = {k: v for k, v in release.bundles_when_ready.items() if not k.startswith("crd/")}
    assert len(admission) == 9 and all(admission.values()), admission


def test_the_chart_rbac_lets_the_service_inject_every_ca_bundle(release: Release) -> None:
    bundles = ca_bundles(release.kubectl)
    assert len(bundles) == 9 + len(CONVERTIBLE) and all(bundles.values())
    assert len(set(bundles.values())) == 1


def test_dry_run_create_is_defaulted_by_the_chart_webhooks(release: Release, apps: str) -> None:
    obj = load("examples/manifests/dgd-agg-v1beta1.yaml", "helm-defaults")
    result = dry_run(release, obj)
    assert result.returncode == 0, result.stderr
    answered = json.loads(result.stdout)
    assert user_view(answered) == user_view(mutated(as_sent(obj)))
    assert user_view(answered) != user_view(as_sent(obj)), "the mutating webhook added nothing"


def test_dry_run_create_in_v1alpha1_is_converted_by_the_service(release: Release, apps: str) -> None:
    before = conversions(release.service)
    result = dry_run(release, load("examples/manifests/dgd-agg-v1alpha1.yaml", "helm-alpha"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["apiVersion"] == ALPHA
    assert conversions(release.service) > before


def test_a_gate_set_by_a_chart_value_reaches_the_service(release: Release, apps: str) -> None:
    assert pod_settings(release.kubectl)["DYNAMO_WEBHOOK_FEATURE_CHECKPOINT"] == "true"
    admitted = dry_run(release, checkpoint("helm-ckpt", gms=False))
    assert admitted.returncode == 0, admitted.stderr
    # GMS without its wiring: refused by the service's rule, through the chart's registration.
    code, body = release.cp.raw(
        "POST",
        f"/apis/{ALPHA}/namespaces/{APPS}/dynamocheckpoints?dryRun=All",
        checkpoint("helm-ckpt-gms", gms=True),
    )
    status = json.loads(body)
    assert code == 422, status
    assert status["message"].startswith('admission webhook "vdynamocheckpoint.kb.io" denied the request'), (
        status
    )
    assert "intrapod-shared-gpu" in status["message"]
    assert "checkpoint functionality is disabled" not in status["message"]


# --- helm test ----------------------------------------------------------------------------------------


TEST_HOOKS = ("serviceaccount", "role", "rolebinding", "configmap", "pod")


def test_helm_test_fails_while_the_webhooks_do_not_answer(release: Release) -> None:
    """A real check: with the service down the webhooks fail closed, and so does ``helm test``."""
    release.service.stop()
    try:
        result = release.run_helm("test", RELEASE, "-n", NAMESPACE, *HOOK_TIMEOUT)
    finally:
        release.service.start()
        release.service.wait_ready()
    assert result.returncode != 0, result.stdout
    assert "pod dynamo-webhook-test failed" in result.stderr, result.stderr
    ran = release.kubelet.of("dynamo-webhook-test")[-1]
    assert ran.returncode != 0 and "failed calling webhook" in ran.output, ran.output


def test_helm_test_dry_run_creates_the_examples_through_the_webhooks(release: Release) -> None:
    before = conversions(release.service)
    result = release.run_helm("test", RELEASE, "-n", NAMESPACE, *HOOK_TIMEOUT)
    assert result.returncode == 0, result.stderr + release.kubelet.of("dynamo-webhook-test")[-1].output
    assert "Phase:          Succeeded" in result.stdout, result.stdout
    ran = release.kubelet.of("dynamo-webhook-test")[-1]
    assert ran.returncode == 0, ran.output
    # kubectl's own words for each document, as the test's ServiceAccount.
    assert (
        "dynamographdeployment.nvidia.com/dynamo-webhook-test-v1alpha1 created (server dry run)" in ran.output
    )
    assert (
        "dynamographdeployment.nvidia.com/dynamo-webhook-test-v1beta1 created (server dry run)" in ran.output
    )
    assert conversions(release.service) > before  # the v1alpha1 document went through the conversion
    # Passed: Helm deleted the test's objects (hook-succeeded).
    for kind in TEST_HOOKS:
        wait_until(
            lambda kind=kind: (
                release.kubectl("get", kind, "dynamo-webhook-test", "-n", NAMESPACE, check=False).returncode
                != 0
            ),
            30,
            f"{kind} deleted",
        )


# --- helm upgrade while a client writes ----------------------------------------------------------------


@dataclass
class Writer:
    """A client creating DGDs one after the other (each through the chart's webhooks) until stopped."""

    release: Release
    created: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        template = load("examples/manifests/dgd-agg-v1beta1.yaml", "upgrade")
        while not self.stop.is_set():
            obj = copy.deepcopy(template)
            obj["metadata"]["name"] = f"upgrade-{len(self.created) + len(self.failed):04d}"
            result = self.release.kubectl("create", "-f", "-", input=yaml.safe_dump(obj), check=False)
            (self.created if result.returncode == 0 else self.failed).append(
                obj["metadata"]["name"] + ("" if result.returncode == 0 else f": {result.stderr.strip()}")
            )


def test_upgrade_changing_a_value_while_a_client_creates(
    release: Release, apps: str, e2e_figures: list[str]
) -> None:
    writer = Writer(release)
    thread = threading.Thread(target=writer.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: len(writer.created) >= 3, 60, "the client's first creates")
        args = ["upgrade", *release.install_args[1:], "--set", "webhooks.timeoutSeconds=12"]
        started = time.monotonic()
        upgrade = release.run_helm(*args)
        seconds = time.monotonic() - started
        at_upgrade = len(writer.created)
        wait_until(lambda: len(writer.created) >= at_upgrade + 3, 60, "creates after the upgrade")
    finally:
        writer.stop.set()
        thread.join(timeout=60)
    assert upgrade.returncode == 0, upgrade.stderr + upgrade.stdout
    assert not writer.failed, writer.failed
    e2e_figures.append(
        f"helm upgrade while a client created DGDs: {seconds:.1f} s, "
        f"{len(writer.created)} creates, {len(writer.failed)} failed"
    )
    for kind, name in (
        ("validatingwebhookconfiguration", "dynamo-webhook-validating"),
        ("mutatingwebhookconfiguration", "dynamo-webhook-mutating"),
    ):
        assert {h["timeoutSeconds"] for h in release.kubectl.get(kind, name)["webhooks"]} == {12}
    # The upgrade kept the injected caBundles, and its hook ran again.
    assert all(ca_bundles(release.kubectl).values())
    assert [r.returncode for r in release.kubelet.of(CRD_JOB)] == [0, 0]
    status = json.loads(release.run_helm("status", RELEASE, "-n", NAMESPACE, "-o", "json").stdout)
    assert status["version"] == 2 and status["info"]["status"] == "deployed"


# --- helm uninstall ---------------------------------------------------------------------------------------


def conversion_of(kubectl: Kubectl) -> dict[str, Obj]:
    """The ``spec.conversion`` of each convertible CRD."""
    return {crd: kubectl.get("crd", crd)["spec"]["conversion"] for crd in CONVERTIBLE}


def release_objects(release: Release) -> list[tuple[str, str]]:
    out = []
    for obj in release.manifest:
        if read_back(release, obj, check=False).returncode == 0:
            out.append((obj["kind"], obj["metadata"]["name"]))
    return out


def test_uninstall_waits_for_storage_migrate_then_leaves_the_crds_converting(
    release: Release, apps: str, e2e_figures: list[str]
) -> None:
    from tests.e2e.legacy import crd_stored_versions, set_storage_version, stored_versions

    # A DGD stored as v1alpha1: created while that was the storage version.
    set_storage_version(release, "dynamographdeployments", "v1alpha1")  # type: ignore[arg-type]
    old = load("examples/manifests/dgd-agg-v1alpha1.yaml", "stored-as-alpha")
    release.kubectl("create", "-f", "-", input=yaml.safe_dump(old))
    set_storage_version(release, "dynamographdeployments", "v1beta1")  # type: ignore[arg-type]
    assert stored_versions(release.cp, "dynamographdeployments")[f"{APPS}/stored-as-alpha"] == "v1alpha1"
    assert sorted(crd_stored_versions(release.kubectl, "dynamographdeployments")) == ["v1alpha1", "v1beta1"]
    before = conversion_of(release.kubectl)
    objects = release_objects(release)

    # 1. The pre-delete hook refuses: the uninstall stops and nothing changes.
    stopped = release.run_helm("uninstall", RELEASE, "-n", NAMESPACE, *HOOK_TIMEOUT)
    assert stopped.returncode != 0, stopped.stdout
    assert f"job {RELEASE_JOB} failed" in stopped.stderr, stopped.stderr
    refusal = release.kubelet.of(RELEASE_JOB)[-1]
    assert refusal.returncode != 0
    assert "dynamographdeployments.nvidia.com" in refusal.output and "storage-migrate" in refusal.output, (
        refusal.output
    )
    assert conversion_of(release.kubectl) == before
    assert release_objects(release) == objects

    # 2. storage-migrate rewrites what is stored as v1alpha1; the uninstall then completes.
    migrated = subprocess.run(
        [
            str(EXE),
            "storage-migrate",
            "--kubeconfig",
            str(release.cp.kubeconfig),
            "--state-file",
            str(release.home / "migrate.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert migrated.returncode == 0, migrated.stderr + migrated.stdout
    assert crd_stored_versions(release.kubectl, "dynamographdeployments") == ["v1beta1"]
    started = time.monotonic()
    done = release.run_helm("uninstall", RELEASE, "-n", NAMESPACE, *HOOK_TIMEOUT)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr + done.stdout
    assert release.kubelet.of(RELEASE_JOB)[-1].returncode == 0, release.kubelet.of(RELEASE_JOB)[-1].output
    e2e_figures.append(f"helm uninstall after storage-migrate: {seconds:.1f} s")

    # The CRDs convert nothing any more (every object is stored in the storage version), and serve
    # every object in both versions.
    for crd, conversion in conversion_of(release.kubectl).items():
        assert conversion == {"strategy": "None"}, (crd, conversion)
    for version in ("v1beta1", "v1alpha1"):
        listed = release.kubectl(
            "get", f"dynamographdeployments.{version}.nvidia.com", "-n", APPS, "-o", "json"
        )
        names = {o["metadata"]["name"] for o in listed.json()["items"]}
        assert "stored-as-alpha" in names and len(names) > 3, (version, names)
    # Nothing of the release is left, but the certificate Secret the service made (not the release's:
    # the operator shares webhook-server-cert; docs/operations.md "Uninstalling").
    assert release_objects(release) == []
    assert jobs(release) == []
    assert release.kubectl("get", "pods", "-n", NAMESPACE, "-o", "name").stdout.strip() == ""
    secrets = release.kubectl("get", "secrets", "-n", NAMESPACE, "-o", "json").json()["items"]
    assert [s["metadata"]["name"] for s in secrets] == ["webhook-server-cert"]
    assert release.run_helm("status", RELEASE, "-n", NAMESPACE).returncode != 0
