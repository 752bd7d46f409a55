"""The lock files in requirements/ agree with pyproject.toml (no network needed).

Every entry is pinned (``==``) with sha256 hashes; every dependency pyproject.toml asks for is
locked, as pyproject.toml's, at a version inside its range; nothing is locked that nothing asks for;
the five sets pin shared packages identically; the dependencies of every locked package, read from
the installed metadata, are locked too; and the venv holds exactly the locked versions.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCK_SCRIPT = (ROOT / "scripts" / "lock").read_text()
FROM_PYPROJECT = "dynamo-webhook (pyproject.toml)"
SETS = ("build", "runtime", "test", "bench", "compile")

_ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)(?:\s*;[^\\]*)?\s*\\?$")
_HASH = re.compile(r"^\s+--hash=sha256:([0-9a-f]{64})\s*\\?$")


@dataclass
class Pin:
    version: Version
    hashes: set[str]
    via: set[str]


def read_lock(text: str) -> dict[str, Pin]:
    """name -> Pin from a hash-pinned requirements file; anything else in it is an error."""
    pins: dict[str, Pin] = {}
    current: Pin | None = None
    in_via = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            current, in_via = None, False
            continue
        if entry := _ENTRY.match(line):
            name = canonicalize_name(entry.group(1))
            assert name not in pins, f"line {number}: {name} is locked twice"
            current = pins[name] = Pin(Version(entry.group(2)), set(), set())
            in_via = False
            continue
        assert current is not None, f"line {number}: not a pinned requirement: {line.strip()!r}"
        if digest := _HASH.match(line):
            current.hashes.add(digest.group(1))
        elif line.strip().startswith("# via"):
            source = line.strip().removeprefix("# via").strip()
            in_via = not source
            if source:
                current.via.add(source)
        elif in_via and line.strip().startswith("#   "):
            current.via.add(line.strip().removeprefix("#").strip())
        else:
            raise AssertionError(f"line {number}: not a hash or an annotation: {line.strip()!r}")
    return pins


def lock_target() -> dict[str, str]:
    """The marker environment the lock is made for, from the options scripts/lock passes."""
    python = re.search(r"--python-version (\d+\.\d+)\b", LOCK_SCRIPT)
    platform = re.search(r"--python-platform (x86_64)-manylinux_\d+_\d+\b", LOCK_SCRIPT)
    assert python and platform, (
        "scripts/lock must name the Python version and the Linux platform it locks for"
    )
    return {
        "python_version": python.group(1),
        "python_full_version": python.group(1) + ".0",
        "platform_machine": platform.group(1),
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
    }


def applies(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    target = lock_target()
    return any(requirement.marker.evaluate({**target, "extra": extra}) for extra in extras or {""})


def roots(pyproject: dict[str, Any], set_name: str) -> list[Requirement]:
    """What pyproject.toml asks for in one set (the build set also holds the installer, pip)."""
    project = pyproject["project"]
    extras = project.get("optional-dependencies", {})
    asked = {
        "build": [*pyproject["build-system"]["requires"], "pip"],
        "runtime": project["dependencies"],
        "test": [*project["dependencies"], *extras.get("test", [])],
        "bench": [*project["dependencies"], *extras.get("test", []), *extras.get("bench", [])],
        "compile": [*project["dependencies"], *extras.get("compile", [])],
    }[set_name]
    return [r for r in map(Requirement, asked) if applies(r, set())]


def disagreements(asked: list[Requirement], lock: dict[str, Pin], annotated: bool = True) -> list[str]:
    """How a lock and the requirements it was made from disagree (empty: they agree)."""
    problems = []
    names = {canonicalize_name(r.name) for r in asked}
    for requirement in asked:
        name = canonicalize_name(requirement.name)
        if name not in lock:
            problems.append(f"{requirement} is in pyproject.toml but not in the lock")
        elif not requirement.specifier.contains(lock[name].version, prereleases=True):
            problems.append(f"{name}=={lock[name].version} is outside pyproject.toml's {requirement}")
        elif annotated and FROM_PYPROJECT not in lock[name].via:
            problems.append(f"{name} is in pyproject.toml but the lock has it only as a dependency of others")
    for name, pin in lock.items():
        if not pin.hashes:
            problems.append(f"{name} is locked without a hash")
    if not annotated:
        problems += [
            f"{name} is locked but pyproject.toml does not ask for it" for name in sorted(set(lock) - names)
        ]
        return problems
    for name, pin in sorted(lock.items()):
        if FROM_PYPROJECT in pin.via and name not in names:
            problems.append(f"{name} is locked for pyproject.toml, which does not ask for it")
    needed = {name for name in names if name in lock}
    grew = True
    while grew:
        more = {name for name, pin in lock.items() if name not in needed and pin.via & needed}
        needed |= more
        grew = bool(more)
    problems += [f"{name} is locked but nothing asks for it" for name in sorted(set(lock) - needed)]
    return problems


def locks() -> dict[str, dict[str, Pin]]:
    return {name: read_lock((REQUIREMENTS / f"{name}.txt").read_text()) for name in SETS}


@pytest.mark.parametrize("set_name", SETS)
def test_lock_agrees_with_pyproject(set_name: str) -> None:
    lock = locks()[set_name]
    # The build set is locked from stdin (pyproject.toml's [build-system]), without annotations.
    assert disagreements(roots(PYPROJECT, set_name), lock, annotated=set_name != "build") == []


def test_sets_pin_shared_packages_identically() -> None:
    all_locks = locks()
    assert set(all_locks["runtime"]) <= set(all_locks["test"]) <= set(all_locks["bench"])
    assert set(all_locks["runtime"]) <= set(all_locks["compile"])
    for a in SETS:
        for b in SETS:
            for name in set(all_locks[a]) & set(all_locks[b]):
                assert all_locks[a][name].version == all_locks[b][name].version, (a, b, name)
                assert all_locks[a][name].hashes == all_locks[b][name].hashes, (a, b, name)


@pytest.mark.parametrize("set_name", SETS)
def test_dependencies_of_locked_packages_are_locked(set_name: str) -> None:
    """Walks the installed metadata from pyproject.toml's requirements: every requirement met on
    the way (with the extras asked for, under the lock's target markers) is locked within range."""
    lock = locks()[set_name]
    todo = [(r, {*r.extras}) for r in roots(PYPROJECT, set_name)]
    seen: set[tuple[str, frozenset[str]]] = set()
    missing = []
    while todo:
        requirement, extras = todo.pop()
        name = canonicalize_name(requirement.name)
        pin = lock.get(name)
        if pin is None or not requirement.specifier.contains(pin.version, prereleases=True):
            missing.append(str(requirement))
            continue
        if (name, frozenset(extras)) in seen:
            continue
        seen.add((name, frozenset(extras)))
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a set this venv was not bootstrapped with (bench)
        if Version(dist.version) != pin.version:
            continue
        for line in dist.requires or []:
            needed = Requirement(line)
            if applies(needed, extras):
                todo.append((needed, {*needed.extras}))
    assert missing == []


@pytest.mark.parametrize("set_name", ["build", "test"])
def test_venv_holds_exactly_the_locked_versions(set_name: str) -> None:
    wrong = {}
    for name, pin in locks()[set_name].items():
        try:
            installed = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            wrong[name] = f"{pin.version} locked, not installed"
            continue
        if installed != pin.version:
            wrong[name] = f"{pin.version} locked, {installed} installed"
    assert wrong == {}, "the venv is not the lock: run scripts/bootstrap"


def test_lock_target_matches_pyproject() -> None:
    python = lock_target()["python_version"]
    assert Version(python + ".0") in Requirement("python" + PYPROJECT["project"]["requires-python"]).specifier
    assert PYPROJECT["tool"]["mypy"]["python_version"] == python
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py" + python.replace(".", "")


def test_bootstrap_installs_only_from_the_lock() -> None:
    script = (ROOT / "scripts" / "bootstrap").read_text()
    installs = [line.strip() for line in script.splitlines() if re.match(r"\s*pip install\b", line)]
    assert installs, "scripts/bootstrap installs nothing"
    for command in installs:
        if "-e ." in command:
            assert "--no-deps" in command, command
        else:
            assert "--require-hashes" in command and " -r " in command, command
    assert "requirements/build.txt" in script and "requirements/$set_name.txt" in script


# The check itself: each way pyproject.toml and a lock can drift apart is reported.

_SAMPLE = """\
# This file was autogenerated by uv via the following command:
#    scripts/lock
anyio==4.4.0 \\
    --hash=sha256:{a}
    # via starlette
fastapi==0.111.0 \\
    --hash=sha256:{b}
    # via dynamo-webhook (pyproject.toml)
starlette==0.37.2 \\
    --hash=sha256:{c} \\
    --hash=sha256:{d}
    # via
    #   -c requirements/runtime.txt
    #   fastapi
""".format(a="a" * 64, b="b" * 64, c="c" * 64, d="d" * 64)


def test_check_accepts_a_lock_that_agrees() -> None:
    lock = read_lock(_SAMPLE)
    assert lock["starlette"].hashes == {"c" * 64, "d" * 64}
    assert lock["starlette"].via == {"-c requirements/runtime.txt", "fastapi"}
    assert disagreements([Requirement("fastapi>=0.110")], lock) == []


def test_check_reports_a_dependency_added_to_pyproject_only() -> None:
    assert disagreements([Requirement("fastapi>=0.110"), Requirement("orjson>=3.9")], read_lock(_SAMPLE)) == [
        "orjson>=3.9 is in pyproject.toml but not in the lock"
    ]


def test_check_reports_a_dependency_left_in_the_lock_only() -> None:
    sample = (
        _SAMPLE
        + "orjson==3.10.0 \\\n    --hash=sha256:{}\n    # via dynamo-webhook (pyproject.toml)\n".format(
            "e" * 64
        )
    )
    assert disagreements([Requirement("fastapi>=0.110")], read_lock(sample)) == [
        "orjson is locked for pyproject.toml, which does not ask for it",
        "orjson is locked but nothing asks for it",
    ]


def test_check_reports_a_lower_bound_the_lock_violates() -> None:
    assert disagreements([Requirement("fastapi>=0.112")], read_lock(_SAMPLE)) == [
        "fastapi==0.111.0 is outside pyproject.toml's fastapi>=0.112"
    ]


def test_check_reports_a_dependency_added_to_pyproject_that_is_only_locked_transitively() -> None:
    assert disagreements([Requirement("fastapi>=0.110"), Requirement("anyio>=4")], read_lock(_SAMPLE)) == [
        "anyio is in pyproject.toml but the lock has it only as a dependency of others"
    ]


def test_check_rejects_unpinned_or_unhashed_entries() -> None:
    with pytest.raises(AssertionError, match="not a pinned requirement"):
        read_lock("fastapi>=0.110\n")
    lock = read_lock("fastapi==0.111.0\n    # via dynamo-webhook (pyproject.toml)\n")
    assert disagreements([Requirement("fastapi")], lock) == ["fastapi is locked without a hash"]
