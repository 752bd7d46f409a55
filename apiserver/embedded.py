"""Embedded resources (``x-kubernetes-embedded-resource: true``): the ``apiVersion``, ``kind`` and
``metadata`` of an object held inside a custom resource (a DGDR's ``spec.overrides.dgd``), as the
API server decodes and validates them (apiextensions-apiserver ``schema/objectmeta``).

* decode (``CoerceWithOptions``): ``apiVersion`` and ``kind`` must be strings, ``metadata`` must
  decode into ObjectMeta (a failure is the request's 400, ``<path>.metadata: Invalid value: {...}:
  json: cannot unmarshal ...``); members ObjectMeta does not have are unknown fields (after the
  pruned ones), and the metadata is written back as ObjectMeta encodes (empty members and a zero
  ``creationTimestamp`` gone);
* validate (``validateEmbeddedResource``): ``apiVersion`` and ``kind`` required and non-empty, the
  group/version parsed, the kind a DNS-1035 label in any case, ``metadata`` through ObjectMeta's
  create validation with path-segment names (a namespace validated only when given).

The API server walks an embedded object's members in Go's random map order; this walk takes the
object's order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from apiserver import objectmeta
from apiserver.crds import Schema
from gocompat.fielderrors import ErrorType, FieldError, Path
from gocompat.jsonvalue import json_type

# ObjectMeta's members in its Go field order, as SetObjectMeta writes them back.
_ORDER = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")


class DecodeError(Exception):
    """The coercion's field error: the request cannot be decoded (400)."""


def _coerce_meta(holder: dict[str, Any], path: Path, unknown: list[str]) -> None:
    meta = holder["metadata"]
    if meta is None:
        holder["metadata"] = {}
        return
    if not isinstance(meta, dict):
        raise DecodeError(
            str(
                FieldError(
                    ErrorType.INVALID,
                    str(path.child("metadata")),
                    meta,
                    f"json: cannot unmarshal {json_type(meta, go=True)} into Go value of type v1.ObjectMeta",
                )
            )
        )
    for key, value in meta.items():
        # metav1.Time decodes itself; a timestamp of the wrong type is not modelled here.
        if key in objectmeta.KNOWN and key not in objectmeta.TIMES:
            problem = objectmeta.member_error(key, value, "ObjectMeta")
            if problem is not None:
                raise DecodeError(
                    str(FieldError(ErrorType.INVALID, str(path.child("metadata")), meta, problem))
                )
    unknown += sorted(str(path.child("metadata", key)) for key in meta if key not in objectmeta.KNOWN)
    holder["metadata"] = {key: meta[key] for key in _ORDER if key in meta and not _omitted(key, meta[key])}


def _omitted(key: str, value: Any) -> bool:
    """Whether ObjectMeta's JSON encoding leaves the member out (``omitempty``; a zero time is removed)."""
    if value is None:
        return True
    if key == "deletionGracePeriodSeconds":  # a pointer: 0 is written
        return False
    return value in ("", 0) or (isinstance(value, (dict, list)) and not value)


def _embedded_nodes(x: Any, s: Schema | None, path: Path) -> Iterator[tuple[dict[str, Any], Path]]:
    """Every embedded resource in ``x`` with its path, outer ones first."""
    if s is None:
        return
    if isinstance(x, dict):
        if s.embedded:
            yield x, path
        for key, value in list(x.items()):
            if key in s.properties:
                yield from _embedded_nodes(value, s.properties[key], path.child(key))
            elif s.additional is not None:
                yield from _embedded_nodes(value, s.additional, path.key(key))
    elif isinstance(x, list):
        for i, value in enumerate(x):
            yield from _embedded_nodes(value, s.items, path.index(i))


def coerce(obj: Any, schema: Schema) -> list[str]:
    """Check and normalise the embedded resources in ``obj`` (in place); the unknown metadata fields,
    sorted. :class:`DecodeError` when one cannot be decoded."""
    unknown: list[str] = []
    for node, path in _embedded_nodes(obj, schema, Path()):
        for key, value in list(node.items()):
            if key in ("apiVersion", "kind") and not isinstance(value, str):
                raise DecodeError(
                    str(FieldError(ErrorType.INVALID, str(path.child(key)), value, "must be a string"))
                )
            if key == "metadata":
                _coerce_meta(node, path, unknown)
    return sorted(unknown)


def validate(obj: Any, schema: Schema) -> list[FieldError]:
    """``schemaobjectmeta.Validate`` below the root: every embedded resource's type and object meta."""
    errs: list[FieldError] = []
    for node, path in _embedded_nodes(obj, schema, Path()):
        errs += _embedded(node, path)
    return errs


def _group_version_error(value: str) -> str | None:
    if value in ("", "/") or value.count("/") <= 1:
        return None
    return f"unexpected GroupVersion string: {value}"


def _kind_errors(kind: str) -> list[str]:
    lower = kind.lower()
    errs = ["must be no more than 63 characters"] if len(lower) > 63 else []
    if not _DNS1035.match(lower):
        errs.append(
            objectmeta.regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                "[a-z]([-a-z0-9]*[a-z0-9])?",
                "my-name",
                "abc-123",
            )
        )
    return errs


def _embedded(x: dict[str, Any], path: Path) -> list[FieldError]:
    errs = [
        FieldError(ErrorType.REQUIRED, str(path.child(key)), "", "")
        for key in ("apiVersion", "kind")
        if key not in x
    ]
    for key, value in x.items():
        where = str(path.child(key))
        if key == "apiVersion":
            problem = "must not be empty" if value == "" else _group_version_error(value)
            if problem is not None:
                errs.append(FieldError(ErrorType.INVALID, where, value, problem))
        elif key == "kind":
            if value == "":
                errs.append(FieldError(ErrorType.INVALID, where, value, "must not be empty"))
            elif kind_errs := _kind_errors(value):
                errs.append(
                    FieldError(
                        ErrorType.INVALID,
                        where,
                        value,
                        "may have mixed case, but should otherwise match: " + ",".join(kind_errs),
                    )
                )
        elif key == "metadata" and isinstance(value, dict):
            meta = {**value, "name": value.get("name") or "fakename"}
            errs += objectmeta.validate(
                meta, bool(meta.get("namespace")), where, objectmeta.path_segment_name
            )
    return errs
