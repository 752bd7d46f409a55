"""Builders for admission inputs used across the admission test packages.

Requests are built the way the verified vectors describe them: user ``kubernetes-admin``
in groups ``system:masters`` and ``system:authenticated``, name and namespace taken from
the object's metadata.
"""

from __future__ import annotations

import copy
from typing import Any

from domain.admission import GVK, AdmissionInput, JSONObject, Operation, UserInfo

ADMIN = UserInfo(username="kubernetes-admin", groups=("system:masters", "system:authenticated"))

# The GVK each upstream per-kind path expects (its GVK guard).
PER_KIND_GVK = {
    "DynamoGraphDeployment": GVK("nvidia.com", "v1beta1", "DynamoGraphDeployment"),
    "DynamoComponentDeployment": GVK("nvidia.com", "v1beta1", "DynamoComponentDeployment"),
    "DynamoGraphDeploymentRequest": GVK("nvidia.com", "v1beta1", "DynamoGraphDeploymentRequest"),
}


def make_input(
    api_version: str,
    kind: str,
    operation: Operation,
    obj: JSONObject | None,
    old_obj: JSONObject | None = None,
    *,
    user: UserInfo = ADMIN,
    sub_resource: str = "",
    expected_gvk: GVK | None = None,
    request_version: str | None = None,
    uid: str = "00000000-0000-0000-0000-000000000001",
    copy_objects: bool = True,
) -> AdmissionInput:
    """An :class:`AdmissionInput` for ``obj`` as the apiserver would send it to the generic route.

    ``request_version`` sets ``requestKind`` to another version than ``kind`` (as the
    apiserver does when it converted the object for a per-kind path); objects are deep
    copied unless ``copy_objects`` is False so tests can reuse their dicts.
    """
    group, _, version = api_version.rpartition("/")
    gvk = GVK(group, version, kind)
    request_kind = GVK(group, request_version, kind) if request_version else None
    ref = obj if obj is not None else old_obj
    meta: dict[str, Any] = (ref or {}).get("metadata") or {}
    return AdmissionInput(
        uid=uid,
        kind=gvk,
        operation=operation,
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "")),
        request_kind=request_kind,
        resource=kind.lower() + "s",
        sub_resource=sub_resource,
        user=user,
        object=copy.deepcopy(obj) if copy_objects else obj,
        old_object=copy.deepcopy(old_obj) if copy_objects else old_obj,
        expected_gvk=expected_gvk,
    )
