"""The packages the project ships, as the tests read them: the top-level names setup.py derives
from pyproject.toml's one list, and every package setuptools finds with that list."""

from __future__ import annotations

import runpy
import tomllib
from collections.abc import Callable
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]

#: ``top_level_packages(root)``: the top-level packages the pyproject.toml in ``root`` ships, sorted.
top_level_packages: Callable[[Path], list[str]] = runpy.run_path(
    str(ROOT / "setup.py"), run_name="setup_read"
)["top_level_packages"]
#: The project's top-level packages (``apiserver``, ``app``...), sorted.
PACKAGES: tuple[str, ...] = tuple(top_level_packages(ROOT))


def pyproject(root: Path = ROOT) -> dict[str, object]:
    return tomllib.loads((root / "pyproject.toml").read_text())


def shipped_packages(root: Path = ROOT) -> list[str]:
    """Every package (``app.cli``...) setuptools finds with pyproject's ``packages.find``."""
    find = pyproject(root)["tool"]["setuptools"]["packages"]["find"]  # type: ignore[index]
    assert find.get("namespaces") is False, "packages.find: namespaces = false (a package has an __init__.py)"
    names: list[str] = []
    for where in find.get("where", ["."]):
        names += find_packages(
            where=str(root / where), include=find["include"], exclude=find.get("exclude", ())
        )
    return sorted(names)
