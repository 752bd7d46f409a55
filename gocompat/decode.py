"""The exact text of the error Go's ``json.Unmarshal`` returns for a value of a Go type (or None):
the first type mismatch in document order (``json: cannot unmarshal string into Go struct field
PodCliqueSetSpec.spec.replicas of type int32``), unless a type with its own decoder (quantity,
time, duration, int-or-string) fails, which stops decoding at once and wins. Field paths name
JSON keys from the root and, for promoted fields of an embedded struct, the embedded field's Go
name (``VolumeSource.csi``), as Go does.
"""

from __future__ import annotations

from typing import Any

from gocompat.errors import Abort, Mismatch
from gocompat.leaves import _Bytes, _Duration, _Int, _IntOrString, _Node
from gocompat.nodes import _Map, _Ptr, _Slice, _Struct, node

__all__ = ["decode_error"]


class _Check:
    """One ``json.Unmarshal`` run: the first type mismatch, or the first decoder failure."""

    def __init__(self) -> None:
        self.saved: str | None = None
        self.struct: str | None = None
        self.path: list[str] = []

    def fail(self, exc: Mismatch) -> None:
        exc.struct = self.struct
        exc.path = list(self.path)
        if exc.aborts:
            raise Abort(exc.text())
        if self.saved is None:
            self.saved = exc.text()

    def value(self, n: _Node, v: Any) -> None:
        if v is None:
            if isinstance(n, _Duration):
                raise Abort('time: invalid duration ""')
            return
        if isinstance(n, _Ptr):
            self.value(n.elem, v)
        elif isinstance(n, _Struct):
            if type(v) is not dict:
                self.fail(n.mismatch(v))
                return
            outer, depth = self.struct, len(self.path)
            for k, x in v.items():
                f = n.field(k)
                if f is None:
                    continue
                self.struct = n.name
                self.path[depth:] = [*f.via, f.name]
                self.value(f.node, x)
            self.struct = outer
            del self.path[depth:]
        elif isinstance(n, _Slice):
            if type(v) is not list:
                self.fail(n.mismatch(v))
                return
            for x in v:
                if x is None and isinstance(n.elem, _Duration):
                    raise Abort('time: invalid duration ""')
                self.value(n.elem, x)
        elif isinstance(n, _Map):
            if type(v) is not dict:
                self.fail(n.mismatch(v))
                return
            for x in v.values():
                if x is None and isinstance(n.elem, _Duration):
                    raise Abort('time: invalid duration ""')
                self.value(n.elem, x)
        else:
            try:
                if isinstance(n, _Int | _IntOrString):
                    n.check(v)
                else:
                    n.view(v)
            except Mismatch as exc:
                self.fail(exc)
            except Abort as abort:
                if not isinstance(n, _Bytes):
                    raise
                # a bad base64 string is remembered like a type mismatch, not fatal
                if self.saved is None:
                    self.saved = str(abort)


def decode_error(expr: str, value: Any) -> str | None:
    """Go's ``json.Unmarshal`` error for decoding ``value`` into ``expr`` (``encoding/json``:
    field names match case-insensitively, unknown fields are ignored), or None."""
    check = _Check()
    try:
        check.value(node(expr), value)
    except Abort as exc:
        return str(exc)
    return check.saved
