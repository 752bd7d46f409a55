"""Source version (requestKind) and the schema layer on UPDATE."""

from __future__ import annotations

import copy

from domain.admission import AdmissionContext
from kinds import validate
from tests.admission_helpers import PER_KIND_GVK, make_input
from tests.validation.assertions import assert_allowed, assert_invalid
from tests.validation.conversion_probe import require_conversion
from tests.validation.dgd_builders import component, dgd

KIND = "DynamoGraphDeployment"
OVERRIDE = "is required when the specified main container image has no parseable semantic-version tag"
PATTERN = "'^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'"


def test_request_kind_v1alpha1_reports_source_paths() -> None:
    require_conversion(KIND)
    obj = dgd([component("worker", image="r:latest")])
    hub = make_input("nvidia.com/v1beta1", KIND, "CREATE", obj, expected_gvk=PER_KIND_GVK[KIND])
    assert_invalid(
        validate(hub, AdmissionContext()),
        KIND,
        "graph",
        [f"spec.components[0].runtimeVersionOverride: Required value: {OVERRIDE}"],
    )
    converted = make_input(
        "nvidia.com/v1beta1", KIND, "CREATE", obj, expected_gvk=PER_KIND_GVK[KIND], request_version="v1alpha1"
    )
    assert_invalid(
        validate(converted, AdmissionContext()),
        KIND,
        "graph",
        [f"spec.services[worker].runtimeVersionOverride: Required value: {OVERRIDE}"],
    )


def test_schema_layer_ratchets_unchanged_values_on_update() -> None:
    old = dgd(topologyConstraint={"packDomain": "Rack"})
    assert_allowed(
        validate(
            make_input("nvidia.com/v1beta1", KIND, "UPDATE", copy.deepcopy(old), old), AdmissionContext()
        )
    )
    new = dgd(topologyConstraint={"packDomain": "Zone"})
    assert_invalid(
        validate(make_input("nvidia.com/v1beta1", KIND, "UPDATE", new, old), AdmissionContext()),
        KIND,
        "graph",
        [
            'spec.topologyConstraint.packDomain: Invalid value: "Zone": spec.topologyConstraint.packDomain in body '
            f"should match {PATTERN}"
        ],
    )


def test_schema_layer_on_v1alpha1_paths() -> None:
    obj = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": KIND,
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {
            "services": {"w": {"topologyConstraint": {"packDomain": "Rack"}}},
            "experimental": {"kvTransferPolicy": {"labelKey": "k", "domain": "-z"}},
        },
    }
    d = validate(make_input("nvidia.com/v1alpha1", KIND, "CREATE", obj), AdmissionContext())
    assert_invalid(
        d,
        KIND,
        "g",
        [
            'spec.services[w].topologyConstraint.packDomain: Invalid value: "Rack": '
            f"spec.services[w].topologyConstraint.packDomain in body should match {PATTERN}",
            'spec.experimental.kvTransferPolicy.domain: Invalid value: "-z": spec.experimental.kvTransferPolicy.domain '
            f"in body should match {PATTERN}",
        ],
    )
