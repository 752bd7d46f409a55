"""The lint edits found by the CRD's schema: what they delete is what the schema requires or keys a
list map by (so the API server answers ``Required value``), and what they put into a list is one
``null``."""

from __future__ import annotations

import copy
import json
import random

from apiserver import pipeline
from app.cli.offline import OfflineService
from app.server.settings import Settings
from tests.examples import manifest
from tools.opdiff import lint_edits


def test_a_member_the_schema_requires_deleted_is_a_required_value() -> None:
    # A DCD's pod template reaches the validation as written (its defaulter leaves it alone).
    base = manifest("dcd-v1beta1.yaml")
    service = OfflineService(Settings(feature_checkpoint=True))
    for seed in range(12):
        obj = copy.deepcopy(base)
        assert lint_edits.schema_required_deleted(random.Random(seed), obj, [])
        out = pipeline.create(obj, service)
        assert not out.allowed and out.status is not None
        assert ": Required value" in out.status["message"], out.status["message"]


def test_one_null_is_put_into_a_list() -> None:
    base = manifest("dgd-agg-v1beta1.yaml")
    for seed in range(12):
        obj = copy.deepcopy(base)
        assert lint_edits.null_in_list(random.Random(seed), obj, [])
        assert json.dumps(obj).count("null") == json.dumps(base).count("null") + 1


def test_a_document_no_crd_serves_has_nothing_to_edit() -> None:
    obj = {"apiVersion": "nvidia.com/v9", "kind": "DynamoGraphDeployment", "spec": {"a": [1]}}
    assert not lint_edits.schema_required_deleted(random.Random(0), obj, [])
    assert not lint_edits.null_in_list(random.Random(0), obj, [])
