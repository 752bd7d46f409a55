"""Which build of the rule layer is running: the Python sources, or the C extensions mypyc made of them.

The rule layer is the packages below, and the modules of ``app`` a review goes through between
its decoded body and its encoded answer (the envelopes, the dispatch, its errors, the structural
type check): pure functions on plain data, typed throughout (mypy --strict). ``setup.py``
compiles exactly these when ``DYNAMO_WEBHOOK_COMPILE=1`` (the image's build); Python then imports
each module's extension in place of its source. The rest of ``app`` (HTTP, CLI, settings) stays
Python. The answers are the same either way (the test suite runs against both builds); the
compiled one is faster.

The service logs the build at start and exports it as ``dynamo_webhook_build_info``; the test
suite refuses to run as the compiled build when any module would come from its source.
This file is read by ``setup.py`` without the package's dependencies: standard library only.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import pkgutil
from typing import Literal

COMPILED_PACKAGES = ("conversion", "defaulting", "domain", "gocompat", "kinds", "validation")
COMPILED_MODULES = ("app.review.dispatch", "app.review.errors", "app.review.reviews", "app.review.schema")


def rule_modules() -> list[str]:
    """The modules the compiled build compiles: the packages' (all but their inits) and the others."""
    names: list[str] = list(COMPILED_MODULES)
    for package in COMPILED_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError(f"package {package} is not importable")
        for info in pkgutil.walk_packages(spec.submodule_search_locations, prefix=f"{package}."):
            if not info.ispkg:
                names.append(info.name)
    return sorted(names)


def _is_extension(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    origin = spec.origin if spec is not None else None
    return origin is not None and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def source_modules() -> list[str]:
    """The rule-layer modules that would be (or were) loaded from their Python source."""
    return [name for name in rule_modules() if not _is_extension(name)]


def build_kind() -> Literal["compiled", "python", "mixed"]:
    """``compiled`` when every rule module is an extension, ``python`` when none is."""
    modules = rule_modules()
    compiled = sum(1 for name in modules if _is_extension(name))
    if compiled == 0:
        return "python"
    return "compiled" if compiled == len(modules) else "mixed"
