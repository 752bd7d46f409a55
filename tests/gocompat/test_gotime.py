"""Go's ``time.Parse(time.RFC3339, …)`` as ``metav1.Time`` prints it."""

from __future__ import annotations

import pytest

from gocompat.decoding import decode
from gocompat.errors import GoTypeError
from gocompat.gotime import go_time


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z"),
        ("2024-01-01t00:00:00z", "2024-01-01T00:00:00Z"),
        ("2024-01-01T00:00:00.5+05:00", "2023-12-31T19:00:00Z"),
        # time.Parse(time.RFC3339, …) refuses each of these.
        ("2024-02-30T00:00:00Z", None),
        ("2024-01-01T24:00:00Z", None),
        ("2024-01-01T00:00:60Z", None),
        ("2024-01-01T00:00:00+0500", None),
        ("2024-01-01T00:00:00+05", None),
        ("2024-01-01T00:00:00.Z", None),
        ("2024-01-01T00:00:00,5Z", None),
        ("2024-01-01T00:00:00", None),
    ],
)
def test_one_go_time_parser_for_the_tables_and_the_schema_vocabulary(text: str, printed: str | None) -> None:
    """The Kubernetes tables and the ``"time"`` kind of the schema vocabulary (the DGDR types)
    parse times with the same function, as Go does."""
    if printed is None:
        with pytest.raises(ValueError):
            go_time(text)
        with pytest.raises(GoTypeError):
            decode(text, "time")
    else:
        assert go_time(text) == printed
        assert decode(text, "time") == printed
