"""One manifest through the API server's create of a custom resource, offline: what
``kubectl create --dry-run=server`` would answer.

The order is the API server's (k8s.io/apiserver ``handlers/create.go``, apiextensions-apiserver's
decoder and ``customResourceStrategy``):

1. **decode**: ``metadata`` decoded into ObjectMeta (a value of the wrong type fails, 400), and so
   are embedded resources' (:mod:`apiserver.embedded`); what the structural schema does not
   describe is pruned, and with strict field validation (kubectl's
   default ``--validate=strict``) each pruned path is an ``unknown field`` (400); ``--validate=warn``
   makes them warnings, ``ignore`` drops them silently; then ``null`` values the schema does not
   allow are dropped and the schema's defaults applied;
2. **mutating webhooks** (converted to the webhook's version when registered for another one; its
   patch applied, then defaulted, not pruned: its nulls reach the validation; converted back);
3. **validation**: ObjectMeta (names, labels, annotations), the OpenAPI schema, the scale
   subresource's replicas, embedded resources (:mod:`apiserver.embedded`), list-type uniqueness,
   then the CEL rules (:mod:`apiserver.cel`) unless an earlier error blocks them (422,
   ``Kind.group "name" is invalid: ...``);
4. **validating webhooks**.

The first step that refuses ends the pipeline, as in the API server.
"""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonpatch
import orjson

from apiserver import admission, cel, crds, embedded, listtype, objectmeta, openapi, scale, structural
from apiserver.admission import Hook, Service
from apiserver.cluster import cluster_rules
from apiserver.crds import GROUP, Version
from gocompat.fielderrors import ErrorType, FieldError, aggregate_message
from gocompat.gotext import go_quote
from gocompat.jsonvalue import sorted_copy

JSONObject = dict[str, Any]
FieldValidation = Literal["strict", "warn", "ignore"]
DEFAULT_NAMESPACE = "default"


@dataclass(slots=True)
class CreateOutcome:
    """What a create of one manifest meets. ``status``: the API server's Status when refused
    (``None`` when accepted); ``client_error``: kubectl's own refusal before any request (no such
    kind); ``pruned``: unknown fields dropped (``warn``/``ignore``); ``stored``: the object as it
    would be stored (when accepted); ``defaulted``: the JSON Patch operations the mutating
    webhooks applied; ``skipped``: rules that need a cluster and were not checked."""

    allowed: bool
    status: JSONObject | None = None
    client_error: str | None = None
    warnings: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    defaulted: list[JSONObject] = field(default_factory=list)
    stored: JSONObject | None = None


def _status(code: int, reason: str, message: str, details: JSONObject | None = None) -> JSONObject:
    status: JSONObject = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        status["details"] = details
    status["code"] = code
    return status


def bad_request(kind: str, version: str, problem: str) -> JSONObject:
    return _status(
        400, "BadRequest", f"{kind} in version {go_quote(version)} cannot be handled as a {kind}: {problem}"
    )


def internal_error(err: str) -> JSONObject:
    """``apierrors.NewInternalError``: the error as the one cause, and in the message."""
    return _status(500, "InternalError", f"Internal error occurred: {err}", {"causes": [{"message": err}]})


def invalid(kind: str, name: str, errs: list[FieldError]) -> JSONObject:
    """``apierrors.NewInvalid``: 422, the errors aggregated into the message and listed as causes."""
    details: JSONObject = {"name": name, "group": GROUP, "kind": kind, "causes": [e.cause() for e in errs]}
    if not name:
        del details["name"]
    return _status(
        422, "Invalid", f"{kind}.{GROUP} {go_quote(name)} is invalid: {aggregate_message(errs)}", details
    )


def no_match(kind: str, api_version: str, name: str, namespace: str, source: str) -> str:
    return (
        f"resource mapping not found for name: {go_quote(name)} namespace: {go_quote(namespace)} from "
        f"{go_quote(source)}: no matches for kind {go_quote(kind)} in version {go_quote(api_version)}\n"
        "ensure CRDs are installed first"
    )


def _meta(obj: JSONObject) -> JSONObject:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def object_name(obj: JSONObject) -> str:
    """``metadata.name``, or "" (as the API server names the object in its messages)."""
    name = _meta(obj).get("name")
    return name if isinstance(name, str) else ""


def coerce(obj: JSONObject, version: Version, defaults: bool = True) -> list[str]:
    """Prune, drop disallowed nulls and (``defaults``) default ``obj`` in place; the pruned paths."""
    schema = version.schema
    pruned = structural.prune(obj, schema)
    structural.drop_nulls(obj, schema)
    if defaults:
        structural.apply_defaults(obj, schema)
    return pruned


class ConversionFailed(Exception):
    """The conversion webhook failed; the message is the error the API server wraps as an internal
    error (:func:`internal_error`)."""


def _convert(obj: JSONObject, to: Version, service: Service) -> JSONObject:
    """``obj`` converted by the service's conversion webhook, with the source's metadata but for labels
    and annotations (all the API server takes from a converted object). Admission converts with the
    request's plain converter: the result is neither pruned nor defaulted, and its nulls stay."""
    if obj.get("apiVersion") == to.api_version:
        return obj
    webhook = (
        f"Internal error occurred: conversion webhook for {obj.get('apiVersion')}, Kind={obj.get('kind')}"
    )
    try:
        out = service.convert(sorted_copy(obj), to.api_version)
    except Exception as exc:
        raise ConversionFailed(f"{webhook} failed: {exc}") from exc
    problem = objectmeta.converted_metadata_error(obj.get("metadata"), out.get("metadata"))
    if problem is not None:
        raise ConversionFailed(f"{webhook} returned invalid metadata: {problem}")
    meta = {k: v for k, v in _meta(obj).items() if k not in ("labels", "annotations")}
    for key in ("labels", "annotations"):
        if _meta(out).get(key):
            meta[key] = _meta(out)[key]
    out["metadata"] = meta
    return out


def _hook_version(hook: Hook, version: Version) -> Version:
    found = crds.lookup(f"{GROUP}/{hook.version}", version.kind)
    return found if found is not None else version


def _call(hook: Hook, obj: JSONObject, version: Version, service: Service) -> tuple[JSONObject, JSONObject]:
    """(the object in the hook's version, the hook's response). The object is sent as the API server
    encodes it, with every map's keys sorted: a webhook that reports only the first problem it meets
    meets them in that order. An object whose kind is not the CRD's (written in lower case) is sent
    with the CRD's (``ConvertToGVK`` sets it), and keeps it when the webhook patches it."""
    target = _hook_version(hook, version)
    sent = sorted_copy(_convert(obj, target, service))
    sent["kind"] = version.kind
    return sent, service.admit(hook.path, admission.review(sent, hook, version.name, version.plural))


def _mutate(obj: JSONObject, version: Version, service: Service, out: CreateOutcome) -> JSONObject | None:
    for hook in admission.hooks(version.kind, version.name, "mutate"):
        sent, response = _call(hook, obj, version, service)
        out.warnings += [str(w) for w in response.get("warnings") or []]
        if not response.get("allowed"):
            out.status = admission.denial_status(hook.name, response)
            return None
        if response.get("patch"):
            ops = orjson.loads(base64.b64decode(response["patch"]))
            out.defaulted += ops
            patched = jsonpatch.apply_patch(sent, ops)
            target = _hook_version(hook, version)
            # The patched object is decoded and defaulted, not pruned: a null the patch writes where the
            # schema allows none stays, for the validation to refuse.
            structural.apply_defaults(patched, target.schema)
            obj = patched if target is version else _convert(patched, version, service)
    return obj


def _blocking(errs: list[FieldError]) -> bool:
    blocking = (
        ErrorType.NOT_SUPPORTED,
        ErrorType.REQUIRED,
        ErrorType.TOO_LONG,
        ErrorType.TOO_MANY,
        ErrorType.TYPE_INVALID,
    )
    return any(e.type in blocking for e in errs)


BLOCKED = FieldError(
    ErrorType.INVALID,
    "<nil>",
    None,
    "some validation rules were not checked because the object was invalid; correct the existing errors "
    "to complete validation",
)


def validation_errors(
    obj: JSONObject, version: Version, old: JSONObject | None = None, warnings: list[str] | None = None
) -> list[FieldError]:
    """``customResourceStrategy.Validate`` of a create, or of an update when ``old`` is given (for the
    CEL rules only: transition rules run, and failures at unchanged values go to ``warnings``). The
    CEL rules run unless an error of the schema's blocks them."""
    schema = version.schema
    errs = objectmeta.validate(_meta(obj), version.namespaced)
    errs += openapi.validate(obj, schema)
    errs += scale.validate(obj, version.scale_replicas_path)
    errs += embedded.validate(obj, schema)
    errs += listtype.validate(obj, schema)
    if version.has_rules:
        if _blocking(errs):
            errs.append(BLOCKED)
        else:
            result = cel.validate(obj, schema) if old is None else cel.validate(obj, schema, old)
            errs += result.errors
            if warnings is not None:
                warnings += result.warnings
    return errs


def kind_errors(obj: JSONObject, version: Version) -> list[FieldError]:
    """``customResourceStrategy.Validate`` of an object whose kind is not the CRD's (kubectl maps the
    kind in lower case too): ``ValidateTypeMeta``'s error replaces ObjectMeta, schema and scale
    validation; embedded resources and list types are still checked, and the CEL rules run (the error
    does not block them)."""
    errs = [FieldError(ErrorType.INVALID, "kind", obj.get("kind"), f"must be {version.kind}")]
    errs += embedded.validate(obj, version.schema)
    errs += listtype.validate(obj, version.schema)
    if version.has_rules:
        errs += cel.validate(obj, version.schema).errors
    return errs


def decode(obj: JSONObject, version: Version, validation: FieldValidation, out: CreateOutcome) -> bool:
    """Strict decoding of ``obj`` (in place) per ``validation``: ``metadata``'s unknown members, then
    (only for an object of the CRD's own kind, as ``unstructuredSchemaCoercer`` compares them)
    pruning, embedded resources (a 400 when one cannot be decoded), nulls and defaults; unknown
    fields, strict, are a 400 in ``out.status`` (``False``)."""
    unknown = objectmeta.unknown_fields(obj.get("metadata"))
    for path in unknown:
        del obj["metadata"][path.removeprefix("metadata.")]
    if obj.get("kind") == version.kind:
        unknown += coerce(obj, version)
        try:
            unknown += embedded.coerce(obj, version.schema)
        except embedded.DecodeError as exc:
            out.status = bad_request(version.kind, version.name, str(exc))  # the CRD's own kind here
            return False
    if unknown and validation == "strict":
        listed = ", ".join(f"unknown field {go_quote(p)}" for p in unknown)
        # The kind as written (kubectl maps one in lower case too), as the API server names it.
        written = obj.get("kind")
        kind = written if isinstance(written, str) and written else version.kind
        out.status = bad_request(kind, version.name, f"strict decoding error: {listed}")
        return False
    if validation == "warn":
        out.warnings += [f"unknown field {go_quote(p)}" for p in unknown]
    out.pruned = unknown
    return True


def before_webhooks(
    doc: JSONObject,
    source: str = "-",
    validation: FieldValidation = "strict",
    namespace: str = DEFAULT_NAMESPACE,
) -> tuple[Version | None, JSONObject | None, CreateOutcome]:
    """What a create of ``doc`` meets before any webhook: kubectl's no-match and ObjectMeta decoding,
    the version's deprecation warning, the namespace, :func:`decode`. (the CRD version, the decoded
    copy of ``doc``, the outcome so far); the copy is ``None`` when refused (``out`` says why)."""
    kind, api_version = str(doc.get("kind", "")), str(doc.get("apiVersion", ""))
    # kubectl decodes the document (its metadata typed) before it looks the kind up.
    problem = objectmeta.decode_error(doc.get("metadata"))
    if problem is not None:
        return (
            None,
            None,
            CreateOutcome(False, client_error=f"unable to decode {go_quote(source)}: {problem}"),
        )
    version = crds.mapping(api_version, kind)
    if version is None:
        ns = str(_meta(doc).get("namespace") or "")
        return (
            None,
            None,
            CreateOutcome(False, client_error=no_match(kind, api_version, object_name(doc), ns, source)),
        )
    obj = copy.deepcopy(doc)
    out = CreateOutcome(
        False, skipped=cluster_rules({**doc, "kind": version.kind})
    )  # a kind in lower case too
    if version.deprecation_warning:
        out.warnings.append(version.deprecation_warning)
    if version.namespaced:
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        ns = obj["metadata"].get("namespace") or namespace
        obj["metadata"]["namespace"] = ns
        if objectmeta.dns1123_label(ns):
            out.status = _status(
                404, "NotFound", f"namespaces {go_quote(ns)} not found", {"name": ns, "kind": "namespaces"}
            )
            return version, None, out
    if not decode(obj, version, validation, out):
        return version, None, out
    return version, obj, out


def create(
    doc: JSONObject,
    service: Service,
    source: str = "-",
    validation: FieldValidation = "strict",
    namespace: str = DEFAULT_NAMESPACE,
) -> CreateOutcome:
    """The answer to ``kubectl create --dry-run=server`` of ``doc`` (an nvidia.com object)."""
    version, obj, out = before_webhooks(doc, source, validation, namespace)
    if version is None or obj is None:
        return out
    try:
        mutated = _mutate(obj, version, service, out)
        if mutated is None:
            return out
        if version.has_status:
            mutated.pop("status", None)
        # The kind as the mutating webhooks left it: the service's patches write the object whole.
        kind = str(mutated.get("kind", ""))
        errs = validation_errors(mutated, version) if kind == version.kind else kind_errors(mutated, version)
        if errs:
            out.status = invalid(kind, object_name(mutated), errs)
            return out
        for hook in admission.hooks(kind, version.name, "validate"):
            _, response = _call(hook, mutated, version, service)
            out.warnings += [str(w) for w in response.get("warnings") or []]
            if not response.get("allowed"):
                out.status = admission.denial_status(hook.name, response)
                return out
    except ConversionFailed as exc:
        out.status = internal_error(str(exc))
        return out
    out.allowed = True
    structural.prune(mutated, version.schema)  # the storage's decoding
    out.stored = mutated
    return out
