"""The generated Go type tables compile (that they are what the generator writes: scripts/generate --check)."""

from __future__ import annotations

from typing import Any

import pytest

from gocompat import nodes, tables_core, tables_grove

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
