"""app/build.py: which modules form the rule layer, and which build of it is imported.

The same tests run in both runs of ``scripts/test``: from the repository (the Python build) and
from the compiled tree (``scripts/compiled``), where every rule module must be an extension.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import runpy
from pathlib import Path

from app import build

ROOT = Path(__file__).resolve().parents[2]


def test_rule_modules_are_the_files_setup_compiles() -> None:
    # setup.py's list (what DYNAMO_WEBHOOK_COMPILE=1 compiles), read without running setup().
    sources = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")["compiled_sources"]()
    assert sources, "setup.py compiles nothing"
    as_modules = sorted(s.removesuffix(".py").replace("/", ".") for s in sources)
    assert build.rule_modules() == as_modules
    # every package of the layer is in it, and of app/ only the review path's pure modules (the
    # envelopes, the dispatch, the type check): HTTP, CLI and settings stay Python
    assert {m.split(".")[0] for m in as_modules} == {*build.COMPILED_PACKAGES, "app"}
    assert [m for m in as_modules if m.startswith("app.")] == ["app.dispatch", "app.errors", "app.reviews", "app.schema"]


def test_build_kind_agrees_with_where_the_modules_come_from() -> None:
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    loaded = {name: importlib.import_module(name).__file__ or "" for name in build.rule_modules()}
    extensions = {name for name, path in loaded.items() if path.endswith(suffixes)}
    assert set(build.source_modules()) == set(loaded) - extensions
    expected = "python" if not extensions else "compiled" if extensions == set(loaded) else "mixed"
    assert build.build_kind() == expected
    if os.environ.get("DYNAMO_WEBHOOK_EXPECT_BUILD"):
        assert build.build_kind() == os.environ["DYNAMO_WEBHOOK_EXPECT_BUILD"]

