"""Common pre-checks of ``kinds.validate`` (the operator's common admission checks): DELETE, sub-resources, terminating
objects, namespace exclusion, the GVK guard of the per-kind paths, kinds without rules."""

from __future__ import annotations

import copy

import pytest

from domain.admission import GVK, AdmissionContext
from kinds import validate
from tests.admission_helpers import PER_KIND_GVK, make_input
from tests.validation.assertions import assert_allowed
from tests.validation.dgd_builders import dcd, dgd

INVALID_DGD = dgd([])  # denied on CREATE/UPDATE: no components
INVALID_DCD = dcd(image=None)


def test_invalid_objects_are_denied_normally() -> None:
    assert not validate(
        make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "CREATE", INVALID_DGD), AdmissionContext()
    ).allowed
    assert not validate(
        make_input("nvidia.com/v1beta1", "DynamoComponentDeployment", "CREATE", INVALID_DCD),
        AdmissionContext(),
    ).allowed


@pytest.mark.parametrize(
    ("kind", "obj"), [("DynamoGraphDeployment", INVALID_DGD), ("DynamoComponentDeployment", INVALID_DCD)]
)
def test_delete_is_allowed_without_checks(kind: str, obj: dict[str, object]) -> None:
    inp = make_input("nvidia.com/v1beta1", kind, "DELETE", None, obj)
    assert_allowed(validate(inp, AdmissionContext()))


def test_sub_resource_is_allowed() -> None:
    inp = make_input(
        "nvidia.com/v1beta1",
        "DynamoGraphDeployment",
        "UPDATE",
        INVALID_DGD,
        INVALID_DGD,
        sub_resource="status",
    )
    assert_allowed(validate(inp, AdmissionContext()))


@pytest.mark.parametrize(
    ("kind", "obj"), [("DynamoGraphDeployment", INVALID_DGD), ("DynamoComponentDeployment", INVALID_DCD)]
)
def test_terminating_update_is_allowed(kind: str, obj: dict[str, object]) -> None:
    new = copy.deepcopy(obj)
    new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # type: ignore[index]
    assert_allowed(validate(make_input("nvidia.com/v1beta1", kind, "UPDATE", new, obj), AdmissionContext()))


def test_terminating_create_is_still_validated() -> None:
    new = copy.deepcopy(INVALID_DGD)
    new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert not validate(
        make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "CREATE", new), AdmissionContext()
    ).allowed


def test_excluded_namespace_is_allowed() -> None:
    ctx = AdmissionContext(namespace_excluded=lambda ns: ns == "default")
    inp = make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "CREATE", INVALID_DGD)
    assert_allowed(validate(inp, ctx))
    other = copy.deepcopy(INVALID_DGD)
    other["metadata"]["namespace"] = "prod"
    assert not validate(
        make_input("nvidia.com/v1beta1", "DynamoGraphDeployment", "CREATE", other), ctx
    ).allowed


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE", "DELETE"])
def test_gvk_guard_on_per_kind_path(operation: str) -> None:
    obj = dgd()
    alpha_obj = {**obj, "apiVersion": "nvidia.com/v1alpha1"}
    new = alpha_obj if operation != "DELETE" else None
    old = alpha_obj if operation != "CREATE" else None
    inp = make_input(
        "nvidia.com/v1alpha1",
        "DynamoGraphDeployment",
        operation,  # type: ignore[arg-type]
        new,
        old,
        expected_gvk=PER_KIND_GVK["DynamoGraphDeployment"],
    )
    d = validate(inp, AdmissionContext())
    assert not d.allowed
    assert d.status == {
        "code": 403,
        "reason": "Forbidden",
        "message": "admission requires nvidia.com/v1beta1, Kind=DynamoGraphDeployment, got nvidia.com/v1alpha1, "
        "Kind=DynamoGraphDeployment; check webhook and CRD conversion configuration",
    }
    assert d.warnings == []


def test_gvk_guard_passes_matching_kind_and_legacy_dcd_path() -> None:
    ok = make_input(
        "nvidia.com/v1beta1",
        "DynamoGraphDeployment",
        "CREATE",
        dgd(),
        expected_gvk=PER_KIND_GVK["DynamoGraphDeployment"],
    )
    assert_allowed(validate(ok, AdmissionContext()))
    legacy = make_input(
        "nvidia.com/v1beta1",
        "DynamoComponentDeployment",
        "CREATE",
        dcd(),
        expected_gvk=GVK("nvidia.com", "v1alpha1", "DynamoComponentDeployment"),
    )
    d = validate(legacy, AdmissionContext())
    assert d.message == (
        "admission requires nvidia.com/v1alpha1, Kind=DynamoComponentDeployment, got nvidia.com/v1beta1, "
        "Kind=DynamoComponentDeployment; check webhook and CRD conversion configuration"
    )


@pytest.mark.parametrize("kind", ["DynamoGraphDeploymentScalingAdapter", "SomethingNew"])
def test_kinds_without_rules_are_allowed(kind: str) -> None:
    inp = make_input(
        "nvidia.com/v1beta1", kind, "CREATE", {"metadata": {"name": "x"}, "spec": {"replicas": -1}}
    )
    assert_allowed(validate(inp, AdmissionContext()))


def test_other_groups_are_allowed() -> None:
    inp = make_input("example.com/v1", "DynamoGraphDeployment", "CREATE", INVALID_DGD)
    assert_allowed(validate(inp, AdmissionContext()))
