"""Prometheus metrics (controller-runtime compatible names) and structured logging."""

from __future__ import annotations

import logging
import os
import sys
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any, TextIO

import orjson
from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric

from app.server.logstream import PerTurnStream

#: Set (to a directory) when worker processes share their metrics through prometheus-client's
#: multiprocess mode (``app.server.workers``).
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def multiprocess_metrics() -> bool:
    """Whether this process's metrics are in prometheus-client's multiprocess mode."""
    return bool(os.environ.get(MULTIPROC_ENV))


#: Called (bound methods, held weakly) before any review metric below is collected: counts kept
#: elsewhere (:class:`app.server.tally.PathTally`) reach the metrics before a scrape reads them.
_BEFORE_COLLECT: list[weakref.WeakMethod[Callable[[], None]]] = []


def before_collect(hook: Callable[[], None]) -> None:
    """Run ``hook`` (a bound method) whenever a review metric is collected, while its object lives."""
    _BEFORE_COLLECT.append(weakref.WeakMethod(hook))


def _run_before_collect() -> None:
    dead = False
    for ref in list(_BEFORE_COLLECT):
        hook = ref()
        if hook is None:
            dead = True
        else:
            hook()
    if dead:
        _BEFORE_COLLECT[:] = [ref for ref in _BEFORE_COLLECT if ref() is not None]


class _RunsHooks:
    """Runs the :func:`before_collect` hooks before the metric is collected."""

    def collect(self) -> Iterable[Metric]:
        _run_before_collect()
        return super().collect()  # type: ignore[misc,no-any-return]


class _ReviewCounter(_RunsHooks, Counter):
    pass


class _ReviewGauge(_RunsHooks, Gauge):
    pass


class _ReviewHistogram(_RunsHooks, Histogram):
    pass


LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = _ReviewCounter(
    "controller_runtime_webhook_requests_total",
    "Total number of admission requests by HTTP status code.",
    ["webhook", "code"],
)
LATENCY = _ReviewHistogram(
    "controller_runtime_webhook_latency_seconds",
    "Histogram of the latency of processing admission requests.",
    ["webhook"],
    buckets=LATENCY_BUCKETS,
)
#: Request body sizes in bytes: 1 KiB to 64 MiB by fours (a one-object ConversionReview of a stored
#: DGD is a few KiB; a LIST of a large cluster can send tens of MiB).
BODY_BUCKETS = tuple(float(1024 * 4**i) for i in range(9))
BODY_BYTES = _ReviewHistogram(
    "dynamo_webhook_request_body_bytes",
    "Size of the body of each review answered, in bytes.",
    ["webhook"],
    buckets=BODY_BUCKETS,
)
IN_FLIGHT = _ReviewGauge(
    "controller_runtime_webhook_requests_in_flight",
    "Current number of admission requests being served.",
    ["webhook"],
    multiprocess_mode="livesum",
)
DENIALS = _ReviewCounter(
    "dynamo_webhook_admission_denials_total",
    "Admission requests denied, by kind and operation.",
    ["webhook", "kind", "operation", "code"],
)
ADMISSIONS = _ReviewCounter(
    "dynamo_webhook_admission_reviews_total",
    "Admission reviews answered, by kind, operation and decision.",
    ["webhook", "kind", "operation", "allowed"],
)
CONVERSIONS = _ReviewCounter(
    "dynamo_webhook_conversions_total",
    "Objects converted, by kind and direction.",
    ["kind", "direction"],
)
CONVERSION_FAILURES = _ReviewCounter(
    "dynamo_webhook_conversion_failures_total",
    "ConversionReviews answered with a Failure.",
    ["webhook"],
)
BAD_REQUESTS = _ReviewCounter(
    "dynamo_webhook_rejected_requests_total",
    "Requests rejected before a review could be read (HTTP 4xx), by status code.",
    ["webhook", "code"],
)
BUILD_INFO = Gauge(
    "dynamo_webhook_build_info",
    "1 for the running build of the rule layer: compiled (C extensions made by mypyc) or python.",
    ["build"],
    multiprocess_mode="max",
)
CERT_RELOADS = Counter(
    "dynamo_webhook_serving_cert_reloads_total",
    "Serving certificate reloads from the cert dir, by result.",
    ["result"],
)


def _str_default(value: Any) -> str:
    return str(value)


#: The millisecond part of a timestamp, by millisecond.
_MILLIS = tuple(f".{ms:03d}Z" for ms in range(1000))


class JSONFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, msg and every ``extra`` field.

    Encoded with orjson, with the second-resolution part of the timestamp cached: the review
    log line is written once per request, so its cost is part of every answer's latency."""

    _skip = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {
        "message",
        "asctime",
        "color_message",
    }

    def __init__(self) -> None:
        super().__init__()
        self._second = -1
        self._prefix = ""

    def _timestamp(self, created: float, msecs: float) -> str:
        second = int(created)
        if second != self._second:
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        return self._prefix + _MILLIS[int(msecs)]

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


#: The longest value of a request's own field (uid, kind, operation, object) a log line carries.
LOG_VALUE_CHARS = 256
#: The longest message (a denial's, a refusal's) a log line carries: a rule's message names
#: every field it found wrong, and a message may quote a value of the request.
LOG_DETAIL_CHARS = 4096


def log_value(value: str, limit: int = LOG_VALUE_CHARS) -> str:
    """``value`` as a log line carries it: at most ``limit`` characters, a longer one cut and
    ended with an ellipsis. A log line is no metric label, so it keeps what the request said, but
    a made-up value must not make it any size."""
    if len(value) <= limit:
        return value
    return value[: limit - 1] + "…"


class ReviewLog:
    """The one log line per answered review (logger ``dynamo_webhook.review``, message ``review``).

    In the deployed setup (:func:`configure_logging` with the JSON format) the line is encoded
    straight onto the handler's stream: the same JSON object :class:`JSONFormatter` writes for
    ``log.info("review", extra=fields)`` — ``ts``, ``level``, ``logger``, ``msg``, then the fields
    — without building and dispatching a ``LogRecord``, the largest part of a small review's
    logging cost. Any other setup (the text format, handlers or filters added later, a test
    capturing records) goes through :mod:`logging` as usual."""

    def __init__(self, name: str) -> None:
        self.logger = logging.getLogger(name)
        self.name = name

    def info(self, fields: dict[str, Any]) -> None:
        direct = _direct
        logger = self.logger
        if not logger.isEnabledFor(logging.INFO):
            return
        root_handlers = _ROOT.handlers
        if (
            direct is None
            or logger.handlers
            or logger.filters
            or len(root_handlers) != 1
            or root_handlers[0] is not direct[0]
        ):
            logger.info("review", extra=fields)
            return
        handler, formatter = direct
        now = time.time()
        line = {
            "ts": formatter._timestamp(now, (now - int(now)) * 1000),
            "level": "info",
            "logger": self.name,
            "msg": "review",
            **fields,
        }
        data = orjson.dumps(line, default=_str_default, option=orjson.OPT_NON_STR_KEYS).decode()
        stream = handler.stream
        try:
            if type(stream) is PerTurnStream:
                # Held for the turn's end under the stream's own lock, which keeps lines whole;
                # neither the handler's lock nor a flush adds anything to that.
                stream.write_line(data + handler.terminator)
                return
            handler.acquire()
            try:
                stream.write(data + handler.terminator)
                stream.flush()
            finally:
                handler.release()
        except Exception:
            handler.handleError(logging.makeLogRecord({"name": self.name, "msg": "review", "args": None}))


_ROOT = logging.getLogger()
# The JSON handler configure_logging installed (and its formatter), when it is the only one.
_direct: tuple[logging.StreamHandler[Any], JSONFormatter] | None = None


def configure_logging(fmt: str = "json", level: str = "info", *, per_turn: bool = False) -> None:
    """One handler on stderr for every logger, in ``fmt`` (json or text) at ``level``.
    ``per_turn`` (the serving processes): the lines logged in one turn of the event loop reach
    stderr as one write (:class:`app.server.logstream.PerTurnStream`)."""
    global _direct
    # No caller/thread/process lookups per record: nothing in the formats uses them, and the
    # stack walk would be paid on every review.
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    stream: TextIO | PerTurnStream = PerTurnStream(sys.stderr) if per_turn else sys.stderr
    handler: logging.StreamHandler[Any] = logging.StreamHandler(stream)
    formatter = JSONFormatter() if fmt == "json" else TextFormatter()
    handler.setFormatter(formatter)
    _direct = (handler, formatter) if isinstance(formatter, JSONFormatter) else None
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers[:] = []
        lg.propagate = True
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
