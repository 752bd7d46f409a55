"""app/server/build.py: which modules form the rule layer, and which build of it is imported.

The same tests run in both runs of ``scripts/test``: from the repository (the Python build) and
from the compiled tree (``scripts/compiled``), where every rule module must be an extension.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import runpy
from pathlib import Path

from app.server import build

ROOT = Path(__file__).resolve().parents[3]


def test_rule_modules_are_the_files_setup_compiles() -> None:
    # setup.py's list (what DYNAMO_WEBHOOK_COMPILE=1 compiles), read without running setup().
    sources = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")["compiled_sources"]()
    assert sources, "setup.py compiles nothing"
    as_modules = sorted(s.removesuffix(".py").replace("/", ".") for s in sources)
    assert build.rule_modules() == as_modules
    # every package of the layer is in it, and of app/ only the review path's pure modules (the
    # envelopes, the dispatch, the type check): HTTP, CLI and settings stay Python
    assert {m.split(".")[0] for m in as_modules} == {*build.COMPILED_PACKAGES, "app"}
    assert [m for m in as_modules if m.startswith("app.")] == [
        "app.review.dispatch",
        "app.review.errors",
        "app.review.reviews",
        "app.review.schema",
    ]


def test_build_kind_agrees_with_where_the_modules_come_from() -> None:
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    loaded = {name: importlib.import_module(name).__file__ or "" for name in build.rule_modules()}
    extensions = {name for name, path in loaded.items() if path.endswith(suffixes)}
    assert set(build.source_modules()) == set(loaded) - extensions
    expected = "python" if not extensions else "compiled" if extensions == set(loaded) else "mixed"
    assert build.build_kind() == expected
    if os.environ.get("DYNAMO_WEBHOOK_EXPECT_BUILD"):
        assert build.build_kind() == os.environ["DYNAMO_WEBHOOK_EXPECT_BUILD"]


def test_the_classes_built_for_every_review_have_an_init_the_build_compiles() -> None:
    # @dataclass generates __init__ as Python source that mypyc never sees: in the compiled build
    # it runs interpreted, several times slower than a compiled one. The classes every review
    # builds write theirs out (init=False); @dataclass still gives them == and repr.
    import dataclasses
    import types

    from app.review.dispatch import Outcome
    from app.review.reviews import Envelope
    from domain.admission import GVK, AdmissionInput, Decision, UserInfo
    from validation.dgd import Result
    from validation.shared import SharedOptions

    gvk = GVK("nvidia.com", "v1beta1", "DynamoGraphDeployment")
    built = {
        Envelope: lambda: Envelope("admission.k8s.io/v1", "u", {}),
        UserInfo: UserInfo,
        AdmissionInput: lambda: AdmissionInput("u", gvk, "CREATE"),
        Decision: lambda: Decision(True),
        Outcome: lambda: Outcome(b"{}"),
        SharedOptions: lambda: SharedOptions(False, False, "", False, False, False),
        Result: Result,
    }
    for cls, build_one in built.items():
        assert dataclasses.is_dataclass(cls)
        init = cls.__dict__["__init__"]
        if build.build_kind() == "compiled":
            assert not isinstance(init, types.FunctionType), f"{cls.__name__}.__init__ is interpreted"
        else:
            assert init.__code__.co_filename == importlib.import_module(cls.__module__).__file__, cls
        # it sets every field (repr reads them all), and == compares them
        one, other = build_one(), build_one()
        assert repr(one).startswith(f"{cls.__name__}(") and one == other
        assert all(f"{f.name}=" in repr(one) for f in dataclasses.fields(cls))
        for f in dataclasses.fields(cls):
            if cls is not Envelope and isinstance(getattr(one, f.name), (list, dict)):
                assert getattr(one, f.name) is not getattr(other, f.name)  # a fresh default each time


def test_no_interpreted_class_extends_a_class_of_the_rule_layer() -> None:
    # A class mypyc compiled cannot be extended by one Python interprets: in the compiled build
    # the subclass is created, but calling the compiled __init__ on it raises TypeError. What
    # stays Python (HTTP, CLI, certs, cluster tools, bench) therefore keeps its own classes.
    import inspect
    import pkgutil

    rule = set(build.rule_modules())
    offenders = []
    for package in ("app", "apiserver", "bench", "certs"):
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if info.name in rule:
                continue
            try:
                module = importlib.import_module(info.name)
            except ImportError:
                continue  # a tool with an optional dependency not installed here
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ != info.name:
                    continue
                offenders += [
                    f"{info.name}.{cls.__name__} extends {base.__module__}.{base.__name__}"
                    for base in cls.__mro__[1:]
                    if base.__module__ in rule
                ]
    assert offenders == []
