"""The service registered with a real API server the way deploy/ registers it.

- The pinned CRDs as the project vendors them (``tests/fixtures/crds``), each convertible one with
  the conversion stanza of ``deploy/`` (rendered with ``kubectl kustomize``), plus stand-in CRDs
  for the kinds whose schemas are not vendored (``stand-in-crds.yaml``).
- The Mutating/ValidatingWebhookConfigurations, ServiceAccount and RBAC of
  ``deploy/overlays/self-signed``. Only ``clientConfig`` changes, to
  ``url: https://127.0.0.1:<port>/<path>`` (there is no Service routing on loopback), so the
  serving certificate must carry the IP SAN. No caBundle is ever written by the tests: the
  service's own cert loop (``--cert-mode auto``) puts them there.
- ``dynamo-webhook serve`` started as users start it, with a kubeconfig holding a token of the
  deploy/ ServiceAccount (bound only to the deploy/ RBAC, not admin).
"""

from __future__ import annotations

import copy
import json
import os
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.app.server.serve_command import EXE, serve_argv
from tests.deploy.manifests import DEPLOY, kustomize
from tests.e2e.testenv import ROOT, ControlPlane, Fatal, Kubectl, Proc, free_port, kubeconfig_yaml, wait_until

Obj = dict[str, Any]

CRD_DIR = ROOT / "tests" / "fixtures" / "crds"
STAND_INS = Path(__file__).with_name("stand-in-crds.yaml")
OVERLAY = DEPLOY / "overlays" / "self-signed"
NAMESPACE = "dynamo-system"
SERVICE_ACCOUNT = "dynamo-webhook"
SECRET = "webhook-server-cert"
VALIDATING = "dynamo-webhook-validating"
MUTATING = "dynamo-webhook-mutating"
CONVERTIBLE = (
    "dynamographdeployments.nvidia.com",
    "dynamocomponentdeployments.nvidia.com",
    "dynamographdeploymentrequests.nvidia.com",
    "dynamographdeploymentscalingadapters.nvidia.com",
)
REGISTRATION_KINDS = (
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
)


def _url_config(service_ref: Obj, port: int) -> Obj:
    return {"url": f"https://127.0.0.1:{port}{service_ref['service']['path']}"}


def registration(port: int) -> tuple[list[Obj], list[Obj]]:
    """(CRDs, the rest) for a service on ``https://127.0.0.1:<port>``: deploy/'s objects with only
    ``clientConfig`` changed."""
    built = kustomize(OVERLAY)
    crds: list[Obj] = []
    partials = {o["metadata"]["name"]: o for o in built if o["kind"] == "CustomResourceDefinition"}
    assert sorted(partials) == sorted(CONVERTIBLE), sorted(partials)
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        partial = partials.get(crd["metadata"]["name"])
        if partial is not None:
            conversion = copy.deepcopy(partial["spec"]["conversion"])
            webhook = conversion["webhook"]
            webhook["clientConfig"] = _url_config(webhook["clientConfig"], port)
            crd["spec"]["conversion"] = conversion
        crds.append(crd)
    crds.extend(d for d in yaml.safe_load_all(STAND_INS.read_text()) if d)
    rest: list[Obj] = []
    for obj in built:
        if obj["kind"] not in REGISTRATION_KINDS:
            continue
        obj = copy.deepcopy(obj)
        for hook in obj.get("webhooks", []):
            hook["clientConfig"] = _url_config(hook["clientConfig"], port)
        rest.append(obj)
    return crds, rest


@dataclass
class Service:
    """One ``dynamo-webhook serve`` process."""

    workdir: Path
    kubeconfig: Path
    args: tuple[str, ...] = ()
    port: int = field(default_factory=free_port)
    #: Settings as a pod gets them (``DYNAMO_WEBHOOK_*``); the flags above win over them.
    env: dict[str, str] = field(default_factory=dict)
    metrics_port: int = field(default_factory=free_port)
    proc: Proc | None = None
    starts: int = 0

    @property
    def cert_dir(self) -> Path:
        return self.workdir / "certs"

    @property
    def log_path(self) -> Path:
        return self.workdir / "serve.log"

    def start(self) -> None:
        self.starts += 1
        with self.log_path.open("a") as log:
            log.write(f"=== start {self.starts}\n")
        self.proc = Proc(
            "dynamo-webhook",
            serve_argv(
                EXE,
                self.cert_dir,
                self.port,
                self.metrics_port,
                "--cert-mode",
                "auto",
                "--kubeconfig",
                str(self.kubeconfig),
                "--namespace",
                NAMESPACE,
                "--no-print-curl",
                *self.args,
            ),
            self.log_path,
        )
        self.proc.start(env={**os.environ, **self.env, "PYTHONUNBUFFERED": "1"})

    def stop(self, grace: float = 20.0) -> None:
        if self.proc is not None:
            self.proc.stop(grace)
            self.proc = None

    def readyz(self) -> tuple[int, Any]:
        """(status, body) of /readyz; (0, reason) while nothing answers."""
        if self.proc is None or not self.proc.alive():
            raise Fatal(f"dynamo-webhook serve is not running:\n{self.log_tail()}")
        ca = self.cert_dir / "ca.crt"
        if not ca.exists():
            return 0, "no ca.crt yet"
        ctx = ssl.create_default_context(cafile=str(ca))
        try:
            with urllib.request.urlopen(
                f"https://127.0.0.1:{self.port}/readyz", context=ctx, timeout=5
            ) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")
        except (urllib.error.URLError, OSError, ssl.SSLError) as err:
            return 0, str(err)

    def wait_ready(self, timeout: float = 90.0) -> None:
        wait_until(
            lambda: self.readyz()[0] == 200, timeout, f"dynamo-webhook /readyz (log {self.log_path})", 0.25
        )

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def service_account_kubeconfig(
    cp: ControlPlane,
    kubectl: Kubectl,
    path: Path,
    account: str = SERVICE_ACCOUNT,
    namespace: str = NAMESPACE,
    duration: str = "24h",
) -> Path:
    """A kubeconfig for a ServiceAccount (by default deploy/'s): a bound token from the TokenRequest API."""
    token = kubectl("create", "token", account, "-n", namespace, "--duration", duration).stdout.strip()
    path.write_text(kubeconfig_yaml(cp.url, cp.pki.serving_ca, user={"token": token}, name=account))
    path.chmod(0o600)
    return path


def ca_bundles(kubectl: Kubectl) -> dict[str, str]:
    """Every caBundle the service owns, by ``<kind>/<name>[/<webhook>]`` (empty string when unset)."""
    found: dict[str, str] = {}
    for kind, name in (
        ("validatingwebhookconfiguration", VALIDATING),
        ("mutatingwebhookconfiguration", MUTATING),
    ):
        obj = kubectl.get(kind, name)
        for hook in obj["webhooks"]:
            found[f"{kind}/{name}/{hook['name']}"] = hook["clientConfig"].get("caBundle", "")
    for crd in CONVERTIBLE:
        obj = kubectl.get("crd", crd)
        found[f"crd/{crd}"] = obj["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle", "")
    return found


@dataclass
class Cluster:
    """A control plane with the service registered and serving."""

    cp: ControlPlane
    kubectl: Kubectl
    service: Service
    crds: list[Obj]
    registration: list[Obj]

    def sa_kubectl(self) -> Kubectl:
        return Kubectl(self.kubectl.exe, self.service.kubeconfig)


def install(
    cp: ControlPlane, kubectl: Kubectl, workdir: Path, port: int
) -> tuple[list[Obj], list[Obj], Path]:
    """Namespace, CRDs (established), ServiceAccount, RBAC and webhook configurations; returns the
    objects applied and the ServiceAccount's kubeconfig."""
    crds, rest = registration(port)
    kubectl("create", "namespace", NAMESPACE)
    kubectl.apply(crds, "--server-side")
    for crd in crds:
        kubectl("wait", "--for=condition=Established", "--timeout=60s", f"crd/{crd['metadata']['name']}")
    kubectl.apply(rest, "--server-side")
    return crds, rest, service_account_kubeconfig(cp, kubectl, workdir / "sa.kubeconfig")
