"""The kinds this service answers for, each registered once, and the webhooks' entry points.

Everything that depends on the set of kinds reads :data:`REGISTRY`: the webhook dispatch
(:func:`validate`, :func:`default`, :func:`convert`), the HTTP routes (the upstream per-kind
paths), the certificate loop (the CRDs whose conversion webhook gets the CA bundle), the cluster
tools (what to list and migrate), the round-trip comparison (payload annotations) and the tests
that check deploy/ against it. A new kind is its rule modules plus one ``REGISTRY.register``
call here.
"""

from __future__ import annotations

from collections.abc import Iterator

from conversion import dcd as dcd_conversion
from conversion import dgd as dgd_conversion
from conversion import dgdr as dgdr_conversion
from conversion import dgdsa as dgdsa_conversion
from conversion import hub as conversion_hub
from defaulting import dcd as dcd_defaults
from defaulting import dgd as dgd_defaults
from defaulting import dgdr as dgdr_defaults
from defaulting import pod
from defaulting.common import with_main_container_marshal_fields
from domain.admission import AdmissionContext, AdmissionInput, Decision, JSONObject
from domain.constants import (
    GROUP,
    KIND_CHECKPOINT,
    KIND_DCD,
    KIND_DGD,
    KIND_DGDR,
    KIND_DGDSA,
    KIND_MODEL,
    V1ALPHA1,
    V1BETA1,
)
from kinds import chains
from kinds.registry import Kind, Registry, WebhookPath
from validation import dcd as dcd_rules
from validation import dgd as dgd_rules
from validation import dgdr as dgdr_rules
from validation import dynamocheckpoint, dynamomodel

__all__ = ["REGISTRY", "Kind", "WebhookPath", "convert", "default", "validate"]

BOTH = (V1ALPHA1, V1BETA1)

REGISTRY = Registry()

REGISTRY.register(
    Kind(
        KIND_DGD,
        "dynamographdeployments",
        "dgd",
        served=BOTH,
        validator=dgd_rules.validate,
        defaulter=dgd_defaults.default_hub,
        default_spokes=True,
        converter=dgd_conversion.CONVERTER,
        spoke_answer=with_main_container_marshal_fields,
        payload="dgd",
        gvk_guard=True,
        webhooks=(
            WebhookPath(
                "/validate/nvidia.com/v1beta1/dynamographdeployments",
                "validate",
                V1BETA1,
                True,
                "vdynamographdeployment.kb.io",
            ),
            WebhookPath(
                "/mutate/nvidia.com/v1beta1/dynamographdeployments",
                "mutate",
                V1BETA1,
                True,
                "mdynamographdeployment.kb.io",
            ),
        ),
    )
)
REGISTRY.register(
    Kind(
        KIND_DCD,
        "dynamocomponentdeployments",
        "dcd",
        served=BOTH,
        validator=dcd_rules.validate,
        defaulter=dcd_defaults.default_hub,
        converter=dcd_conversion.CONVERTER,
        payload="dcd",
        gvk_guard=True,
        webhooks=(
            WebhookPath(
                "/validate/nvidia.com/v1beta1/dynamocomponentdeployments",
                "validate",
                V1BETA1,
                True,
                "vdynamocomponentdeployment.kb.io",
            ),
            WebhookPath(
                "/validate-nvidia-com-v1alpha1-dynamocomponentdeployment", "validate", V1ALPHA1, True
            ),
            WebhookPath(
                "/mutate-nvidia-com-v1beta1-dynamocomponentdeployment",
                "mutate",
                V1BETA1,
                True,
                "mdynamocomponentdeploymentv1beta1.kb.io",
                exact=True,
            ),
        ),
    )
)
REGISTRY.register(
    Kind(
        KIND_DGDR,
        "dynamographdeploymentrequests",
        "dgdr",
        served=BOTH,
        validator=dgdr_rules.validate,
        defaulter=dgdr_defaults.default_hub,
        default_spokes=True,
        converter=dgdr_conversion.CONVERTER,
        payload="dgdr",
        gvk_guard=True,
        webhooks=(
            WebhookPath(
                "/validate-nvidia-com-v1beta1-dynamographdeploymentrequest",
                "validate",
                V1BETA1,
                True,
                "vdynamographdeploymentrequest.kb.io",
            ),
            WebhookPath(
                "/mutate-nvidia-com-v1beta1-dynamographdeploymentrequest",
                "mutate",
                V1BETA1,
                True,
                "mdynamographdeploymentrequestv1beta1.kb.io",
            ),
        ),
    )
)
REGISTRY.register(
    Kind(
        KIND_DGDSA,
        "dynamographdeploymentscalingadapters",
        "dgdsa",
        served=BOTH,
        converter=dgdsa_conversion.CONVERTER,
    )
)
REGISTRY.register(
    Kind(
        KIND_MODEL,
        "dynamomodels",
        "dm",
        hub=V1ALPHA1,
        served=(V1ALPHA1,),
        validator=dynamomodel.validate,
        webhooks=(
            WebhookPath(
                "/validate-nvidia-com-v1alpha1-dynamomodel", "validate", V1ALPHA1, name="vdynamomodel.kb.io"
            ),
        ),
    )
)
REGISTRY.register(
    Kind(
        KIND_CHECKPOINT,
        "dynamocheckpoints",
        "dckpt",
        hub=V1ALPHA1,
        served=(V1ALPHA1,),
        validator=dynamocheckpoint.validate,
        webhooks=(
            WebhookPath(
                "/validate-nvidia-com-v1alpha1-dynamocheckpoint",
                "validate",
                V1ALPHA1,
                name="vdynamocheckpoint.kb.io",
            ),
        ),
    )
)
# The checkpoint-restore mutator for core/v1 Pods: a webhook, not a kind of this group.
REGISTRY.register(
    Kind(
        "Pod",
        "pods",
        group="",
        hub="v1",
        served=("v1",),
        mutator=pod.mutate,
        custom=False,
        webhooks=(
            WebhookPath(
                "/mutate-core-v1-pod-checkpoint-restore", "mutate", "v1", name="mpodcheckpointrestore.kb.io"
            ),
        ),
    )
)


# Every apiVersion of a convertible kind (named when an object's kind has no converter).
_API_VERSIONS = tuple(dict.fromkeys(v for k in REGISTRY if k.converter for v in k.converter.api_versions))


def custom_kinds() -> Iterator[Kind]:
    """The kinds of this project's API group, in registration order."""
    return (k for k in REGISTRY if k.custom and k.group == GROUP)


def validate(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
    """Answer one validating admission request (see :mod:`kinds.chains`).

    ``spec_decodes``: whether ``inp.object``'s ``spec`` decodes into the operator's Go types as it
    is (every member named by its schema, every quantity, time and duration parsing), as the
    structural type check of a review tells (``app.review.schema.check_object``). The default,
    False, is "unknown": the rules then decode the spec themselves, with the same answer."""
    return chains.validate(REGISTRY, inp, ctx, spec_decodes)


def default(inp: AdmissionInput, ctx: AdmissionContext) -> Decision:
    """Answer one mutating admission request (see :mod:`kinds.chains`)."""
    return chains.default(REGISTRY, inp, ctx)


def convert(obj: JSONObject, desired_api_version: str) -> JSONObject:
    """Convert one object to ``desired_api_version`` (a new dict; ``obj`` is not mutated).
    Raises ``ConversionError`` with the review failure message."""
    kind = conversion_hub.require_object(obj).get("kind")
    spec = REGISTRY.get(GROUP, kind) if isinstance(kind, str) else None
    if spec is None or spec.converter is None:
        raise conversion_hub.unsupported(kind, desired_api_version, _API_VERSIONS)
    return spec.converter.convert(obj, desired_api_version)
