"""Bringing a request's objects to the hub version and the API server's schema layer."""

from __future__ import annotations

from collections.abc import Callable

from conversion import ConversionError
from conversion.hub import KindConverter, Reuse
from domain.admission import AdmissionInput, Decision, JSONObject
from gocompat.fielderrors import FieldError, invalid_decision
from validation import alpha

SchemaCheck = Callable[[JSONObject, bool], list[FieldError]]


def prepare(
    inp: AdmissionInput, kind: str, schema_check: SchemaCheck, converter: KindConverter
) -> tuple[JSONObject, JSONObject | None, str, bool] | Decision:
    """(new hub object, old hub object or None, runtime-version source, whether the objects are
    this service's conversion of v1alpha1 objects) or an early Decision.

    The topology-domain patterns are CRD schema rules: the API server rejects a violating
    object before any webhook runs, so they are answered first and alone. On UPDATE an
    unchanged invalid value is not reported again (CRD validation ratcheting).
    """
    new = inp.object if isinstance(inp.object, dict) else {}
    old = inp.old_object if isinstance(inp.old_object, dict) else None
    sent_alpha = inp.kind.version == "v1alpha1"
    name = str((new.get("metadata") or {}).get("name", "")) if isinstance(new.get("metadata"), dict) else ""
    schema_errs = schema_check(new, sent_alpha)
    if schema_errs and inp.operation == "UPDATE" and old is not None:
        old_texts = {str(e) for e in schema_check(old, sent_alpha)}
        schema_errs = [e for e in schema_errs if str(e) not in old_texts]
    if schema_errs:
        return invalid_decision(kind, name, schema_errs)
    if sent_alpha:
        try:
            reuse = Reuse()
            new = alpha.to_hub(new, converter, reuse)
            old = alpha.to_hub(old, converter, reuse) if old is not None else None
        except ConversionError as exc:
            # The API server would fail the request in its conversion call; an object that
            # cannot be brought to the hub is answered like an undecodable one.
            return Decision.deny(str(exc), code=400, reason="")
    rv_source = "v1alpha1" if inp.source_version == "v1alpha1" else "v1beta1"
    return new, old, rv_source, sent_alpha
