"""Build script. The package's metadata is in pyproject.toml; this file adds only the compiled build.

With ``DYNAMO_WEBHOOK_COMPILE=1`` in the environment, the rule layer (the modules named in
``app/server/build.py``: typed, pure functions on plain data) is compiled with mypyc into C extensions,
which Python imports in place of the sources beside them. It needs mypy (``requirements/compile.txt``)
and a C compiler; the image is built this way. Without the variable the build is pure Python and
needs nothing but setuptools: that is what ``scripts/bootstrap`` installs for development.

The packages are pyproject.toml's ``[tool.setuptools.packages.find]`` list; a top-level package it
names whose directory is missing (a build context without it) stops the build rather than making a
wheel without it. :func:`top_level_packages` is that list for the scripts and the tests.
"""

from __future__ import annotations

import os
import re
import runpy
import sys
import tomllib
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def top_level_packages(root: Path = ROOT) -> list[str]:
    """The top-level packages pyproject.toml in ``root`` ships, sorted: the names its
    ``packages.find`` includes, each as ``NAME`` and ``NAME.*`` (another pattern is refused, so
    that the list stays explicit)."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    names = set()
    for pattern in setuptools["packages"]["find"]["include"]:
        match = re.fullmatch(r"([A-Za-z_]\w*)(\.\*)?", pattern)
        if not match:
            raise SystemExit(f"pyproject.toml: packages.find include {pattern!r} is not NAME or NAME.*")
        names.add(match.group(1))
    return sorted(names)


def missing_packages(root: Path = ROOT) -> list[str]:
    return [name for name in top_level_packages(root) if not (root / name / "__init__.py").is_file()]


def compiled_sources() -> list[str]:
    """The files the compiled build compiles: every module of the rule layer but package inits."""
    # app/server/build.py is read as a file: importing the `app` package would need its dependencies.
    build = runpy.run_path(str(ROOT / "app" / "server" / "build.py"))
    return sorted(
        [
            path.relative_to(ROOT).as_posix()
            for package in build["COMPILED_PACKAGES"]
            for path in (ROOT / package).rglob("*.py")
            if path.name != "__init__.py"
        ]
        + [module.replace(".", "/") + ".py" for module in build["COMPILED_MODULES"]]
    )


def _compiled_extensions() -> list[Any]:
    if os.environ.get("DYNAMO_WEBHOOK_COMPILE", "") != "1":
        return []
    from mypyc.build import mypycify

    # multi_file: one C file per module, so the C compiler can work on several at once.
    return list(mypycify(compiled_sources(), opt_level="3", multi_file=True))


if __name__ == "__main__" and sys.argv[1:] == ["--packages"]:  # scripts/compiled reads the list
    print("\n".join(top_level_packages()))
elif __name__ == "__main__":  # how setuptools runs it; the tests read the functions alone
    if missing := missing_packages():
        sys.exit(f"setup.py: package directory {', '.join(f'./{name}' for name in missing)} does not exist")
    setup(ext_modules=_compiled_extensions())
