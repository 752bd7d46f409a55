"""Defaulting never fails on objects of the right shape with arbitrary member types, and
whatever it answers defaults to itself."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import kinds
from domain.admission import AdmissionContext, AdmissionSettings, Operation
from tests.admission_helpers import make_input
from tests.defaulting.shapes import ANNOTATIONS, DCD_SPEC, DGD_SPEC, DGDR_SPEC, members

HUB = "nvidia.com/v1beta1"
SPECS = {
    "DynamoGraphDeployment": members(DGD_SPEC),
    "DynamoComponentDeployment": members(DCD_SPEC),
    "DynamoGraphDeploymentRequest": members(DGDR_SPEC),
}
CTXS = [
    AdmissionContext(AdmissionSettings(grove=True, operator_version="1.1.0")),
    AdmissionContext(AdmissionSettings(operator_version="no-version")),
]


@given(
    st.data(), st.sampled_from(sorted(SPECS)), st.sampled_from(["CREATE", "UPDATE"]), st.sampled_from(CTXS)
)
def test_defaulting_any_shape(
    data: st.DataObject, kind: str, operation: Operation, ctx: AdmissionContext
) -> None:
    meta: dict[str, Any] = {"name": "x", "namespace": "n", "annotations": data.draw(ANNOTATIONS)}
    obj = {"apiVersion": HUB, "kind": kind, "metadata": meta, "spec": data.draw(SPECS[kind])}
    old = obj if operation == "UPDATE" else None
    d = kinds.default(make_input(HUB, kind, operation, obj, old), ctx)
    assert d.allowed
    if d.patched is not None:
        again = kinds.default(make_input(HUB, kind, operation, d.patched, old), ctx)
        assert again.allowed and again.patched is None
