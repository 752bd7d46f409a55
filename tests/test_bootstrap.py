"""scripts/bootstrap installs the set asked for, says so before a first install, and leaves a set
alone while it or a larger one is in place: ``scripts/serve`` installs only what serving needs
(``runtime``), and a later ``scripts/test`` adds the test set to the same .venv.

The scripts run in a copy of the repository's lock files whose .venv has a stand-in python that
records each pip command instead of installing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    for name in ("bootstrap", "serve"):
        shutil.copy2(ROOT / "scripts" / name, tmp_path / "scripts" / name)
    shutil.copy2(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "requirements", tmp_path / "requirements")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, body in (
        ("python", 'echo "$*" >> "$(dirname "$0")/../pip.log"'),
        ("dynamo-webhook", 'echo "serve $*"'),
    ):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return tmp_path


def run(repo: Path, *command: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(repo / c) if c.startswith("scripts/") else c for c in command],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def installed(repo: Path) -> list[str]:
    """The lock files pip was asked to install from, in order; the log is emptied."""
    log = repo / ".venv" / "pip.log"
    lines = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return [line.split(" -r ", 1)[1] for line in lines if " -r " in line]


def test_serve_installs_only_the_runtime_set_and_says_so_first(repo: Path) -> None:
    proc = run(repo, "scripts/serve", "--port", "9444")
    assert proc.stderr.splitlines()[0] == (
        "bootstrap: installing dynamo-webhook and what it needs to serve into .venv (about a minute, once)…"
    )
    assert installed(repo) == ["requirements/build.txt", "requirements/runtime.txt"]
    assert proc.stdout == "serve serve --host 127.0.0.1 --metrics-host 127.0.0.1 --port 9444\n"
    again = run(repo, "scripts/serve")
    assert (again.stderr, installed(repo)) == ("", [])


def test_test_set_after_serve_lands_in_the_same_venv_and_covers_serve(repo: Path) -> None:
    run(repo, "scripts/serve")
    installed(repo)
    proc = run(repo, "scripts/bootstrap")
    assert "installing dynamo-webhook with its test tools" in proc.stderr
    assert installed(repo) == ["requirements/build.txt", "requirements/test.txt"]
    for command in ("scripts/bootstrap", "scripts/serve"):
        run(repo, command)
        assert installed(repo) == [], command


def test_a_changed_lock_installs_again(repo: Path) -> None:
    run(repo, "scripts/bootstrap", "runtime")
    installed(repo)
    with (repo / "requirements" / "runtime.txt").open("a") as lock:
        lock.write("# changed\n")
    proc = run(repo, "scripts/bootstrap", "runtime")
    assert "the lock files changed" in proc.stderr
    assert installed(repo) == ["requirements/build.txt", "requirements/runtime.txt"]


def test_an_unknown_set_is_refused(repo: Path) -> None:
    proc = subprocess.run(
        [str(repo / "scripts" / "bootstrap"), "nope"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "sets: runtime, test, bench" in proc.stderr
