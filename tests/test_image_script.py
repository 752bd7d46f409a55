"""scripts/image builds the image with docker, else podman, from the repository root, tagged as
asked (or dynamo-webhook:VERSION), and says so when neither is installed. The engines here are
stand-ins on a PATH of their own that record how they were called."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.packages import ROOT, pyproject

#: The chart, the packaging or the image: the same in both builds (tests/conftest.py).
pytestmark = pytest.mark.one_build


def path_with(tmp_path: Path, engines: tuple[str, ...]) -> str:
    """A PATH holding the tools the script uses and the given stand-in engines only."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sed", "head", "dirname"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    for engine in engines:
        (bin_dir / engine).write_text(f'#!/bin/sh\necho "{engine} $* (in $PWD)" >> "{tmp_path}/calls"\n')
        (bin_dir / engine).chmod(0o755)
    return str(bin_dir)


def run(
    tmp_path: Path, engines: tuple[str, ...], *args: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    proc = subprocess.run(
        [str(ROOT / "scripts" / "image"), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": path_with(tmp_path, engines)},
        cwd=tmp_path,
    )
    calls = tmp_path / "calls"
    return proc, calls.read_text().splitlines() if calls.exists() else []


def test_docker_builds_the_tagged_image_from_the_root(tmp_path: Path) -> None:
    proc, calls = run(tmp_path, ("docker", "podman"), "registry.example.com/dynamo-webhook:0.1.0")
    assert proc.returncode == 0, proc.stderr
    assert calls == [f"docker build --tag registry.example.com/dynamo-webhook:0.1.0 . (in {ROOT})"]


def test_podman_when_there_is_no_docker_and_the_version_as_default_tag(tmp_path: Path) -> None:
    version = pyproject()["project"]["version"]  # type: ignore[index]
    proc, calls = run(tmp_path, ("podman",))
    assert proc.returncode == 0, proc.stderr
    assert calls == [f"podman build --tag dynamo-webhook:{version} . (in {ROOT})"]


@pytest.mark.parametrize("args", [(), ("a", "b")])
def test_neither_engine_or_a_wrong_call_exits_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    proc, calls = run(tmp_path, () if not args else ("docker",), *args)
    assert (proc.returncode, calls) == (2, [])
    assert "neither docker nor podman" in proc.stderr if not args else "usage: scripts/image" in proc.stderr
