"""Go's decode errors: the exception types and the text of ``json.UnmarshalTypeError``."""

from __future__ import annotations

__all__ = ["Abort", "GoTypeError", "Mismatch", "number_text", "unmarshal_text"]


class GoTypeError(ValueError):
    """A JSON value does not decode into its Go type (the message is Go's, or close to it)."""


def unmarshal_text(value: str, go_type: str, field: str | None = None) -> str:
    """The text of Go's ``json.UnmarshalTypeError``: ``json: cannot unmarshal <value> into Go
    struct field <field> of type <go_type>`` (``into Go value`` when no field is named)."""
    where = "Go value" if field is None else f"Go struct field {field}"
    return f"json: cannot unmarshal {value} into {where} of type {go_type}"


def number_text(v: int | float) -> str:
    """A JSON number as Go's decoder quotes it in an error (``number 1.5``, ``number -1.0``)."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return f"{v:.1f}"
    return str(v) if isinstance(v, int) else repr(v)


class Mismatch(Exception):
    """A Go ``UnmarshalTypeError``; ``struct``/``path`` are filled in on the way out."""

    def __init__(self, value: str, type_name: str, aborts: bool = False) -> None:
        super().__init__(value)
        self.value = value
        self.type_name = type_name
        self.aborts = aborts
        self.struct: str | None = None
        self.path: list[str] = []

    def text(self) -> str:
        if self.struct is not None or self.path:
            return unmarshal_text(self.value, self.type_name, f"{self.struct or ''}.{'.'.join(self.path)}")
        return unmarshal_text(self.value, self.type_name)


class Abort(Exception):
    """An error from a type's own decoder that is not a type mismatch: decoding stops."""
