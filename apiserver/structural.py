"""What the API server's decoder does to a custom object with its version's structural schema:
pruning (with the paths of what it dropped, which strict field validation reports as unknown
fields), dropping ``null`` values the schema does not allow and has no default for, and applying the
schema's defaults.

The walks follow apiextensions-apiserver's ``pruning.PruneWithOptions``,
``defaulting.PruneNonNullableNullsWithoutDefaults`` and ``defaulting.Default``: the root and every
``x-kubernetes-embedded-resource`` keep their ``apiVersion``, ``kind`` and ``metadata``; a node with
``x-kubernetes-preserve-unknown-fields`` keeps what it does not describe but its described members
are still walked; unknown paths are sorted as strings, as the API server sorts them.
"""

from __future__ import annotations

import copy
from typing import Any

from apiserver.crds import Schema

_META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def prune(obj: dict[str, Any], schema: Schema) -> list[str]:
    """Drop from ``obj`` (in place) every member ``schema`` does not describe; the dropped paths,
    sorted (``spec.components[0].replicsa``)."""
    found: list[str] = []
    _prune(obj, schema, "", found, root=True)
    return sorted(found)


def _prune(x: Any, s: Schema | None, path: str, found: list[str], root: bool = False) -> None:
    if s is not None and s.preserve_unknown:
        _skip_prune(x, s, path, found, root)
        return
    if isinstance(x, dict):
        if s is None:
            for k in list(x):
                found.append(_join(path, k))
                del x[k]
            return
        embedded = root or s.embedded
        for k in list(x):
            if embedded and k in _META_FIELDS:
                continue
            prop = s.properties.get(k)
            if prop is not None:
                _prune(x[k], prop, _join(path, k), found)
            elif s.additional is not None:
                _prune(x[k], s.additional, _join(path, k), found)
            else:
                if k not in _META_FIELDS or path:
                    found.append(_join(path, k))
                del x[k]
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _prune(v, s.items if s is not None else None, f"{path}[{i}]", found)


def _skip_prune(x: Any, s: Schema, path: str, found: list[str], root: bool) -> None:
    if isinstance(x, dict):
        for k, v in x.items():
            if (root or s.embedded) and k in _META_FIELDS:
                continue
            prop = s.properties.get(k)
            if prop is not None:
                _prune(v, prop, _join(path, k), found)
            elif s.additional is not None:
                _prune(v, s.additional, _join(path, k), found)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            if s.items is not None:
                _skip_prune(v, s.items, f"{path}[{i}]", found, False)


def _child(s: Schema, key: str) -> Schema | None:
    prop = s.properties.get(key)
    return prop if prop is not None else s.additional


def drop_nulls(x: Any, s: Schema | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``: a ``null`` member or item whose schema is neither
    nullable nor defaulted is removed (a list item is kept: lists are not compacted)."""
    if s is None:
        return
    if isinstance(x, dict):
        for k in list(x):
            sub = _child(s, k)
            if sub is None:
                continue
            if x[k] is None and not sub.nullable and not sub.has_default:
                del x[k]
            else:
                drop_nulls(x[k], sub)
    elif isinstance(x, list) and s.items is not None:
        for v in x:
            drop_nulls(v, s.items)


def apply_defaults(x: Any, s: Schema | None) -> None:
    """``defaulting.Default``: absent members (and non-nullable nulls) with a default get a copy of
    it, then every member is walked, defaults included."""
    if s is None:
        return
    if isinstance(x, dict):
        for k, prop in s.properties.items():
            if prop.has_default and (k not in x or (x[k] is None and not prop.nullable)):
                x[k] = copy.deepcopy(prop.default)
        for k, v in x.items():
            apply_defaults(v, _child(s, k))
    elif isinstance(x, list):
        for v in x:
            apply_defaults(v, s.items)
