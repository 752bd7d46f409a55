"""Main-image and runtime-version rules and the semver parsers they use.

The rules are upstream's runtime-compatibility checks at the end of
``validateDynamoComponentDeploymentSharedSpec`` and ``validateDynamoComponentDeploymentSharedSpecUpdate``
(deploy/operator/internal/webhook/validation/shared_v1beta1.go) and of
``validateDynamoComponentDeploymentSharedSpecV1alpha1`` (shared_v1alpha1.go), with the helpers
``runtimeVersionImageAndPath``, ``runtimeVersionImageAndPathV1Alpha1`` and
``runtimeVersionOverrideRequired`` (shared_helpers.go).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from domain.constants import MAIN_CONTAINER
from gocompat.fielderrors import FieldError, Path, required
from validation.objects import JSON, lst, string, sub

OVERRIDE_REQUIRED_MSG: Final = (
    "is required when the specified main container image has no parseable semantic-version tag"
)

_UINT64_MAX: Final = (1 << 64) - 1
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_IMAGE_TAG_RE: Final = re.compile(
    r"^[vV]?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    rf"(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)
# Masterminds/semver NewVersion (lenient): optional "v", optional minor/patch.
_LENIENT_RE: Final = re.compile(
    r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
    r"(-([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?"
    r"(\+([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?$"
)
_GO_SPACE: Final = " \t\n\r\v\f\x85\xa0"


def _image_tag(image: str) -> str:
    ref = image.strip(_GO_SPACE)
    at = ref.find("@")
    if at >= 0:
        ref = ref[:at]
    last_slash = ref.rfind("/")
    last_colon = ref.rfind(":")
    if last_colon <= last_slash:
        return ""
    return ref[last_colon + 1 :]


def image_has_semver_tag(image: str) -> bool:
    """``runtimeversion.ParseImageVersion`` succeeds (strict semver core in the tag)."""
    tag = _image_tag(image)
    if not tag:
        return False
    m = _IMAGE_TAG_RE.match(tag.strip(_GO_SPACE))
    if m is None:
        return False
    # Numbers that overflow uint64 fail the semver parse.
    return all(len(g) < 20 or int(g) <= _UINT64_MAX for g in m.group(1, 2, 3))


def is_lenient_semver(value: str) -> bool:
    """Masterminds ``semver.NewVersion`` accepts ``value``."""
    m = _LENIENT_RE.match(value)
    if m is None:
        return False
    core = [m.group(1), (m.group(2) or ".0")[1:], (m.group(3) or ".0")[1:]]
    if any(int(c) > _UINT64_MAX for c in core):
        return False
    pre = m.group(5)
    if pre:
        for part in pre.split("."):
            if part.isdigit() and len(part) > 1 and part[0] == "0":
                return False
    return True


def override_required(image: str, override: str) -> bool:
    return not override and not image_has_semver_tag(image)


def hub_image_and_path(component: JSON, path: Path) -> tuple[str, Path]:
    image_path = path.child("podTemplate", "spec", "containers")
    for i, c in enumerate(lst(sub(sub(component, "podTemplate"), "spec"), "containers")):
        if isinstance(c, dict) and c.get("name") == MAIN_CONTAINER:
            return string(c, "image"), image_path.index(i).child("image")
    return "", image_path


def alpha_image_path(path: Path) -> Path:
    """Where a v1alpha1 service at ``path`` keeps its main container image."""
    return path.child("extraPodSpec", "mainContainer", "image")


def _create(
    image: str, image_path: Path, override: str, path: Path, allow_missing_override: bool
) -> list[FieldError]:
    if not image:
        return [required(image_path, "is required")]
    if not allow_missing_override and override_required(image, override):
        return [required(path.child("runtimeVersionOverride"), OVERRIDE_REQUIRED_MSG)]
    return []


def _update(
    new_image: str,
    old_image: str,
    image_path: Path,
    new_override: str,
    old_override: str,
    path: Path,
    allow_missing_override: bool,
) -> list[FieldError]:
    if not new_image and old_image:
        return [required(image_path, "is required")]
    if (
        not allow_missing_override
        and override_required(new_image, new_override)
        and (new_image != old_image or new_override != old_override)
    ):
        return [required(path.child("runtimeVersionOverride"), OVERRIDE_REQUIRED_MSG)]
    return []


def hub_create(component: JSON, path: Path, allow_missing_override: bool) -> list[FieldError]:
    image, image_path = hub_image_and_path(component, path)
    return _create(
        image, image_path, string(component, "runtimeVersionOverride"), path, allow_missing_override
    )


def alpha_create(image: str, override: str, path: Path, allow_missing_override: bool) -> list[FieldError]:
    """``image``, ``override``: the v1alpha1 service's ``extraPodSpec.mainContainer.image`` and
    ``runtimeVersionOverride``."""
    return _create(image, alpha_image_path(path), override, path, allow_missing_override)


def _update_with(
    image_and_path: Callable[[JSON, Path], tuple[str, Path]],
    new: JSON,
    old: JSON,
    path: Path,
    allow_missing_override: bool,
) -> list[FieldError]:
    new_image, image_path = image_and_path(new, path)
    old_image, _ = image_and_path(old, path)
    return _update(
        new_image,
        old_image,
        image_path,
        string(new, "runtimeVersionOverride"),
        string(old, "runtimeVersionOverride"),
        path,
        allow_missing_override,
    )


def hub_update(new: JSON, old: JSON, path: Path, allow_missing_override: bool) -> list[FieldError]:
    return _update_with(hub_image_and_path, new, old, path, allow_missing_override)


def alpha_update(
    new_image: str,
    new_override: str,
    old_image: str,
    old_override: str,
    path: Path,
    allow_missing_override: bool,
) -> list[FieldError]:
    return _update(
        new_image, old_image, alpha_image_path(path), new_override, old_override, path, allow_missing_override
    )
