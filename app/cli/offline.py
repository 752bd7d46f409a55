"""The service's own webhooks under the offline API server (:mod:`apiserver`), for ``lint``,
``review --apiserver`` and ``convert --check``: one :class:`OfflineService` and one way to answer a
review behind the API server's steps.

Importing this module loads neither the rules nor the review room: each function imports what it
runs, so the command line's ``--help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from app.server.settings import Settings

if TYPE_CHECKING:
    from apiserver.pipeline import FieldValidation

JSONObject = dict[str, Any]


class OfflineService:
    """The service's own admission handlers and converter as the offline API-server pipeline calls them."""

    def __init__(self, settings: Settings) -> None:
        from app.review.webhook_paths import WEBHOOK_ROUTES
        from domain.admission import AdmissionContext

        self.ctx = AdmissionContext(settings=settings.admission_settings())
        self.routes = {r.path: r for r in WEBHOOK_ROUTES}

    def admit(self, path: str, review: JSONObject) -> JSONObject:
        from app.review.dispatch import review_admission

        route = self.routes[path]
        outcome = review_admission(
            review, "mutate" if route.type == "mutate" else "validate", self.ctx, route.expected_gvk
        )
        response: JSONObject = outcome.response
        return response

    def convert(self, obj: JSONObject, api_version: str) -> JSONObject:
        from app.review.dispatch import converted_with_direction
        from app.review.errors import ConversionFailure

        try:
            return converted_with_direction(obj, 0, api_version)[0]
        except ConversionFailure as exc:
            raise ValueError(exc.message) from None


def review_behind_apiserver(
    doc: JSONObject, path: str, validation: FieldValidation, source: str, settings: Settings
) -> tuple[JSONObject, bool]:
    """(the response review, allowed) of the AdmissionReview ``doc`` sent to the webhook at ``path``
    after what the API server does first (:func:`apiserver.request.prepare`): its refusal, uid
    echoed, when it refuses before the webhook; else the webhook's answer to the decoded objects,
    with the API server's warnings before the webhook's, the rules applied with ``settings``.
    ``path``: an admission webhook's. Raises
    :class:`app.review.errors.BadRequest` (not a review) and :class:`apiserver.request.NotModelled`."""
    import orjson

    from apiserver.request import prepare
    from app.review.dispatch import review_admission
    from app.review.reviews import read_admission_review

    env = read_admission_review(doc)
    service = OfflineService(settings)
    route = service.routes[path]
    review_type: Literal["validate", "mutate"] = "mutate" if route.type == "mutate" else "validate"
    prepared = prepare(doc, review_type == "validate", validation, source)
    if prepared.review is None:
        response: JSONObject = {"uid": env.uid, "allowed": False, "status": prepared.status}
        if prepared.warnings:
            response["warnings"] = prepared.warnings
        return {"apiVersion": env.api_version, "kind": "AdmissionReview", "response": response}, False
    outcome = review_admission(prepared.review, review_type, service.ctx, route.expected_gvk)
    answer: JSONObject = orjson.loads(outcome.body)
    warnings = prepared.warnings + list(answer["response"].get("warnings") or [])
    if warnings:
        answer["response"]["warnings"] = warnings
    return answer, outcome.allowed
