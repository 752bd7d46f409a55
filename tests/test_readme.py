"""The README stays true: its quick-start commands exist, and it documents every setting and
every webhook path the app serves."""

from __future__ import annotations

import os
import re
from pathlib import Path

from app.review.webhooks import WEBHOOK_ROUTES
from app.server.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_quick_start_is_two_executable_commands() -> None:
    block = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["scripts/serve", "scripts/test"]
    for command in commands:
        assert os.access(ROOT / command, os.X_OK)
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_every_setting_is_documented() -> None:
    for name in Settings.model_fields:
        assert f"DYNAMO_WEBHOOK_{name.upper()}" in README
        assert f"--{name.replace('_', '-')}" in README


def test_every_route_is_documented() -> None:
    documented = set(re.findall(r"`(?:POST )?(/[a-z0-9./-]+)`", README))
    for route in WEBHOOK_ROUTES:
        assert route.path in documented, route.path


def test_every_command_is_documented() -> None:
    from app.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"dynamo-webhook {name}" in README, name
    for heading in ("### `dynamo-webhook audit`", "### `dynamo-webhook storage-migrate`", "### RBAC for the tools"):
        assert heading in README
    assert "$ dynamo-webhook audit -A\n" in README and "$ dynamo-webhook storage-migrate --dry-run\n" in README
