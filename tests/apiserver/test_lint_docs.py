"""docs/lint.md's pipelines for a rendered chart and kustomization, run as written: with the real
helm and kubectl of ``scripts/kube-testenv`` (marker kubectl), and, everywhere, with the rendered
text from a file in place of the command that renders it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "lint.md").read_text()
DGD = (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text()
TYPO = DGD.replace("replicas: 2", "replicsa: 2")
PIPELINES = [
    line
    for block in re.findall(r"```sh\n(.*?)```", DOC, re.S)
    for line in block.splitlines()
    if line.endswith("| dynamo-webhook lint -")
]


def run(command: str, cwd: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{path}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_doc_shows_a_pipeline_for_helm_and_one_for_kustomize() -> None:
    assert [p.split()[0] for p in PIPELINES] == ["helm", "kubectl"]


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_a_rendered_stream_is_linted_from_stdin(tmp_path: Path, pipeline: str) -> None:
    (tmp_path / "rendered.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + TYPO
    )
    consumer = pipeline.split("|", 1)[1]
    proc = run(f"cat rendered.yaml |{consumer}", tmp_path, "")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith(
        "-:26:5: error: DynamoGraphDeployment/llama-agg (document 2): strict decoding error"
    )
    assert (
        "1 Dynamo document(s) checked: 0 accepted, 1 refused; 1 other document(s) not checked" in proc.stderr
    )


@pytest.mark.kubectl
def test_the_pipelines_run_as_written(tmp_path: Path) -> None:
    from tests.e2e.testenv import binaries

    chart = tmp_path / "my-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: my-chart\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("replicas: 2\n")
    (chart / "templates" / "dgd.yaml").write_text(
        TYPO.replace("name: llama-agg", "name: {{ .Release.Name }}", 1)
    )
    overlay = tmp_path / "overlays" / "prod"
    overlay.mkdir(parents=True)
    (overlay / "dgd.yaml").write_text(TYPO)
    (overlay / "kustomization.yaml").write_text("resources: [dgd.yaml]\nnamespace: prod\n")
    bin_dir = str(binaries())
    helm, kustomize = (run(p, tmp_path, bin_dir) for p in PIPELINES)
    assert helm.returncode == 1, helm.stderr
    assert (
        "DynamoGraphDeployment/my-release (document 1): strict decoding error: unknown field" in helm.stdout
    )
    assert kustomize.returncode == 1, kustomize.stderr
    assert (
        "DynamoGraphDeployment/llama-agg (document 1): strict decoding error: unknown field"
        in kustomize.stdout
    )
