"""HTTP routes: the webhook paths (:mod:`app.review.webhook_paths`), health, readiness and metrics. This
module only maps HTTP to :mod:`app.review.dispatch`, and a :class:`~app.review.errors.BadRequest` to its HTTP
answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import orjson
from fastapi import FastAPI
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.review.conversion_stream import review_conversion_body
from app.review.dispatch import Outcome, review_admission, review_conversion
from app.review.errors import Abandoned, BadRequest
from app.review.reviews import Part, parse_json, part_size, unpacked
from app.review.webhook_paths import WEBHOOK_ROUTES, ReviewType, WebhookRoute
from app.server import memory
from app.server.budget import (
    LANES,
    Budget,
    BudgetRefused,
    CallerGone,
    Lane,
    Reservation,
    cgroup_limit,
    default_budget,
    request_timeout,
)
from app.server.deadlines import BodyDeadlines
from app.server.observability import (
    LOG_DETAIL_CHARS,
    LOG_VALUE_CHARS,
    ReviewLog,
    log_value,
    multiprocess_metrics,
)
from app.server.settings import Settings
from app.server.tally import PathTally
from app.server.transport import CALLER_GONE
from domain.admission import AdmissionContext

log = logging.getLogger("dynamo_webhook.review")
REVIEW_LOG = ReviewLog("dynamo_webhook.review")

#: Bodies larger than this are handled off the event loop so they do not stall small reviews,
#: and a ConversionReview that large is read one object at a time (:mod:`app.review.conversion_stream`;
#: a smaller one is decoded whole, which is quicker for a few objects and gives the same answer).
OFFLOAD_BYTES = 256 * 1024


@dataclass
class AppState:
    settings: Settings
    admission: AdmissionContext = field(default_factory=AdmissionContext)
    # Each check returns (ok, reason); /readyz is 200 only when all pass.
    ready_checks: list[Callable[[], tuple[bool, str]]] = field(default_factory=list)
    # Long-running coroutines started with the app and stopped (event set, then awaited) with it.
    background: list[Callable[[asyncio.Event], Coroutine[Any, Any, None]]] = field(default_factory=list)
    draining: bool = False
    # What the requests of this process may hold at once (app.server.budget); from the settings
    # when not given.
    budget: Budget | None = None
    # Large reviews are answered off the event loop one at a time per lane (the interpreter runs
    # one thread at a time anyway): an admission review never waits behind a conversion.
    large_reviews: dict[Lane, asyncio.Semaphore] = field(
        default_factory=lambda: {lane: asyncio.Semaphore(1) for lane in LANES}
    )

    def __post_init__(self) -> None:
        if self.budget is None:
            total = self.settings.memory_budget
            if total is None:
                total = default_budget(self.settings.workers, cgroup_limit())
            self.budget = Budget(total, on_idle=memory.release_in_background)


def _json(status: int, payload: dict[str, Any]) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json")


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's routing refusals (no such path, a method the path does not take) in the shape of
    every other error answer, ``{"error", "code"}``, with the ``Allow`` header of a 405."""
    assert isinstance(exc, HTTPException)
    path, method = request.url.path, request.method
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allowed = ", ".join(sorted(m.strip() for m in headers.get("Allow", "").split(",") if m.strip()))
        headers["Allow"] = allowed
        message = f"method {method} is not allowed on {path}; allowed: {allowed}"
    elif exc.status_code == 404:
        message = f"no such path: {path}"
    else:
        message = str(exc.detail)
    return Response(
        orjson.dumps({"error": message, "code": exc.status_code}),
        status_code=exc.status_code,
        headers=headers,
        media_type="application/json",
    )


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _body_headers(scope: Scope) -> tuple[str | None, str | None]:
    """The request's ``Content-Type`` and ``Content-Length`` (the first of each, as Starlette's
    ``request.headers.get`` reads them; the server gives header names in lower case)."""
    content_type = content_length = None
    for name, value in scope["headers"]:
        if name == b"content-type":
            if content_type is None:
                content_type = value.decode("latin-1")
        elif name == b"content-length" and content_length is None:
            content_length = value.decode("latin-1")
    return content_type, content_length


def _declared_length(declared: str | None, limit: int) -> int:
    """The body's declared length (-1: none declared); a 400 when it is not a length, a 413 past
    ``limit``."""
    if declared is None:
        return -1
    try:
        length = int(declared)
    except ValueError:
        raise BadRequest("invalid Content-Length header") from None
    if length > limit:
        raise BadRequest(f"request body of {declared} bytes exceeds the limit of {limit} bytes", 413)
    return length


async def _read_body(
    receive: Receive, limit: int, deadlines: BodyDeadlines, held: Callable[[int], None]
) -> bytearray:
    """The request body, within ``limit`` bytes and the body deadline, gathered as its bytes
    arrive (one buffer grown in place: never allocated ahead of them, never held twice).
    ``held(size)`` is told each size reached, before the bytes are kept; it raises to refuse."""
    buffer = bytearray()
    read = deadlines.start()
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnect()
            if message["type"] != "http.request":
                continue
            chunk = message.get("body", b"")
            size = len(buffer) + len(chunk)
            if size > limit:
                raise BadRequest(f"request body exceeds the limit of {limit} bytes", 413)
            held(size)
            buffer += chunk
            del chunk
            if not message.get("more_body", False):
                break
    except asyncio.CancelledError:
        if read.timed_out():
            raise BadRequest(f"request body not received within {deadlines.timeout:g} s", 408) from None
        raise
    finally:
        deadlines.finish(read)
    return buffer


async def _answer(send: Send, status: int, body: bytes, json: bool = True, close: bool = False) -> None:
    """Send a whole answer (the headers of Starlette's ``Response(body, status, media_type)``);
    ``close``: with ``connection: close``, so the server closes the connection after it."""
    headers = [(b"content-length", b"%d" % len(body))]
    if json:
        headers.append((b"content-type", b"application/json"))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _answer_parts(send: Send, parts: list[Part]) -> None:
    """Send a 200 JSON answer held in parts, one body message each (a packed part unpacked just
    before), letting go of each part once sent. After each part the event loop gets a turn: the
    coalescing transport (:mod:`app.server.transport`) then passes the part on, and once the
    connection's buffer is full the server's flow control makes the next ``send`` wait for the
    client, so that only about one part is unpacked and buffered at a time (and at most the
    buffer's high-water mark once it returns)."""
    total = sum(part_size(part) for part in parts)
    headers = [(b"content-length", b"%d" % total), (b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    for index in range(len(parts)):
        part = unpacked(parts[index])
        parts[index] = b""
        await send({"type": "http.response.body", "body": part, "more_body": True})
        del part
        await asyncio.sleep(0)
    # The end, sent empty: flow control makes it wait until the last part has mostly left, so that
    # what the answer holds in the connection's buffer is still within the review's reservation.
    await send({"type": "http.response.body", "body": b"", "more_body": False})


ReviewEndpoint = Callable[[Scope, Receive, Send], Coroutine[Any, Any, None]]


#: The timeouts the API server gives its calls when the URL does not say (admission webhooks'
#: default ``timeoutSeconds``, and conversion webhooks' fixed one). A request waits for the memory
#: budget at most half of its timeout, leaving the other half for its answer.
DEFAULT_TIMEOUTS: dict[Lane, float] = {"admission": 10.0, "convert": 30.0}


class _Progress:
    """How far a request got."""

    __slots__ = ("body_bytes", "body_read")

    def __init__(self) -> None:
        self.body_read = False
        self.body_bytes = 0


def _budget_wait(scope: Scope, lane: Lane) -> float:
    timeout = request_timeout(scope.get("query_string", b""))
    return (DEFAULT_TIMEOUTS[lane] if timeout is None else timeout) / 2


def _review_endpoint(route: WebhookRoute, state: AppState) -> ReviewEndpoint:
    """The ASGI handler of one webhook path (``POST``): it reads the headers and body straight
    from the ASGI messages and sends the answer as two messages, without Starlette's request and
    response objects, which a review does not need."""
    path = route.path
    settings = state.settings
    limit = settings.max_conversion_bytes if route.type == "convert" else settings.max_admission_bytes
    lane: Lane = "convert" if route.type == "convert" else "admission"
    large_reviews = state.large_reviews[lane]
    budget = state.budget
    assert budget is not None  # set by AppState
    deadlines = BodyDeadlines(settings.body_timeout)
    tally = PathTally(path)

    def answer(doc: Any) -> Outcome:
        if route.type == "convert":
            return review_conversion(doc)
        return review_admission(doc, route.type, state.admission, route.expected_gvk)

    def decode_and_answer(body: bytes | bytearray) -> Outcome:
        return answer(parse_json(body))

    def answer_large(
        body: bytes | bytearray, gone: Callable[[], bool] | None
    ) -> Outcome | BadRequest | Abandoned:
        # A ConversionReview is read one object at a time (app.review.conversion_stream), given up
        # between objects once its caller has gone; an AdmissionReview decoded whole, which is
        # garbage once answered. A refusal is returned, without its traceback: raised across the
        # thread, it would hold the review's frames (its body among them) in a reference cycle
        # through the awaited future, freed only when the garbage collector next runs.
        try:
            return review_conversion_body(body, gone) if route.type == "convert" else decode_and_answer(body)
        except (BadRequest, Abandoned) as exc:
            return exc.with_traceback(None)
        finally:
            memory.release()

    async def review(
        scope: Scope, receive: Receive, reservation: Reservation, progress: _Progress
    ) -> Outcome:
        content_type, declared = _body_headers(scope)
        if not _is_json(content_type):
            raise BadRequest(f"unsupported Content-Type {content_type!r}: expected application/json", 415)
        length = _declared_length(declared, limit)
        gone = scope.get("extensions", {}).get(CALLER_GONE)
        if length >= 0:
            await reservation.acquire(length, _budget_wait(scope, lane), gone)
        body = await _read_body(receive, limit, deadlines, reservation.grow)
        progress.body_read = True
        progress.body_bytes = len(body)
        if len(body) <= OFFLOAD_BYTES:
            return decode_and_answer(body)
        async with large_reviews:
            if gone is not None and gone():
                raise CallerGone()
            answered = await anyio.to_thread.run_sync(answer_large, body, gone)
        del body
        if isinstance(answered, Exception):
            raise answered
        return answered

    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        tally.started()
        reservation = Reservation(budget, lane, OFFLOAD_BYTES)
        progress = _Progress()
        try:
            try:
                outcome = await review(scope, receive, reservation, progress)
            except (BadRequest, BudgetRefused) as exc:
                bad_request = isinstance(exc, BadRequest)
                tally.rejected(exc.code, bad_request=bad_request)
                log.warning(
                    "request rejected" if bad_request else "request refused: memory budget",
                    extra={
                        "webhook": path,
                        "code": exc.code,
                        "error": log_value(exc.message, LOG_DETAIL_CHARS),
                    },
                )
                # A body not read to its end (408, 413, 415, 503, a bad Content-Length) leaves the
                # rest of it on the connection: answered with the connection closed after.
                error = orjson.dumps({"error": exc.message, "code": exc.code})
                await _answer(send, exc.code, error, close=not progress.body_read)
                return
            except (ClientDisconnect, CallerGone, Abandoned) as exc:
                tally.rejected(499, bad_request=False)
                log.info(
                    "caller gone: review dropped",
                    extra={"webhook": path, "error": str(exc) or type(exc).__name__},
                )
                await _answer(send, 499, b"", json=False)
                return
            finally:
                tally.finished()
            elapsed = time.perf_counter() - started
            try:
                _record(tally, route.type, outcome, elapsed, progress.body_bytes)
            except Exception as exc:  # observability must never fail a review
                log.error("recording a review failed", extra={"webhook": path, "error": repr(exc)})
            if outcome.parts is not None:
                await _answer_parts(send, outcome.parts)
                memory.release_in_background()  # the body and the answer are gone now
            else:
                await _answer(send, 200, outcome.body)
        finally:
            reservation.release()

    return endpoint


class _ReviewRoute:
    """A webhook path's handler as an ASGI app, so that the router (which sees the other
    methods, answered 405) takes it as one."""

    def __init__(self, endpoint: ReviewEndpoint) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.endpoint(scope, receive, send)


def _record(
    tally: PathTally, review_type: ReviewType, outcome: Outcome, elapsed: float, body_bytes: int
) -> None:
    if review_type == "convert":
        tally.conversion(elapsed, outcome.conversions if outcome.allowed else None, body_bytes=body_bytes)
    else:
        tally.admission(
            elapsed, outcome.kind, outcome.operation, outcome.allowed, outcome.code, body_bytes=body_bytes
        )
    uid, kind, operation = outcome.uid, outcome.kind, outcome.operation
    obj = (
        ""
        if review_type == "convert"
        else (f"{outcome.namespace}/{outcome.name}" if outcome.namespace else outcome.name)
    )
    if len(uid) + len(kind) + len(operation) + len(obj) > LOG_VALUE_CHARS:
        # Only then can one of the request's values be longer than the line carries.
        uid, kind, operation, obj = log_value(uid), log_value(kind), log_value(operation), log_value(obj)
    extra: dict[str, Any] = {
        "webhook": tally.path,
        "uid": uid,
        "kind": kind,
        "operation": operation,
        "allowed": outcome.allowed,
        "duration_ms": round(elapsed * 1000, 3),
    }
    if review_type == "convert":
        extra["objects"] = len(outcome.conversions)
    else:
        extra["object"] = obj
        extra["patched"] = outcome.patched
    if not outcome.allowed:
        extra["code"] = outcome.code
        extra["detail"] = log_value(outcome.message, LOG_DETAIL_CHARS)
    REVIEW_LOG.info(extra)


class WebhookApp(FastAPI):
    """The FastAPI app, with review requests (``POST`` to a webhook path) handed straight to
    their endpoint: they use no middleware, dependency or exception handler, so the routing and
    middleware layers are skipped for them (about a tenth of a small review's CPU time). Every
    other request goes through FastAPI as usual."""

    review_endpoints: dict[str, ReviewEndpoint]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self.review_endpoints.get(scope["path"])
            if endpoint is not None:
                scope["app"] = self
                await endpoint(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(state: AppState) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stop = asyncio.Event()
        tasks: list[asyncio.Task[None]] = [asyncio.create_task(job(stop)) for job in state.background]
        try:
            yield
        finally:
            stop.set()
            for task in tasks:
                try:
                    await asyncio.wait_for(task, 5)
                except (TimeoutError, asyncio.CancelledError):
                    task.cancel()

    app = WebhookApp(
        title="dynamo-webhook",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.state.webhook = state

    async def healthz(request: Request) -> Response:
        return _json(200, {"status": "ok"})

    async def readyz(request: Request) -> Response:
        if state.draining:
            return _json(503, {"status": "not ready", "reasons": ["shutting down"]})
        reasons = []
        for check in state.ready_checks:
            ok, reason = check()
            if not ok:
                reasons.append(reason)
        if reasons:
            return _json(503, {"status": "not ready", "reasons": reasons})
        return _json(200, {"status": "ready"})

    async def metrics(request: Request) -> Response:
        # Off the event loop: a scrape is milliseconds of work reviews need not wait behind.
        return Response(await anyio.to_thread.run_sync(metrics_payload), media_type=CONTENT_TYPE_LATEST)

    app.review_endpoints = {r.path: _review_endpoint(r, state) for r in WEBHOOK_ROUTES}
    routes = [
        Route(path, _ReviewRoute(endpoint), methods=["POST"])
        for path, endpoint in app.review_endpoints.items()
    ]
    routes += [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
    app.router.routes.extend(routes)
    return app


def metrics_payload() -> bytes:
    """Metrics of this process, or of all worker processes in multiprocess mode."""
    if multiprocess_metrics():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
    return generate_latest()
