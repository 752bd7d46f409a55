"""scripts/generate: --check passes on the tree and on a clean copy without Go, helm-docs or an
operator checkout, fails naming the file and the command when a generated file, a recorded hash or
an input is changed, and writes the files back; every generated file says it is generated."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import gen_gotypes  # noqa: E402
import generate  # noqa: E402
import goparse  # noqa: E402

pytestmark = pytest.mark.one_build  # the tree's files, the same for both builds

FIX_ALL = "run: scripts/generate"
FIX_GO = "run: scripts/generate --operator DIR"


def tracked_copy(dest: Path) -> Path:
    """The tracked files of the working tree (as they are now) under ``dest``: a clean clone."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in names.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def bare_env(tmp: Path) -> dict[str, str]:
    """No go tool, an empty module cache, no helm-docs."""
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "go").exists()]
    env = {k: v for k, v in os.environ.items() if k not in ("HELM_DOCS", "GOMODCACHE", "GOFLAGS")}
    (tmp / "cache").mkdir(exist_ok=True)
    return {**env, "PATH": os.pathsep.join(path), "DYNAMO_WEBHOOK_TESTENV_CACHE": str(tmp / "cache")}


def run(tree: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(tree / "scripts" / "generate.py"), *args],
        cwd=tree,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tracked_copy(tmp_path_factory.mktemp("clean"))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return tracked_copy(tmp_path / "tree")


def test_the_tree_is_what_the_generators_make() -> None:
    out = run(ROOT, "--check")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("generated files: up to date")


def test_a_clean_copy_passes_without_go_helm_docs_or_an_operator(clean: Path, tmp_path: Path) -> None:
    out = run(clean, "--check", env=bare_env(tmp_path))
    assert out.returncode == 0, out.stderr
    hashes_only = out.stdout.split("recorded hashes only for ", 1)[1]
    for name in (
        "gotypes (no go tool on PATH)",
        "schemas (needs --operator DIR)",
        "chart (helm-docs is not built",
    ):
        assert name in hashes_only
    assert "crds" not in hashes_only and "examples" not in hashes_only


@pytest.mark.parametrize(
    ("path", "fix"),
    [
        ("apiserver/crds.json", FIX_ALL),
        ("examples/conversion/dgd-to-v1beta1.json", FIX_ALL),
        ("app/review/schemas/nvidia.com_v1beta1_DynamoGraphDeployment.json", FIX_GO),
        ("gocompat/tables_grove.py", FIX_GO),
        ("charts/dynamo-webhook/README.md", FIX_ALL),
    ],
)
def test_an_edited_generated_file_fails_naming_it_and_the_fix(
    tree: Path, tmp_path: Path, path: str, fix: str
) -> None:
    target = tree / path
    target.write_text(target.read_text().replace("e", "E", 1))
    out = run(tree, "--check", env=bare_env(tmp_path))
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        line for line in out.stderr.splitlines() if line.startswith("generate --check: ")
    ]
    (line,) = out.stderr.splitlines()
    assert line.startswith(f"generate --check: {path}: ") and line.endswith(fix)


def test_a_tampered_recorded_input_hash_fails_naming_the_input(tree: Path, tmp_path: Path) -> None:
    sums = tree / "scripts" / "generated.sums"
    text, n = re.subn(
        r"^(gotypes in )[0-9a-f]{64}( scripts/goparse\.py)$",
        r"\g<1>" + "0" * 64 + r"\2",
        sums.read_text(),
        flags=re.M,
    )
    assert n == 1
    sums.write_text(text)
    out = run(tree, "--check", env=bare_env(tmp_path))
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"generate --check: scripts/goparse.py: changed since scripts/gen_gotypes.py wrote"
        f" its files (its hash in scripts/generated.sums differs); {FIX_GO}"
    ]


def test_a_tampered_recorded_output_hash_fails_naming_the_file(tree: Path, tmp_path: Path) -> None:
    sums = tree / "scripts" / "generated.sums"
    text, n = re.subn(
        r"^(schemas out )[0-9a-f]{64}", r"\g<1>" + "1" * 64, sums.read_text(), count=1, flags=re.M
    )
    assert n == 1
    sums.write_text(text)
    out = run(tree, "--check", env=bare_env(tmp_path))
    assert out.returncode == 1
    assert "app/review/schemas/" in out.stderr and out.stderr.rstrip().endswith(FIX_GO)


@pytest.mark.parametrize(
    ("edited", "named"),
    [
        ("charts/dynamo-webhook/values.yaml", ["charts/dynamo-webhook/values.yaml"]),
        ("scripts/gen_gotypes.py", ["scripts/gen_gotypes.py"]),
        (
            "tests/fixtures/crds/nvidia.com_dynamomodels.yaml",
            ["apiserver/crds.json", "tests/fixtures/crds/nvidia.com_dynamomodels.yaml"],
        ),
    ],
)
def test_an_input_changed_without_writing_the_files_again_fails(
    tree: Path, tmp_path: Path, edited: str, named: list[str]
) -> None:
    with (tree / edited).open("a") as f:
        f.write("\n# changed\n" if edited.endswith((".yaml", ".py")) else "\n")
    if edited.endswith("crds/nvidia.com_dynamomodels.yaml"):
        (tree / edited).write_text((tree / edited).read_text().replace("served: true", "served: false", 1))
    out = run(tree, "--check", env=bare_env(tmp_path))
    assert out.returncode == 1
    assert sorted({line.split(": ")[1] for line in out.stderr.splitlines()}) == named


def test_writing_makes_the_check_pass_again(tree: Path, tmp_path: Path) -> None:
    env = bare_env(tmp_path)
    for path in ("apiserver/crds.json", "examples/admission/dgd-v1beta1-create.json"):
        (tree / path).write_text("{}\n")
    (tree / "examples/conversion/stale.json").write_text("{}\n")
    sums = tree / "scripts" / "generated.sums"
    sums.write_text(sums.read_text() + f"examples out {'2' * 64} examples/conversion/stale.json\n")
    out = run(tree, env=env)
    assert out.returncode == 0, out.stderr
    assert "apiserver/crds.json: written by scripts/gen_crd_schemas.py" in out.stdout
    assert "examples/conversion/stale.json: removed" in out.stdout
    assert "schemas: not written (needs --operator DIR)" in out.stdout
    assert not (tree / "examples/conversion/stale.json").exists()
    assert (tree / "apiserver/crds.json").read_bytes() == (ROOT / "apiserver/crds.json").read_bytes()
    assert sums.read_bytes() == (ROOT / "scripts/generated.sums").read_bytes()
    assert run(tree, "--check", env=env).returncode == 0


def fake_operator(at: Path, pins: dict[str, tuple[str, str]]) -> Path:
    """A deploy/operator tree without Go types: go.mod/go.sum with ``pins`` and the vendored CRDs."""
    (at / "api").mkdir(parents=True)
    (at / "go.mod").write_text(
        "module example.com/operator\n\nrequire (\n"
        + "".join(f"\t{m} {v}\n" for m, (v, _) in pins.items())
        + ")\n"
    )
    (at / "go.sum").write_text("".join(f"{m} {v} {h}\n" for m, (v, h) in pins.items()))
    shutil.copytree(ROOT / "tests" / "fixtures" / "crds", at / "config" / "crd" / "bases")
    return at


def test_check_with_an_operator_compares_its_crds_and_its_api_hash(tree: Path, tmp_path: Path) -> None:
    operator = fake_operator(tmp_path / "operator", gen_gotypes.PINS)
    crd = operator / "config" / "crd" / "bases" / "nvidia.com_dynamomodels.yaml"
    crd.write_text(crd.read_text() + "# newer\n")
    out = run(tree, "--check", "--operator", str(operator), env=bare_env(tmp_path))
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "generate --check: tests/fixtures/crds/nvidia.com_dynamomodels.yaml: not the operator's"
        f" config/crd/bases/nvidia.com_dynamomodels.yaml; {FIX_GO}",
        "generate --check: scripts/generated.sums: the recorded hash of the operator's API (api/, go.mod pins) is not"
        f" that of {operator}; {FIX_GO}",
    ]


def test_an_operator_requiring_other_module_versions_is_named(tree: Path, tmp_path: Path) -> None:
    pins = {**gen_gotypes.PINS, "k8s.io/api": ("v0.99.0", "h1:x=")}
    operator = fake_operator(tmp_path / "operator", pins)
    crd = operator / "config" / "crd" / "bases" / "nvidia.com_dynamomodels.yaml"
    crd.write_text(crd.read_text() + "# newer\n")
    out = run(tree, "--operator", str(operator), env=bare_env(tmp_path))
    assert out.returncode == 2
    (line,) = out.stderr.splitlines()
    assert line.startswith(
        f"generate: scripts/gen_gotypes.py pins k8s.io/api {gen_gotypes.PINS['k8s.io/api'][0]},"
    )
    assert "requires v0.99.0" in line
    assert run(tree, "--check", env=bare_env(tmp_path)).returncode == 0  # nothing was written


@pytest.mark.parametrize("args", [["--operator", "/nonexistent"], ["--check", "--operator", "/"]])
def test_a_wrong_operator_dir_is_one_line(args: list[str]) -> None:
    out = run(ROOT, *args)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"generate: --operator {args[-1]}: not a deploy/operator tree (no go.mod and api/ there)"
    ]


def test_every_generated_file_says_so() -> None:
    records = generate.read_manifest()
    assert set(records) == {g.name for g in generate.GENERATORS}
    outputs = sorted(p for r in records.values() for p in r["out"])
    assert all(records[g.name]["out"] for g in generate.GENERATORS)
    for path in outputs:
        if not path.endswith(".json"):
            first = (ROOT / path).read_text().splitlines()[0]
            assert re.search(r"\bGenerated by scripts/generate\b", first), path
    assert generate.MANIFEST.read_text().startswith("# Generated by scripts/generate;")
    attrs = subprocess.run(
        ["git", "check-attr", "linguist-generated", "--", *outputs, "scripts/generated.sums"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert attrs == [f"{p}: linguist-generated: true" for p in [*outputs, "scripts/generated.sums"]]
    not_generated = subprocess.run(
        [
            "git",
            "check-attr",
            "linguist-generated",
            "--",
            "app/review/schemas/__init__.py",
            "examples/manifests/dgd-agg-v1beta1.yaml",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "true" not in not_generated


def test_help_names_the_options() -> None:
    out = subprocess.run(
        [str(ROOT / "scripts" / "generate"), "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "--check" in out and "--operator DIR" in out and "scripts/generated.sums" in out


@pytest.mark.skipif(
    not os.environ.get("DYNAMO_WEBHOOK_OPERATOR"),
    reason="DYNAMO_WEBHOOK_OPERATOR (a deploy/operator tree at the pinned commit) is not set",
)
def test_the_tree_is_what_the_operator_makes() -> None:
    out = run(ROOT, "--check", "--operator", os.environ["DYNAMO_WEBHOOK_OPERATOR"])
    assert out.returncode == 0, out.stderr
    assert "schemas" not in out.stdout and "gotypes" not in out.stdout


def test_scripts_test_checks_the_generated_files_before_pytest() -> None:
    text = (ROOT / "scripts" / "test").read_text()
    assert "\nscripts/generate --check\n" in text
    assert text.index("\nscripts/generate --check\n") < text.index("-m pytest")


def test_the_local_replace_lines_of_a_go_mod_are_followed(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text(
        "module example.com/op\n\nrequire a.io/x v1.0.0\n\n"
        "replace a.io/x => ../x\n"
        "replace b.io/y v1.2.0 => /abs/y\n"
        "replace c.io/z => c.io/z v1.3.0\n"
        "replace (\n\td.io/w => ./w\n)\n"
    )
    assert goparse.replaces_from_go_mod(tmp_path) == {
        "a.io/x": (tmp_path / "../x").resolve(),
        "b.io/y": Path("/abs/y"),
        "d.io/w": tmp_path / "w",
    }
