"""Every verified conversion vector sent through ``/convert`` one object per review; compared
as the apiserver consumes the answer (original metadata, labels and annotations from the
webhook) under the vectors' equality rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.review.compare import normalize
from tests.app.conftest import JSON_HEADERS, conversion_review, make_client

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "conversion"
FILES = ("vectors_dgd.jsonl", "vectors_dcd.jsonl", "dgdr_vectors.jsonl", "dgdsa_vectors.jsonl")
VECTORS = [
    json.loads(line) for name in FILES for line in (FIXTURES / name).read_text().splitlines() if line.strip()
]
_client = make_client()


def as_stored(src: dict[str, Any], converted: dict[str, Any]) -> dict[str, Any]:
    out = dict(converted)
    meta = {k: v for k, v in (src.get("metadata") or {}).items() if k not in ("labels", "annotations")}
    for key in ("labels", "annotations"):
        value = (converted.get("metadata") or {}).get(key)
        if value:
            meta[key] = value
    out["metadata"] = meta
    return out


@pytest.mark.parametrize("vec", VECTORS, ids=[f"{v['input'].get('kind')}-{i}" for i, v in enumerate(VECTORS)])
def test_conversion_vector_through_http(vec: dict[str, Any]) -> None:
    doc = conversion_review([vec["input"]], vec["desiredAPIVersion"], uid="vec")
    resp = _client.post("/convert", content=json.dumps(doc), headers=JSON_HEADERS)
    assert resp.status_code == 200
    out = resp.json()["response"]
    assert out["uid"] == "vec"
    if vec.get("expected") is None:
        assert out["result"]["status"] == "Failure"
        assert out["result"]["message"].startswith(vec["expectedErrorPrefix"])
        return
    assert out["result"] == {"status": "Success"}, out["result"]
    [converted] = out["convertedObjects"]
    assert normalize(converted) == normalize(as_stored(vec["input"], vec["expected"]))
