"""apiserver/crds.json is what scripts/gen_crd_schemas.py derives from the vendored CRDs."""

from __future__ import annotations

import sys
from pathlib import Path

from apiserver import crds

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import gen_crd_schemas  # noqa: E402


def test_the_checked_in_catalogue_is_generated_from_the_vendored_crds() -> None:
    assert (ROOT / "apiserver" / "crds.json").read_text() == gen_crd_schemas.render(gen_crd_schemas.catalogue())


def test_every_vendored_kind_and_served_version_is_looked_up() -> None:
    assert crds.kinds() == ("DynamoComponentDeployment", "DynamoGraphDeployment", "DynamoGraphDeploymentRequest",
                            "DynamoGraphDeploymentScalingAdapter", "DynamoModel")
    assert crds.lookup("nvidia.com/v1beta1", "DynamoGraphDeployment") is not None
    assert crds.lookup("nvidia.com/v1", "DynamoGraphDeployment") is None
    assert crds.lookup("nvidia.com/v1beta1", "DynamoGraphDeploy") is None
    alpha = crds.lookup("nvidia.com/v1alpha1", "DynamoGraphDeployment")
    assert alpha is not None and alpha.deprecation_warning and alpha.has_rules


def test_go_patterns_anchor_at_the_very_end() -> None:
    assert crds.go_regex("^a$").match("a\n") is None
    assert crds.go_regex("^a$").match("a") is not None
