"""Build the Kustomize overlays and index the objects they produce."""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.testenv import TestenvUnavailable, binaries

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
OVERLAYS = ("self-signed", "cert-manager")
#: Cert mode each overlay runs the service in.
OVERLAY_MODES = {"self-signed": "auto", "cert-manager": "manual"}

Obj = dict[str, Any]


def kubectl() -> str:
    """The kubectl built by ``scripts/kube-testenv`` (the same release the end-to-end suite runs); a
    missing build fails the test with what to run, it is never skipped."""
    try:
        return str(binaries() / "kubectl")
    except TestenvUnavailable as err:
        pytest.fail(f"`kubectl kustomize` is needed to build deploy/overlays: {err}")


def kustomize(directory: Path) -> list[Obj]:
    """``kubectl kustomize <directory>`` parsed into objects."""
    proc = subprocess.run(
        [kubectl(), "kustomize", str(directory)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, f"kubectl kustomize {directory} failed:\n{proc.stderr}"
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


@functools.cache
def _built(overlay: str) -> tuple[Obj, ...]:
    return tuple(kustomize(DEPLOY / "overlays" / overlay))


@dataclass(frozen=True)
class Build:
    overlay: str
    objects: tuple[Obj, ...]

    @property
    def mode(self) -> str:
        return OVERLAY_MODES[self.overlay]

    def of_kind(self, kind: str) -> list[Obj]:
        return [o for o in self.objects if o["kind"] == kind]

    def one(self, kind: str, name: str | None = None) -> Obj:
        found = [o for o in self.of_kind(kind) if name is None or o["metadata"]["name"] == name]
        assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
        return found[0]

    def __iter__(self) -> Iterator[Obj]:
        return iter(self.objects)

    @property
    def deployment(self) -> Obj:
        return self.one("Deployment")

    @property
    def container(self) -> Obj:
        containers = self.deployment["spec"]["template"]["spec"]["containers"]
        assert len(containers) == 1
        return dict(containers[0])

    @property
    def namespace(self) -> str:
        return str(self.deployment["metadata"]["namespace"])

    def env(self) -> dict[str, str]:
        """The container's plain env values, downward-API namespace references resolved."""
        out: dict[str, str] = {}
        for var in self.container.get("env", []):
            if "value" in var:
                out[var["name"]] = var["value"]
                continue
            field = var["valueFrom"]["fieldRef"]["fieldPath"]
            if field == "metadata.namespace":
                out[var["name"]] = self.namespace
            elif field == "spec.serviceAccountName":
                out[var["name"]] = self.deployment["spec"]["template"]["spec"]["serviceAccountName"]
            elif field == "metadata.name":
                out[var["name"]] = f"{self.deployment['metadata']['name']}-pod"
            else:
                raise AssertionError(f"unexpected fieldRef {field}")
        return out

    def settings_overrides(self) -> dict[str, str]:
        """``Settings`` keyword arguments from the container's ``DYNAMO_WEBHOOK_*`` variables."""
        prefix = "DYNAMO_WEBHOOK_"
        return {k[len(prefix) :].lower(): v for k, v in self.env().items() if k.startswith(prefix)}


def build(overlay: str) -> Build:
    return Build(overlay, _built(overlay))


def port_number(container: Obj, port: int | str) -> int:
    """A Service targetPort or probe port (number or name) resolved against the container."""
    if isinstance(port, int):
        return port
    matches = [p["containerPort"] for p in container.get("ports", []) if p.get("name") == port]
    assert len(matches) == 1, f"container has no port named {port!r}"
    return int(matches[0])


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())
