"""``mergo.Merge(…, WithOverride)`` of typed views (expected values from Go itself)."""

from __future__ import annotations

from typing import Any

import pytest

from gocompat.mergo import merge_override

J = dict[str, Any]


def test_merge_takes_a_nil_pointer_whatever_it_points_at() -> None:
    dst: J = {"name": "main", "readinessProbe": {"periodSeconds": 3}}
    merge_override(
        "core/v1.Container", dst, {"readinessProbe": {"terminationGracePeriodSeconds": 0}, "stdin": False}
    )
    # *int64 pointing at 0 fills the nil destination pointer; a false bool never wins
    assert dst == {"name": "main", "readinessProbe": {"periodSeconds": 3, "terminationGracePeriodSeconds": 0}}
    dst = {"name": "main"}
    merge_override("core/v1.Container", dst, {"readinessProbe": {"terminationGracePeriodSeconds": 0}})
    assert dst == {"name": "main", "readinessProbe": {"terminationGracePeriodSeconds": 0}}


@pytest.mark.parametrize(
    ("dst", "src", "merged"),
    [("http", 8080, "http"), (80, "http", "http"), (80, 8080, 8080), (80, 0, 80), (80, "", "")],
)
def test_merge_of_int_or_string_is_field_by_field(dst: Any, src: Any, merged: Any) -> None:
    d: J = {"name": "m", "livenessProbe": {"httpGet": {"port": dst}}}
    merge_override("core/v1.Container", d, {"livenessProbe": {"httpGet": {"port": src}}})
    assert d["livenessProbe"]["httpGet"]["port"] == merged
