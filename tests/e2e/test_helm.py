"""``helm install`` of charts/dynamo-webhook into a real API server, on a control plane of its own
(the chart's cluster-scoped objects have the names the shared registration uses).

The release is installed the way an admin installs it beside the Dynamo platform chart, with two
changes for a control plane without a kubelet, where no pod ever runs:

- the admission webhooks' ``clientConfig`` goes to the service run as a local process
  (``url: https://127.0.0.1:<port>/<path>``), by a post-renderer (``helm_post_render.py``);
- hooks are not run by Helm (``--no-hooks``): the test runs the CRD conversion hook Job's container
  command itself, with the real kubectl and a token of the Job's ServiceAccount, as the kubelet
  would, then points the conversion it set at the local process the same way.

The local ``dynamo-webhook serve`` gets the settings the chart gives the pod (the Deployment's
``DYNAMO_WEBHOOK_*`` values as stored by the API server) and runs with a token of the chart's
ServiceAccount, so the chart's RBAC is what lets it inject the caBundles. Then server dry-run
creates go through the chart's webhooks: defaulting, validation (a gate set by a chart value) and
conversion.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.chart import CHART, CRD_JOB
from tests.e2e.admission import as_sent, mutated
from tests.e2e.cluster import (
    CONVERTIBLE,
    CRD_DIR,
    NAMESPACE,
    STAND_INS,
    Service,
    ca_bundles,
    service_account_kubeconfig,
)
from tests.e2e.objects import ALPHA, user_view
from tests.e2e.testenv import ROOT, ControlPlane, Kubectl, Result, control_plane, free_port, wait_until

Obj = dict[str, Any]

RELEASE = "dynamo-webhook"
APPS = "apps"
POST_RENDER = Path(__file__).with_name("helm_post_render.py")
#: Where the platform chart's operator points the conversion before this chart takes it over.
OPERATOR_SERVICE = "dynamo-platform-dynamo-operator-webhook-service"
VALUES = (
    "features.checkpoint=true",
    # No prometheus-operator CRDs on this control plane.
    "monitoring.serviceMonitor.enabled=false",
    "monitoring.prometheusRule.enabled=false",
)
#: Settings the local process takes from the installed Deployment (the rest are its flags).
POD_SETTINGS = ("DYNAMO_WEBHOOK_SERVICE_NAME", "DYNAMO_WEBHOOK_SECRET_NAME", "DYNAMO_WEBHOOK_CERT_MODE")


@dataclass
class Release:
    cp: ControlPlane
    kubectl: Kubectl
    helm: Path
    home: Path
    service: Service
    install: Result
    install_seconds: float
    manifest: list[Obj]
    hook_result: Result
    conversion_after_hook: dict[str, Obj]

    def run_helm(self, *args: str) -> Result:
        return run_helm(self.helm, self.cp, self.home, *args)


def run_helm(helm: Path, cp: ControlPlane, home: Path, *args: str) -> Result:
    env = {**os.environ, "HELM_CACHE_HOME": str(home / "cache"), "HELM_CONFIG_HOME": str(home / "config"),
           "HELM_DATA_HOME": str(home / "data")}
    proc = subprocess.run([str(helm), "--kubeconfig", str(cp.kubeconfig), *args], capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def platform_crds() -> list[Obj]:
    """The CRDs as the platform chart leaves them: conversion pointed at the operator's Service."""
    crds: list[Obj] = []
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["metadata"]["name"] in CONVERTIBLE:
            crd["spec"]["conversion"]["webhook"]["clientConfig"] = {
                "service": {"name": OPERATOR_SERVICE, "namespace": NAMESPACE, "path": "/convert", "port": 443}}
        crds.append(crd)
    crds.extend(d for d in yaml.safe_load_all(STAND_INS.read_text()) if d)
    return crds


def run_crd_hook(kubectl: Kubectl, hooks: list[Obj], sa_kubeconfig: Path) -> Result:
    """The hook Job's container command, run as the kubelet would run it, as the Job's ServiceAccount."""
    (job,) = [h for h in hooks if h["kind"] == "Job" and h["metadata"]["name"] == CRD_JOB]
    assert "post-install" in job["metadata"]["annotations"]["helm.sh/hook"]
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "dynamo-webhook"
    (container,) = pod["containers"]
    assert container["command"] == ["kubectl"]
    return Kubectl(kubectl.exe, sa_kubeconfig)(*container["args"], check=False)


def point_conversion_at(kubectl: Kubectl, base: str) -> None:
    """The conversion the hook set, with only its clientConfig changed to the local process's URL."""
    patch = {"spec": {"conversion": {"webhook": {"clientConfig": {"service": None, "url": f"{base}/convert"}}}}}
    for crd in CONVERTIBLE:
        kubectl("patch", "crd", crd, "--type=merge", "-p", json.dumps(patch))


def pod_settings(kubectl: Kubectl) -> dict[str, str]:
    deployment = kubectl.get("deployment", "dynamo-webhook", NAMESPACE)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {
        v["name"]: v["value"] for v in container["env"]
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
        args = ["install", RELEASE, str(CHART), "--namespace", NAMESPACE, "--create-namespace", "--no-hooks",
                "--timeout", "60s", "--post-renderer", sys.executable,
                "--post-renderer-args", str(POST_RENDER), "--post-renderer-args", base]
        for value in VALUES:
            args += ["--set", value]
        started = time.monotonic()
        install = run_helm(bin_dir / "helm", cp, work, *args)
        seconds = time.monotonic() - started
        assert install.returncode == 0, install.stderr + install.stdout
        manifest = [d for d in yaml.safe_load_all(run_helm(bin_dir / "helm", cp, work, "get", "manifest", RELEASE,
                                                           "-n", NAMESPACE).stdout) if d]
        hooks = [d for d in yaml.safe_load_all(run_helm(bin_dir / "helm", cp, work, "get", "hooks", RELEASE,
                                                        "-n", NAMESPACE).stdout) if d]
        sa_config = service_account_kubeconfig(cp, kubectl, work / "sa.kubeconfig")
        hook_result = run_crd_hook(kubectl, hooks, sa_config)
        after_hook = {crd: copy.deepcopy(kubectl.get("crd", crd)["spec"]["conversion"]) for crd in CONVERTIBLE}
        point_conversion_at(kubectl, base)
        service = Service(work, sa_config, port=port, env=pod_settings(kubectl))
        service.start()
        try:
            service.wait_ready()
            wait_until(lambda: all(ca_bundles(kubectl).values()), 60, "every caBundle injected", 0.5)
            yield Release(cp, kubectl, bin_dir / "helm", work, service, install, seconds, manifest, hook_result,
                          after_hook)
        except BaseException:
            print(service.log_tail(200))
            raise
        finally:
            service.stop()


def dry_run(r: Release, obj: Obj) -> Result:
    return r.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", input=yaml.safe_dump(obj), check=False)


def load(path: str, name: str) -> Obj:
    obj: Obj = yaml.safe_load((ROOT / path).read_text())
    obj["metadata"].update(name=name, namespace=APPS)
    return obj


def checkpoint(name: str, gms: bool) -> Obj:
    container = {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.0"}
    spec: Obj = {"identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
                 "job": {"podTemplateSpec": {"spec": {"containers": [container]}}}}
    if gms:  # GMS without its wiring: no shared volume, no server sidecar, no claim
        spec["gpuMemoryService"] = {"enabled": True}
    return {"apiVersion": ALPHA, "kind": "DynamoCheckpoint", "metadata": {"name": name, "namespace": APPS},
            "spec": spec}


def conversions(service: Service) -> float:
    """``dynamo_webhook_conversions_total`` of the local process, all series added up."""
    with urllib.request.urlopen(f"http://127.0.0.1:{service.metrics_port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("dynamo_webhook_conversions_total{"))


@pytest.fixture(scope="module")
def apps(release: Release) -> str:
    release.kubectl("create", "namespace", APPS)
    return APPS


def test_install_creates_every_object_of_the_chart(release: Release, e2e_figures: list[str]) -> None:
    e2e_figures.append(f"helm install of charts/dynamo-webhook: {release.install_seconds:.1f} s")
    assert "STATUS: deployed" in release.install.stdout
    assert "kubectl create --dry-run=server" in release.install.stdout  # NOTES
    kinds = {o["kind"] for o in release.manifest}
    assert {"Deployment", "Service", "ServiceAccount", "ClusterRole", "Role", "PodDisruptionBudget",
            "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} <= kinds
    for obj in release.manifest:
        namespaced = ("-n", NAMESPACE) if "namespace" in obj["metadata"] else ()
        stored = release.kubectl("get", obj["kind"].lower(), obj["metadata"]["name"], *namespaced, "-o", "json").json()
        assert stored["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert stored["metadata"]["annotations"]["meta.helm.sh/release-name"] == RELEASE
    status = release.run_helm("status", RELEASE, "-n", NAMESPACE, "-o", "json")
    assert json.loads(status.stdout)["info"]["status"] == "deployed"


def test_crd_hook_points_the_conversion_at_the_service(release: Release) -> None:
    assert release.hook_result.returncode == 0, release.hook_result.stderr
    for crd, conversion in release.conversion_after_hook.items():
        assert conversion["strategy"] == "Webhook", crd
        assert conversion["webhook"]["clientConfig"]["service"] == {
            "name": "dynamo-operator-webhook-service", "namespace": NAMESPACE, "path": "/convert", "port": 443}, crd


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
    code, body = release.cp.raw("POST", f"/apis/{ALPHA}/namespaces/{APPS}/dynamocheckpoints?dryRun=All",
                                checkpoint("helm-ckpt-gms", gms=True))
    status = json.loads(body)
    assert code == 422, status
    assert status["message"].startswith('admission webhook "vdynamocheckpoint.kb.io" denied the request'), status
    assert "intrapod-shared-gpu" in status["message"]
    assert "checkpoint functionality is disabled" not in status["message"]
