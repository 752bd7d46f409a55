"""Build script. The package's metadata is in pyproject.toml; this file adds only the compiled build.

With ``DYNAMO_WEBHOOK_COMPILE=1`` in the environment, the rule layer (the modules named in
``app/server/build.py``: typed, pure functions on plain data) is compiled with mypyc into C extensions,
which Python imports in place of the sources beside them. It needs mypy (``requirements/compile.txt``)
and a C compiler; the image is built this way. Without the variable the build is pure Python and
needs nothing but setuptools: that is what ``scripts/bootstrap`` installs for development.
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent


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


if __name__ == "__main__":  # how setuptools runs it; the tests read compiled_sources alone
    setup(ext_modules=_compiled_extensions())
