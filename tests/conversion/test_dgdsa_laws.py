"""Hypothesis laws for DGDSA conversion (lossless: no payloads).

Objects follow the CRD schemas of both versions (``nvidia.com_dynamographdeploymentscalingadapters``)
in their Go-normal form: α omits a zero ``status.replicas``, timestamps are RFC 3339 UTC.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.review.compare import diff_paths, normalize
from conversion.v1alpha1 import dgdsa
from kinds import convert

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"
KIND = "DynamoGraphDeploymentScalingAdapter"

Obj = dict[str, Any]

names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=10)
times = st.builds(
    lambda d, h, m: f"2026-02-{d:02d}T{h:02d}:{m:02d}:00Z",
    st.integers(1, 28),
    st.integers(0, 23),
    st.integers(0, 59),
)
metadata = st.fixed_dictionaries(
    {"name": names, "namespace": names},
    optional={
        "labels": st.dictionaries(names, names | st.just(""), max_size=2),
        "annotations": st.dictionaries(names, names | st.just(""), max_size=2),
        "uid": names,
        "resourceVersion": st.integers(1, 999).map(str),
    },
)


def _objects(version: str, ref_key: str, zero_status_replicas: bool) -> st.SearchStrategy[Obj]:
    status_replicas = st.integers(0, 2**31 - 1) if zero_status_replicas else st.integers(1, 2**31 - 1)
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just(version),
            "kind": st.just(KIND),
            "metadata": metadata,
            "spec": st.fixed_dictionaries(
                {
                    "replicas": st.integers(0, 2**31 - 1),
                    "dgdRef": st.fixed_dictionaries({"name": names, ref_key: names}),
                }
            ),
        },
        optional={
            "status": st.fixed_dictionaries(
                {}, optional={"replicas": status_replicas, "selector": names, "lastScaleTime": times}
            )
        },
    )


alpha_objects = _objects(ALPHA, "serviceName", zero_status_replicas=False)
beta_objects = _objects(BETA, "componentName", zero_status_replicas=True)


def assert_same(a: Obj, b: Obj) -> None:
    na, nb = normalize(a), normalize(b)
    assert na == nb, diff_paths(na, nb)


def _pure(fn: Any, obj: Obj) -> Obj:
    before = copy.deepcopy(obj)
    out: Obj = fn(obj)
    assert obj == before
    assert json.dumps(fn(obj)) == json.dumps(out)
    out["metadata"]["touched"] = True
    out["spec"]["dgdRef"]["touched"] = True
    assert obj == before
    return fn(obj)  # type: ignore[no-any-return]


@given(alpha_objects)
def test_alpha_beta_alpha_identity(obj: Obj) -> None:
    beta = _pure(dgdsa.to_hub, obj)
    assert beta["spec"]["dgdRef"]["componentName"] == obj["spec"]["dgdRef"]["serviceName"]
    back = _pure(dgdsa.from_hub, beta)
    assert_same(back, obj)
    assert back["metadata"] == obj["metadata"]
    assert convert(obj, BETA) == beta


@given(beta_objects)
def test_beta_alpha_beta_identity(obj: Obj) -> None:
    alpha = _pure(dgdsa.from_hub, obj)
    assert alpha["spec"]["dgdRef"]["serviceName"] == obj["spec"]["dgdRef"]["componentName"]
    back = _pure(dgdsa.to_hub, alpha)
    assert_same(back, obj)
    assert back["metadata"] == obj["metadata"]
    assert convert(obj, ALPHA) == alpha


@given(
    alpha_objects, st.sampled_from(["replicas", "name", "componentName", "status"]), names, st.integers(1, 99)
)
def test_mutation_of_converted_object_survives(obj: Obj, field: str, text: str, number: int) -> None:
    mutated = copy.deepcopy(dgdsa.to_hub(obj))
    if field == "replicas":
        mutated["spec"]["replicas"] = number
    elif field in ("name", "componentName"):
        mutated["spec"]["dgdRef"][field] = text + "-x"
    else:
        mutated["status"] = {"replicas": number, "selector": text}
    again = dgdsa.to_hub(dgdsa.from_hub(mutated))
    assert_same(again, mutated)
