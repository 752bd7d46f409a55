"""A custom object's ``metadata`` as kubectl and the API server take it: decoded into ObjectMeta by
kubectl first (a value of the wrong JSON type fails there, before any request), strictly by the API
server (an unknown member is an unknown field), and validated
on create (``ValidateObjectMetaAccessor`` with DNS-subdomain names: name or generateName, namespace,
labels, annotations, finalizers), in apimachinery's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gocompat.fielderrors import ErrorType, FieldError, aggregate_message
from gocompat.jsonvalue import json_type

_STRINGS = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
)
_INTEGERS = ("generation", "deletionGracePeriodSeconds")
_STRING_MAPS = ("labels", "annotations")
_LISTS = ("finalizers", "ownerReferences", "managedFields")
KNOWN = frozenset((*_STRINGS, *_INTEGERS, *_STRING_MAPS, *_LISTS))

_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_ANNOTATIONS_LIMIT = 256 * 1024


#: ObjectMeta's members of type metav1.Time (read as strings by kubectl's decode).
TIMES = ("creationTimestamp", "deletionTimestamp")


def member_error(key: str, value: Any, struct: str) -> str | None:
    """Go's ``json.Unmarshal`` error for the ObjectMeta member ``key`` holding ``value`` (a member
    ObjectMeta has: :data:`KNOWN`), or None; ``struct`` is the struct field's prefix in the message
    (kubectl's ``ObjectMeta.metadata``, the API server's ``ObjectMeta``)."""

    def mismatch(bad: Any, go_type: str) -> str:
        return f"json: cannot unmarshal {json_type(bad, go=True)} into Go struct field {struct}.{key} of type {go_type}"

    if value is None:
        return None
    if key in _STRINGS and not isinstance(value, str):
        return mismatch(value, "string")
    if key in _INTEGERS and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return mismatch(value, "int64")
    if key in _STRING_MAPS:
        if not isinstance(value, dict):
            return mismatch(value, "map[string]string")
        for v in value.values():
            if v is not None and not isinstance(v, str):
                return mismatch(v, "string")
    if key in _LISTS and not isinstance(value, list):
        return mismatch(value, "[]string" if key == "finalizers" else f"[]v1.{_ITEM_TYPES[key]}")
    if key == "finalizers":
        for v in value:
            if v is not None and not isinstance(v, str):
                return mismatch(v, "string")
    return None


def decode_error(meta: Any) -> str | None:
    """The error of kubectl's own typed decode of ``metadata`` (before it sends anything), or None."""
    if not isinstance(meta, dict):
        if meta is None:
            return None
        return (
            f"json: cannot unmarshal {json_type(meta, go=True)} into Go struct field metadataOnlyObject.metadata "
            "of type v1.ObjectMeta"
        )
    for key, value in meta.items():
        problem = member_error(key, value, "ObjectMeta.metadata")
        if problem is not None:
            return problem
    return None


_ITEM_TYPES = {"ownerReferences": "OwnerReference", "managedFields": "ManagedFieldsEntry"}


def unknown_fields(meta: Any) -> list[str]:
    """``metadata.<member>`` for every member ObjectMeta does not have."""
    if not isinstance(meta, dict):
        return []
    return [f"metadata.{k}" for k in meta if k not in KNOWN]


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(limit: int, unit: str) -> str:
    """apimachinery's ``MaxLenError``: ``util/validation``'s (names, namespaces) counts characters,
    ``api/validate/content``'s (label keys and values, qualified names) bytes."""
    return f"must be no more than {limit} {unit}"


def dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(value.encode()) > 253:
        errs.append(_max_len(253, unit))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(
            regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character",
                r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
                "example.com",
            )
        )
    return errs


def dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value.encode()) > 63:
        errs.append(_max_len(63, "characters"))
    if _DNS1123_SUBDOMAIN.match(value) and not _DNS1123_LABEL.match(value):
        errs.append("must not contain dots")
    elif not _DNS1123_LABEL.match(value):
        errs.append(
            regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                "and must start and end with an alphanumeric character",
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
                "my-name",
                "123-abc",
            )
        )
    return errs


_QUALIFIED_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"


def qualified_name(value: str) -> list[str]:
    """``content.IsLabelKey`` (``IsQualifiedName``): an optional DNS-subdomain prefix and a name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += [f"prefix part {m}" for m in dns1123_subdomain(prefix, "bytes")]
    else:
        return [
            "a valid label key "
            + regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + _max_len(63, "bytes"))
    if not _QUALIFIED_NAME.match(name):
        errs.append(
            "name part " + regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value(value: str) -> list[str]:
    """``content.IsLabelValue``."""
    errs = []
    if len(value.encode()) > 63:
        errs.append(_max_len(63, "bytes"))
    if not _LABEL_VALUE.match(value):
        errs.append(
            regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character",
                "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def _invalid(field: str, value: Any, msgs: list[str]) -> list[FieldError]:
    return [FieldError(ErrorType.INVALID, field, value, m) for m in msgs]


def subdomain_name(value: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain``: a ``generateName`` (``prefix``) is checked with its trailing dash masked."""
    return dns1123_subdomain(value[:-1] + "a" if prefix and value.endswith("-") else value)


def path_segment_name(value: str, prefix: bool) -> list[str]:
    """``path.ValidatePathSegmentName``: the names of embedded resources."""
    if not prefix and value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in value]


def validate(
    meta: dict[str, Any],
    namespaced: bool,
    prefix: str = "metadata",
    name_check: Callable[[str, bool], list[str]] = subdomain_name,
) -> list[FieldError]:
    """``ValidateObjectMetaAccessor(meta, namespaced, name_check, prefix)`` on create (DNS-subdomain
    names for the object itself)."""
    errs: list[FieldError] = []
    generate = meta.get("generateName") or ""
    name = meta.get("name") or ""
    if generate:
        errs += _invalid(f"{prefix}.generateName", generate, name_check(generate, True))
    if not name:
        errs.append(FieldError(ErrorType.REQUIRED, f"{prefix}.name", "", "name or generateName is required"))
    else:
        errs += _invalid(f"{prefix}.name", name, name_check(name, False))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(FieldError(ErrorType.REQUIRED, f"{prefix}.namespace", "", ""))
        else:
            errs += _invalid(f"{prefix}.namespace", namespace, dns1123_label(namespace))
    elif namespace:
        errs.append(FieldError(ErrorType.FORBIDDEN, f"{prefix}.namespace", "", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, (int, float)) and generation < 0:
        errs.append(
            FieldError(
                ErrorType.INVALID,
                f"{prefix}.generation",
                int(generation),
                "must be greater than or equal to 0",
            )
        )
    errs += label_errors(meta.get("labels") or {}, f"{prefix}.labels")
    errs += annotation_errors(meta.get("annotations") or {}, f"{prefix}.annotations")
    for finalizer in meta.get("finalizers") or []:
        errs += _invalid(f"{prefix}.finalizers", finalizer or "", qualified_name(finalizer or ""))
    return errs


def label_errors(labels: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateLabels``: each key a qualified name, each value a label value."""
    errs: list[FieldError] = []
    for key, value in labels.items():
        errs += _invalid(path, key, qualified_name(key))
        errs += _invalid(path, value or "", label_value(value or ""))
    return errs


def annotation_errors(annotations: dict[str, Any], path: str) -> list[FieldError]:
    """``ValidateAnnotations``: each key a qualified name in lower case, then their total size."""
    errs: list[FieldError] = []
    for key in annotations:
        errs += _invalid(path, key, qualified_name(key.lower()))
    size = sum(len(k.encode()) + len((v or "").encode()) for k, v in annotations.items())
    if size > _ANNOTATIONS_LIMIT:
        errs.append(
            FieldError(
                ErrorType.TOO_LONG,
                path,
                "<value omitted>",
                f"may not be more than {_ANNOTATIONS_LIMIT} bytes",
            )
        )
    return errs


def converted_metadata_error(original: Any, converted: Any) -> str | None:
    """The conversion webhook's ``restoreObjectMeta``: the labels and annotations of the converted
    object are validated when they differ from the original's (``metadata.annotation`` is its path);
    the error, or None."""
    if not isinstance(converted, dict):
        return None
    for key, path in (("labels", "metadata.labels"), ("annotations", "metadata.annotation")):
        response = converted.get(key)
        if response is None:
            continue
        if not isinstance(response, dict) or not all(isinstance(v, str) for v in response.values()):
            return None  # the service writes string maps; these errors are not modelled
        before = original.get(key) if isinstance(original, dict) else None
        if isinstance(before, dict) and before == response:
            continue
        errs = label_errors(response, path) if key == "labels" else annotation_errors(response, path)
        if errs:
            return aggregate_message(errs)
    return None
