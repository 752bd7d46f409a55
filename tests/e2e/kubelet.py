"""What a kubelet and the Job controller would do for a Helm release's hooks, on a control plane that
has neither: Helm itself creates the hook Jobs and ``helm test`` Pods and waits for them, and this
stand-in runs each one's container command on this machine, then writes the outcome into the
object's status the way those controllers do (a Job's ``Complete`` or ``Failed`` condition, a Pod's
``Succeeded`` or ``Failed`` phase), so Helm's own flow decides what happens next: an install,
upgrade or test that waits on its hook, an uninstall that a failed pre-delete hook stops.

A container runs as its pod would: the command of its image (the kubectl image runs the real
kubectl; the service's image runs ``dynamo-webhook``), its plain ``env`` values, a kubeconfig with a
token of the pod's ServiceAccount (so the chart's RBAC is what lets it act), and its volumes as
directories (a ConfigMap's keys as files, an emptyDir empty) with every argument and env value
under a mount path pointed at them.

The webhook Service has no routing on loopback, so the tests point the CRDs' conversion at the
local process by ``url``. A hook Job (the chart's read and patch the CRDs' conversion) sees the
cluster as a real one holds it: before it runs the stand-in puts the Service reference back where
that URL stands (``Routing.to_service``), and afterwards points whatever then names the Service at
the URL again (``Routing.to_url``). A test Pod's requests go through the conversion, so the URL
stays while it runs.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.cluster import CONVERTIBLE, EXE, service_account_kubeconfig
from tests.e2e.testenv import ControlPlane, Kubectl

Obj = dict[str, Any]

KUBECTL_IMAGE = "registry.k8s.io/kubectl"


@dataclass(frozen=True)
class Ran:
    """One hook container run: the object, its command line as run, exit code and output."""

    kind: str
    name: str
    argv: tuple[str, ...]
    returncode: int
    output: str


@dataclass
class Routing:
    """The CRDs' conversion between the webhook Service (as a cluster holds it) and the local URL."""

    kubectl: Kubectl
    service: Obj  # {"name", "namespace", "path", "port"}
    url: str

    def _swap(self, holds: Callable[[Obj], bool], client_config: Obj) -> None:
        for crd in CONVERTIBLE:
            conversion = self.kubectl.get("crd", crd)["spec"].get("conversion") or {}
            config = (conversion.get("webhook") or {}).get("clientConfig") or {}
            if conversion.get("strategy") == "Webhook" and holds(config):
                patch = {"spec": {"conversion": {"webhook": {"clientConfig": client_config}}}}
                self.kubectl("patch", "crd", crd, "--type=merge", "-p", json.dumps(patch))

    def to_service(self) -> None:
        self._swap(lambda c: c.get("url") == self.url, {"url": None, "service": self.service})

    def to_url(self) -> None:
        self._swap(lambda c: c.get("service") == self.service, {"service": None, "url": self.url})


@dataclass
class Kubelet:
    """Runs the hook Jobs and test Pods of ``namespace`` while started (see the module docstring)."""

    cp: ControlPlane
    kubectl: Kubectl
    namespace: str
    workdir: Path
    service_image: str
    routing: Routing | None = None
    ran: list[Ran] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    errors: list[str] = field(default_factory=list)

    def __enter__(self) -> Kubelet:
        self._thread = threading.Thread(target=self._loop, name="kubelet-stand-in", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def of(self, name: str) -> list[Ran]:
        return [r for r in self.ran if r.name == name]

    # --- the loop ---------------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                for kind, obj in self._pending():
                    self._seen.add(obj["metadata"]["uid"])
                    self._run(kind, obj)
            except Exception as err:  # recorded: the test that waits on this fails with it
                self.errors.append(repr(err))
            self._stop.wait(0.2)

    def _pending(self) -> list[tuple[str, Obj]]:
        found: list[tuple[str, Obj]] = []
        for kind in ("jobs", "pods"):
            listed = self.kubectl("get", kind, "-n", self.namespace, "-o", "json", check=False)
            if listed.returncode != 0:
                continue
            for obj in listed.json()["items"]:
                hook = (obj["metadata"].get("annotations") or {}).get("helm.sh/hook")
                if hook is None or obj["metadata"]["uid"] in self._seen:
                    continue
                if kind == "pods" and hook != "test":
                    continue  # a Job's pods are never created here: the stand-in runs the Job itself
                found.append((kind, obj))
        return found

    def _run(self, kind: str, obj: Obj) -> None:
        spec = obj["spec"]["template"]["spec"] if kind == "jobs" else obj["spec"]
        name = obj["metadata"]["name"]
        started = _now()
        routing = self.routing if kind == "jobs" else None
        if routing is not None:
            routing.to_service()
        try:
            argv, env = self._container(spec, Path(self.workdir) / f"{name}-{obj['metadata']['uid'][:8]}")
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
        finally:
            if routing is not None:
                routing.to_url()
        self.ran.append(Ran(kind, name, tuple(argv), proc.returncode, proc.stdout + proc.stderr))
        if kind == "jobs":
            self._job_status(obj, started, proc.returncode == 0)
        else:
            self._pod_status(obj, started, proc.returncode, proc.stdout + proc.stderr)

    def _container(self, spec: Obj, root: Path) -> tuple[list[str], dict[str, str]]:
        (container,) = spec["containers"]
        image: str = container["image"]
        command = [*container.get("command", []), *container.get("args", [])]
        if image.startswith(KUBECTL_IMAGE + ":") or image.startswith(KUBECTL_IMAGE + "@"):
            assert command[0] == "kubectl", command
            exe = str(self.kubectl.exe)
        else:
            assert image == self.service_image, f"{image}: neither the kubectl image nor the service's"
            assert command[0] == "dynamo-webhook", command
            exe = str(EXE)
        mounts = self._volumes(spec, container, root)
        env = {"PATH": "/usr/bin:/bin"}
        for item in container.get("env", []):
            if "value" in item:
                env[item["name"]] = _mapped(item["value"], mounts)
        env["KUBECONFIG"] = str(self._kubeconfig(spec["serviceAccountName"], root))
        return [exe, *(_mapped(arg, mounts) for arg in command[1:])], env

    def _volumes(self, spec: Obj, container: Obj, root: Path) -> dict[str, Path]:
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        mounts: dict[str, Path] = {}
        for mount in container.get("volumeMounts", []):
            path = root / "volumes" / mount["name"]
            path.mkdir(parents=True, exist_ok=True)
            volume = volumes[mount["name"]]
            if "configMap" in volume:
                data = (
                    self.kubectl.get("configmap", volume["configMap"]["name"], self.namespace).get("data")
                    or {}
                )
                for key, text in data.items():
                    (path / key).write_text(text)
            else:
                assert "emptyDir" in volume, volume
            mounts[mount["mountPath"]] = path
        return mounts

    def _kubeconfig(self, account: str, root: Path) -> Path:
        return service_account_kubeconfig(
            self.cp, self.kubectl, root / "kubeconfig", account, self.namespace, "1h"
        )

    # --- status, as the controllers write it ------------------------------------------------------------

    def _job_status(self, job: Obj, started: str, succeeded: bool) -> None:
        done = _now()
        if succeeded:
            conditions = [
                _condition("SuccessCriteriaMet", "CompletionsReached", done),
                _condition("Complete", "CompletionsReached", done),
            ]
            status: Obj = {
                "startTime": started,
                "completionTime": done,
                "succeeded": 1,
                "conditions": conditions,
            }
        else:
            conditions = [
                _condition("FailureTarget", "BackoffLimitExceeded", done),
                _condition("Failed", "BackoffLimitExceeded", done),
            ]
            status = {"startTime": started, "failed": 1, "conditions": conditions}
        self._put_status("batch/v1", "jobs", job, status)

    def _pod_status(self, pod: Obj, started: str, code: int, output: str) -> None:
        (container,) = pod["spec"]["containers"]
        terminated = {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": started,
            "finishedAt": _now(),
            "message": output[-4000:],
        }
        status = {
            "phase": "Succeeded" if code == 0 else "Failed",
            "startTime": started,
            "containerStatuses": [
                {
                    "name": container["name"],
                    "image": container["image"],
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": terminated},
                }
            ],
        }
        self._put_status("v1", "pods", pod, status)

    def _put_status(self, api_version: str, plural: str, obj: Obj, status: Obj) -> None:
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        path = f"{prefix}/namespaces/{self.namespace}/{plural}/{obj['metadata']['name']}/status"
        for _ in range(20):
            current = json.loads(self.cp.raw("GET", path)[1])
            current["status"] = {**(current.get("status") or {}), **status}
            code, body = self.cp.raw("PUT", path, current)
            if code == 200:
                return
            if code != 409:
                raise AssertionError(f"PUT {path}: {code} {body!r}")
            time.sleep(0.1)
        raise AssertionError(f"PUT {path}: conflicts without end")


def _mapped(value: str, mounts: dict[str, Path]) -> str:
    """``value`` (an argument or env value, such as ``/tmp`` or ``--filename=/manifests/x``) with a
    mount path at its start, or right after ``--flag=``, replaced by the directory standing for it."""
    flag, eq, rest = value.partition("=") if value.startswith("--") else ("", "", value)
    for mount_path, path in sorted(mounts.items(), key=lambda m: -len(m[0])):
        if rest == mount_path or rest.startswith(mount_path + "/"):
            return f"{flag}{eq}{path}{rest[len(mount_path) :]}"
    return value


def _condition(kind: str, reason: str, at: str) -> Obj:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": "",
        "lastProbeTime": at,
        "lastTransitionTime": at,
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
