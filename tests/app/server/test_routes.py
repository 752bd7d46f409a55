"""The webhook paths' ASGI handler, driven with raw ASGI messages: the body in one or many
messages, the headers it reads, a client that goes away, and the answer's headers."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from prometheus_client import REGISTRY

from app.review.webhook_paths import WEBHOOK_ROUTES
from app.server.routes import AppState, create_app
from app.server.settings import Settings
from domain.admission import AdmissionContext
from tests.app.conftest import admission_review

REQUESTS_TOTAL = "controller_runtime_webhook_requests_total"

Message = dict[str, Any]


def _app() -> Any:
    settings = Settings()
    return create_app(
        AppState(settings=settings, admission=AdmissionContext(settings=settings.admission_settings()))
    )


def _call(
    messages: list[Message], headers: list[tuple[bytes, bytes]], path: str = "/validate", method: str = "POST"
) -> list[Message]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 443),
    }
    pending = list(messages)
    sent: list[Message] = []

    async def receive() -> Message:
        # After the messages given, the client is gone (a handler reading on never waits).
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(_app()(scope, receive, send))
    return sent


def _json_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]


def _answer(sent: list[Message]) -> tuple[int, dict[bytes, bytes], bytes]:
    start, body = sent
    assert start["type"] == "http.response.start" and body["type"] == "http.response.body"
    return start["status"], dict(start["headers"]), body["body"]


def test_body_in_several_messages_is_joined() -> None:
    body = orjson.dumps(admission_review(uid="split"))
    parts = [body[:10], b"", body[10:100], body[100:]]
    messages = [
        {"type": "http.request", "body": p, "more_body": i < len(parts) - 1} for i, p in enumerate(parts)
    ]
    status, headers, answer = _answer(_call(messages, _json_headers(body)))
    assert status == 200
    assert headers == {b"content-length": str(len(answer)).encode(), b"content-type": b"application/json"}
    assert orjson.loads(answer)["response"]["uid"] == "split"


def test_answer_headers_are_length_then_type() -> None:
    body = orjson.dumps(admission_review())
    sent = _call([{"type": "http.request", "body": body}], _json_headers(body))
    assert [name for name, _ in sent[0]["headers"]] == [b"content-length", b"content-type"]


def test_first_content_type_and_length_count() -> None:
    body = orjson.dumps(admission_review())
    headers = [
        (b"content-type", b"text/plain"),
        (b"content-type", b"application/json"),
        (b"content-length", b"99999999999"),
        (b"content-length", str(len(body)).encode()),
    ]
    status, _, answer = _answer(_call([{"type": "http.request", "body": body}], headers))
    assert status == 415
    assert orjson.loads(answer)["error"] == "unsupported Content-Type 'text/plain': expected application/json"
    status, _, answer = _answer(_call([{"type": "http.request", "body": body}], headers[1:]))
    assert status == 413
    assert "99999999999 bytes exceeds the limit" in orjson.loads(answer)["error"]


def test_missing_content_type_is_415() -> None:
    body = orjson.dumps(admission_review())
    status, _, answer = _answer(_call([{"type": "http.request", "body": body}], []))
    assert status == 415
    assert orjson.loads(answer)["error"] == "unsupported Content-Type None: expected application/json"


@pytest.mark.parametrize("after", [0, 1])
def test_client_gone_before_the_whole_body_is_counted_499(after: int) -> None:
    body = orjson.dumps(admission_review())

    def counted() -> float:  # as a scrape reads it
        return REGISTRY.get_sample_value(REQUESTS_TOTAL, {"webhook": "/validate", "code": "499"}) or 0.0

    before = counted()
    messages: list[Message] = [{"type": "http.request", "body": body[:20], "more_body": True}][:after]
    sent = _call([*messages, {"type": "http.disconnect"}], _json_headers(body))
    status, headers, answer = _answer(sent)
    assert (status, headers, answer) == (499, {b"content-length": b"0"}, b"")
    assert counted() == before + 1


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("path", [route.path for route in WEBHOOK_ROUTES])
def test_other_methods_on_a_webhook_path_are_405_with_allow(method: str, path: str) -> None:
    status, headers, answer = _answer(
        _call([{"type": "http.request", "body": b""}], [], path=path, method=method)
    )
    assert (status, headers[b"allow"], headers[b"content-type"]) == (405, b"POST", b"application/json")
    assert orjson.loads(answer) == {
        "error": f"method {method} is not allowed on {path}; allowed: POST",
        "code": 405,
    }


def test_an_unknown_path_is_404_in_the_error_shape() -> None:
    for method in ("GET", "POST"):
        status, headers, answer = _answer(
            _call([{"type": "http.request", "body": b""}], [], path="/nope", method=method)
        )
        assert (status, headers[b"content-type"]) == (404, b"application/json")
        assert orjson.loads(answer) == {"error": "no such path: /nope", "code": 404}


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
def test_probe_paths_take_get_and_head_only(path: str) -> None:
    status, headers, answer = _answer(
        _call([{"type": "http.request", "body": b""}], [], path=path, method="POST")
    )
    assert (status, headers[b"allow"]) == (405, b"GET, HEAD")
    assert orjson.loads(answer) == {
        "error": f"method POST is not allowed on {path}; allowed: GET, HEAD",
        "code": 405,
    }
    status, _, _ = _answer(_call([{"type": "http.request", "body": b""}], [], path=path, method="GET"))
    assert status in (200, 503)


def test_a_refusal_before_the_body_was_read_to_its_end_closes_the_connection() -> None:
    body = orjson.dumps(admission_review())
    whole = [{"type": "http.request", "body": body}]
    unread = [
        [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())],  # 415
        [(b"content-type", b"application/json"), (b"content-length", b"99999999999")],  # 413
        [(b"content-type", b"application/json"), (b"content-length", b"many")],  # 400
    ]
    for headers in unread:
        status, answer_headers, _ = _answer(_call(whole, headers))
        assert status in (400, 413, 415) and answer_headers[b"connection"] == b"close"
    status, answer_headers, _ = _answer(
        _call([{"type": "http.request", "body": b"[1"}], _json_headers(b"[1"))
    )
    assert status == 400 and b"connection" not in answer_headers  # the body was read: the connection stays


def test_an_answered_review_counts_its_body_size() -> None:
    def sample(name: str) -> float:
        return (
            REGISTRY.get_sample_value(f"dynamo_webhook_request_body_bytes_{name}", {"webhook": "/validate"})
            or 0.0
        )

    count, total = sample("count"), sample("sum")
    body = orjson.dumps(admission_review(uid="sized"))
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    status, _, _ = _answer(_call(messages, _json_headers(body)))
    assert status == 200
    assert (sample("count") - count, sample("sum") - total) == (1, len(body))
