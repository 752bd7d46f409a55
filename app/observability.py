"""Prometheus metrics (controller-runtime compatible names) and structured logging."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson
from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter(
    "controller_runtime_webhook_requests_total",
    "Total number of admission requests by HTTP status code.",
    ["webhook", "code"],
)
LATENCY = Histogram(
    "controller_runtime_webhook_latency_seconds",
    "Histogram of the latency of processing admission requests.",
    ["webhook"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
IN_FLIGHT = Gauge(
    "controller_runtime_webhook_requests_in_flight",
    "Current number of admission requests being served.",
    ["webhook"],
    multiprocess_mode="livesum",
)
DENIALS = Counter(
    "dynamo_webhook_admission_denials_total",
    "Admission requests denied, by kind and operation.",
    ["webhook", "kind", "operation", "code"],
)
ADMISSIONS = Counter(
    "dynamo_webhook_admission_reviews_total",
    "Admission reviews answered, by kind, operation and decision.",
    ["webhook", "kind", "operation", "allowed"],
)
CONVERSIONS = Counter(
    "dynamo_webhook_conversions_total",
    "Objects converted, by kind and direction.",
    ["kind", "direction"],
)
CONVERSION_FAILURES = Counter(
    "dynamo_webhook_conversion_failures_total",
    "ConversionReviews answered with a Failure.",
    ["webhook"],
)
BAD_REQUESTS = Counter(
    "dynamo_webhook_rejected_requests_total",
    "Requests rejected before a review could be read (HTTP 4xx), by status code.",
    ["webhook", "code"],
)
CERT_RELOADS = Counter(
    "dynamo_webhook_serving_cert_reloads_total",
    "Serving certificate reloads from the cert dir, by result.",
    ["result"],
)


def _str_default(value: Any) -> str:
    return str(value)


class JSONFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, msg and every ``extra`` field.

    Encoded with orjson, with the second-resolution part of the timestamp cached: the review
    log line is written once per request, so its cost is part of every answer's latency."""

    _skip = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {"message", "asctime", "color_message"}

    def __init__(self) -> None:
        super().__init__()
        self._second = -1
        self._prefix = ""

    def _timestamp(self, created: float, msecs: float) -> str:
        second = int(created)
        if second != self._second:
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        return f"{self._prefix}.{int(msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self._timestamp(record.created, record.msecs),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        skip = self._skip
        for key, value in record.__dict__.items():
            if key not in skip and key[0] != "_":
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=_str_default, option=orjson.OPT_NON_STR_KEYS).decode()


class TextFormatter(logging.Formatter):
    _skip = JSONFormatter._skip

    def format(self, record: logging.LogRecord) -> str:
        extras = " ".join(
            f"{k}={v}" for k, v in record.__dict__.items() if k not in self._skip and not k.startswith("_")
        )
        base = f"{time.strftime('%H:%M:%S', time.localtime(record.created))} {record.levelname:<7} {record.getMessage()}"
        return f"{base} {extras}".rstrip()


def configure_logging(fmt: str = "json", level: str = "info") -> None:
    # No caller/thread/process lookups per record: nothing in the formats uses them, and the
    # stack walk would be paid on every review.
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers[:] = []
        lg.propagate = True
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
