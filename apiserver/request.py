"""One AdmissionReview's objects as the API server has them when it calls the webhook the review is
for: ``dynamo-webhook review --apiserver``.

The steps are :mod:`apiserver.pipeline`'s, not a copy of them. ``request.object`` (CREATE, UPDATE)
is decoded as a client's request body is (:func:`pipeline.before_webhooks`: ObjectMeta, the
namespace of the request when the object names none, strict decoding per ``--validate``, pruning,
``null`` dropping, the schema's defaults); ``request.oldObject`` as a stored object is read back
(:func:`pipeline.coerce`: pruned and defaulted, never refused). Before a validating webhook the API
server also validates the object (:func:`pipeline.validation_errors`, 422); the review's object is
taken as the mutating webhooks left it (``lint`` runs the whole chain), and on CREATE its ``status``
is dropped, on UPDATE replaced by the old object's, as the API server's strategy does before
validating. An UPDATE runs the CEL rules against the old object (transition rules such as an
immutable ``minAvailable``; a rule's failure at a value the update leaves unchanged is a warning);
the rest is validated as a create would be: the schema's own ratcheting and ObjectMeta's update
checks are not modelled.

Each object is decoded in the version it is written in (the review's ``request.kind``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from apiserver import crds, pipeline
from apiserver.crds import GROUP
from apiserver.pipeline import FieldValidation

JSONObject = dict[str, Any]


class NotModelled(Exception):
    """The review's objects are not ones this package models (not ``nvidia.com``, no vendored CRD
    serves them, or kubectl itself would refuse to send them); the message says which."""


@dataclass(slots=True)
class Prepared:
    """``review``: the review with its objects as the webhook would receive them (``None`` when the
    API server refuses first); ``status``: the API server's Status of that refusal; ``warnings``:
    the API server's warnings (unknown fields under ``warn``, a deprecated version)."""

    review: JSONObject | None
    status: JSONObject | None = None
    warnings: list[str] = field(default_factory=list)


def _served(obj: JSONObject, where: str) -> crds.Version:
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    if api_version.partition("/")[0] != GROUP or "/" not in api_version:
        raise NotModelled(
            f"{where} is a {kind or '(no kind)'} of {api_version or '(no apiVersion)'}: --apiserver "
            f"models the API server for {GROUP} custom resources only"
        )
    version = crds.lookup(api_version, kind)
    if version is None:
        raise NotModelled(
            f"{where}: no vendored CRD serves kind {kind!r} in {api_version!r}: "
            "no such request reaches the API server"
        )
    return version


def prepare(
    review: JSONObject, validating: bool, validation: FieldValidation = "strict", source: str = "-"
) -> Prepared:
    """``review`` (a readable AdmissionReview) as the webhook it names would receive it, or the API
    server's refusal before it. Raises :class:`NotModelled`."""
    request = review.get("request")
    if not isinstance(request, dict):
        return Prepared(review)
    operation = request.get("operation")
    obj, old = request.get("object"), request.get("oldObject")
    out = Prepared(copy.deepcopy(review))
    assert out.review is not None
    sent = out.review["request"]
    if isinstance(old, dict):
        old_version = _served(old, "request.oldObject")
        sent["oldObject"] = copy.deepcopy(old)
        pipeline.coerce(sent["oldObject"], old_version)
        if not isinstance(obj, dict) and old_version.deprecation_warning:
            out.warnings.append(old_version.deprecation_warning)
    if operation not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
        return out
    namespace = request.get("namespace")
    version, decoded, outcome = pipeline.before_webhooks(
        obj,
        source,
        validation,
        namespace if isinstance(namespace, str) and namespace else pipeline.DEFAULT_NAMESPACE,
    )
    if outcome.client_error is not None:
        _served(obj, "request.object")  # the clearer message for a kind no CRD serves
        raise NotModelled(f"request.object: kubectl refuses to send it: {outcome.client_error}")
    out.warnings += outcome.warnings
    if version is None or decoded is None:
        return Prepared(None, outcome.status, out.warnings)
    if validating:
        if version.has_status:
            decoded.pop("status", None)
            if (
                operation == "UPDATE"
                and isinstance(sent.get("oldObject"), dict)
                and "status" in sent["oldObject"]
            ):
                decoded["status"] = copy.deepcopy(sent["oldObject"]["status"])
        stored = sent.get("oldObject") if operation == "UPDATE" else None
        errs = pipeline.validation_errors(
            decoded, version, stored if isinstance(stored, dict) else None, out.warnings
        )
        if errs:
            return Prepared(
                None, pipeline.invalid(version.kind, pipeline.object_name(decoded), errs), out.warnings
            )
    sent["object"] = decoded
    return out
