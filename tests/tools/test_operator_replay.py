"""The pinned operator's own answers, replayed: every review in tests/fixtures/opdiff (written by
tools/opdiff/drive.py, which sent each to the operator's webhook handlers and to this service
against a real API server) is sent to the service's HTTP app, and its answer must be the
operator's, compared as the driver compares them (allowed, status code, reason and message,
warnings, the object after the patch; converted objects under the conversion vectors' equality).

The API server the driver ran against served neither the InferencePool API nor
ClusterTopologyBindings; the replay gives the service the same answers to those look-ups.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from app.server.routes import AppState, create_app
from app.server.settings import Settings
from domain.admission import AdmissionContext, LookupNotFound
from tools.opdiff.drive import PRINCIPAL, first_difference, view

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "opdiff" / "cases.jsonl.xz"
with lzma.open(FIXTURES, "rt") as _lines:
    CASES: list[dict[str, Any]] = [json.loads(line) for line in _lines]


def _no_binding(name: str) -> tuple[str, ...]:
    raise LookupNotFound(name)


def _client() -> TestClient:
    settings = Settings(operator_principal=PRINCIPAL)
    ctx = AdmissionContext(
        settings=settings.admission_settings(cluster_lookups=True),
        cluster_topology=_no_binding,
        inference_pool_available=lambda: False,
    )
    return TestClient(create_app(AppState(settings=settings, admission=ctx)))


CLIENT = _client()


def test_the_fixtures_hold_every_kind_of_review() -> None:
    names = {case["case"].split("-", 1)[1] for case in CASES}
    assert names == {"convert", "convert-back", "mutate", "validate"}
    assert len(CASES) >= 2000


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_the_service_answers_as_the_operator(case: dict[str, Any]) -> None:
    name = case["case"].split("-", 1)[1]
    response = CLIENT.post(
        case["path"], content=json.dumps(case["review"]), headers={"Content-Type": "application/json"}
    )
    if response.status_code != 200:
        ours: dict[str, Any] = {
            "httpStatus": response.status_code,
            "body": response.text.split("\n")[0][:300],
        }
    else:
        ours = response.json()["response"]
    assert (
        first_difference(view(name, case["review"], case["answer"]), view(name, case["review"], ours)) is None
    )
