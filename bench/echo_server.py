"""Baseline for the benchmarks: a bare Starlette + orjson server on the same TLS setup.

It does the least a webhook must do — read the body, decode it with orjson, answer a review
with the request's uid (an allowed AdmissionReview, or a ConversionReview echoing the objects)
— so the benchmark's ratios show what the webhook's own logic costs. Served by stock uvicorn
with the options of ``dynamo-webhook serve`` (httptools, uvloop, TLS from the same cert dir);
unlike the webhook (:mod:`app.server.transport`), it writes each answer's headers and body as two TLS
records, as uvicorn does::

    python -m bench.echo_server --port 9444 --cert-dir <dir with tls.crt/tls.key>
"""

from __future__ import annotations

import argparse
import ssl
import sys
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


async def review(request: Request) -> Response:
    doc: Any = orjson.loads(await request.body())
    req = doc.get("request") or {}
    if doc.get("kind") == "ConversionReview":
        response: dict[str, Any] = {
            "uid": req.get("uid", ""),
            "convertedObjects": req.get("objects") or [],
            "result": {"status": "Success"},
        }
    else:
        response = {"uid": req.get("uid", ""), "allowed": True, "status": {"code": 200}}
    body = orjson.dumps({"apiVersion": doc.get("apiVersion"), "kind": doc.get("kind"), "response": response})
    return Response(body, media_type="application/json")


async def healthz(request: Request) -> Response:
    return Response(b'{"status":"ok"}', media_type="application/json")


def create_app() -> Starlette:
    paths = ("/validate", "/mutate", "/convert")
    routes = [Route(p, review, methods=["POST"]) for p in paths]
    routes.append(Route("/healthz", healthz, methods=["GET"]))
    return Starlette(routes=routes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bare Starlette + orjson echo server (benchmark baseline)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    cert, key = args.cert_dir / "tls.crt", args.cert_dir / "tls.key"
    config = uvicorn.Config(
        create_app(),
        host=args.host,
        port=args.port,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        http="httptools",
        loop="uvloop",
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_keep_alive=30,
        server_header=False,
    )
    config.load()
    assert isinstance(config.ssl, ssl.SSLContext)
    config.ssl.minimum_version = ssl.TLSVersion.TLSv1_2
    config.ssl.set_alpn_protocols(["http/1.1"])
    uvicorn.Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
