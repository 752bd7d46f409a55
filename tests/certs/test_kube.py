"""The API plumbing (retries, errors, watches) and the fake API server it is tested against."""

from __future__ import annotations

import random
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client as k8s_client

from certs import metrics
from certs.kube import (
    ApiError,
    Backoff,
    Informer,
    Kube,
    crd_path,
    lease_path,
    secret_path,
    webhook_config_path,
)
from tests.fakekube.api import matches_labels
from tests.fakekube.server import FakeKube


def kube(api: k8s_client.ApiClient, attempts: int = 4) -> Kube:
    return Kube(api, backoff=Backoff(attempts=attempts, base=0.001, cap=0.002))


@given(
    attempt=st.integers(min_value=0, max_value=40),
    base=st.floats(min_value=0.001, max_value=2),
    cap=st.floats(min_value=0.01, max_value=30),
    seed=st.integers(),
)
def test_backoff_bounds(attempt: int, base: float, cap: float, seed: int) -> None:
    ceiling = min(cap, base * 2**attempt)
    delay = Backoff(base=base, cap=cap, rng=random.Random(seed)).delay(attempt)
    assert 0.5 * ceiling <= delay <= ceiling


def test_status_errors_are_typed(fake_kube: FakeKube, kube_api_client: k8s_client.ApiClient) -> None:
    k = kube(kube_api_client)
    assert k.get(secret_path("ns", "absent")) is None
    with pytest.raises(ApiError) as err:
        k.update(secret_path("ns", "absent"), {"metadata": {"name": "absent"}})
    assert err.value.not_found and not err.value.transient
    k.create(secret_path("ns"), {"metadata": {"name": "s"}, "data": {}})
    with pytest.raises(ApiError) as err:
        k.create(secret_path("ns"), {"metadata": {"name": "s"}})
    assert err.value.already_exists and not err.value.conflict
    assert err.value.body["kind"] == "Status" and err.value.body["code"] == 409
    with pytest.raises(ApiError) as err:
        k.update(secret_path("ns", "s"), {"metadata": {"name": "s", "resourceVersion": "1"}})
    assert err.value.conflict
    with pytest.raises(ApiError) as err:
        k.merge_patch(secret_path("ns", "s"), {"metadata": {"resourceVersion": "1"}, "data": {"a": "YQ=="}})
    assert err.value.conflict
    # A 404 is never retried; a 500 is, up to the attempt limit.
    fake_kube.clear_calls()
    fake_kube.faults.fail_next = 10
    with pytest.raises(ApiError) as err:
        k.get(secret_path("ns", "s"))
    assert err.value.status == 500 and err.value.transient
    assert len(fake_kube.calls) == 4
    fake_kube.faults.fail_next = 0
    fake_kube.clear_calls()
    assert k.get(secret_path("ns", "gone")) is None
    assert len(fake_kube.calls) == 1


def test_connection_failures_are_retried_then_reported() -> None:
    configuration = k8s_client.Configuration()
    configuration.host = "http://127.0.0.1:9"  # discard port: nothing listens
    api = k8s_client.ApiClient(configuration)
    sleeps: list[float] = []
    sends: list[None] = []
    k = Kube(
        api,
        backoff=Backoff(attempts=3, base=0.001, cap=0.002, sleep=sleeps.append),
        request_timeout=1,
        before_send=lambda: sends.append(None),
    )
    with pytest.raises(ApiError) as err:
        k.get(secret_path("ns", "x"))
    assert err.value.status == 0 and err.value.transient
    assert len(sleeps) == 2
    assert len(sends) == 3  # the hook (the cluster tools' rate limiter) runs before every attempt
    api.close()


def test_fake_selectors_and_patches(fake_kube: FakeKube, kube_api_client: k8s_client.ApiClient) -> None:
    k = kube(kube_api_client)
    for name, labels in (("a", {"x": "1", "y": "2"}), ("b", {"x": "2"}), ("c", {})):
        k.create(
            webhook_config_path("validating"), {"metadata": {"name": name, "labels": labels}, "webhooks": []}
        )

    def names(selector: str) -> list[str]:
        return [
            i["metadata"]["name"] for i in k.list(webhook_config_path("validating"), labels=selector)["items"]
        ]

    assert names("x=1") == ["a"]
    assert names("x") == ["a", "b"]
    assert names("!x") == ["c"]
    assert names("x!=1") == ["b", "c"]
    assert names("x in (1,2),y") == ["a"]
    assert names("x notin (1)") == ["b", "c"]
    assert [
        i["metadata"]["name"]
        for i in k.list(webhook_config_path("validating"), fields="metadata.name=b")["items"]
    ] == ["b"]
    with pytest.raises(ApiError) as err:
        k.list(webhook_config_path("validating"), fields="spec.foo=b")
    assert err.value.status == 400
    patched = k.merge_patch(webhook_config_path("validating", "a"), {"metadata": {"labels": {"y": None}}})
    assert patched["metadata"]["labels"] == {"x": "1"}
    jp = k.request(
        "PATCH",
        webhook_config_path("validating", "a"),
        body=[{"op": "add", "path": "/metadata/labels/z", "value": "3"}],
        content_type="application/json-patch+json",
    )
    assert jp["metadata"]["labels"] == {"x": "1", "z": "3"}
    k.request("DELETE", webhook_config_path("validating", "a"))
    assert k.get(webhook_config_path("validating", "a")) is None
    verbs = [(c.verb, c.resource) for c in fake_kube.calls]
    assert ("delete", "validatingwebhookconfigurations") in verbs
    assert (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        "patch",
    ) in fake_kube.rbac_rules()


@given(
    labels=st.dictionaries(st.sampled_from("abc"), st.sampled_from("123"), max_size=3),
    key=st.sampled_from("abc"),
    value=st.sampled_from("123"),
)
def test_label_selector_semantics(labels: dict[str, str], key: str, value: str) -> None:
    assert matches_labels(labels, f"{key}={value}") == (labels.get(key) == value)
    assert matches_labels(labels, f"{key}!={value}") == (labels.get(key) != value)
    assert matches_labels(labels, key) == (key in labels)
    assert matches_labels(labels, f"!{key}") == (key not in labels)
    assert matches_labels(labels, "") is True


def test_informer_sees_changes_and_resumes(
    fake_kube: FakeKube, kube_api_client: k8s_client.ApiClient
) -> None:
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()

    def record(kind: str, obj: dict[str, object]) -> None:
        meta = obj.get("metadata") or {}
        assert isinstance(meta, dict)
        with lock:
            seen.append((kind, str(meta.get("name", ""))))

    fake_kube.put("", "secrets", {"metadata": {"name": "before", "namespace": "ns"}})
    k = kube(kube_api_client)
    informer = Informer(
        k, secret_path("ns"), record, timeout_seconds=1, backoff=Backoff(base=0.001, cap=0.01)
    )
    informer.start()
    try:
        assert informer.wait_synced(5)
        fake_kube.put("", "secrets", {"metadata": {"name": "one", "namespace": "ns"}})
        fake_kube.put("", "secrets", {"metadata": {"name": "elsewhere", "namespace": "other"}})
        time.sleep(
            1.3
        )  # the server ends the watch after 1 s; the informer re-watches from its resourceVersion
        fake_kube.put("", "secrets", {"metadata": {"name": "two", "namespace": "ns"}})
        fake_kube.remove("", "secrets", "one", "ns")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and ("DELETED", "one") not in seen:
            time.sleep(0.02)
    finally:
        informer.stop()
    assert seen == [("SYNC", ""), ("ADDED", "one"), ("ADDED", "two"), ("DELETED", "one")]
    watches = [c for c in fake_kube.calls if c.verb == "watch"]
    assert len(watches) >= 2 and sum(c.verb == "list" for c in fake_kube.calls) == 1


def test_paths() -> None:
    assert secret_path("ns", "n") == "/api/v1/namespaces/ns/secrets/n"
    assert lease_path() == "/apis/coordination.k8s.io/v1/leases"
    assert lease_path("ns", "l") == "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"
    assert (
        webhook_config_path("mutating")
        == "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
    )
    assert crd_path("x") == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x"


def test_metric_names() -> None:
    from prometheus_client import REGISTRY

    names = {m.name for m in REGISTRY.collect()}
    for metric in (
        metrics.LEAF_EXPIRY_SECONDS,
        metrics.CA_EXPIRY_SECONDS,
        metrics.ROTATIONS,
        metrics.INJECTIONS,
        metrics.RECONCILE_ERRORS,
    ):
        assert metric._name.startswith("dynamo_webhook_cert_")
        assert metric._name in names
