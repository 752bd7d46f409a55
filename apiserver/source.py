"""Manifests read with the position of every field: which line and column of which file a field
path of an API-server message points to.

The documents are composed with PyYAML (JSON is read the same way, as kubectl reads it) and built
with :class:`Loader`, which reads scalars as kubectl does (go-yaml v2's resolution); the composed
nodes give each member's key position and each list item's position. A key written twice in one mapping keeps its
last value, as kubectl's YAML-to-JSON conversion does, and is reported so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from gocompat import goyaml
from gocompat.gotext import go_format_float

PathKey = tuple[str | int, ...]


_GO_PLAIN = "tag:dynamo-webhook,2026:go-yaml-plain"
_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"
#: The API server's limit on a request body: kubectl create sends one object as JSON.
MAX_OBJECT_BYTES = 3 * 1024 * 1024
#: A document whose JSON takes at least this much (twice the object limit, so that keys written
#: twice, counted each time, never refuse one that is within it) is refused while it is composed.
MAX_DOCUMENT_FLOOR = 2 * MAX_OBJECT_BYTES
_NUMERIC_START = frozenset("0123456789+-.")


class DocumentTooLarge(yaml.YAMLError):
    """A document that no Kubernetes object can be, found before all of it was composed."""

    def __init__(self, mark: yaml.Mark) -> None:
        super().__init__(f"more than {MAX_DOCUMENT_FLOOR} bytes as JSON")
        self.mark = mark


def _json_floor(node: yaml.Node) -> int:
    """Bytes ``node`` takes as JSON at the least, its own brackets (one of a collection's two: the
    separators counted with its members over-count it by one) or text: a string with its quotes, a
    plain scalar that may be a number (``0x10``, ``1.0``) one byte, any other plain scalar (a string,
    a boolean, null) its length."""
    if not isinstance(node, yaml.ScalarNode):
        return 1
    if node.tag == _STR:
        return len(node.value) + 2
    if node.tag == _GO_PLAIN and node.value and node.value[0] not in _NUMERIC_START:
        return len(node.value)
    return 1


class Loader(yaml.SafeLoader):
    """Safe YAML loader that reads manifests as kubectl does: plain scalars resolved as go-yaml v2
    resolves them (:func:`gocompat.goyaml.resolve`: ``y`` is true, ``1e3`` a number, timestamps
    strings), and mapping keys given the JSON names kubectl's YAML-to-JSON conversion gives them
    (integers and floats as Go formats them, booleans as ``true``/``false``); any other key (null, a
    list, a mapping) is an error there too, and so is a NaN or an infinity (JSON cannot hold it)."""

    #: Refuse a document past :data:`MAX_DOCUMENT_FLOOR` while composing it (set by :func:`documents`).
    capped = False
    _floor = 0

    def compose_document(self) -> yaml.Node | None:
        self._floor = 0
        return super().compose_document()

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """The node, its JSON size at the least (:func:`_json_floor`, and the separator before it)
        added to the document's; past :data:`MAX_DOCUMENT_FLOOR` (when ``capped``) the composing stops,
        in memory bounded by that size rather than the file's."""
        node = super().compose_node(parent, index)
        if self.capped and node is not None:
            self._floor += _json_floor(node) + (parent is not None)
            if self._floor > MAX_DOCUMENT_FLOOR:
                raise DocumentTooLarge(node.start_mark)
        return node

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            return _MERGE if value == "<<" else _GO_PLAIN
        resolved: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        return resolved

    def construct_go_plain(self, node: yaml.ScalarNode) -> Any:
        value = goyaml.resolve(node.value)
        if isinstance(value, float) and not math.isfinite(value):
            raise yaml.constructor.ConstructorError(
                None, None, f"json: unsupported value: {go_format_float(value)}", node.start_mark
            )
        return value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float)):
                shown = "<nil>" if key is None else type(key).__name__
                raise yaml.constructor.ConstructorError(
                    None, None, f"unsupported map key of type: {shown}", key_node.start_mark
                )
            mapping[_json_key(key)] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_document(self, node: yaml.Node) -> Any:
        return unaliased(super().construct_document(node))


# go-yaml v2's bounds on alias expansion: below 400,000 nodes 99 % may come from aliases, above
# 4,000,000 only 10 %, linearly in between (and never refused below 1,000 nodes or 100 aliased ones).
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(count: int) -> float:
    if count <= _ALIAS_LOW:
        return 0.99
    if count >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (count - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


def unaliased(value: Any) -> Any:
    """``value`` with every alias expanded into a copy of its own, as go-yaml decodes aliases (each
    place then holds its own value, and what a later step changes at one place it changes there
    only). An anchor holding itself and excessive aliasing (a "billion laughs" document) are refused
    as go-yaml refuses them, before any memory is spent on the expansion."""
    seen: set[int] = set()
    open_ids: set[int] = set()
    counts = [0, 0]  # nodes decoded, of which from aliases

    def copy(x: Any, in_alias: bool) -> Any:
        counts[0] += 1
        if in_alias:
            counts[1] += 1
        if counts[1] > 100 and counts[0] > 1000 and counts[1] / counts[0] > _allowed_alias_ratio(counts[0]):
            raise yaml.constructor.ConstructorError(None, None, "document contains excessive aliasing")
        if not isinstance(x, (dict, list)):
            return x
        ident = id(x)
        if ident in open_ids:
            raise yaml.constructor.ConstructorError(None, None, "an anchor's value contains itself")
        in_alias = in_alias or ident in seen
        seen.add(ident)
        open_ids.add(ident)
        if isinstance(x, dict):
            out: Any = {k: copy(v, in_alias) for k, v in x.items()}
        else:
            out = [copy(v, in_alias) for v in x]
        open_ids.discard(ident)
        return out

    return copy(value, False)


Loader.add_constructor(_GO_PLAIN, Loader.construct_go_plain)
Loader.add_constructor(_MERGE, lambda loader, node: node.value)  # ``<<`` as a value is a string


class Dumper(yaml.SafeDumper):
    """Safe YAML dumper whose output kubectl reads back as written: a string go-yaml would read as
    something else (``y``, ``1e3``, ``0755``) is quoted."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if goyaml.resolve(data) != data or not isinstance(goyaml.resolve(data), str):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


Dumper.add_representer(str, _represent_str)


def _json_key(key: str | int | float) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return go_format_float(key)
    return key


class SourceError(Exception):
    """The text is not YAML or JSON; the message names the line and column."""


@dataclass(slots=True)
class Located:
    """One document: its value, its 1-based number in the file, the 1-based line and column of
    every field path, and the paths of keys written twice."""

    body: Any
    number: int
    line: int
    positions: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    duplicates: list[PathKey] = field(default_factory=list)

    def position(self, path: PathKey) -> tuple[int, int]:
        """The position of ``path``, or of its nearest ancestor that has one."""
        while path:
            found = self.positions.get(path)
            if found is not None:
                return found
            path = path[:-1]
        return self.line, 1


def _walk(node: yaml.Node, path: PathKey, doc: Located) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
            child = (*path, name)
            if name in seen:
                doc.duplicates.append(child)
            seen.add(name)
            doc.positions[child] = (key.start_mark.line + 1, key.start_mark.column + 1)
            _walk(value, child, doc)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            child = (*path, i)
            doc.positions[child] = (item.start_mark.line + 1, item.start_mark.column + 1)
            _walk(item, child, doc)


def _problem(source: str, exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    text = f"{problem} ({context})" if context else str(problem)
    if mark is not None:
        return f"{source}:{mark.line + 1}:{mark.column + 1}: not valid YAML or JSON: {text}"
    return f"{source}: not valid YAML or JSON: {text}"


def _unreadable(source: str, exc: yaml.reader.ReaderError) -> str:
    return f"{source}: not valid YAML or JSON: character {exc.character!r} at offset {exc.position}: {exc.reason}"


def documents(text: str, source: str) -> list[Located]:
    """Every non-empty document of ``text`` with its positions; raises :class:`SourceError`, for a
    document past :data:`MAX_DOCUMENT_FLOOR` too (no object can be that large, and composing it
    whole would hold tens of times its size)."""
    out: list[Located] = []
    try:
        loader = Loader(text)
    except yaml.reader.ReaderError as exc:
        raise SourceError(_unreadable(source, exc)) from None
    loader.capped = True
    number = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            number += 1
            if node is None:
                continue
            body = loader.construct_document(node)
            if body is None:
                continue
            doc = Located(body, number, node.start_mark.line + 1)
            _walk(node, (), doc)
            out.append(doc)
    except yaml.reader.ReaderError as exc:
        raise SourceError(_unreadable(source, exc)) from None
    except DocumentTooLarge as exc:
        raise SourceError(
            f"{source}:{exc.mark.line + 1}:{exc.mark.column + 1}: too large: document {number + 1} is more "
            f"than {MAX_DOCUMENT_FLOOR} bytes as JSON, twice the API server's limit on an object"
        ) from None
    except yaml.YAMLError as exc:
        raise SourceError(_problem(source, exc)) from None
    except RecursionError:
        raise SourceError(f"{source}: not valid YAML or JSON: nested too deeply") from None
    finally:
        loader.dispose()
    return out


_SEGMENT = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


def parse_field(path: str) -> PathKey:
    """``spec.components[0].podTemplate.metadata.annotations[key]`` as a path key; ``<nil>`` and
    an empty path are the document itself. A leading dot (the scale subresource's ``.spec.replicas``)
    is ignored."""
    if path in ("", "<nil>"):
        return ()
    out: list[str | int] = []
    for name, index in _SEGMENT.findall(path):
        if name:
            out.append(name)
        elif index.isdigit():
            out.append(int(index))
        else:
            out.append(index)
    return tuple(out)
