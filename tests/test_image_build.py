"""The image's build replayed without a Docker engine (tests/image_replay.py), then the image's
command run: the build stage's pip commands as the Dockerfile writes them (the locked pip and
setuptools, mypy from the compile lock, the runtime wheels downloaded, the project's wheel built
with ``DYNAMO_WEBHOOK_COMPILE=1`` and checked for C extensions), each from the build context
.dockerignore lets through; the final stage's install from those wheels alone; then, from a
directory outside the repository, ``dynamo-webhook --version`` names the compiled build,
``serve`` answers an AdmissionReview of examples/ and ``lint`` passes an example manifest.

The machine's Python (the lock's minor version) and C compiler stand in for the image's; pip's
cache (``PIP_CACHE_DIR``) is used, so a second run downloads nothing. Marked ``image``: a few
minutes, most of them the C compiler's; ``scripts/test --quick`` leaves it out. The compiled-build
run of ``scripts/test`` leaves it out too: the replay builds its compiled wheel from the sources
itself, so a second run would check the same thing again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.app.server.test_serve import Server
from tests.dockercontext import build_context
from tests.dockerfile import DOCKERFILE
from tests.examples import EXAMPLES
from tests.image_replay import Stage, replay
from tests.packages import PACKAGES, ROOT

pytestmark = [
    pytest.mark.image,
    pytest.mark.skipif(
        os.environ.get("DYNAMO_WEBHOOK_EXPECT_BUILD") == "compiled",
        reason="the replay compiles its own wheel from the sources: the Python-build run has checked it",
    ),
    pytest.mark.timeout(1800),
]


@dataclass
class Image:
    build: Stage
    final: Stage
    wheel: Path
    seconds: float
    outside: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The image's entrypoint program with ``args``, from outside the repository."""
        return subprocess.run(
            [str(self.final.venv / "bin" / self.final.entrypoint[0]), *args],
            cwd=self.outside,
            env=self.final.environ(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def locked_python() -> str:
    match = re.search(r"--python-version (\d+\.\d+)\b", (ROOT / "scripts" / "lock").read_text())
    assert match, "scripts/lock names no --python-version"
    return match.group(1)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    if f"{sys.version_info[0]}.{sys.version_info[1]}" != locked_python():
        pytest.skip(f"the lock's wheels are for Python {locked_python()}, this is {sys.version.split()[0]}")
    if (
        not shutil.which(os.environ.get("CC", "cc"))
        and os.environ.get("DYNAMO_WEBHOOK_REQUIRE_COMPILED") != "1"
    ):
        pytest.skip("no C compiler: the image's wheel is the compiled build")
    workspace = tmp_path_factory.mktemp("image")
    start = time.monotonic()
    build, final = replay(DOCKERFILE.read_text(), build_context(ROOT), workspace / "stages")
    seconds = time.monotonic() - start
    print(f"\nimage replay: {seconds:.0f} s; ran {len(build.ran) + len(final.ran)} commands, skipped:")
    print("\n".join(f"  {line}" for line in build.skipped + final.skipped))
    (wheel,) = build.host("/dist").glob("dynamo_webhook-*.whl")
    outside = workspace / "elsewhere"
    outside.mkdir()
    return Image(build, final, wheel, seconds, outside)


def test_the_wheel_is_compiled_and_holds_every_package(image: Image) -> None:
    names = zipfile.ZipFile(image.wheel).namelist()
    assert any(name.endswith(".so") for name in names)
    assert {n.split("/")[0] for n in names if not n.startswith("dynamo_webhook-")} >= set(PACKAGES)


def test_the_image_runs_the_installed_compiled_build(image: Image) -> None:
    version = image.run("--version")
    assert version.returncode == 0, version.stderr
    assert "(compiled build)" in version.stdout, version.stdout
    where = subprocess.run(
        [str(image.final.venv / "bin" / "python"), "-c", "import app; print(app.__file__)"],
        cwd=image.outside,
        env=image.final.environ(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(image.final.venv), where.stdout


def test_the_image_serves_a_review(image: Image) -> None:
    cert_dir = Path(image.final.env["DYNAMO_WEBHOOK_CERT_DIR"])
    assert cert_dir.is_relative_to(image.final.root), "the image's cert dir is the stage's /tmp"
    cert_dir.mkdir(parents=True, exist_ok=True)
    exe = image.final.venv / "bin" / image.final.entrypoint[0]
    assert image.final.entrypoint[1:] == ["serve"]
    server = Server(cert_dir, exe=exe, cwd=image.outside, env=image.final.environ())
    try:
        request = json.loads((EXAMPLES / "admission" / "dgd-v1beta1-create.json").read_text())
        status, answer = server.post("/validate", json.dumps(request).encode())
    finally:
        server.stop()
    assert status == 200
    response = answer["response"]
    assert isinstance(response, dict)
    assert response["allowed"] is True and response["uid"] == request["request"]["uid"], response


def test_the_image_lints_an_example(image: Image) -> None:
    lint = image.run("lint", str(EXAMPLES / "manifests" / "dgd-agg-v1beta1.yaml"))
    assert lint.returncode == 0, lint.stdout + lint.stderr
