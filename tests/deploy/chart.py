"""Render charts/dynamo-webhook with the real helm (built by ``scripts/kube-testenv`` beside
kubectl) and say which differences from the Kustomize build are Helm's own."""

from __future__ import annotations

import copy
import functools
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.manifests import ROOT
from tests.e2e.testenv import TestenvUnavailable, binaries

CHART = ROOT / "charts" / "dynamo-webhook"
#: Values of each cert mode, by the overlay that renders the same objects.
MODE_VALUES = {"self-signed": ("certMode=selfSigned",), "cert-manager": ("certMode=certManager",)}
#: Labels the chart adds to every object's metadata and deploy/ does not have.
HELM_LABELS = (
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
)
#: The post-install/post-upgrade Job that stands for deploy/'s partial CRDs.
CRD_JOB = "dynamo-webhook-crd-conversion"
#: The pre-delete Job that releases the CRDs' conversion on uninstall.
RELEASE_JOB = "dynamo-webhook-crd-release"
#: The prometheus-operator's kinds, as a cluster serving them tells Helm (``--api-versions``).
MONITORING_APIS = ("monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule")

Obj = dict[str, Any]


def helm() -> str:
    """The helm of ``scripts/kube-testenv``; a missing build fails the test, never skips it."""
    try:
        return str(binaries() / "helm")
    except TestenvUnavailable as err:
        pytest.fail(f"helm is needed to render charts/dynamo-webhook: {err}")


def run_helm(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm(), *args], capture_output=True, text=True, timeout=timeout, check=False)


def template_args(
    values: Sequence[str], namespace: str, release: str, api_versions: Sequence[str] = ()
) -> list[str]:
    args = ["template", release, str(CHART), "--namespace", namespace]
    for value in values:
        args += ["--set", value]
    for api in api_versions:
        args += ["--api-versions", api]
    return args


@functools.cache
def _rendered(
    values: tuple[str, ...], namespace: str, release: str, api_versions: tuple[str, ...]
) -> tuple[Obj, ...]:
    proc = run_helm(*template_args(values, namespace, release, api_versions))
    assert proc.returncode == 0, f"helm template {' '.join(values)} failed:\n{proc.stderr}"
    return tuple(d for d in yaml.safe_load_all(proc.stdout) if d)


def render(
    *values: str,
    namespace: str = "dynamo-system",
    release: str = "dynamo-webhook",
    api_versions: Sequence[str] = MONITORING_APIS,
) -> list[Obj]:
    """``helm template`` with ``--set`` values, parsed (a fresh copy each call), for a cluster that
    serves ``api_versions`` beside the built-in ones (by default the prometheus-operator's, as
    deploy/ assumes)."""
    return copy.deepcopy(list(_rendered(tuple(values), namespace, release, tuple(api_versions))))


def is_hook(obj: Obj) -> bool:
    """A Helm hook (the CRD Jobs, the test's objects): not part of the release's manifest."""
    return "helm.sh/hook" in (obj["metadata"].get("annotations") or {})


def refused(*values: str) -> str:
    """The error of a ``helm template`` that must fail (the test fails if it renders)."""
    proc = run_helm(*template_args(values, "dynamo-system", "dynamo-webhook"))
    assert proc.returncode != 0, f"helm template accepted {values}"
    return proc.stderr


def strip_helm_labels(obj: Obj, release: str = "dynamo-webhook") -> Obj:
    """The object without the labels only Helm adds, after checking they are there as Helm sets them."""
    out = copy.deepcopy(obj)
    labels = out["metadata"]["labels"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert labels.pop("helm.sh/chart") == f"{chart['name']}-{chart['version']}"
    assert labels.pop("app.kubernetes.io/managed-by") == "Helm"
    assert labels.pop("app.kubernetes.io/instance") == release
    assert labels.pop("app.kubernetes.io/version") == chart["appVersion"]
    return out


def key(obj: Obj) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])


def of_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    found = [o for o in of_kind(objects, kind) if name is None or o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def env(objects: list[Obj]) -> dict[str, str]:
    """The webhook container's plain env values."""
    container = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    return {v["name"]: v["value"] for v in container["env"] if "value" in v}


def crd_job_patch(objects: list[Obj]) -> tuple[list[str], Obj]:
    """(CRD names, merge patch) the CRD conversion hook Job runs ``kubectl patch`` with."""
    job = one(objects, "Job", CRD_JOB)
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["kubectl"]
    args = list(container["args"])
    assert args[:2] == ["patch", "customresourcedefinitions.apiextensions.k8s.io"], args
    assert args[-3:-1] == ["--type=merge", "--patch"], args
    patch: Obj = yaml.safe_load(args[-1])
    return args[2:-3], patch


def chart_path(*parts: str) -> Path:
    return CHART.joinpath(*parts)
