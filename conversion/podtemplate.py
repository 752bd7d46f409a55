"""Kubernetes pod-template helpers used by the component conversion.

Containers, probes and pod specs stay plain JSON dicts (typed views, see :mod:`gocompat.view`).
This module provides what the typed upstream code gets from Go for free: the Go types of those values, ``apiequality.Semantic.DeepEqual`` zero tests by type (empty
and nil collections are equal, value-typed zero fields equal absent ones, a pointer to an empty
struct is not absent), and the ``mergo.Merge(…, WithOverride)`` overlay used to merge
``extraPodSpec.mainContainer`` into the generated main container.
"""

from __future__ import annotations

from typing import Any

from domain.constants import FRONTEND_SIDECAR_CONTAINER, MAIN_CONTAINER
from gocompat import mergo
from gocompat import view as goview

__all__ = [
    "CONTAINER",
    "CONTAINERS",
    "ENV_FROM_LIST",
    "ENV_LIST",
    "FRONTEND_SIDECAR_CONTAINER",
    "MAIN_CONTAINER",
    "MOUNT",
    "OBJECT_META",
    "POD_SPEC",
    "POD_TEMPLATE",
    "PROBE",
    "RESOURCES",
    "container_has_only_name",
    "container_is_empty",
    "find_container",
    "has_container",
    "merge_envs",
    "merge_override",
    "pod_spec_is_zero",
    "pod_template_is_zero",
]

# Go types (generated table keys, gocompat.tables_core) of the values handled here.
CONTAINER = "core/v1.Container"
CONTAINERS = "[]core/v1.Container"
ENV_LIST = "[]core/v1.EnvVar"
ENV_FROM_LIST = "[]core/v1.EnvFromSource"
MOUNT = "core/v1.VolumeMount"
OBJECT_META = "meta/v1.ObjectMeta"
POD_SPEC = "core/v1.PodSpec"
POD_TEMPLATE = "core/v1.PodTemplateSpec"
PROBE = "*core/v1.Probe"
RESOURCES = "core/v1.ResourceRequirements"


def container_is_empty(c: dict[str, Any] | None) -> bool:
    """``containerIsEmpty``: nothing but (possibly) a name."""
    return c is None or goview.is_zero(CONTAINER, c, skip="name")


def container_has_only_name(c: dict[str, Any]) -> bool:
    return container_is_empty(c)


def pod_spec_is_zero(p: dict[str, Any] | None) -> bool:
    return p is None or goview.is_zero(POD_SPEC, p)


def pod_template_is_zero(t: dict[str, Any] | None) -> bool:
    """``podTemplateIsZero``: a present template equal to the zero PodTemplateSpec."""
    return t is not None and goview.is_zero(POD_TEMPLATE, t)


def find_container(containers: list[dict[str, Any]] | None, name: str) -> dict[str, Any] | None:
    for c in containers or ():
        if c.get("name", "") == name:
            return c
    return None


def has_container(containers: list[dict[str, Any]] | None, name: str) -> bool:
    return find_container(containers, name) is not None


def merge_envs(common: list[Any] | None, specific: list[Any] | None) -> list[Any] | None:
    """Common entries first; a specific entry with a known name replaces it in place."""
    out: list[Any] = []
    seen: dict[str, int] = {}
    for e in common or ():
        seen[e.get("name", "")] = len(out)
        out.append(e)
    for e in specific or ():
        name = e.get("name", "")
        idx = seen.get(name)
        if idx is not None:
            out[idx] = e
            continue
        seen[name] = len(out)
        out.append(e)
    return out or None


def merge_override(dst: dict[str, Any], src: dict[str, Any], copy: bool = True) -> None:
    """Overlay container ``src`` onto container ``dst`` like ``mergo.Merge(dst, src,
    mergo.WithOverride)`` (see :func:`gocompat.mergo.merge_override`): neither input
    changes below the top level of ``dst``."""
    mergo.merge_override(CONTAINER, dst, src, copy)
