"""Assertions on validation Decisions."""

from __future__ import annotations

from domain.admission import Decision


def invalid_message(kind: str, name: str, errors: list[str]) -> str:
    distinct = list(dict.fromkeys(errors))
    body = distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"
    return f'{kind}.nvidia.com "{name}" is invalid: {body}'


def assert_invalid(d: Decision, kind: str, name: str, errors: list[str]) -> None:
    assert not d.allowed, d
    assert d.code == 422, d.status
    assert d.status["reason"] == "Invalid"
    assert d.message == invalid_message(kind, name, errors)
    assert [f"{c['field']}: {c['message']}" for c in d.status["details"]["causes"]] == errors


def assert_allowed(d: Decision, warnings: list[str] | None = None) -> None:
    assert d.allowed, d.status
    assert d.status == {"code": 200}
    assert d.warnings == (warnings or [])
