"""The README and docs/ stay true: the README's quick-start commands exist and it stays short, and
the docs document every setting, every webhook path the app serves and every command."""

from __future__ import annotations

import os
import re
from pathlib import Path

from app.review.webhook_paths import WEBHOOK_ROUTES
from app.server.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
CONFIGURATION = (DOCS / "configuration.md").read_text()
OPERATIONS = (DOCS / "operations.md").read_text()

#: The README says what the service is, how to try it and where to read on: two screens at most.
README_MAX_LINES = 200


def test_quick_start_is_two_executable_commands() -> None:
    block = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["scripts/serve", "scripts/test"]
    for command in commands:
        assert os.access(ROOT / command, os.X_OK)
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_readme_is_short_and_points_at_every_doc() -> None:
    assert len(README.splitlines()) <= README_MAX_LINES
    for doc in sorted(DOCS.glob("*.md")):
        assert f"](docs/{doc.name})" in README, doc.name


def test_every_setting_is_documented() -> None:
    for name in Settings.model_fields:
        assert f"DYNAMO_WEBHOOK_{name.upper()}" in CONFIGURATION
        assert f"--{name.replace('_', '-')}" in CONFIGURATION


def test_every_route_is_documented() -> None:
    documented = set(re.findall(r"`(?:POST )?(/[a-z0-9./-]+)`", CONFIGURATION))
    for route in WEBHOOK_ROUTES:
        assert route.path in documented, route.path


def test_every_command_is_documented() -> None:
    from app.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"dynamo-webhook {name}" in README, name
        assert f"dynamo-webhook {name}" in CONFIGURATION, name
    for heading in (
        "### `dynamo-webhook audit`",
        "### `dynamo-webhook storage-migrate`",
        "### RBAC for the tools",
    ):
        assert heading in OPERATIONS
    assert (
        "$ dynamo-webhook audit -A\n" in OPERATIONS
        and "$ dynamo-webhook storage-migrate --dry-run\n" in OPERATIONS
    )


def test_the_rule_settings_are_listed_as_the_commands_take_them() -> None:
    from app.server.settings import ADMISSION_FIELDS

    listed = (
        " ".join(CONFIGURATION.split())
        .split("The rule settings, ")[1]
        .split("same names, variables and defaults:")[1]
    )
    named = re.findall(r"`(--[a-z-]+)`", listed.split(".")[0])
    assert named == ["--" + name.replace("_", "-") for name in ADMISSION_FIELDS]


def test_the_worker_default_is_stated_as_serve_takes_it() -> None:
    """The default ``--workers`` (app/server/cpus.py, tested in tests/app/server/test_cpus.py) in the
    README, the settings table and ``--help`` (the field's description)."""
    readme = " ".join(README.split())
    assert (
        "`serve` starts one worker process per CPU it may use (its cgroup CPU quota rounded up, else its "
        "CPU affinity), as many as its memory limit holds; `serve --workers 1` serves from one process."
    ) in readme
    row = next(line for line in CONFIGURATION.splitlines() if line.startswith("| `--workers` "))
    assert "the CPUs the process may use, as many as its memory limit holds" in row
    assert "`1` runs one process, with no supervisor" in row
    description = Settings.model_fields["workers"].description or ""
    assert description.startswith(
        "Number of worker processes (1: one process serves, no supervisor). Default: "
        "the CPUs the process may use (its cgroup CPU quota rounded up"
    )
