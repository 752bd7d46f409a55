"""The webhook paths served: the generic ones and the upstream operator's per-kind ones, each with
the review it answers and the GVK guard of its upstream handler. The HTTP layer (:mod:`app.server.routes`)
serves them; ``review`` and ``audit`` answer offline as the path would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from domain.admission import GVK
from kinds import REGISTRY

ReviewType = Literal["validate", "mutate", "convert"]


@dataclass(frozen=True, slots=True)
class WebhookRoute:
    path: str
    type: ReviewType
    expected_gvk: GVK | None = None  # the upstream handler's GVK guard; None: dispatch on request.kind
    kinds: tuple[str, ...] = ()  # documentation / deploy checks: kinds upstream registers on this path


def _routes() -> tuple[WebhookRoute, ...]:
    generic = (
        WebhookRoute("/validate", "validate"),
        WebhookRoute("/mutate", "mutate"),
        WebhookRoute("/convert", "convert"),
    )
    per_kind = tuple(
        WebhookRoute(hook.path, hook.type, kind.gvk(hook.version) if hook.guarded else None, (kind.kind,))
        for review_type in ("validate", "mutate")
        for kind in REGISTRY
        for hook in kind.webhooks
        if hook.type == review_type
    )
    return generic + per_kind


#: Every webhook path served: the generic ones, then the upstream operator's per-kind paths from
#: the kind registry, so its webhook configurations can point here unchanged.
WEBHOOK_ROUTES: tuple[WebhookRoute, ...] = _routes()
