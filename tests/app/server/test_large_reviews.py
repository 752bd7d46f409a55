"""Large reviews are answered on a worker thread, one at a time: the memory of a large review's
decoded objects is needed once, not once per review in flight."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import orjson
import pytest

from app.review.dispatch import Outcome
from app.server import routes
from app.server.routes import OFFLOAD_BYTES, AppState, create_app
from app.server.settings import Settings
from tests.app.conftest import JSON_HEADERS, conversion_review


def test_large_reviews_are_answered_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    lock = threading.Lock()
    running, most, threads = 0, 0, set()

    def slow_review(body: bytes | bytearray, stop: object = None) -> Outcome:
        nonlocal running, most
        doc = orjson.loads(body)
        with lock:
            running += 1
            most = max(most, running)
            threads.add(threading.get_ident())
        time.sleep(0.05)
        with lock:
            running -= 1
        return Outcome(
            orjson.dumps({"uid": doc["request"]["uid"]}), uid=doc["request"]["uid"], operation="CONVERT"
        )

    monkeypatch.setattr(routes, "review_conversion_body", slow_review)
    padding = {"kind": "Padding", "data": "x" * OFFLOAD_BYTES}
    bodies = [orjson.dumps(conversion_review([padding], uid=f"u{i}")) for i in range(3)]
    assert all(len(b) > OFFLOAD_BYTES for b in bodies)
    app = create_app(AppState(settings=Settings()))

    async def send_all() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://webhook") as client:
            return await asyncio.gather(
                *(client.post("/convert", content=b, headers=JSON_HEADERS) for b in bodies)
            )

    answers = asyncio.run(send_all())
    assert [r.status_code for r in answers] == [200, 200, 200]
    assert sorted(orjson.loads(r.content)["uid"] for r in answers) == ["u0", "u1", "u2"]
    assert most == 1
    assert threading.get_ident() not in threads  # off the event loop's thread


def test_a_large_admission_review_does_not_wait_behind_a_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    converting, admitted = threading.Event(), threading.Event()

    def blocked_conversion(body: bytes | bytearray, stop: object = None) -> Outcome:
        converting.set()
        # Held until the admission review has been answered (or long past the test's patience).
        assert admitted.wait(30), "the admission review waited behind the conversion"
        return Outcome(b"{}", uid="c", operation="CONVERT")

    monkeypatch.setattr(routes, "review_conversion_body", blocked_conversion)
    padding = {"kind": "Padding", "data": "x" * OFFLOAD_BYTES}
    conversion = orjson.dumps(conversion_review([padding], uid="c"))
    admission = orjson.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "a", "padding": "x" * OFFLOAD_BYTES},
        }
    )
    app = create_app(AppState(settings=Settings()))

    async def send_both() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://webhook") as client:
            converted = asyncio.create_task(client.post("/convert", content=conversion, headers=JSON_HEADERS))
            while not converting.is_set():
                await asyncio.sleep(0.01)
            answered = await client.post(
                "/validate/nvidia.com/v1beta1/dynamographdeployments", content=admission, headers=JSON_HEADERS
            )
            admitted.set()
            return answered, await converted

    answered, converted = asyncio.run(send_both())
    assert answered.status_code == 200 and orjson.loads(answered.content)["response"]["uid"] == "a"
    assert converted.status_code == 200
