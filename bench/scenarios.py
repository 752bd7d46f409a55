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

#: The share of the operator's CPU time per converted object each build may take (the conversion
#: scenarios' ``operator_ms``): the compiled build, which the image ships, a third of it; the
#: Python build as much.
CONVERSION_CPU_SHARE: dict[str, float] = {"compiled": 1 / 3, "python": 1.0, "mixed": 1.0}

#: The operator's CPU time per object (ms) on each conversion scenario's review: its own webhook
#: handlers (``tools/opdiff``, the Go binary of the pinned operator's handlers) over HTTPS, one
#: process pinned to one CPU like the webhook, driven by ``bench.loadgen``. The 500-object review
#: to v1beta1 took 0.255 ms per object; the others are that figure times their paired ratio to it
#: (the same run, alternating reviews, median of five rounds): 0.96 for the 500 migrated objects to
#: v1alpha1, 0.90 for one v1alpha1 DGD to v1beta1 and 0.81 for one migrated DGD to v1alpha1 (per
#: review the operator's HTTP costs little beside the decode and encode of the objects, which
#: grow with the body, its garbage collector's work with them).
OPERATOR_MS_PER_OBJECT = {
    ("v1beta1", CONVERSION_OBJECTS): 0.255,
    ("v1alpha1", CONVERSION_OBJECTS): 0.245,
    ("v1beta1", 1): 0.23,
    ("v1alpha1", 1): 0.21,
}


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
    #: The operator's CPU time per object on this review (ms; :data:`OPERATOR_MS_PER_OBJECT`),
    #: of which a build may take its :data:`CONVERSION_CPU_SHARE`.
    operator_ms: float | None = None

    @property
    def review_type(self) -> str:
        return self.path.strip("/").split("/", 1)[0]


def _conversion(source: str, desired: str, objects: int = CONVERSION_OBJECTS) -> Scenario:
    """A ConversionReview of ``objects`` ``source`` DGDs to ``desired``. One object a review is
    how the API server sends most of them (each object of a LIST, a WATCH or the watch cache's
    fill), so what a review costs beside its objects counts there in full."""

    def build() -> dict[str, Any]:
        return payloads.conversion_review(objects, desired)

    version = desired.rsplit("/", 1)[1]
    one = objects == 1
    return Scenario(
        f"convert-one-to-{version}" if one else f"convert-to-{version}",
        f"ConversionReview, one {source} DGD -> {version} /convert"
        if one
        else f"ConversionReview, {objects} {source} DGDs -> {version} /convert",
        "/convert",
        build,
        expect=CONVERTED,
        connections=1 if one else 2,
        rate=0,
        objects=objects,
        operator_ms=OPERATOR_MS_PER_OBJECT[version, objects],
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
    _conversion("v1alpha1", payloads.BETA, 1),
    _conversion("migrated v1beta1", payloads.ALPHA, 1),
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
