"""The GitHub Action (action.yml), run as the runner runs a composite action's steps: each ``run``
step whose ``if`` holds, in bash as GitHub starts it, its ``${{ inputs.* }}`` replaced by the inputs,
GITHUB_ACTION_PATH the repository; the installed dynamo-webhook first on PATH (``install: false``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
DGD = (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text()
EXPRESSION = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")
CONDITION = re.compile(r"^inputs\.([\w-]+) (==|!=) '([^']*)'$")


def holds(condition: str | None, inputs: dict[str, str]) -> bool:
    """The step's ``if``, of the forms action.yml uses (``inputs.NAME == 'VALUE'``, ``!=``)."""
    if condition is None:
        return True
    match = CONDITION.match(condition)
    assert match, f"a condition this test does not read: {condition}"
    name, op, value = match.groups()
    return (inputs[name] == value) == (op == "==")


def run_action(workspace: Path, given: dict[str, str]) -> tuple[int, str, list[str]]:
    """(exit status, output, the names of the steps run) of the action with ``given`` inputs."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | given
    env = {
        **os.environ,
        "GITHUB_ACTION_PATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    ran: list[str] = []
    output = ""
    for step in ACTION["runs"]["steps"]:
        if not holds(step.get("if"), inputs):
            continue
        assert "run" in step, f"{step['name']}: a `uses` step that runs under the given inputs"
        step_env = {
            k: EXPRESSION.sub(lambda m: inputs[m.group(1)], str(v)) for k, v in step.get("env", {}).items()
        }
        assert step["shell"] == "bash" and not EXPRESSION.search(
            step["run"]
        )  # inputs reach scripts as env only
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=env | step_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        ran.append(step["name"])
        output += proc.stdout
        if proc.returncode:
            return proc.returncode, output, ran
    return 0, output, ran


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "dgd.yaml").write_text(DGD)
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "chart" / "templates" / "x.yaml").write_text("replicas: {{ .Values.x }}\n")
    return tmp_path


def test_good_manifests_pass(workspace: Path) -> None:
    code, out, ran = run_action(workspace, {"install": "false"})
    assert (code, out, ran) == (0, "", ["Lint"])


def test_a_bad_manifest_is_an_error_annotation_and_fails_the_step(workspace: Path) -> None:
    (workspace / "deploy" / "dgd.yaml").write_text(DGD.replace("replicas: 2", "replicsa: 2"))
    code, out, _ = run_action(workspace, {"install": "false", "paths": "chart\n  deploy/dgd.yaml"})
    assert code == 1
    assert out.startswith(
        "::error file=deploy/dgd.yaml,line=22,col=5,title=DynamoGraphDeployment/llama-agg::"
    )


def test_inputs_reach_lint(workspace: Path) -> None:
    (workspace / "deploy" / "dgd.yaml").write_text(DGD.replace("replicas: 2", "replicsa: 2"))
    code, out, _ = run_action(
        workspace,
        {
            "install": "false",
            "validate": "warn",
            "output": "text",
            "args": "--diff --feature-grove",
            "paths": "deploy *",
        },
    )
    assert code == 2  # `*` is a name, not a pattern: there is no such file
    assert "*:1:1: error: cannot read: No such file or directory" in out
    assert "deploy/dgd.yaml:22:5: warning: " in out and ": default: " in out


def test_the_install_step_installs_the_action_checkout() -> None:
    [install] = [s for s in ACTION["runs"]["steps"] if s["name"] == "Install dynamo-webhook"]
    assert install["run"].startswith("python -m pip install ") and install["run"].endswith(
        '"$GITHUB_ACTION_PATH"'
    )
    assert holds(install["if"], {"install": "true"}) and not holds(install["if"], {"install": "false"})


def test_the_documented_inputs_are_the_actions() -> None:
    doc = (ROOT / "docs" / "lint.md").read_text()
    block = doc.split("## GitHub Action", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    shown = re.findall(r"^\s+#?\s*([\w-]+):", block.split("with:", 1)[1], re.M)
    assert sorted(shown) == sorted(ACTION["inputs"])
    for name, spec in ACTION["inputs"].items():
        default = re.search(rf"^\s+#?\s*{name}: (\S+)", block, re.M)
        assert default, name
        if spec["default"] and name != "paths":
            assert default.group(1).strip('"') == spec["default"], name
