"""The service's own webhooks under the offline API server (:mod:`apiserver`): one
:class:`OfflineService` for the commands that run it.

Importing this module loads neither the rules nor the review room: each method imports what it
runs, so the command line's ``--help`` stays fast.
"""

from __future__ import annotations

from typing import Any

from app.server.settings import Settings

JSONObject = dict[str, Any]


class OfflineService:
    """The service's own admission handlers and converter as the offline API-server pipeline calls them."""

    def __init__(self, settings: Settings) -> None:
        from app.review.webhooks import WEBHOOK_ROUTES
        from domain.admission import AdmissionContext

        self.ctx = AdmissionContext(settings=settings.admission_settings())
        self.routes = {r.path: r for r in WEBHOOK_ROUTES}

    def admit(self, path: str, review: JSONObject) -> JSONObject:
        from app.review.dispatch import review_admission

        route = self.routes[path]
        outcome = review_admission(review, "mutate" if route.type == "mutate" else "validate", self.ctx,
                                   route.expected_gvk)
        response: JSONObject = outcome.response
        return response

    def convert(self, obj: JSONObject, api_version: str) -> JSONObject:
        from app.review.dispatch import convert_one
        from app.review.errors import ConversionFailure

        try:
            return convert_one(obj, 0, api_version)[0]
        except ConversionFailure as exc:
            raise ValueError(exc.message) from None
