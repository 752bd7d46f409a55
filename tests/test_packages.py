"""pyproject.toml's ``[tool.setuptools.packages.find]`` is the one list of the packages the project
ships; every other place that names them is derived from it or checked here against it, and a
failure names the place that disagrees: mypy's ``packages``, the Dockerfile's ``COPY`` lines, the
build context .dockerignore lets through, the compiled build's packages, scripts/compiled (which
reads ``setup.py --packages``).

The build context is also built into a wheel here (the pure-Python one, in seconds): what the
image's build stage would make of it, short of the compiler."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from app.server.build import COMPILED_PACKAGES
from tests.dockercontext import Matcher, build_context, read_patterns
from tests.dockerfile import DOCKERFILE, stages
from tests.image_replay import replay
from tests.packages import PACKAGES, ROOT, pyproject, shipped_packages

#: The chart, the packaging or the image: the same in both builds (tests/conftest.py).
pytestmark = pytest.mark.one_build

#: Top-level directories with an ``__init__.py`` that the project does not ship.
NOT_SHIPPED = {"bench", "tests", "tools"}
#: Package data pyproject ships beside the modules.
PACKAGE_DATA = ("app/review/schemas/*.json", "apiserver/crds.json")


def copied_sources(text: str | None = None) -> list[str]:
    """The context paths the Dockerfile's ``COPY`` lines (those not ``--from`` a stage) copy."""
    sources: list[str] = []
    for stage in stages(text):
        for word, args in stage:
            if word == "COPY" and "--from" not in args:
                sources += [w for w in shlex.split(args) if not w.startswith("--")][:-1]
    return sources


def clean_env() -> dict[str, str]:
    """The environment without what would make Python import the repository's sources."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def disagreement(place: str, named: set[str]) -> str:
    missing, extra = sorted(set(PACKAGES) - named), sorted(named - set(PACKAGES))
    return f"{place}: lacks {missing} (pyproject.toml ships them), has {extra} (pyproject.toml does not ship them)"


def test_the_list_names_every_package_of_the_repository() -> None:
    tops = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert tops - NOT_SHIPPED == set(PACKAGES), disagreement(
        "the repository's top-level packages", tops - NOT_SHIPPED
    )
    shipped = set(shipped_packages())
    assert {name.split(".")[0] for name in shipped} == set(PACKAGES), (
        "setup.py --packages disagrees with setuptools"
    )
    for top in PACKAGES:
        for directory in [ROOT / top, *(ROOT / top).rglob("*")]:
            if directory.is_dir() and directory.name != "__pycache__" and any(directory.glob("*.py")):
                name = directory.relative_to(ROOT).as_posix().replace("/", ".")
                assert name in shipped, f"{name}: has modules but is not found by packages.find"


def test_mypy_checks_every_package() -> None:
    listed = set(pyproject()["tool"]["mypy"]["packages"])  # type: ignore[index]
    assert listed == set(PACKAGES), disagreement("[tool.mypy] packages", listed)


def test_the_dockerfile_copies_every_package() -> None:
    tops = {Path(source).parts[0] for source in copied_sources() if (ROOT / source).is_dir()}
    tops -= {"requirements"}
    assert tops == set(PACKAGES), disagreement("the Dockerfile's COPY lines", tops)


def test_dockerignore_lets_in_exactly_what_the_dockerfile_copies() -> None:
    context = build_context(ROOT)
    sources = copied_sources()
    for source in sources:
        assert context.has(source), f".dockerignore keeps out {source}, which the Dockerfile copies"
    stray = sorted(f for f in context.files if not any(f == s or f.startswith(s + "/") for s in sources))
    assert not stray, f".dockerignore lets in what the Dockerfile does not copy: {stray[:10]}"
    tops = {f.split("/")[0] for f in context.files if "/" in f} - {"requirements"}
    assert tops == set(PACKAGES), disagreement("the build context .dockerignore lets in", tops)


def test_dockerignore_keeps_out_the_rest() -> None:
    matcher = Matcher(read_patterns((ROOT / ".dockerignore").read_text()))
    for kept_out in (
        ".venv/bin/python",
        ".git/HEAD",
        "tests/test_lock.py",
        "bench/__main__.py",
        "scripts/lock",
        "build/lib/app/cli/main.py",
        "app/cli/__pycache__/main.cpython-311.pyc",
        "apiserver/__pycache__/crds.cpython-311.pyc",
        "examples/manifests/x.yaml",
    ):
        assert matcher.excluded(kept_out), kept_out


def test_the_compiled_packages_are_shipped() -> None:
    assert set(COMPILED_PACKAGES) <= set(PACKAGES), (
        "app/server/build.py compiles a package that is not shipped"
    )


def test_scripts_read_the_list() -> None:
    compiled = (ROOT / "scripts" / "compiled").read_text()
    assert "setup.py --packages" in compiled, (
        "scripts/compiled: the package list is read from setup.py --packages"
    )
    listed = subprocess.run(
        [sys.executable, "setup.py", "--packages"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.split()
    assert tuple(listed) == PACKAGES


def test_a_build_without_a_package_stops_naming_it(tmp_path: Path) -> None:
    """A build context lacking a package (the Dockerfile not copying it) fails the build, where
    packages.find alone would make a wheel without it."""
    (build, _final) = replay(
        DOCKERFILE.read_text().replace("COPY apiserver ./apiserver\n", ""),
        build_context(ROOT),
        tmp_path / "image",
        run=False,
    )
    proc = subprocess.run(
        [sys.executable, "setup.py", "bdist_wheel"],
        cwd=build.host(build.workdir),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=clean_env(),
    )
    assert proc.returncode != 0
    assert "package directory ./apiserver does not exist" in proc.stderr


def test_the_build_context_builds_a_wheel_of_every_package_and_its_data(tmp_path: Path) -> None:
    """The build stage's sources, copied as the replay copies them, made into the pure wheel."""
    (build, _final) = replay(DOCKERFILE.read_text(), build_context(ROOT), tmp_path / "image", run=False)
    src = build.host(build.workdir)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(tmp_path / "dist"),
            ".",
        ],
        cwd=src,
        check=True,
        timeout=240,
        capture_output=True,
        env={**clean_env(), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    (wheel,) = (tmp_path / "dist").glob("dynamo_webhook-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names if not n.startswith("dynamo_webhook-")} == set(PACKAGES)
    for package in shipped_packages():
        assert f"{package.replace('.', '/')}/__init__.py" in names, package
    for pattern in PACKAGE_DATA:
        files = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern))
        assert files and set(files) <= set(names), pattern


@pytest.mark.parametrize("package", PACKAGES)
def test_the_editable_install_imports_the_package_from_outside(package: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", f"import {package}; print({package}.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=clean_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).parent.name == package
