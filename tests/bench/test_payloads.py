"""The benchmark's reviews are answered as intended (in process, no server): a scenario that
measured refusals or failed conversions would measure the wrong thing."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import orjson
import pytest

import kinds
from bench import bench_conversion, floor_server, payloads
from bench.report import _rule_budget, build_rows, chart, report, verdicts
from bench.scenarios import SCENARIOS, TARGETS, Scenario, dispatcher
from domain.admission import AdmissionContext
from tests.bench.helpers import results_meta

PAYLOAD_ANNOTATION = "nvidia.com/dgd-spec"


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.name)
def test_every_scenario_review_is_answered_as_wanted(sc: Scenario) -> None:
    # Through JSON, as the server receives it.
    doc = orjson.loads(orjson.dumps(sc.build()))
    outcome = dispatcher(sc)(doc)
    answer = orjson.loads(outcome.body)
    assert outcome.allowed, outcome.message
    assert outcome.code == 200
    assert sc.expect.encode() in outcome.body
    if sc.objects:
        assert len(answer["response"]["convertedObjects"]) == sc.objects
        desired = doc["request"]["desiredAPIVersion"]
        assert {o["apiVersion"] for o in answer["response"]["convertedObjects"]} == {desired}
    else:
        assert answer["response"]["allowed"] is True


def test_objects_have_the_form_their_scenario_names() -> None:
    migrated = payloads.dgd_migrated_update()["request"]
    assert PAYLOAD_ANNOTATION in _annotations(migrated["object"])
    assert PAYLOAD_ANNOTATION in _annotations(migrated["oldObject"])
    assert migrated["kind"]["version"] == "v1beta1"
    assert migrated["object"]["spec"] != migrated["oldObject"]["spec"]
    assert migrated["object"]["metadata"]["managedFields"]

    native = payloads.dgd_native_update()["request"]
    assert PAYLOAD_ANNOTATION not in _annotations(native["object"])

    alpha = payloads.dgd_v1alpha1_update()["request"]
    assert alpha["kind"]["version"] == alpha["requestKind"]["version"] == "v1alpha1"
    assert alpha["object"]["apiVersion"] == payloads.ALPHA

    created = payloads.dgd_migrated_create()["request"]
    assert created["operation"] == "CREATE" and created["oldObject"] is None
    assert PAYLOAD_ANNOTATION in _annotations(created["object"])

    large = payloads.large_dgd_update()["request"]["object"]
    assert len(large["spec"]["components"]) == payloads.LARGE_COMPONENTS
    assert PAYLOAD_ANNOTATION in _annotations(large)

    to_alpha = payloads.conversion_review(3, payloads.ALPHA)["request"]["objects"]
    assert all(PAYLOAD_ANNOTATION in _annotations(o) for o in to_alpha)
    assert len({o["metadata"]["uid"] for o in to_alpha}) == 3


def test_conversion_inputs_cover_every_kind_both_ways_and_round_trip() -> None:
    cases = bench_conversion.cases()
    assert {(kind, direction) for kind, direction, _, _ in cases} == {
        (kind, direction)
        for kind in payloads.STORED_ALPHA
        for direction in ("v1alpha1->v1beta1", "v1beta1->v1alpha1")
    }
    for _kind, _direction, objects, desired in cases:
        assert objects
        for obj in objects:
            before = copy.deepcopy(obj)
            back = kinds.convert(kinds.convert(obj, desired), obj["apiVersion"])
            assert back == before


def _closed(rps: float, cpu_ms: float, p99: float) -> dict[str, Any]:
    return {"rps": rps, "p50_ms": p99 / 2, "p99_ms": p99, "cpu_ms_per_request": cpu_ms, "errors": 0}


def test_report_lists_every_target(tmp_path: Path) -> None:
    scenarios: dict[str, Any] = {}
    for sc in SCENARIOS:
        latency = {"p50_ms": 100.0, "p99_ms": 120.0, "errors": 0}
        mode = "open" if sc.rate else "single"
        scenarios[sc.name] = {
            "webhook": {"closed": _closed(500, 1.0, 10), mode: latency},
            "echo": {"closed": _closed(1000, 0.5, 6), mode: latency},
            "floor": {"closed": _closed(800, 0.625, 8)},
        }
    results: dict[str, Any] = {
        "meta": results_meta(),
        "scenarios": scenarios,
        "rss": {
            "webhook_steady_mib": 100.0,
            "webhook_max_mib": 101.0,
            "webhook_before_conversion_mib": 90.0,
            "echo_steady_mib": 50.0,
            "ratio": 2.0,
        },
        "inprocess": {
            "scenarios": {
                sc.name: {"body_kib": 1.0, "decode_ms": 0.01, "parse_ms": 0.0125, "dispatch_ms": 0.5}
                for sc in SCENARIOS
            },
            "conversion": [
                {"kind": kind, "direction": d, "objects": 1, "ms_per_object": 0.1}
                for kind in payloads.STORED_ALPHA
                for d in ("v1alpha1->v1beta1", "v1beta1->v1alpha1")
            ],
        },
    }
    rows = build_rows(results)
    assert [r["name"] for r in rows] == [sc.name for sc in SCENARIOS]
    assert rows[0]["overhead_ms"] == pytest.approx(0.5)
    assert rows[0]["floor_ratio"] == pytest.approx(0.8)
    found = verdicts(results, rows)
    targeted = [sc for sc in SCENARIOS if sc.target is not None]
    converting = [sc for sc in SCENARIOS if sc.objects]
    several = [sc for sc in converting if sc.objects > 1]
    p99_rows = 2 * sum(sc.p99_target for sc in SCENARIOS)
    assert len(found) == 2 * len(targeted) + p99_rows + 8 + len(converting) + len(several) + 1
    by_name = {name: ok for name, _, _, ok in found}
    migrated = SCENARIOS[0]
    met = rows[0]["rps_ratio"] >= TARGETS["validate_migrated_ratio"]
    assert by_name[f"{migrated.title}: throughput vs echo (req/s)"] is met
    measured = {name: got for name, _, got, _ in found}
    # echo's 0.5 ms at 60 % allows 0.833 ms a request, the floor takes 0.625 of it.
    cpu_target = f"{migrated.title}: throughput vs echo (CPU per request)"
    assert measured[cpu_target] == "50.0% (floor 80.0%; rules 0.375 ms of a 0.208 ms budget)"
    mutate = next(sc for sc in SCENARIOS if sc.target == TARGETS["mutate_ratio"])
    # at 70 % echo's 0.5 ms allows 0.714 ms a request, the floor takes 0.625 of it
    assert measured[f"{mutate.title}: throughput vs echo (CPU per request)"] == (
        "50.0% (floor 80.0%; rules 0.375 ms of a 0.089 ms budget)"
    )
    # a target the floor itself does not reach leaves the rules no budget
    floor_row = {"floor_cpu_ms": 0.625, "echo_cpu_ms": 0.5, "floor_ratio": 0.8, "cpu_ms": 1.0}
    assert _rule_budget(floor_row, 0.9) == "floor 80.0%: the target is not below it"
    # The CPU per object of a conversion against the operator's share the build may take (the
    # meta names no build: the Python build's, all of it); one object's latency is not a target.
    one = next(sc for sc in converting if sc.objects == 1)
    one_cpu = {
        want: ok for name, want, _, ok in found if name.startswith("1-object") and name.endswith("(CPU)")
    }
    assert len([name for name, *_ in found if name.startswith("1-object")]) == 2
    assert one.operator_ms is not None and one.operator_ms < 1.0
    assert all(ok is False for ok in one_cpu.values())
    assert (
        f"<= {one.operator_ms:.3f} ms (1 of the operator's {one.operator_ms:g} ms, python build)" in one_cpu
    )
    compiled = verdicts({**results, "meta": {**results["meta"], "build": "compiled"}}, rows)
    third = {want for name, want, *_ in compiled if name.startswith("1-object") and name.endswith("(CPU)")}
    assert (
        f"<= {one.operator_ms / 3:.3f} ms (0.33 of the operator's {one.operator_ms:g} ms, compiled build)"
        in third
    )
    text = report(results, rows, tmp_path, has_chart=False)
    assert (tmp_path / "report.md").read_text() == text
    for sc in SCENARIOS:
        assert sc.title in text
    # The chart needs the bench extra (matplotlib); without it the report is written without one.
    has_matplotlib = importlib.util.find_spec("matplotlib") is not None
    assert chart(rows, tmp_path / "throughput.png") is has_matplotlib
    assert (tmp_path / "throughput.png").exists() is has_matplotlib
    if has_matplotlib:
        assert (tmp_path / "throughput.png").stat().st_size > 0
    assert "| 0.625 (0.80) |" in text
    assert f"| {SCENARIOS[0].title} | 1.0 | 0.0100 | 0.0125 | 0.5000 |  |" in text


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: sc.name)
def test_the_floor_answers_every_scenario_like_the_webhook(sc: Scenario) -> None:
    """The floor server's answer passes the load generator's check, and echoes the uid."""
    doc = orjson.loads(orjson.dumps(sc.build()))
    if sc.review_type == "convert":
        outcome = floor_server.review_conversion(doc)
        assert len(orjson.loads(outcome.body)["response"]["convertedObjects"]) == sc.objects
        assert len(outcome.conversions) == sc.objects
    else:
        outcome = floor_server.review_admission(doc, sc.review_type, AdmissionContext())
        assert outcome.kind == doc["request"]["kind"]["kind"]
    assert outcome.allowed and outcome.code == 200
    assert sc.expect.encode() in outcome.body
    assert orjson.loads(outcome.body)["response"]["uid"] == doc["request"]["uid"]


def test_the_floor_still_answers_a_malformed_request() -> None:
    doc = orjson.loads(orjson.dumps(SCENARIOS[0].build()))
    doc["request"]["operation"] = "PATCH"
    outcome = floor_server.review_admission(doc, "validate", AdmissionContext())
    assert not outcome.allowed and outcome.code == 400


def test_the_floor_returns_a_large_review_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A review past the offload size is walked from its bytes (app.review.conversion_stream):
    there too the floor returns every object unchanged instead of converting it."""
    from app.review import conversion_stream

    monkeypatch.setattr(conversion_stream, "converted_with_direction", floor_server.converted_with_direction)
    doc = payloads.conversion_review(3, payloads.BETA)
    outcome = conversion_stream.review_conversion_body(orjson.dumps(doc))
    answer = orjson.loads(b"".join(outcome.pieces()))
    assert answer["response"]["convertedObjects"] == doc["request"]["objects"]
    assert outcome.conversions == [("DynamoGraphDeployment", f"same->{payloads.BETA}")] * 3
