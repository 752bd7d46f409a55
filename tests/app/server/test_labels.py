"""The review metrics' label values (app/server/labels.py): the registry's kinds, the five operations,
the directions between served versions and the service's status codes are themselves; anything
else is ``other``. Through the app: thousands of reviews of made-up kinds and operations leave
``/metrics`` the size it was, and the review log line carries what they said, cut."""

from __future__ import annotations

import json
import logging
import random
import string
from typing import Any

import pytest
from prometheus_client import REGISTRY
from starlette.testclient import TestClient

import kinds
from app.server import labels
from app.server.labels import OTHER
from app.server.observability import LOG_DETAIL_CHARS, LOG_VALUE_CHARS
from tests.app.conftest import JSON_HEADERS, admission_review, conversion_review


def test_every_registered_kind_and_operation_is_its_own_label() -> None:
    for kind in kinds.REGISTRY:
        assert labels.kind_label(kind.kind) == kind.kind
    for operation in ("CREATE", "UPDATE", "DELETE", "CONNECT", "CONVERT"):
        assert labels.operation_label(operation) == operation
    key = ("DynamoGraphDeployment", "UPDATE", False)
    assert labels.admission_key(key) == key
    # The known keys are shared: a tally keeps one tuple per label set.
    assert labels.ADMISSION_KEYS[("DynamoGraphDeployment", "UPDATE", False)] is labels.admission_key(key)


@pytest.mark.parametrize(
    ("kind", "operation", "expected"),
    [
        ("dynamographdeployment", "UPDATE", (OTHER, "UPDATE", True)),
        ("DynamoGraphDeployment", "update", ("DynamoGraphDeployment", OTHER, True)),
        ("", "", (OTHER, OTHER, True)),
        ("x" * 10_000, "PATCH", (OTHER, OTHER, True)),
        ("Secret", "CREATE", (OTHER, "CREATE", True)),
    ],
)
def test_anything_else_is_other(kind: str, operation: str, expected: tuple[str, str, bool]) -> None:
    assert labels.admission_key((kind, operation, True)) == expected


def test_conversion_directions_are_between_served_versions() -> None:
    assert labels.conversion_key(("DynamoGraphDeployment", "v1alpha1->v1beta1")) == (
        "DynamoGraphDeployment",
        "v1alpha1->v1beta1",
    )
    assert labels.conversion_key(("DynamoComponentDeployment", "v1beta1->v1beta1")) == (
        "DynamoComponentDeployment",
        "v1beta1->v1beta1",
    )
    assert labels.conversion_key(("DynamoGraphDeployment", "v2->v1beta1")) == ("DynamoGraphDeployment", OTHER)
    # DynamoModel has no conversion: none of its directions is one.
    assert labels.conversion_key(("DynamoModel", "v1alpha1->v1alpha1")) == ("DynamoModel", OTHER)
    assert labels.conversion_key(("Made", "v1alpha1->v1beta1")) == (OTHER, OTHER)
    convertible = [k for k in kinds.REGISTRY if k.convertible]
    assert len(labels.CONVERSION_KEYS) == sum(len(k.served) ** 2 for k in convertible)


def test_status_codes() -> None:
    for code in (200, 400, 403, 404, 405, 408, 413, 415, 422, 499, 500, 503):
        assert labels.code_label(code) == str(code)
    for code in (0, 201, 302, 418, 600, -1):
        assert labels.code_label(code) == OTHER


def _made_up(rng: random.Random, size: int = 12) -> str:
    return "".join(rng.choice(string.ascii_letters) for _ in range(size))


def _post_made_up(client: TestClient, rng: random.Random, count: int) -> None:
    for i in range(count):
        review = admission_review(operation=_made_up(rng, 8), uid=f"made-up-{i}")
        review["request"]["kind"]["kind"] = _made_up(rng)
        path = ("/validate", "/mutate")[i % 2]
        resp = client.post(path, content=json.dumps(review), headers=JSON_HEADERS)
        assert resp.status_code == 200
        doc = resp.json()["response"]
        assert doc["allowed"] is False and doc["status"]["code"] == 400  # no such operation


def test_made_up_reviews_leave_the_metrics_the_size_they_were(client: TestClient) -> None:
    rng = random.Random(7)
    _post_made_up(client, rng, 10)  # the "other" series exist from here on
    other = {"webhook": "/validate", "kind": OTHER, "operation": OTHER, "allowed": "false"}
    counted = REGISTRY.get_sample_value("dynamo_webhook_admission_reviews_total", other) or 0.0
    before = len(client.get("/metrics").content)
    _post_made_up(client, rng, 2000)
    objects = [{"apiVersion": "nvidia.com/v1beta1", "kind": _made_up(rng), "metadata": {"name": "x"}}]
    for _ in range(50):
        client.post("/convert", content=json.dumps(conversion_review(objects)), headers=JSON_HEADERS)
    after = len(client.get("/metrics").content)
    # Only the counts' digits grow; each made-up value as a series would take about 500 bytes.
    assert after - before < 2048, (before, after)
    assert REGISTRY.get_sample_value("dynamo_webhook_admission_reviews_total", other) == counted + 1000


def _review_line(
    client: TestClient, review: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> dict[str, Any]:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="dynamo_webhook.review"):
        resp = client.post("/validate", content=json.dumps(review), headers=JSON_HEADERS)
    assert resp.status_code == 200
    (record,) = [r for r in caplog.records if r.getMessage() == "review"]
    return vars(record)


def test_the_log_line_carries_a_made_up_value_cut(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    kept = LOG_VALUE_CHARS - 1
    review = admission_review(operation="P" * 100_000, uid="u" * 5000)
    review["request"]["kind"]["kind"] = "K" * 100_000
    line = _review_line(client, review, caplog)
    assert line["uid"] == "u" * kept + "…"
    assert line["kind"] == "K" * kept + "…"
    assert line["operation"] == "P" * kept + "…"
    # The denial quotes the operation whole (as the answer does); the line carries it cut.
    assert len(line["detail"]) == LOG_DETAIL_CHARS and line["detail"].startswith("request.operation: ")
    review = admission_review(operation="CREATE")
    review["request"]["kind"]["kind"] = "K" * 100_000
    review["request"]["name"] = "n" * 5000
    line = _review_line(client, review, caplog)
    assert line["kind"] == "K" * kept + "…"
    assert line["object"] == ("ns/" + "n" * 5000)[:kept] + "…"


def test_short_values_are_logged_whole(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    line = _review_line(client, admission_review(operation="CREATE", uid="u-short"), caplog)
    assert (line["uid"], line["kind"], line["operation"], line["object"]) == (
        "u-short",
        "DynamoGraphDeploymentScalingAdapter",
        "CREATE",
        "ns/a",
    )
