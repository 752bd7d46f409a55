"""Hub-and-spoke conversion of one kind.

Every version of a kind converts to and from one hub version; a spoke version converts to another
spoke through the hub. A :class:`KindConverter` names the kind, its API group, its hub version and
its spokes; :func:`convert` is the one conversion of any object of the kind to any of its
versions (a new dict; the input is never mutated).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from conversion.errors import ConversionError
from gocompat.jsonvalue import deep_copy

__all__ = [
    "INTERNAL_ERROR",
    "KindConverter",
    "Reuse",
    "Spoke",
    "convert",
    "require_object",
    "unsupported",
    "without_managed_fields",
]

Obj = dict[str, Any]
# Upstream's text when a converter panics; the original exception stays chained to it (as
# __context__ in both builds: the compiled one does not set __cause__ from `raise ... from`).
INTERNAL_ERROR = "internal error occurred during conversion"


class Reuse:
    """What the conversions of one request's objects to the hub (an UPDATE's new and old object)
    may share: a spoke that takes it (:attr:`Spoke.reusing_to_hub`) keeps there the converted
    parts of one object, under keys naming their whole input (its JSON text, member order and
    value types included), and takes them back for the same input in the next object instead of
    converting it again. Only the spoke reads what it keeps, and the result is the same object
    either way."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: dict[Any, tuple[Any, Any]] = {}  # key -> (the input, its converted parts)

    @staticmethod
    def key(tag: str, value: Any, *context: Any) -> Any:
        """The key of converting ``value`` (by its JSON text) in ``context``; None when it has no
        JSON text (a map with keys that are not strings, as YAML may give): it is not kept."""
        try:
            return (tag, *context, orjson.dumps(value))
        except TypeError:
            return None

    def kept(self, key: Any, value: Any) -> Any:
        """The converted parts kept for ``value`` under ``key``, or None. The value is compared
        too: the JSON text of NaN is that of null."""
        entry = self.parts.get(key) if key is not None else None
        return entry[1] if entry is not None and entry[0] == value else None

    def keep(self, key: Any, value: Any, parts: Any) -> None:
        if key is not None:
            self.parts[key] = (value, parts)


@dataclass(frozen=True)
class Spoke:
    """The conversions of one spoke version: whole object in, new object out (the input is
    never mutated). ``reusing_to_hub``: ``to_hub`` sharing converted parts through a
    :class:`Reuse`, when the spoke has one."""

    to_hub: Callable[[Obj], Obj]
    from_hub: Callable[[Obj], Obj]
    reusing_to_hub: Callable[[Obj, Reuse], Obj] | None = None


@dataclass(frozen=True)
class KindConverter:
    """The versions of one kind: ``hub`` and ``spokes`` are version names (``"v1beta1"``).
    ``api_versions`` is every ``group/version`` of the kind (the spokes in their order, then the
    hub) and ``hub_api_version`` the hub's, both worked out once: every conversion reads them."""

    kind: str
    group: str
    hub: str
    spokes: Mapping[str, Spoke]
    api_versions: tuple[str, ...] = field(init=False, repr=False, compare=False)
    hub_api_version: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        versions = tuple(f"{self.group}/{v}" for v in (*self.spokes, self.hub))
        object.__setattr__(self, "api_versions", versions)
        object.__setattr__(self, "hub_api_version", f"{self.group}/{self.hub}")

    def convert(self, obj: Obj, desired_api_version: str, reuse: Reuse | None = None) -> Obj:
        """:func:`convert` with this converter."""
        return convert(self, obj, desired_api_version, reuse)


def require_object(obj: Any) -> Obj:
    """``obj`` itself, when it is a JSON object."""
    if not isinstance(obj, dict):
        raise ConversionError(f"cannot convert a {type(obj).__name__}: expected a JSON object")
    return obj


def without_managed_fields(obj: Obj) -> Obj:
    """``obj`` without ``metadata.managedFields`` (``obj`` itself when it has none; never mutated).

    No converter reads the field tracking of a stored object, often the bulk of its metadata,
    yet every spoke copies the metadata it converts: a caller that only reads the converted
    object (the admission rules), or that puts the source metadata back afterwards (the
    ConversionReview answer), converts this instead and saves that copy."""
    meta = obj.get("metadata")
    if type(meta) is not dict or "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def unsupported(kind: Any, desired_api_version: str, api_versions: tuple[str, ...]) -> ConversionError:
    """The error for an object whose kind has no converter (``api_versions``: those supported)."""
    if desired_api_version not in api_versions:
        return ConversionError(
            f"unsupported desired apiVersion {desired_api_version!r} for kind {kind!r}"
            f" (supported: {', '.join(api_versions)})"
        )
    return ConversionError(f"unsupported kind {kind!r} for conversion to {desired_api_version}")


def convert(converter: KindConverter, obj: Obj, desired_api_version: str, reuse: Reuse | None = None) -> Obj:
    """Convert one object of ``converter.kind`` to ``desired_api_version`` (a new dict).
    ``reuse``: shared with the conversion of another object of the same request (see
    :class:`Reuse`; the answer is the same without it).

    Raises :class:`ConversionError` with the review failure message; an unexpected exception in
    a spoke becomes :data:`INTERNAL_ERROR`, chained to that exception.
    """
    kind = require_object(obj).get("kind")
    version = obj.get("apiVersion")
    api_versions = converter.api_versions
    if desired_api_version not in api_versions or kind != converter.kind:
        raise unsupported(kind, desired_api_version, api_versions)
    if version not in api_versions:
        raise ConversionError(
            f"unsupported apiVersion {version!r} for kind {kind} (supported: {', '.join(api_versions)})"
        )
    if version == desired_api_version:
        # The apiserver never sends such objects; they pass through unchanged.
        return deep_copy(obj)  # type: ignore[no-any-return]
    hub = converter.hub_api_version
    try:
        out = obj
        if version != hub:
            spoke = converter.spokes[version.rpartition("/")[2]]
            if reuse is not None and spoke.reusing_to_hub is not None:
                out = spoke.reusing_to_hub(out, reuse)
            else:
                out = spoke.to_hub(out)
            if desired_api_version != hub:
                out["apiVersion"] = hub
                out["kind"] = kind
        if desired_api_version != hub:
            out = converter.spokes[desired_api_version.rpartition("/")[2]].from_hub(out)
    except ConversionError:
        raise
    except Exception as exc:
        raise ConversionError(INTERNAL_ERROR) from exc
    out["apiVersion"] = desired_api_version
    out["kind"] = kind
    return out
