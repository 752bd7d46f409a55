"""The webhook paths served: the generic ones and the upstream operator's per-kind ones, each with
the review it answers and the GVK guard of its upstream handler. The HTTP layer (:mod:`app.routes`)
serves them; ``review`` and ``audit`` answer offline as the path would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from validation.context import GVK

ReviewType = Literal["validate", "mutate", "convert"]

DGD = GVK("nvidia.com", "v1beta1", "DynamoGraphDeployment")
DCD = GVK("nvidia.com", "v1beta1", "DynamoComponentDeployment")
DCD_ALPHA = GVK("nvidia.com", "v1alpha1", "DynamoComponentDeployment")
DGDR = GVK("nvidia.com", "v1beta1", "DynamoGraphDeploymentRequest")


@dataclass(frozen=True, slots=True)
class WebhookRoute:
    path: str
    type: ReviewType
    expected_gvk: GVK | None = None  # the upstream handler's GVK guard; None: dispatch on request.kind
    kinds: tuple[str, ...] = ()  # documentation / deploy checks: kinds upstream registers on this path


#: Every webhook path served. The per-kind ones are the upstream operator's, so its
#: webhook configurations can point here unchanged.
WEBHOOK_ROUTES: tuple[WebhookRoute, ...] = (
    WebhookRoute("/validate", "validate"),
    WebhookRoute("/mutate", "mutate"),
    WebhookRoute("/convert", "convert"),
    WebhookRoute("/validate/nvidia.com/v1beta1/dynamographdeployments", "validate", DGD, ("DynamoGraphDeployment",)),
    WebhookRoute(
        "/validate/nvidia.com/v1beta1/dynamocomponentdeployments", "validate", DCD, ("DynamoComponentDeployment",)
    ),
    WebhookRoute(
        "/validate-nvidia-com-v1alpha1-dynamocomponentdeployment", "validate", DCD_ALPHA, ("DynamoComponentDeployment",)
    ),
    WebhookRoute(
        "/validate-nvidia-com-v1beta1-dynamographdeploymentrequest", "validate", DGDR, ("DynamoGraphDeploymentRequest",)
    ),
    WebhookRoute("/validate-nvidia-com-v1alpha1-dynamomodel", "validate", None, ("DynamoModel",)),
    WebhookRoute("/validate-nvidia-com-v1alpha1-dynamocheckpoint", "validate", None, ("DynamoCheckpoint",)),
    WebhookRoute("/mutate/nvidia.com/v1beta1/dynamographdeployments", "mutate", DGD, ("DynamoGraphDeployment",)),
    WebhookRoute(
        "/mutate-nvidia-com-v1beta1-dynamocomponentdeployment", "mutate", DCD, ("DynamoComponentDeployment",)
    ),
    WebhookRoute(
        "/mutate-nvidia-com-v1beta1-dynamographdeploymentrequest", "mutate", DGDR, ("DynamoGraphDeploymentRequest",)
    ),
    WebhookRoute("/mutate-core-v1-pod-checkpoint-restore", "mutate", None, ("Pod",)),
)
