"""Review metrics counted by :class:`app.server.tally.PathTally`: what a scrape reads equals what one
Prometheus call per review gives, on every scrape, in one process and in several."""

from __future__ import annotations

import gc
import itertools
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import REGISTRY, CollectorRegistry, Histogram

from app.server import observability
from app.server.observability import BODY_BUCKETS, LATENCY_BUCKETS
from app.server.tally import PathTally

_paths = itertools.count()


def _path() -> str:
    return f"/tally-test-{next(_paths)}"


def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


LATENCY_NAME = "controller_runtime_webhook_latency_seconds"
BODY_NAME = "dynamo_webhook_request_body_bytes"


def _histogram(
    path: str, name: str = LATENCY_NAME, buckets: tuple[float, ...] = LATENCY_BUCKETS
) -> dict[str, float]:
    """The path's histogram ``name`` as one scrape reads it (one collection of the registry, not one
    per bucket: each walks every series the suite has made)."""
    scraped = {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for metric in REGISTRY.collect()
        for sample in metric.samples
    }

    def value(name: str, **labels: str) -> float:
        return scraped.get((name, frozenset(labels.items())), 0.0)

    out = {"sum": value(f"{name}_sum", webhook=path)}
    for bound in (*buckets, float("inf")):
        le = "+Inf" if bound == float("inf") else repr(bound)
        out[le] = value(f"{name}_bucket", webhook=path, le=le)
    return out


def _observed(values: list[float], buckets: tuple[float, ...] = LATENCY_BUCKETS) -> dict[str, float]:
    """The same histogram fed one observe() per value."""
    registry = CollectorRegistry()
    hist = Histogram("h", "h", buckets=buckets, registry=registry)
    for v in values:
        hist.observe(v)
    out = {"sum": registry.get_sample_value("h_sum") or 0.0}
    for bound in (*buckets, float("inf")):
        le = "+Inf" if bound == float("inf") else repr(bound)
        out[le] = registry.get_sample_value("h_bucket", {"le": le}) or 0.0
    return out


# Latencies on and beside every bucket bound, and beyond the last.
LATENCIES = st.lists(
    st.one_of(st.sampled_from(LATENCY_BUCKETS), st.floats(min_value=0, max_value=20, allow_nan=False)),
    max_size=40,
)


HISTOGRAM_PATH = _path()
HISTOGRAM_TALLY = PathTally(HISTOGRAM_PATH, each_review=False)


@given(LATENCIES)
def test_the_latency_histogram_is_what_observe_gives(seconds: list[float]) -> None:
    path, tally = HISTOGRAM_PATH, HISTOGRAM_TALLY
    before = _histogram(path)
    requests = _value("controller_runtime_webhook_requests_total", webhook=path, code="200")
    for s in seconds:
        tally.admission(s, "DynamoGraphDeployment", "UPDATE", True, 200, body_bytes=2048)
    after = _histogram(path)
    assert {k: after[k] - before[k] for k in after} == pytest.approx(_observed(seconds))
    assert _value("controller_runtime_webhook_requests_total", webhook=path, code="200") == requests + len(
        seconds
    )


# Body sizes on and beside every bucket bound, and beyond the last.
SIZES = st.lists(
    st.one_of(
        st.sampled_from([int(b) for b in BODY_BUCKETS]),
        st.sampled_from([int(b) + 1 for b in BODY_BUCKETS]),
        st.integers(min_value=0, max_value=128 * 1024 * 1024),
    ),
    max_size=40,
)
BODY_PATH = _path()
BODY_TALLY = PathTally(BODY_PATH, each_review=False)


@given(SIZES, st.booleans())
def test_the_body_size_histogram_is_what_observe_gives(sizes: list[int], convert: bool) -> None:
    path, tally = BODY_PATH, BODY_TALLY
    before = _histogram(path, BODY_NAME, BODY_BUCKETS)
    for size in sizes:
        if convert:
            tally.conversion(0.001, [("DynamoGraphDeployment", "v1alpha1->v1beta1")], body_bytes=size)
        else:
            tally.admission(0.001, "DynamoGraphDeployment", "UPDATE", True, 200, body_bytes=size)
    after = _histogram(path, BODY_NAME, BODY_BUCKETS)
    assert {k: after[k] - before[k] for k in after} == pytest.approx(
        _observed([float(s) for s in sizes], BODY_BUCKETS)
    )


def test_every_scrape_counts_every_review_answered_before_it() -> None:
    path = _path()
    tally = PathTally(path, each_review=False)
    tally.admission(0.002, "DynamoGraphDeployment", "CREATE", True, 200, body_bytes=2048)
    tally.admission(0.003, "DynamoGraphDeployment", "UPDATE", False, 403, body_bytes=2048)
    tally.rejected(413, bad_request=True)
    tally.rejected(499, bad_request=False)
    # Nothing reached the metric objects yet: the scrape itself publishes.
    assert observability.ADMISSIONS.labels(path, "DynamoGraphDeployment", "CREATE", "true")._value.get() == 0
    admissions = "dynamo_webhook_admission_reviews_total"
    assert (
        _value(admissions, webhook=path, kind="DynamoGraphDeployment", operation="CREATE", allowed="true")
        == 1
    )
    assert (
        _value(admissions, webhook=path, kind="DynamoGraphDeployment", operation="UPDATE", allowed="false")
        == 1
    )
    denials = "dynamo_webhook_admission_denials_total"
    assert _value(denials, webhook=path, kind="DynamoGraphDeployment", operation="UPDATE", code="403") == 1
    requests = "controller_runtime_webhook_requests_total"
    assert [_value(requests, webhook=path, code=c) for c in ("200", "413", "499")] == [2, 1, 1]
    assert _value("dynamo_webhook_rejected_requests_total", webhook=path, code="413") == 1
    assert _value("dynamo_webhook_rejected_requests_total", webhook=path, code="499") == 0
    tally.admission(0.001, "DynamoGraphDeployment", "CREATE", True, 200, body_bytes=2048)
    assert (
        _value(admissions, webhook=path, kind="DynamoGraphDeployment", operation="CREATE", allowed="true")
        == 2
    )


def test_conversions_and_failures() -> None:
    path = _path()
    tally = PathTally(path, each_review=False)
    tally.conversion(
        0.01,
        [("DynamoGraphDeployment", "v1alpha1->v1beta1")] * 3 + [("DynamoModel", "v1beta1->v1alpha1")],
        body_bytes=2048,
    )
    tally.conversion(0.01, None, body_bytes=2048)
    name = "dynamo_webhook_conversions_total"
    before = _value(name, kind="DynamoGraphDeployment", direction="v1alpha1->v1beta1")
    tally.conversion(0.01, [("DynamoGraphDeployment", "v1alpha1->v1beta1")], body_bytes=2048)
    assert _value(name, kind="DynamoGraphDeployment", direction="v1alpha1->v1beta1") == before + 1
    assert _value("dynamo_webhook_conversion_failures_total", webhook=path) == 1


def test_requests_in_flight_are_read_live() -> None:
    path = _path()
    tally = PathTally(path, each_review=False)
    gauge = "controller_runtime_webhook_requests_in_flight"
    tally.started()
    tally.started()
    assert _value(gauge, webhook=path) == 2
    tally.finished()
    assert _value(gauge, webhook=path) == 1


def test_with_several_processes_each_review_is_published_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "/nonexistent")
    path = _path()
    tally = PathTally(path)
    assert tally.each_review
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    tally.started()
    assert observability.IN_FLIGHT.labels(path)._value.get() == 1
    tally.admission(0.004, "DynamoModel", "CREATE", True, 200, body_bytes=2048)
    tally.finished()
    # In the metric objects (the files the supervisor reads), without a collection.
    assert observability.IN_FLIGHT.labels(path)._value.get() == 0
    assert observability.REQUESTS.labels(path, "200")._value.get() == 1
    assert observability.ADMISSIONS.labels(path, "DynamoModel", "CREATE", "true")._value.get() == 1
    assert observability.LATENCY.labels(path)._sum.get() == pytest.approx(0.004)


def test_a_replaced_tally_is_not_published_any_more() -> None:
    # A new app's tally of a path takes over the path's in-flight gauge; the old one is dropped.
    path = _path()
    old: Any = PathTally(path, each_review=False)
    before = len(observability._BEFORE_COLLECT)
    PathTally(path, each_review=False)
    assert len(observability._BEFORE_COLLECT) == before + 1
    del old
    gc.collect()
    REGISTRY.get_sample_value(
        "controller_runtime_webhook_requests_total", {"webhook": "/none", "code": "200"}
    )
    assert len(observability._BEFORE_COLLECT) <= before


def test_scrapes_from_another_thread_lose_no_review() -> None:
    path = _path()
    tally = PathTally(path, each_review=False)
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            REGISTRY.get_sample_value(
                "controller_runtime_webhook_requests_total", {"webhook": path, "code": "200"}
            )

    scraper = threading.Thread(target=scrape)
    scraper.start()
    try:
        for i in range(20000):
            tally.admission(0.001, "DynamoGraphDeployment", "UPDATE", i % 2 == 0, 403, body_bytes=2048)
    finally:
        stop.set()
        scraper.join()
    assert _value("controller_runtime_webhook_requests_total", webhook=path, code="200") == 20000
    admissions = "dynamo_webhook_admission_reviews_total"
    labels = {"webhook": path, "kind": "DynamoGraphDeployment", "operation": "UPDATE"}
    assert (
        _value(admissions, **labels, allowed="true") == _value(admissions, **labels, allowed="false") == 10000
    )
    assert _histogram(path)["0.001"] == 20000


def _series(name: str, path: str) -> set[tuple[tuple[str, str], ...]]:
    """The label sets of ``name``'s samples for ``path`` (every path's, for the conversions)."""
    out = set()
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            if sample.name == name and sample.labels.get("webhook", path) == path:
                out.add(tuple(sorted(sample.labels.items())))
    return out


def test_made_up_kinds_operations_and_codes_count_as_other() -> None:
    """Thousands of distinct kinds, operations and codes make no more series than the fixed set."""
    path = _path()
    tally = PathTally(path, each_review=False)
    for i in range(3000):
        tally.admission(0.001, f"Kind{i}", f"OP{i}", i % 2 == 0, 600 + i, body_bytes=2048)
        tally.rejected(1000 + i, bad_request=True)
        tally.conversion(
            0.001,
            [(f"Kind{i}", f"v{i}->v1beta1"), ("DynamoGraphDeployment", f"v{i}->v1beta1")],
            body_bytes=2048,
        )
    tally.admission(0.001, "DynamoGraphDeployment", "UPDATE", False, 422, body_bytes=2048)
    admissions = "dynamo_webhook_admission_reviews_total"
    assert _series(admissions, path) == {
        (("allowed", allowed), ("kind", "other"), ("operation", "other"), ("webhook", path))
        for allowed in ("true", "false")
    } | {
        (("allowed", "false"), ("kind", "DynamoGraphDeployment"), ("operation", "UPDATE"), ("webhook", path))
    }
    assert _value(admissions, webhook=path, kind="other", operation="other", allowed="true") == 1500
    denials = "dynamo_webhook_admission_denials_total"
    assert _value(denials, webhook=path, kind="other", operation="other", code="other") == 1500
    assert _value(denials, webhook=path, kind="DynamoGraphDeployment", operation="UPDATE", code="422") == 1
    assert len(_series(denials, path)) == 2
    requests = "controller_runtime_webhook_requests_total"
    assert {dict(s)["code"] for s in _series(requests, path)} == {"200", "other"}
    assert _value(requests, webhook=path, code="other") == 3000
    assert {dict(s)["code"] for s in _series("dynamo_webhook_rejected_requests_total", path)} == {"other"}
    conversions = "dynamo_webhook_conversions_total"
    assert _value(conversions, kind="other", direction="other") >= 3000
    assert _value(conversions, kind="DynamoGraphDeployment", direction="other") >= 3000
    assert not any(dict(s)["kind"].startswith("Kind") for s in _series(conversions, path))
    # The counts kept between scrapes are bounded too, not only the series they become.
    for i in range(3000):
        tally.admission(0.001, f"Kind{i}", f"OP{i}", False, 600 + i, body_bytes=2048)
    assert len(tally._admissions) == len(tally._denials) == 1
