"""The generated Go type tables compile, and are what the generator writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gocompat import nodes, tables_core, tables_grove

ROOT = Path(__file__).resolve().parents[2]
J = dict[str, Any]


@pytest.mark.parametrize("table", [tables_core, tables_grove], ids=["core", "grove"])
def test_every_type_a_table_names_is_defined(table: Any) -> None:
    nodes.register(tables_grove)
    for key in [*table.STRUCTS, *table.NAMED, *table.SPECIAL]:
        # compiling a type compiles every type it refers to (KeyError for an unknown one)
        assert nodes.node(key).display.endswith("." + key.rpartition(".")[2])
        assert key.rpartition(".")[0] in {**tables_core.PACKAGES, **tables_grove.PACKAGES}


def test_the_grove_table_does_not_repeat_the_core_table() -> None:
    assert not set(tables_grove.STRUCTS) & set(tables_core.STRUCTS)
    assert not set(tables_grove.NAMED) & set(tables_core.NAMED)


def _pinned_modules_cached() -> bool:
    if shutil.which("go") is None:
        return False
    cache = (
        os.environ.get("GOMODCACHE")
        or subprocess.run(
            ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False
        ).stdout.strip()
    )
    return all(
        (Path(cache) / m).is_dir()
        for m in (
            "k8s.io/api@v0.36.2",
            "k8s.io/apimachinery@v0.36.2",
            "github.com/ai-dynamo/grove/operator/api@v0.1.0-alpha.12-rc1",
            "sigs.k8s.io/gateway-api-inference-extension@v1.2.0",
        )
    )


@pytest.mark.skipif(not _pinned_modules_cached(), reason="the pinned Go modules are not in the module cache")
def test_the_checked_in_tables_are_what_the_generator_writes() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_gotypes.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
