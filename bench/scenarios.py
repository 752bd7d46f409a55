"""The benchmark's scenarios (one review each, sent over and over) and its targets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from bench import payloads

#: What the report checks. Ratios are webhook over echo (req/s, and echo's CPU time per request
#: over the webhook's); p99 is wanted within ``p99_factor`` × echo's p99 + ``p99_slack_ms``.
TARGETS = {
    "validate_migrated_ratio": 0.60,
    # Native v1beta1 DGD, DCD, DGDR and the large DGD: at least as fast as the migrated DGD UPDATE.
    "validate_other_ratio": 0.60,
    # The mutation of a migrated DGD (the operator's answer: its patch against the object as Go
    # writes it, the re-encoding skipped for a spec already written so). Its ceiling is the floor
    # server's ratio (bench/floor_server.py: the same HTTP work without the rules, 0.97 in
    # bench/results/report.md): HTTP and logging take 0.049 ms of the 0.067 ms a request took,
    # the rules 0.018 ms before the skip and about 0.012 ms after it (in-process, compiled), so
    # the ratio reaches about 0.70 of echo's, not 1.0.
    "mutate_ratio": 0.70,
    "v1alpha1_ratio": 0.30,
    "p99_factor": 2.0,
    "p99_slack_ms": 2.0,
    "conversion_ms_per_object": 0.25,
    "conversion_review_ms_per_object": 0.30,
    "rss_mib": 120.0,
    # The largest ConversionReview (bench.bench_large, 33,000 DGDs, 61 MiB): answered within
    # seconds, with a peak RSS within deploy/'s memory limit.
    "large_review_seconds": 10.0,
    "large_review_peak_mib": 256.0,
}

ALLOWED = '"allowed":true'
CONVERTED = '"status":"Success"'
CONVERSION_OBJECTS = 500


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    path: str
    build: Callable[[], dict[str, Any]]
    #: A string every good answer contains.
    expect: str = ALLOWED
    #: Connections of the closed loop (throughput).
    connections: int = 16
    #: Requests/s of the open loop (latency); 0: one request at a time instead.
    rate: float = 200
    #: Wanted throughput ratio against echo (req/s and CPU per request), and what it stands for.
    target: float | None = None
    target_note: str = ""
    #: Whether the p99 target (``TARGETS["p99_factor"]`` × echo + slack) applies.
    p99_target: bool = False
    #: Objects per review (ConversionReviews); 0 for admission.
    objects: int = 0

    @property
    def review_type(self) -> str:
        return self.path.strip("/").split("/", 1)[0]


def _conversion(source: str, desired: str) -> Scenario:
    """A ConversionReview of :data:`CONVERSION_OBJECTS` ``source`` DGDs to ``desired``."""

    def build() -> dict[str, Any]:
        return payloads.conversion_review(CONVERSION_OBJECTS, desired)

    version = desired.rsplit("/", 1)[1]
    return Scenario(
        f"convert-to-{version}",
        f"ConversionReview, {CONVERSION_OBJECTS} {source} DGDs -> {version} /convert",
        "/convert",
        build,
        expect=CONVERTED,
        connections=2,
        rate=0,
        objects=CONVERSION_OBJECTS,
    )


SAME_AS_MIGRATED = "as the migrated DGD UPDATE"

SCENARIOS = (
    Scenario(
        "validate-migrated",
        "DGD UPDATE, migrated v1beta1 (dgd-spec annotation) /validate",
        "/validate",
        payloads.dgd_migrated_update,
        target=TARGETS["validate_migrated_ratio"],
        p99_target=True,
    ),
    Scenario(
        "validate-native",
        "DGD UPDATE, native v1beta1 /validate",
        "/validate",
        payloads.dgd_native_update,
        target=TARGETS["validate_other_ratio"],
        target_note=SAME_AS_MIGRATED,
    ),
    Scenario(
        "validate-v1alpha1",
        "DGD UPDATE, v1alpha1 /validate",
        "/validate",
        payloads.dgd_v1alpha1_update,
        target=TARGETS["v1alpha1_ratio"],
    ),
    Scenario(
        "mutate",
        "DGD CREATE, migrated v1beta1 /mutate",
        "/mutate",
        payloads.dgd_migrated_create,
        target=TARGETS["mutate_ratio"],
    ),
    Scenario(
        "validate-dcd",
        "DCD UPDATE, v1beta1 /validate",
        "/validate",
        payloads.dcd_update,
        target=TARGETS["validate_other_ratio"],
        target_note=SAME_AS_MIGRATED,
    ),
    Scenario(
        "validate-dgdr",
        "DGDR CREATE, v1beta1 /validate",
        "/validate",
        payloads.dgdr_create,
        target=TARGETS["validate_other_ratio"],
        target_note=SAME_AS_MIGRATED,
    ),
    Scenario(
        "validate-large",
        f"DGD UPDATE, {payloads.LARGE_COMPONENTS} components, migrated v1beta1 /validate",
        "/validate",
        payloads.large_dgd_update,
        rate=100,
        target=TARGETS["validate_other_ratio"],
        target_note=SAME_AS_MIGRATED,
    ),
    _conversion("v1alpha1", payloads.BETA),
    _conversion("migrated v1beta1", payloads.ALPHA),
)


def dispatcher(sc: Scenario) -> Callable[[Any], Any]:
    """The service's answer to one decoded review of ``sc``, in process (the function its HTTP
    route calls after decoding the body); returns the dispatch outcome (``allowed``, ``code``, ``body``)."""
    from app.review.dispatch import review_admission, review_conversion

    if sc.review_type == "convert":
        return review_conversion
    from app.server.settings import Settings
    from domain.admission import AdmissionContext

    ctx = AdmissionContext(settings=Settings().admission_settings())
    review_type: Literal["validate", "mutate"] = "mutate" if sc.review_type == "mutate" else "validate"

    def answer(doc: Any) -> Any:
        return review_admission(doc, review_type, ctx)

    return answer
