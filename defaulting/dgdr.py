"""DynamoGraphDeploymentRequest defaulting on the v1beta1 hub (upstream ``DGDRDefaulter.Default`` and
``defaultImageFor`` in deploy/operator/internal/webhook/defaulting/dynamographdeploymentrequest_handler.go).

On CREATE an empty ``spec.image`` becomes the configured default image, or
``nvcr.io/nvidia/ai-dynamo/dynamo-planner:<operator version>`` with the version in
canonical form. ``backend``, ``searchStrategy`` and ``autoApply`` defaults come from the
CRD schema, not from this webhook. UPDATE requests are admitted unchanged. A defaulted DGDR is
answered as the operator's encoder writes it (:func:`defaulting.common.as_go_writes`: an empty
``overrides.profilingJob.template`` gains its ``spec`` …).
"""

from __future__ import annotations

import re
from typing import Final

from conversion.v1alpha1.dgdr.types import BETA_SPEC, BETA_STATUS
from defaulting.common import as_dict, as_go_writes, go_string
from domain.admission import AdmissionSettings, JSONObject, Operation

__all__ = ["DEFAULT_IMAGE_REPOSITORY", "canonical_version", "default_hub", "default_image"]

DEFAULT_IMAGE_REPOSITORY: Final = "nvcr.io/nvidia/ai-dynamo/dynamo-planner"

# The lenient grammar of github.com/Masterminds/semver/v3 (v3.4.0) NewVersion, which coerces
# "1" and "1.2" into full versions and tolerates leading zeros in the numeric segments.
_LOOSE_SEMVER: Final = re.compile(
    r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
)
_UINT64_MAX: Final = (1 << 64) - 1


def canonical_version(version: str) -> str | None:
    """Masterminds ``NewVersion(version).String()``, or None when it does not parse.

    ``1.2`` → ``1.2.0``, ``v1.2.3`` → ``1.2.3``, ``01.2.3`` → ``1.2.3``; pre-release and
    build metadata are kept. A numeric pre-release identifier with a leading zero and a
    segment beyond uint64 are rejected, as upstream does.
    """
    m = _LOOSE_SEMVER.fullmatch(version)
    if m is None:
        return None
    major = int(m.group(1))
    minor = int(m.group(2)[1:]) if m.group(2) else 0
    patch = int(m.group(3)[1:]) if m.group(3) else 0
    if max(major, minor, patch) > _UINT64_MAX:
        return None
    pre = m.group(5) or ""
    for ident in pre.split(".") if pre else ():
        if ident.isdigit() and len(ident) > 1 and ident[0] == "0":
            return None
    metadata = m.group(8) or ""
    out = f"{major}.{minor}.{patch}"
    if pre:
        out += f"-{pre}"
    if metadata:
        out += f"+{metadata}"
    return out


def default_image(settings: AdmissionSettings) -> str:
    """The image put into an empty ``spec.image``; empty when none can be derived."""
    if settings.dgdr_default_image:
        return settings.dgdr_default_image
    version = canonical_version(settings.operator_version)
    if version is None:
        return ""
    return f"{DEFAULT_IMAGE_REPOSITORY}:{version}"


def default_hub(obj: JSONObject, operation: Operation, settings: AdmissionSettings) -> JSONObject:
    """Default a v1beta1 DGDR; returns ``obj`` itself when nothing changes."""
    if operation != "CREATE":
        return obj
    spec = as_dict(obj.get("spec"))
    if spec is not None and go_string(spec.get("image")):
        return obj
    image = default_image(settings)
    if not image:
        return obj
    return as_go_writes({**obj, "spec": {**(spec or {}), "image": image}}, BETA_SPEC, BETA_STATUS)
