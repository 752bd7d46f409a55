"""The repository's Dockerfile read into instructions and stages (no Docker engine needed): what
the Dockerfile tests and the replay of its build (tests/image_replay.py) read."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"


def instructions(text: str | None = None) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile (or of ``text``) with line continuations
    joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text() if text is None else text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def stages(text: str | None = None) -> list[list[tuple[str, str]]]:
    """The instructions of each stage, its ``FROM`` first (the global ``ARG``s before the first
    ``FROM`` belong to none)."""
    result: list[list[tuple[str, str]]] = []
    for ins in instructions(text):
        if ins[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(ins)
    return result
