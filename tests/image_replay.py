"""A replay of the Dockerfile's build without a Docker engine: each stage's ``WORKDIR``, ``ENV``,
``COPY`` and ``RUN`` applied in order, with a fresh venv of the machine's Python standing for the
stage's Python image.

* ``COPY`` copies from the build context exactly as Docker computes it (tests/dockercontext.py);
  a source the context lacks fails as ``docker build`` does, naming it.
* The absolute paths a stage uses (``/src``, ``/wheels``, ``/dist``, ``/tmp``...) live under a
  directory per stage; a ``RUN --mount=type=bind,from=STAGE`` links its target to the other
  stage's directory.
* ``RUN`` commands (split at ``&&``) that start Python run as written, through ``bash``, with the
  stage's venv first on ``PATH``. The few that need the image's root (Debian packages, user
  accounts) are skipped, each for a stated reason (:data:`SKIPPED`); any other command fails
  the replay, so a new step cannot pass unreplayed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.dockercontext import Context, go_clean
from tests.dockerfile import stages as parse_stages

#: Commands the replay does not run, and why; each is matched against the command's start.
SKIPPED = {
    "apt-get ": "Debian packages: the machine's gcc and C headers stand in for the image's",
    "rm -rf /var/lib/apt/lists/": "the apt lists the skipped apt-get would have left",
    "groupadd ": "the image's account: the replay runs as the current user",
    "useradd ": "the image's account: the replay runs as the current user",
}
#: Top-level directories of an image that are the system's, not the stage's own: left unmapped.
SYSTEM_DIRS = frozenset({"bin", "dev", "etc", "lib", "nonexistent", "proc", "sbin", "sys", "usr", "var"})
#: Instructions with no effect on what the replay builds or runs.
INERT = frozenset({"ARG", "EXPOSE", "LABEL", "USER", "CMD"})
#: The part of the environment the replayed commands keep (the rest is the stage's ``ENV``).
#: ``PIP_NO_CACHE_DIR`` is dropped from the stage's: pip's cache makes a second replay faster.
DROPPED_ENV = frozenset({"PIP_NO_CACHE_DIR"})
OUTER_ENV_DROPPED = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DYNAMO_WEBHOOK_")


class ReplayError(AssertionError):
    """The build fails here, as ``docker build`` would."""


@dataclass
class Stage:
    """One replayed stage: its directory standing for the image's root, its venv, its ``ENV``."""

    index: int
    name: str | None
    root: Path
    venv: Path
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    entrypoint: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def host(self, path: str) -> Path:
        """Where a path of the stage (absolute, or relative to its ``WORKDIR``) is on this machine."""
        absolute = go_clean(path if path.startswith("/") else f"{self.workdir}/{path}")
        if absolute.split("/")[1] in SYSTEM_DIRS:
            raise ReplayError(f"stage {self.index}: {path} is the system's, not one the replay maps")
        return self.root / absolute.lstrip("/")

    def rewrite(self, text: str) -> str:
        """``text`` with the stage's absolute paths (not the system's) turned into this machine's."""

        def mapped(match: re.Match[str]) -> str:
            top = match.group(1)[1:]
            return match.group(1) if top in SYSTEM_DIRS else str(self.root / top)

        return re.sub(r"(?<![\w.$/-])(/[A-Za-z_][\w.-]*)", mapped, text)

    def environ(self) -> dict[str, str]:
        outer = {k: v for k, v in os.environ.items() if not k.startswith(OUTER_ENV_DROPPED)}
        bin_dir = str(self.venv / "bin")
        return {**outer, **self.env, "PATH": f"{bin_dir}{os.pathsep}{outer.get('PATH', '')}"}


def copy(stage: Stage, context: Context, args: str) -> None:
    """``COPY src... dest`` from the build context, with Docker's rules for where things land."""
    words = shlex.split(args)
    flags = [w for w in words if w.startswith("--")]
    if any(not f.startswith(("--chown=", "--chmod=", "--link")) for f in flags):
        raise ReplayError(f"COPY {args}: the replay copies from the build context only")
    *sources, dest = [w for w in words if not w.startswith("--")]
    into_dir = dest.endswith("/") or len(sources) > 1
    target = stage.host(dest)
    for source in sources:
        if any(c in source for c in "*?["):
            raise ReplayError(f"COPY {source}: wildcards are not replayed; name the paths")
        path = go_clean(source).lstrip("/")
        if path in (".", ""):
            raise ReplayError(f"COPY {source}: the replay does not copy the whole context")
        if not context.has(path):
            raise ReplayError(
                f'COPY {source}: "/{path}": not found in the build context '
                f"(.dockerignore keeps it out, or it does not exist)"
            )
        if path in context.files:
            landing = target / Path(path).name if into_dir else target
            landing.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(context.root / path, landing)
            continue
        for file in sorted(f for f in context.files if f.startswith(path + "/")):
            landing = target / file[len(path) + 1 :]
            landing.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(context.root / file, landing)
        target.mkdir(parents=True, exist_ok=True)


def commands(run: str) -> tuple[list[str], list[str]]:
    """A ``RUN``'s ``--mount`` options and its commands."""
    mounts = []
    rest = run
    while rest.startswith("--"):
        option, _, rest = rest.partition(" ")
        if not option.startswith("--mount="):
            raise ReplayError(f"RUN {option}: not an option the replay knows")
        mounts.append(option.removeprefix("--mount="))
        rest = rest.lstrip()
    return mounts, [c.strip() for c in rest.split("&&")]


def mount(stage: Stage, spec: str, done: dict[str, Stage]) -> None:
    """``--mount=type=bind,from=STAGE,source=S,target=T``: T shows the other stage's S."""
    options = dict(part.split("=", 1) for part in spec.split(","))
    if options.get("type") != "bind" or options.get("from") not in done:
        raise ReplayError(f"--mount={spec}: the replay binds only from an earlier stage")
    source = done[options["from"]].host(options.get("source", "/"))
    target = stage.host(options["target"])
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.symlink_to(source, target_is_directory=True)


def execute(stage: Stage, command: str, timeout: float) -> None:
    for start, reason in SKIPPED.items():
        if command.startswith(start):
            stage.skipped.append(f"{command}  ({reason})")
            return
    words = shlex.split(command)
    program = next((w for w in words if not re.fullmatch(r"\w+=.*", w)), "")
    if program != "python":
        raise ReplayError(f"RUN {command}: the replay runs Python's commands only")
    cwd = stage.host(stage.workdir)
    cwd.mkdir(parents=True, exist_ok=True)
    rewritten = stage.rewrite(command)
    proc = subprocess.run(
        ["bash", "-c", rewritten],
        cwd=cwd,
        env=stage.environ(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise ReplayError(
            f"stage {stage.index}: RUN {command}\nexit {proc.returncode}\n"
            f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    stage.ran.append(command)


def new_venv(path: Path, python: str) -> None:
    subprocess.run([python, "-m", "venv", str(path)], check=True, capture_output=True, timeout=300)


def replay(
    dockerfile: str,
    context: Context,
    workspace: Path,
    *,
    run: bool = True,
    python: str = sys.executable,
    timeout: float = 900,
) -> list[Stage]:
    """Every stage of ``dockerfile`` replayed under ``workspace``; with ``run=False`` only what
    the stages copy (no venv is made, no command runs)."""
    done: dict[str, Stage] = {}
    result: list[Stage] = []
    for index, instructions in enumerate(parse_stages(dockerfile)):
        words = instructions[0][1].split()
        name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
        stage = Stage(index, name, workspace / f"stage{index}" / "root", workspace / f"stage{index}" / "venv")
        stage.root.mkdir(parents=True)
        if run:
            new_venv(stage.venv, python)
        for word, args in instructions[1:]:
            if word == "WORKDIR":
                stage.workdir = go_clean(args if args.startswith("/") else f"{stage.workdir}/{args}")
                stage.host(stage.workdir).mkdir(parents=True, exist_ok=True)
            elif word == "ENV":
                pairs = dict(pair.split("=", 1) for pair in shlex.split(args))
                stage.env.update({k: stage.rewrite(v) for k, v in pairs.items() if k not in DROPPED_ENV})
            elif word == "COPY":
                copy(stage, context, args)
            elif word == "RUN":
                mounts, steps = commands(args)
                for spec in mounts:
                    mount(stage, spec, done)
                for step in steps if run else ():
                    execute(stage, step, timeout)
            elif word == "ENTRYPOINT":
                stage.entrypoint = json.loads(args) if args.startswith("[") else shlex.split(args)
            elif word not in INERT:
                raise ReplayError(f"{word} {args}: not an instruction the replay knows")
        done[name or str(index)] = stage
        result.append(stage)
    return result
