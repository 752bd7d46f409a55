"""The pre-commit hook, run as pre-commit runs it: its entry and args from .pre-commit-hooks.yaml,
then the names of the repository's YAML and JSON files, in a repository that also holds a Helm
chart, a tool's config and the hook file itself. Only the Dynamo manifests count."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DGD = (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text()
TYPO = DGD.replace("replicas: 2", "replicsa: 2")
[HOOK] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
SUFFIXES = {"yaml": (".yaml", ".yml"), "json": (".json",)}


def repository(root: Path, dgd: str) -> list[str]:
    files = {
        "chart/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
        "chart/values.yaml": "x: 1\n",
        "chart/templates/deployment.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
            "  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.x }}\n"
        ),
        ".pre-commit-hooks.yaml": (ROOT / ".pre-commit-hooks.yaml").read_text(),
        ".yamllint.yaml": "rules:\n  line-length: {max: 120}\n",
        "renovate.json": '{"extends": ["config:base"]}\n',
        "deploy/good.yaml": DGD,
        "deploy/dgd.yaml": dgd,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    suffixes = tuple(s for t in HOOK["types_or"] for s in SUFFIXES[t])
    return sorted(
        name for name in files if name.endswith(suffixes)
    )  # what pre-commit passes: names, relative


def run_hook(root: Path, files: list[str]) -> subprocess.CompletedProcess[str]:
    entry = shlex.split(HOOK["entry"])
    entry[0] = str(Path(sys.executable).parent / entry[0])  # the installed console script
    return subprocess.run(
        [*entry, *HOOK.get("args", []), *files], cwd=root, capture_output=True, text=True, timeout=120
    )


def test_the_hook_checks_the_manifests_and_skips_the_rest(tmp_path: Path) -> None:
    files = repository(tmp_path, TYPO)
    assert len(files) == 8
    proc = run_hook(tmp_path, files)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == (
        "deploy/dgd.yaml:22:5: error: DynamoGraphDeployment/llama-agg (document 1): strict decoding "
        'error: unknown field "spec.components[1].replicsa"\n'
    )
    assert proc.stderr == (
        "2 Dynamo document(s) checked: 1 accepted, 1 refused; 0 other document(s) not checked; "
        "0 unreadable file(s); 6 file(s) skipped, not Kubernetes manifests\n"
    )


def test_the_hook_passes_a_repository_whose_manifests_are_accepted(tmp_path: Path) -> None:
    proc = run_hook(tmp_path, repository(tmp_path, DGD))
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr


def test_a_broken_dynamo_manifest_still_fails_the_hook(tmp_path: Path) -> None:
    proc = run_hook(tmp_path, repository(tmp_path, DGD.replace("spec:\n", "spec: [\n", 1)))
    assert proc.returncode == 2 and proc.stdout.startswith("deploy/dgd.yaml:"), proc.stdout
