"""scripts/repin (tools/repin): at the pinned commit it changes nothing and reports nothing; at an
operator commit that alters a validation message, adds a CRD field and changes a conversion, its
report names each. Both run the real thing (the operator's handlers built with Go, in a copy of the
tree) where Go, the operator's Go modules and git checkouts of the three upstream repositories are
at hand: ``DYNAMO_WEBHOOK_OPERATOR_GIT``, ``DYNAMO_WEBHOOK_GROVE_GIT`` and
``DYNAMO_WEBHOOK_SNAPSHOT_GIT`` name them."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli.version import OPERATOR_COMMIT
from tools.repin import crds, declarations, vectors
from tools.repin.main import report

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "tests" / "fixtures" / "crds"
GIT_DIRS = ("DYNAMO_WEBHOOK_OPERATOR_GIT", "DYNAMO_WEBHOOK_GROVE_GIT", "DYNAMO_WEBHOOK_SNAPSHOT_GIT")
#: Modules the handlers' build compiles (a few of many: a cache holding them was filled by a build)
BUILD_MODULES = (
    "k8s.io/api",
    "k8s.io/apimachinery",
    "k8s.io/client-go",
    "sigs.k8s.io/controller-runtime",
    "sigs.k8s.io/gateway-api-inference-extension",
)
DGD_CRD = "deploy/operator/config/crd/bases/nvidia.com_dynamographdeployments.yaml"
DGD_RULES = "deploy/operator/internal/webhook/validation/dynamographdeployment.go"
DGDSA_CONVERSION = "deploy/operator/api/v1alpha1/dynamographdeploymentscalingadapter_conversion.go"


# --------------------------------------------------------------------------- the report's parts


def test_a_crd_field_added_removed_or_changed_is_named_once() -> None:
    old = crds.load(CRD_DIR)
    new = copy.deepcopy(old)
    spec = new["DynamoGraphDeployment"]["v1beta1"]["properties"]["spec"]
    spec["properties"]["knob"] = {"type": "object", "properties": {"inner": {"type": "string"}}}
    del spec["properties"]["priorityClassName"]
    spec["properties"]["backendFramework"]["enum"] = ["vllm"]
    assert crds.diff(old, old) == []
    assert [(c.what, c.path) for c in crds.diff(old, new)] == [
        ("added", "spec.knob"),
        ("removed", "spec.priorityClassName"),
        ("changed", "spec.backendFramework"),
    ]


def test_the_declarations_match_the_pinned_crds_and_see_a_new_field() -> None:
    pinned = crds.load(CRD_DIR)
    assert declarations.mismatches(pinned) == []
    moved = copy.deepcopy(pinned)
    component = moved["DynamoGraphDeployment"]["v1beta1"]["properties"]["spec"]["properties"]["components"][
        "items"
    ]
    component["properties"]["knob"] = {"type": "string"}
    del moved["DynamoGraphDeploymentRequest"]["v1beta1"]["properties"]["spec"]["properties"]["image"]
    assert declarations.mismatches(moved) == [
        declarations.Mismatch(
            "conversion/v1alpha1/component/schemas.py BETA_SHARED",
            "DynamoGraphDeployment v1beta1 spec.components[].knob",
            "in the CRD, not declared",
        ),
        declarations.Mismatch(
            "conversion/v1alpha1/dgdr/types.py BETA_SPEC",
            "DynamoGraphDeploymentRequest v1beta1 spec.image",
            "declared, not in the CRD",
        ),
    ]


def _case(name: str, **expect: Any) -> dict[str, Any]:
    return {"name": name, "webhook": "validating", "kind": "DynamoModel", "expect": expect}


def test_changed_vectors_are_grouped_by_webhook_and_message() -> None:
    old = {n: _case(n, allowed=False, messageContains=["spec.a[0]: Required value: x"]) for n in ("v1", "v2")}
    new = {n: _case(n, allowed=False, messageContains=["spec.a[0]: Required value: y"]) for n in ("v1", "v2")}
    new["v3"] = _case("v3", allowed=True)
    groups = vectors.admission_changes(old, new)
    assert {k: dict(v) for k, v in groups.items()} == {
        "validating webhook, DynamoModel": {
            'message no longer given: "spec.a[*]: Required value: x"': ["v1", "v2"],
            'message now given: "spec.a[*]: Required value: y"': ["v1", "v2"],
        }
    }


def test_changed_conversions_are_grouped_by_path_and_field() -> None:
    src = {"kind": "DynamoModel", "apiVersion": "nvidia.com/v1alpha1"}
    old = {
        "c": {
            "name": "c",
            "input": src,
            "desiredAPIVersion": "nvidia.com/v1beta1",
            "expected": {"spec": {"l": [{"a": 1}]}},
            "roundtrip": True,
        }
    }
    new = {"c": {**old["c"], "expected": {"spec": {"l": [{"a": 2}]}}, "roundtrip": False}}
    groups = vectors.conversion_changes(old, new)
    assert {k: dict(v) for k, v in groups.items()} == {
        "conversion DynamoModel nvidia.com/v1alpha1 -> nvidia.com/v1beta1": {
            "field spec.l[*].a": ["c"],
            "round trip no longer gives the input back": ["c"],
        }
    }


def test_nothing_changed_is_an_empty_report() -> None:
    text = (ROOT / "tests/fixtures/admission/DynamoModel.jsonl").read_text()
    files = {"tests/fixtures/admission/DynamoModel.jsonl": text}
    assert report([], files, files, [], []) == ""


# --------------------------------------------------------------------------- the real thing


def _module_cache() -> Path | None:
    if shutil.which("go") is None:
        return None
    out = subprocess.run(
        ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return Path(out) if out else None


def _escaped(module: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)


def _why_not_real() -> str | None:
    missing = [name for name in GIT_DIRS if not os.environ.get(name)]
    if missing:
        return f"set {', '.join(missing)} to git checkouts of ai-dynamo/dynamo, grove and snapshot"
    cache = _module_cache()
    if cache is None:
        return "no go tool on PATH"
    operator = os.environ["DYNAMO_WEBHOOK_OPERATOR_GIT"]
    gomod = subprocess.run(
        ["git", "-C", operator, "show", f"{OPERATOR_COMMIT}:deploy/operator/go.mod"],
        capture_output=True,
        text=True,
        check=False,
    )
    if gomod.returncode != 0:
        return f"{operator} does not hold the pinned commit {OPERATOR_COMMIT}"
    required = dict(re.findall(r"^\s+(\S+) (v\S+)", gomod.stdout, re.MULTILINE))
    absent = [
        f"{m}@{required.get(m)}"
        for m in BUILD_MODULES
        if not (cache / "cache" / "download" / _escaped(m) / "@v" / f"{required.get(m)}.zip").is_file()
    ]
    if absent:
        return (
            f"the operator's Go modules are not in the module cache ({len(absent)} missing, e.g. {absent[0]})"
        )
    return None


WHY_NOT = _why_not_real()
real = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


def _scratch_tree(where: Path) -> Path:
    """A git repository holding this tree's files as they are now."""
    tree = where / "tree"
    tree.mkdir()
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=tree, check=True)
    return tree


def _repin(tree: Path, operator: str, commit: str, work: Path) -> str:
    out = work / "report.md"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.repin",
            operator,
            "--commit",
            commit,
            "--tree",
            str(tree),
            "--work",
            str(work),
            "--report",
            str(out),
            "--grove",
            os.environ["DYNAMO_WEBHOOK_GROVE_GIT"],
            "--snapshot",
            os.environ["DYNAMO_WEBHOOK_SNAPSHOT_GIT"],
        ],
        cwd=ROOT,
        check=True,
    )
    return out.read_text()


@real
def test_at_the_pinned_commit_nothing_changes(tmp_path: Path) -> None:
    tree = _scratch_tree(tmp_path)
    text = _repin(tree, os.environ["DYNAMO_WEBHOOK_OPERATOR_GIT"], OPERATOR_COMMIT, tmp_path / "work")
    assert text == ""
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""


def _altered_operator(where: Path) -> tuple[str, str]:
    """A repository sharing the operator's objects, with one commit on top of the pinned one: a
    validation message altered, a CRD field added, a conversion changed. (path, commit)"""
    repo = where / "operator.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--shared", os.environ["DYNAMO_WEBHOOK_OPERATOR_GIT"], str(repo)],
        check=True,
    )
    env = {**os.environ, "GIT_INDEX_FILE": str(where / "index")}

    def git(*args: str, data: str | None = None) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], input=data, capture_output=True, text=True, env=env, check=True
        ).stdout

    def edit(path: str, change: Any) -> None:
        text = git("show", f"{OPERATOR_COMMIT}:{path}")
        changed = change(text)
        assert changed != text, path
        blob = git("hash-object", "-w", "--stdin", data=changed).strip()
        git("update-index", "--cacheinfo", f"100644,{blob},{path}")

    git("read-tree", OPERATOR_COMMIT)
    edit(
        DGD_RULES, lambda t: t.replace('"must have at least one component"', '"needs one component or more"')
    )
    edit(
        DGDSA_CONVERSION,
        lambda t: t.replace(
            "ComponentName: src.Spec.DGDRef.ServiceName,",
            'ComponentName: "renamed-" + src.Spec.DGDRef.ServiceName,',
        ),
    )

    def add_field(text: str) -> str:
        crd = yaml.safe_load(text)
        beta = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta1")
        beta["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["warmPool"] = {"type": "string"}
        return str(yaml.safe_dump(crd, sort_keys=False))

    edit(DGD_CRD, add_field)
    tree_id = git("write-tree").strip()
    commit = git("commit-tree", tree_id, "-p", OPERATOR_COMMIT, "-m", "altered", data="").strip()
    return str(repo), commit


@real
def test_a_changed_operator_is_named_in_the_report(tmp_path: Path) -> None:
    tree = _scratch_tree(tmp_path)
    operator, commit = _altered_operator(tmp_path)
    text = _repin(tree, operator, commit, tmp_path / "work")
    # the CRD field, per kind and version
    assert "### DynamoGraphDeployment v1beta1\n\n- added `spec.warmPool`: string" in text
    # the rule message, under its webhook
    validating = text.split("### validating webhook, DynamoGraphDeployment\n")[1].split("###")[0]
    assert (
        'message no longer given: "spec.components: Required value: must have at least one component"'
        in validating
    )
    assert 'message now given: "spec.components: Required value: needs one component or more"' in validating
    # the conversion, under its path
    path = "### conversion DynamoGraphDeploymentScalingAdapter nvidia.com/v1alpha1 -> nvidia.com/v1beta1\n"
    assert "- field spec.dgdRef.componentName" in text.split(path)[1].split("###")[0]
    # the declarations that no longer match
    assert (
        "- conversion/v1alpha1/dgd.py BETA_SPEC: `DynamoGraphDeployment v1beta1 spec.warmPool` in the CRD, "
        "not declared" in text
    )
    assert (tree / "app/cli/version.py").read_text().count(f'OPERATOR_COMMIT = "{commit[:12]}"') == 1


def test_bad_input_gets_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tools.repin.main import main

    assert main([str(tmp_path / "none"), "--grove", str(tmp_path), "--snapshot", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"repin: OPERATOR_REPO: no directory {tmp_path / 'none'}\n"
    subprocess.run(["git", "init", "-q", str(tmp_path / "op")], check=True)
    assert (
        main(
            [
                str(tmp_path / "op"),
                "--commit",
                "deadbeef",
                "--grove",
                str(tmp_path),
                "--snapshot",
                str(tmp_path),
            ]
        )
        == 1
    )
    assert capsys.readouterr().err == f"repin: no commit deadbeef in {tmp_path / 'op'}\n"


def test_the_commit_is_written_in_one_place_and_old_mentions_are_listed(tmp_path: Path) -> None:
    from tools.repin.main import naming_old_commit, pinned_commit, write_commit

    (tmp_path / "app/cli").mkdir(parents=True)
    shutil.copy(ROOT / "app/cli/version.py", tmp_path / "app/cli/version.py")
    (tmp_path / "tests/fixtures/crds").mkdir(parents=True)
    shutil.copy(CRD_DIR / "README.md", tmp_path / "tests/fixtures/crds/README.md")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/x.md").write_text(f"pinned at {OPERATOR_COMMIT}\n")
    write_commit(tmp_path, OPERATOR_COMMIT, "0123456789ab")
    assert pinned_commit(tmp_path) == "0123456789ab"
    assert " at 0123456789ab " in (tmp_path / "tests/fixtures/crds/README.md").read_text()
    assert naming_old_commit(tmp_path, OPERATOR_COMMIT, "0123456789ab") == ["docs/x.md"]
    assert naming_old_commit(tmp_path, OPERATOR_COMMIT, OPERATOR_COMMIT) == []


def test_a_refused_generate_leaves_the_tree_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tools.repin.main import main

    tree = tmp_path / "tree"
    for name in ("app/cli/version.py", "tests/fixtures/crds/README.md"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tree / name)
    (tree / "tools/opdiff").mkdir(parents=True)
    (tree / "tools/opdiff/prepare").write_text('#!/bin/sh\nmkdir -p "$4/operator"\n')
    (tree / "tools/opdiff/prepare").chmod(0o755)
    (tree / "scripts").mkdir()
    (tree / "scripts/generate.py").write_text(
        "import sys\nsys.exit('scripts/gen_gotypes.py pins k8s.io/api v0')\n"
    )
    operator = tmp_path / "op"
    subprocess.run(["git", "init", "-q", str(operator)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(operator),
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    before = (tree / "app/cli/version.py").read_text()
    assert (
        main(
            [
                str(operator),
                "--tree",
                str(tree),
                "--work",
                str(tmp_path / "work"),
                "--grove",
                str(tmp_path),
                "--snapshot",
                str(tmp_path),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == "repin: scripts/generate failed (exit 1): scripts/gen_gotypes.py pins k8s.io/api v0"
    assert (tree / "app/cli/version.py").read_text() == before
