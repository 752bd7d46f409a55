"""Lint-level checks of the Dockerfile (no Docker engine is needed): it parses into stages,
the final stage runs as a non-root UID, has no compilers, exposes 9443 and 8080, uses pinned
base images, and starts ``dynamo-webhook serve``."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = (ROOT / "Dockerfile").read_text()
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for ins in instructions():
        if ins[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(ins)
    return result


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


def test_base_images_are_pinned() -> None:
    args = dict(arg.split("=", 1) for word, arg in instructions() if word == "ARG" and "=" in arg)
    for word, arg in instructions():
        if word != "FROM":
            continue
        image = arg.split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        if image in {s for _, a in instructions() if _ == "FROM" for s in a.split()[2:3]}:
            continue  # FROM <stage-name>
        assert ":" in image and not image.endswith(":latest"), image


def test_final_stage_is_labelled_and_installs_only_local_wheels() -> None:
    final = stages()[-1]
    labels = " ".join(arg for word, arg in final if word == "LABEL")
    for key in ("org.opencontainers.image.title", "org.opencontainers.image.licenses"):
        assert key in labels
    run = " ".join(arg for word, arg in final if word == "RUN")
    assert "--no-index" in run, "the final stage must not reach a package index"
    assert not re.search(r":latest\b", (ROOT / "Dockerfile").read_text())
