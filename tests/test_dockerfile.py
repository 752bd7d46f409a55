"""Lint-level checks of the Dockerfile (no Docker engine is needed): it parses into stages,
the final stage runs as a non-root UID, has no compilers, exposes 9443 and 8080, uses base images
pinned by tag and digest for the lock's Python, installs only from the lock files, starts
``dynamo-webhook serve``. What it copies and what .dockerignore lets in: tests/test_packages.py;
its build replayed: tests/test_image_build.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.dockerfile import ROOT, instructions, stages

#: The chart, the packaging or the image: the same in both builds (tests/conftest.py).
pytestmark = pytest.mark.one_build

__all__ = ["instructions", "stages"]


def test_known_instructions_only() -> None:
    known = {"ARG", "FROM", "ENV", "RUN", "WORKDIR", "COPY", "USER", "EXPOSE", "ENTRYPOINT", "CMD", "LABEL"}
    assert {word for word, _ in instructions()} <= known


def test_multi_stage_with_wheels_built_first() -> None:
    all_stages = stages()
    assert len(all_stages) >= 2
    build = " ".join(arg for _, arg in all_stages[0])
    assert "pip wheel" in build


def test_final_stage_runs_non_root_and_serves() -> None:
    final = stages()[-1]
    users = [arg for word, arg in final if word == "USER"]
    assert users, "final stage must set USER"
    uid = users[-1].split(":")[0]
    assert uid not in ("root", "0") and (uid.isdigit() and int(uid) > 0)
    entrypoints = [arg for word, arg in final if word == "ENTRYPOINT"]
    assert json.loads(entrypoints[-1]) == ["dynamo-webhook", "serve"]
    exposed = {p for word, arg in final if word == "EXPOSE" for p in arg.split()}
    assert exposed == {"9443", "8080"}
    assert not any(word == "HEALTHCHECK" for word, _ in instructions())


def test_no_compilers_in_final_stage() -> None:
    final = " ".join(arg for _, arg in stages()[-1])
    for tool in ("build-essential", "gcc", "g++", "clang"):
        assert tool not in final


def base_images() -> list[str]:
    args = dict(arg.split("=", 1) for word, arg in instructions() if word == "ARG" and "=" in arg)
    stage_names = {a.split()[2] for w, a in instructions() if w == "FROM" and len(a.split()) > 2}
    images = []
    for word, arg in instructions():
        if word != "FROM":
            continue
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], arg.split()[0])
        if image not in stage_names:
            images.append(image)
    return images


def test_base_images_are_pinned_by_tag_and_digest_for_the_locked_python() -> None:
    lock_python = re.search(r"--python-version (\d+\.\d+)\b", (ROOT / "scripts" / "lock").read_text())
    assert lock_python
    images = base_images()
    assert images
    for image in images:
        pinned = re.fullmatch(r"python:(\d+\.\d+)[\w.-]*@sha256:[0-9a-f]{64}", image)
        assert pinned, f"{image}: not python:<tag>@sha256:<digest>"
        assert pinned.group(1) == lock_python.group(1), f"{image}: not the Python the lock is made for"


def pip_commands() -> list[tuple[int, str]]:
    """(stage index, command) for every pip command of every RUN."""
    out = []
    for index, stage in enumerate(stages()):
        for word, arg in stage:
            if word == "RUN":
                out += [
                    (index, c.strip())
                    for c in arg.split("&&")
                    if re.search(r"\bpip (install|download|wheel)\b", c)
                ]
    return out


def test_installs_only_from_the_lock_files() -> None:
    commands = pip_commands()
    assert commands
    for _, command in commands:
        if " -r " in command:
            assert "--require-hashes" in command and "--only-binary=:all:" in command, command
            lock = command.split(" -r ", 1)[1].split()[0]
            assert Path(lock).name in {"build.txt", "runtime.txt", "compile.txt"}, command
            assert (ROOT / "requirements" / Path(lock).name).is_file(), command
        else:
            # the project's own wheel: built and installed without resolving anything
            assert "--no-deps" in command, command
    final = [c for stage, c in commands if stage == len(stages()) - 1]
    assert any("runtime.txt" in c for c in final), "the final stage must install the runtime lock"
    assert not any(re.search(r"requirements/(test|bench)\.txt", c) for _, c in commands)
    assert not any("compile.txt" in c for stage, c in commands if stage == len(stages()) - 1)


def test_the_wheel_is_the_compiled_build() -> None:
    build = " ".join(arg for word, arg in stages()[0] if word in ("RUN", "COPY"))
    assert "DYNAMO_WEBHOOK_COMPILE=1 python -m pip wheel" in build
    assert "setup.py" in build and "requirements/compile.txt" in build


def test_final_stage_is_labelled_and_installs_only_local_wheels() -> None:
    final = stages()[-1]
    labels = " ".join(arg for word, arg in final if word == "LABEL")
    for key in ("org.opencontainers.image.title", "org.opencontainers.image.licenses"):
        assert key in labels
    run = " ".join(arg for word, arg in final if word == "RUN")
    assert "--no-index" in run, "the final stage must not reach a package index"
    assert not re.search(r":latest\b", (ROOT / "Dockerfile").read_text())
