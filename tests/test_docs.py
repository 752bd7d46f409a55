"""What README.md and docs/ show still exists: every link (file and heading), every path of the
repository they name, and every command they show with each of its flags.

Commands are read from shell blocks, from the command summaries (blocks of ``dynamo-webhook …``
lines) and from inline code that starts with one of the project's commands. A ``dynamo-webhook``
command's flags must be options of that command's parser; a script's flags must be handled by the
script (or by what it passes its arguments to: pytest for ``scripts/test``, ``python -m bench`` for
``scripts/bench``, ``uv pip compile`` for ``scripts/lock``, ``serve`` for ``scripts/serve``); a
``python -m`` module must exist and name the flag; a ``pytest`` flag must be one pytest knows.
Other programs' commands (kubectl, helm, curl, docker) are held only to the paths they name.

docs/compatibility.md must also name every module that marks an upstream quirk it reproduces, and
docs/architecture.md every module of ``app``.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.main import build_parser
from tests.packages import PACKAGES

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: Top-level directories whose paths the documents name.
TOP = (*PACKAGES, "bench", "charts", "deploy", "docs", "examples", "requirements", "scripts", "tests", ".ci")
#: Paths named in the documents that are the upstream operator's, not this repository's.
UPSTREAM_PATHS = ("deploy/operator",)
#: Flags ``scripts/lock`` passes on to ``uv pip compile`` (its ``"$@"``).
UV_COMPILE_FLAGS = {"--upgrade", "--upgrade-package"}

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
#: A path of the repository; one that goes on with a wildcard (``tests/test_*.py``) is a pattern.
PATH = re.compile(rf"(?<![\w./$~-])((?:{'|'.join(re.escape(t) for t in TOP)})/[\w./-]*+)(?!\*)")
LONG_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
SHORT_FLAG = re.compile(r"(?<![\w-])(-[a-zA-Z])(?![\w-])")
COMMAND_WORDS = (
    "dynamo-webhook",
    ".venv/bin/dynamo-webhook",
    "scripts/",
    "python",
    ".venv/bin/python",
    "pytest",
)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(text: str) -> str:
    """The text outside fenced blocks."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@functools.cache
def anchors(path: Path) -> set[str]:
    return {slug(m) for m in re.findall(r"^#+ (.+)$", prose(path.read_text()), re.M)}


# --------------------------------------------------------------------------- links and paths


@pytest.mark.parametrize("doc", DOCUMENTS, ids=rel)
def test_links_lead_somewhere(doc: Path) -> None:
    broken = []
    for target in LINK.findall(prose(doc.read_text())):
        if target.startswith(("http://", "https://")):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no {file_part}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {rel(dest)}")
    assert not broken, broken


@pytest.mark.parametrize("doc", DOCUMENTS, ids=rel)
def test_named_paths_exist(doc: Path) -> None:
    missing = []
    for found in PATH.findall(doc.read_text()):
        path = found.rstrip(".,:;")
        if path.startswith(UPSTREAM_PATHS):
            continue
        if not (ROOT / path).exists():
            missing.append(path)
    assert not missing, sorted(set(missing))


def test_the_path_pattern_finds_paths() -> None:
    text = "see `app/review/schemas/`, validation/<kind>.py and ~/.cache/x, (docs/operations.md#limits)."
    assert [p.rstrip(".,:;") for p in PATH.findall(text)] == [
        "app/review/schemas/",
        "validation/",
        "docs/operations.md",
    ]
    assert PATH.findall("`tests/test_*.py` and tests/fixtures/admission/*.jsonl") == []
    assert slug("Upgrading a cluster: `audit` before, `storage-migrate` after") == (
        "upgrading-a-cluster-audit-before-storage-migrate-after"
    )
    assert slug("On 5,000 objects") == "on-5000-objects"


# --------------------------------------------------------------------------- commands


def shell_lines(block: str) -> Iterator[str]:
    """The commands of a shell block: continuations joined, comments and prompts dropped."""
    joined = block.replace("\\\n", " ")
    for line in joined.splitlines():
        line = line.strip().removeprefix("$ ")
        if line and not line.startswith("#"):
            yield re.split(r"\s+#\s", line, maxsplit=1)[0].strip()


def summary_lines(block: str) -> Iterator[str]:
    """The command lines of a usage block (``dynamo-webhook …`` with indented continuations)."""
    current = ""
    for line in block.splitlines():
        if current and line.strip().startswith("["):
            current += " " + line.strip()
            continue
        if current:
            yield current
        line = line.removeprefix("$ ")
        current = line.strip() if line.startswith("dynamo-webhook") else ""
    if current:
        yield current


def commands(doc: Path) -> Iterator[str]:
    text = doc.read_text()
    for lang, block in FENCE.findall(text):
        if lang == "sh":
            yield from shell_lines(block)
        elif lang == "":
            yield from summary_lines(block)
    for span in re.findall(r"`([^`\n]+)`", prose(text)):
        command = re.sub(r"^(?:[A-Z_]+=\S+ )+", "", span)  # environment assignments first
        if command.startswith(COMMAND_WORDS) and " " in command:
            yield command


def words_of(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # environment assignments
        words.pop(0)
    return words


def flags(words: list[str]) -> set[str]:
    text = " ".join(w for w in words if not w.startswith(("'", '"')))
    return set(LONG_FLAG.findall(text)) | set(SHORT_FLAG.findall(text))


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for action in parser._actions for o in action.option_strings}


def cli_problems(words: list[str]) -> list[str]:
    parser = build_parser()
    known = options(parser)
    if len(words) > 1 and not words[1].startswith(("[", "-")):
        commands_ = subparsers(parser)
        if words[1] not in commands_:
            return [f"no command {words[1]}"]
        sub = commands_[words[1]]
        known = options(sub)
        nested = subparsers(sub)
        if nested and len(words) > 2 and not words[2].startswith(("[", "-")) and words[2] != "...":
            names = words[2].split("|")
            if not set(names) <= set(nested):
                return [f"no {words[1]} command {words[2]}"]
            known |= {o for name in names for o in options(nested[name])}
    return [f"{' '.join(words[:2])}: no option {flag}" for flag in sorted(flags(words)) if flag not in known]


@functools.cache
def pytest_options() -> frozenset[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return frozenset(LONG_FLAG.findall(out)) | frozenset(SHORT_FLAG.findall(out))


def module_file(name: str) -> Path | None:
    base = ROOT / name.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "__main__.py"):
        if candidate.is_file():
            return candidate
    return None


def script_problems(words: list[str]) -> list[str]:
    script = ROOT / words[0]
    if script.suffix == ".py":  # run with python: its flags are in its source
        if not script.is_file():
            return [f"no {words[0]}"]
        return [
            f"{words[0]}: no option {f}"
            for f in sorted(flags(words[1:]))
            if f'"{f}"' not in script.read_text()
        ]
    if not (script.is_file() and os.access(script, os.X_OK)):
        return [f"no executable {words[0]}"]
    given = flags(words[1:])
    text = script.read_text()
    if words[0] == "scripts/serve":
        return cli_problems(["dynamo-webhook", "serve", *words[1:]])
    handled = {f for f in given if re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text)}
    if words[0] == "scripts/test":
        handled |= given & pytest_options()
    elif words[0] == "scripts/bench":
        handled |= {f for f in given if f in (ROOT / "bench" / "__main__.py").read_text()}
    elif words[0] == "scripts/lock" and '"$@"' in text:
        handled |= given & UV_COMPILE_FLAGS
    return [f"{words[0]}: no option {flag}" for flag in sorted(given - handled)]


def python_problems(words: list[str]) -> list[str]:
    if len(words) > 2 and words[1] == "-m":
        if words[2] == "pytest":
            return pytest_problems(words[2:])
        source = module_file(words[2])
        if source is None:
            return [f"no module {words[2]}"]
        text = source.read_text()
        return [f"{words[2]}: no option {f}" for f in sorted(flags(words[3:])) if f'"{f}"' not in text]
    if len(words) > 1 and words[1].endswith(".py"):
        return [] if (ROOT / words[1]).is_file() else [f"no {words[1]}"]
    return []


def pytest_problems(words: list[str]) -> list[str]:
    from hypothesis import settings

    problems = [f"pytest: no option {f}" for f in sorted(flags(words[1:]) - pytest_options())]
    for word in words:
        if word.startswith("--hypothesis-profile="):
            try:
                settings.get_profile(word.split("=", 1)[1])
            except Exception:
                problems.append(f"no hypothesis profile {word}")
    if "-m" in words:
        marker = words[words.index("-m") + 1]
        if marker not in (ROOT / "pyproject.toml").read_text():
            problems.append(f"no marker {marker}")
    return problems


def command_problems(command: str) -> list[str]:
    words = words_of(command)
    if not words:
        return []
    head = words[0].removeprefix(".venv/bin/")
    if head == "dynamo-webhook":
        return cli_problems(["dynamo-webhook", *words[1:]])
    if head.startswith("scripts/"):
        return script_problems(words)
    if head in ("python", "python3"):
        return python_problems(words)
    if head == "pytest":
        return pytest_problems(words)
    return []


@pytest.mark.parametrize("doc", DOCUMENTS, ids=rel)
def test_commands_and_their_flags_exist(doc: Path) -> None:
    shown = list(commands(doc))
    problems = [f"{command!r}: {p}" for command in shown for p in command_problems(command)]
    assert not problems, "\n".join(problems)


def test_the_command_check_sees_a_wrong_flag() -> None:
    assert command_problems("dynamo-webhook audit --no-such-flag") == [
        "dynamo-webhook audit: no option --no-such-flag"
    ]
    assert command_problems("dynamo-webhook certs ensure|status --once") == []
    assert command_problems("dynamo-webhook nonsense") == ["no command nonsense"]
    assert command_problems("scripts/test --quick -x") == []
    assert command_problems("scripts/nothing") == ["no executable scripts/nothing"]
    assert command_problems("python -m bench.cluster_tools --objects 5000") == []
    assert command_problems("python -m bench.cluster_tools --nothing") == [
        "bench.cluster_tools: no option --nothing"
    ]
    assert command_problems("pytest -m nonsense tests/bench") == ["no marker nonsense"]
    usage = "dynamo-webhook audit [--kubeconfig F]\n                     [--show-all]\nother"
    assert list(summary_lines(usage)) == ["dynamo-webhook audit [--kubeconfig F] [--show-all]"]
    output = "$ dynamo-webhook audit -A\nAudit of 13 object(s)\n  legacy  refused"
    assert list(summary_lines(output)) == ["dynamo-webhook audit -A"]


def test_every_document_shows_commands() -> None:
    """The command check reads something in each place commands are shown."""
    readme = list(commands(ROOT / "README.md"))
    assert "scripts/serve" in readme[0] and any(
        c.startswith("dynamo-webhook storage-migrate") for c in readme
    )
    assert any(
        c.startswith("dynamo-webhook audit") and "--show-all" in c
        for c in commands(ROOT / "docs" / "operations.md")
    )


# --------------------------------------------------------------------------- what the docs list


def test_compatibility_names_every_module_with_a_quirk() -> None:
    listed = (ROOT / "docs" / "compatibility.md").read_text()
    marked = [
        rel(path)
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if re.search(r"\bQuirk\b|[Qq]uirks reproduced", path.read_text())
    ]
    assert marked
    assert not [path for path in marked if path not in listed]


def test_architecture_names_every_module_of_app() -> None:
    tree = (ROOT / "docs" / "architecture.md").read_text()
    for path in sorted((ROOT / "app").rglob("*.py")):
        if path.name != "__init__.py":
            assert f"{path.parent.relative_to(ROOT).as_posix()}/" in tree, path
            assert path.name in tree, rel(path)
