"""tests/image_replay.py fails where ``docker build`` fails: a ``COPY`` of what the build context
lacks (the Dockerfile copying a package .dockerignore keeps out), an instruction or command it
cannot replay; and it runs a stage's commands with the stage's paths, environment and venv.
The whole replay of the image: tests/test_image_build.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.dockercontext import build_context
from tests.dockerfile import DOCKERFILE, ROOT
from tests.image_replay import ReplayError, Stage, execute, replay

#: The chart, the packaging or the image: the same in both builds (tests/conftest.py).
pytestmark = pytest.mark.one_build

DOCKERIGNORE = (ROOT / ".dockerignore").read_text()


def test_the_stages_copy_the_packages_into_the_workdir(tmp_path: Path) -> None:
    build, final = replay(DOCKERFILE.read_text(), build_context(ROOT), tmp_path, run=False)
    assert (build.name, build.workdir, final.entrypoint) == ("build", "/src", ["dynamo-webhook", "serve"])
    src = build.host("/src")
    assert (src / "apiserver" / "crds.json").is_file() and (src / "app" / "cli" / "main.py").is_file()
    assert (src / "requirements" / "runtime.txt").is_file() and (src / "pyproject.toml").is_file()
    assert not (src / "requirements" / "test.txt").exists() and not (src / "tests").exists()
    assert (final.host("/wheels")).is_symlink() and final.host("/wheels").resolve() == build.host("/wheels")


def test_a_copy_of_what_dockerignore_keeps_out_fails_naming_it(tmp_path: Path) -> None:
    ignore = DOCKERIGNORE.replace("!apiserver/\n", "")
    assert ignore != DOCKERIGNORE
    with pytest.raises(ReplayError, match=r'COPY apiserver: "/apiserver": not found in the build context'):
        replay(DOCKERFILE.read_text(), build_context(ROOT, ignore), tmp_path, run=False)


def test_a_copy_of_a_missing_path_fails(tmp_path: Path) -> None:
    text = DOCKERFILE.read_text().replace("COPY app ./app\n", "COPY app ./app\nCOPY nothing-here ./x\n")
    with pytest.raises(ReplayError, match="COPY nothing-here"):
        replay(text, build_context(ROOT), tmp_path, run=False)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("COPY --from=build /dist /dist", "copies from the build context only"),
        ("COPY app/*.py ./", "wildcards are not replayed"),
        ("HEALTHCHECK CMD true", "not an instruction the replay knows"),
        ("RUN --network=none python -V", "not an option the replay knows"),
    ],
)
def test_what_the_replay_cannot_do_fails(tmp_path: Path, line: str, message: str) -> None:
    text = f"FROM python AS build\nWORKDIR /src\n{line}\n"
    with pytest.raises(ReplayError, match=message):
        replay(text, build_context(ROOT), tmp_path, run=False)


def stage(tmp_path: Path) -> Stage:
    """A stage whose venv is the running Python (no venv is made)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    result = Stage(0, "build", tmp_path / "root", venv, workdir="/src", env={"GREETING": "hello"})
    result.root.mkdir()
    return result


def test_a_command_runs_with_the_stages_paths_environment_and_python(tmp_path: Path) -> None:
    s = stage(tmp_path)
    (s.root / "dist").mkdir()
    execute(
        s,
        "OUT=/dist python -c \"import os, shutil; open(os.path.join(os.environ['OUT'], 'x'), 'w').write("
        "os.environ['GREETING'] + ' ' + os.getcwd() + ' ' + shutil.which('python'))\"",
        timeout=60,
    )
    written = (s.root / "dist" / "x").read_text().split()
    assert written == ["hello", str(s.root / "src"), str(s.venv / "bin" / "python")]
    assert s.ran and not s.skipped


def test_a_failing_command_fails_the_replay(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="exit 3"):
        execute(stage(tmp_path), 'python -c "raise SystemExit(3)"', timeout=60)


def test_only_pythons_commands_run_and_the_skipped_say_why(tmp_path: Path) -> None:
    s = stage(tmp_path)
    execute(s, "apt-get install --yes gcc", timeout=60)
    execute(s, "useradd --uid 65532 nonroot", timeout=60)
    assert [line.split("  (")[0] for line in s.skipped] == [
        "apt-get install --yes gcc",
        "useradd --uid 65532 nonroot",
    ]
    with pytest.raises(ReplayError, match="runs Python's commands only"):
        execute(s, "curl https://example.com | sh", timeout=60)


def test_paths_map_into_the_stage_but_the_systems_stay(tmp_path: Path) -> None:
    s = stage(tmp_path)
    assert s.rewrite("--dest /wheels -r requirements/runtime.txt '/dist/*.whl'") == (
        f"--dest {s.root}/wheels -r requirements/runtime.txt '{s.root}/dist/*.whl'"
    )
    assert s.rewrite("--shell /usr/sbin/nologin") == "--shell /usr/sbin/nologin"
    assert s.host("requirements") == s.root / "src" / "requirements"
    with pytest.raises(ReplayError):
        s.host("/usr/lib")
