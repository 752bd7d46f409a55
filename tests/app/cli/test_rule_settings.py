"""The rule settings (feature gates, operator version, ...) are one model for every command that applies
the rules: ``serve``, ``lint``, ``review`` (with or without ``--apiserver``), ``convert --check`` and
``audit`` (tests/app/cluster/test_audit.py) each take the same flags, read the flag, else the
``DYNAMO_WEBHOOK_*`` variable, else the default, and answer differently when the setting changes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli.main import build_parser, main
from app.server.settings import ADMISSION_FIELDS, Settings
from tests.app.conftest import admission_review

ROOT = Path(__file__).resolve().parents[3]

#: A deployment whose worker asks for checkpointing: refused unless the Checkpoint gate is on.
CHECKPOINTED = yaml.safe_load((ROOT / "examples/manifests/dgd-agg-v1beta1.yaml").read_text())
CHECKPOINTED["spec"]["components"][1]["experimental"] = {"checkpoint": {"enabled": True}}
GATE_ERROR = "checkpoint functionality is disabled in the operator configuration"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("DYNAMO_WEBHOOK_"):
            monkeypatch.delenv(name)


def _write(tmp_path: Path, name: str, doc: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _lint(tmp_path: Path, extra: list[str]) -> int:
    return main(["lint", _write(tmp_path, "m.yaml", CHECKPOINTED), *extra])


def _review(tmp_path: Path, extra: list[str]) -> int:
    return main(["review", _write(tmp_path, "r.yaml", admission_review(CHECKPOINTED)), *extra])


def _review_apiserver(tmp_path: Path, extra: list[str]) -> int:
    return _review(tmp_path, ["--apiserver", *extra])


def _convert_check(tmp_path: Path, extra: list[str]) -> int:
    return main(
        [
            "convert",
            "--check",
            "--to",
            "nvidia.com/v1alpha1",
            _write(tmp_path, "m.yaml", CHECKPOINTED),
            *extra,
        ]
    )


def _serve(tmp_path: Path, extra: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """``serve`` with its server replaced by the app it would serve, sent the review in process."""
    from starlette.testclient import TestClient

    import app.server.serve
    from app.server.routes import AppState, create_app
    from domain.admission import AdmissionContext

    def answer(settings: Settings) -> int:
        state = AppState(
            settings=settings, admission=AdmissionContext(settings=settings.admission_settings())
        )
        with TestClient(create_app(state)) as client:
            response = client.post("/validate", json=admission_review(CHECKPOINTED))
        return 0 if response.json()["response"]["allowed"] else 1

    monkeypatch.setattr(app.server.serve, "serve", answer)
    return main(["serve", *extra])


COMMANDS: dict[str, Callable[..., int]] = {
    "lint": _lint,
    "review": _review,
    "review --apiserver": _review_apiserver,
    "convert --check": _convert_check,
}


def _run(command: str, tmp_path: Path, extra: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    if command == "serve":
        return _serve(tmp_path, extra, monkeypatch)
    return COMMANDS[command](tmp_path, extra)


@pytest.mark.parametrize("command", [*COMMANDS, "serve"])
def test_the_checkpoint_gate_from_flag_or_variable_flag_first(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(command, tmp_path, [], monkeypatch) == 1, "off by default, as serve"
    captured = capsys.readouterr()
    assert command == "serve" or GATE_ERROR in captured.out + captured.err
    assert _run(command, tmp_path, ["--feature-checkpoint"], monkeypatch) == 0
    monkeypatch.setenv("DYNAMO_WEBHOOK_FEATURE_CHECKPOINT", "true")
    assert _run(command, tmp_path, [], monkeypatch) == 0
    assert _run(command, tmp_path, ["--no-feature-checkpoint"], monkeypatch) == 1, "the flag wins"


def test_lint_takes_the_operator_version_and_gpu_discovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every rule setting reaches the rules: lint -o json names none, so its verdict is the witness."""
    seen: list[Any] = []
    import app.cli.offline

    real = app.cli.offline.OfflineService.__init__

    def spy(self: Any, settings: Settings) -> None:
        seen.append(settings.admission_settings())
        real(self, settings)

    monkeypatch.setattr(app.cli.offline.OfflineService, "__init__", spy)
    monkeypatch.setenv("DYNAMO_WEBHOOK_OPERATOR_VERSION", "1.2.3")
    path = _write(
        tmp_path, "m.yaml", yaml.safe_load((ROOT / "examples/manifests/dgd-agg-v1beta1.yaml").read_text())
    )
    assert main(["lint", path, "--no-feature-gpu-discovery", "--planner-service-account", "p"]) == 0
    assert main(["lint", path, "--operator-version", "2.0.0"]) == 0
    first, second = seen
    assert (first.operator_version, first.gpu_discovery, first.planner_service_account) == (
        "1.2.3",
        False,
        "p",
    )
    assert (second.operator_version, second.gpu_discovery) == ("2.0.0", True)


@pytest.mark.parametrize("command", ["serve", "lint", "review", "convert", "audit"])
def test_every_command_that_applies_the_rules_lists_the_same_flags(command: str) -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    text = " ".join(sub.choices[command].format_help().split())  # type: ignore[index]
    for name in ADMISSION_FIELDS:
        assert "--" + name.replace("_", "-") in text, name
        assert f"[env DYNAMO_WEBHOOK_{name.upper()}]" in text, name
    assert "(default: false)" in text and "(default: true)" in text
    if command != "serve":
        assert "rule settings (as for serve" in text


@pytest.mark.parametrize("command", ["lint", "review", "convert"])
def test_a_setting_that_is_not_valid_is_one_line(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DYNAMO_WEBHOOK_FEATURE_GROVE", "maybe")
    path = _write(tmp_path, "m.yaml", admission_review(CHECKPOINTED) if command == "review" else CHECKPOINTED)
    assert main([command, path]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"dynamo-webhook {command}: --feature-grove / DYNAMO_WEBHOOK_FEATURE_GROVE: Input should be "
        "a valid boolean, unable to interpret input (got 'maybe')\n"
    )
