from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client as k8s_client

from certs.kube import Backoff
from certs.leases import LEASE_NAME, NamespaceScope, lease_expired, parse_time
from tests.fakekube.server import FakeKube

NOW = dt.datetime(2026, 11, 22, 3, 0, 0, tzinfo=dt.UTC)


def micro(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def lease(
    namespace: str, renew: dt.datetime | None, duration: int | None, name: str = LEASE_NAME
) -> dict[str, Any]:
    spec: dict[str, Any] = {"holderIdentity": "namespace-restricted-operator-1.0.0"}
    if renew is not None:
        spec["renewTime"] = micro(renew)
        spec["acquireTime"] = micro(renew)
    if duration is not None:
        spec["leaseDurationSeconds"] = duration
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


def wait_for(cond: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_validity_rule() -> None:
    assert not lease_expired(lease("a", NOW, 30), NOW)
    assert not lease_expired(lease("a", NOW, 30), NOW + dt.timedelta(seconds=30))
    assert lease_expired(lease("a", NOW, 30), NOW + dt.timedelta(seconds=30, microseconds=1))
    assert lease_expired(lease("a", None, 30), NOW)
    assert lease_expired(lease("a", NOW, None), NOW)
    assert lease_expired({"metadata": {}}, NOW)
    assert lease_expired({"spec": {"renewTime": "yesterday", "leaseDurationSeconds": 30}}, NOW)
    assert parse_time("2026-11-22T03:00:00Z") == NOW


@given(
    renew=st.datetimes(
        min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.just(dt.UTC)
    ),
    duration=st.integers(min_value=0, max_value=10**6),
    offset=st.integers(min_value=-(10**7), max_value=10**7),
)
def test_expired_exactly_after_renew_plus_duration(renew: dt.datetime, duration: int, offset: int) -> None:
    now = renew + dt.timedelta(seconds=duration, microseconds=offset)
    assert lease_expired(lease("ns", renew, duration), now) == (offset > 0)


def test_without_api_nothing_is_excluded() -> None:
    scope = NamespaceScope(None)
    scope.start()
    assert scope.wait_synced(0)
    assert not scope.is_excluded("anything")
    scope.stop()


def test_watch_tracks_leases(fake_kube: FakeKube, kube_api_client: k8s_client.ApiClient) -> None:
    real_now = dt.datetime.now(dt.UTC)
    clock = [real_now]
    fake_kube.put("coordination.k8s.io", "leases", lease("restricted-a", real_now, 30))
    fake_kube.put("coordination.k8s.io", "leases", lease("stale", real_now - dt.timedelta(minutes=5), 30))
    fake_kube.put("coordination.k8s.io", "leases", lease("no-renew", None, 30))
    fake_kube.put("coordination.k8s.io", "leases", lease("no-duration", real_now, None))
    fake_kube.put("coordination.k8s.io", "leases", lease("other-name", real_now, 30, name="some-leader-lock"))
    scope = NamespaceScope(
        kube_api_client,
        clock=lambda: clock[0],
        watch_timeout_seconds=5,
        backoff=Backoff(base=0.001, cap=0.01),
    )
    scope.start()
    try:
        assert scope.wait_synced(5)
        assert scope.is_excluded("restricted-a")
        for ns in ("stale", "no-renew", "no-duration", "other-name", "default"):
            assert not scope.is_excluded(ns), ns
        assert scope.excluded_namespaces() == ["restricted-a"]
        # Checked at lookup time: once the lease lapses the namespace is back, with no event.
        clock[0] = real_now + dt.timedelta(seconds=31)
        assert not scope.is_excluded("restricted-a")
        # A renewal arriving through the watch excludes it again.
        fake_kube.put("coordination.k8s.io", "leases", lease("restricted-a", clock[0], 30))
        assert wait_for(lambda: scope.is_excluded("restricted-a"))
        # A new lease in another namespace.
        fake_kube.put("coordination.k8s.io", "leases", lease("restricted-b", clock[0], 30))
        assert wait_for(lambda: scope.is_excluded("restricted-b"))
        # Deleted on shutdown of the restricted operator.
        fake_kube.remove("coordination.k8s.io", "leases", LEASE_NAME, "restricted-a")
        assert wait_for(lambda: not scope.is_excluded("restricted-a"))
        assert scope.is_excluded("restricted-b")
    finally:
        scope.stop()
    watch_calls = [c for c in fake_kube.calls if c.resource == "leases"]
    assert {c.verb for c in watch_calls} == {"list", "watch"}
    assert all(c.namespace is None for c in watch_calls)


def test_relists_after_watch_failure(fake_kube: FakeKube, kube_api_client: k8s_client.ApiClient) -> None:
    fake_kube.faults.verbs = {"watch"}
    fake_kube.faults.fail_next = 2
    scope = NamespaceScope(kube_api_client, watch_timeout_seconds=5, backoff=Backoff(base=0.001, cap=0.01))
    scope.start()
    try:
        assert scope.wait_synced(5)
        fake_kube.put("coordination.k8s.io", "leases", lease("late", dt.datetime.now(dt.UTC), 30))
        assert wait_for(lambda: scope.is_excluded("late"))
    finally:
        scope.stop()
    assert sum(c.verb == "list" for c in fake_kube.calls) >= 2


def test_not_ready_until_listed_naming_the_failure(
    fake_kube: FakeKube, kube_api_client: k8s_client.ApiClient, caplog: Any
) -> None:
    assert NamespaceScope(None).ready() == (True, "")
    fake_kube.faults.verbs = {"list"}
    fake_kube.faults.error_status = 403
    fake_kube.faults.fail_next = 1000
    scope = NamespaceScope(kube_api_client, watch_timeout_seconds=5, backoff=Backoff(base=0.001, cap=0.01))
    assert scope.ready() == (False, "namespace-scope Leases not listed yet")
    with caplog.at_level("INFO", logger="certs.kube"):
        scope.start()
        try:
            assert wait_for(lambda: "403" in scope.ready()[1])
            assert scope.ready() == (
                False,
                "namespace-scope Leases not listed yet: 403 InternalError: injected fault",
            )
            # Retrying cannot cure a 4xx: it is a warning, not routine.
            assert any(
                r.levelname == "WARNING" and "403 InternalError" in r.getMessage() for r in caplog.records
            )
            fake_kube.faults.fail_next = 0
            assert wait_for(lambda: scope.ready() == (True, ""))
        finally:
            scope.stop()


def test_transient_watch_failures_stay_at_info(
    fake_kube: FakeKube, kube_api_client: k8s_client.ApiClient, caplog: Any
) -> None:
    fake_kube.faults.verbs = {"list"}
    fake_kube.faults.fail_next = 8  # more than one list retries away
    scope = NamespaceScope(kube_api_client, watch_timeout_seconds=5, backoff=Backoff(base=0.001, cap=0.01))
    with caplog.at_level("INFO", logger="certs.kube"):
        scope.start()
        try:
            assert wait_for(lambda: scope.ready()[0])
        finally:
            scope.stop()
    failures = [r for r in caplog.records if "injected fault" in r.getMessage()]
    assert failures and {r.levelname for r in failures} == {"INFO"}
