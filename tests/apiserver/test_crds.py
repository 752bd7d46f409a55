"""apiserver/crds.json, derived from the vendored CRDs (that it is what scripts/gen_crd_schemas.py writes:
scripts/generate --check), as apiserver.crds reads it."""

from __future__ import annotations

from apiserver import crds


def test_every_vendored_kind_and_served_version_is_looked_up() -> None:
    assert crds.kinds() == (
        "DynamoComponentDeployment",
        "DynamoGraphDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
        "DynamoModel",
    )
    assert crds.lookup("nvidia.com/v1beta1", "DynamoGraphDeployment") is not None
    assert crds.lookup("nvidia.com/v1", "DynamoGraphDeployment") is None
    assert crds.lookup("nvidia.com/v1beta1", "DynamoGraphDeploy") is None
    alpha = crds.lookup("nvidia.com/v1alpha1", "DynamoGraphDeployment")
    assert alpha is not None and alpha.deprecation_warning and alpha.has_rules


def test_go_patterns_anchor_at_the_very_end() -> None:
    assert crds.go_regex("^a$").match("a\n") is None
    assert crds.go_regex("^a$").match("a") is not None
