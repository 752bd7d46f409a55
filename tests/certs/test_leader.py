from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from certs.loop import Reconciler
from tests.certs.conftest import NAMESPACE, all_bundles, secret_data, seed
from tests.fakekube.server import FakeKube

Factory = Callable[..., Reconciler]
LEASE = "dynamo-webhook-cert-writer"


def test_only_the_lease_holder_writes(fake_kube: FakeKube, make_reconciler: Factory, tmp_path: Path) -> None:
    seed(fake_kube)
    clock = [dt.datetime.now(dt.UTC)]
    common = {
        "writer_lease": LEASE,
        "writer_lease_seconds": 30,
        "clock": lambda: clock[0],
        "own_client": True,
    }
    a = make_reconciler(identity="replica-a", **common)
    b = make_reconciler(identity="replica-b", write_files=True, cert_dir=tmp_path / "b", **common)

    first = a.reconcile_once()
    assert first.ok and first.changes
    lease = fake_kube.get("coordination.k8s.io", "leases", LEASE, NAMESPACE)
    assert lease is not None and lease["spec"]["holderIdentity"] == "replica-a"
    assert lease["spec"]["leaseDurationSeconds"] == 30

    fake_kube.clear_calls()
    follower = b.reconcile_once()
    assert follower.ok
    assert follower.skipped[0].endswith(": replica-a")
    assert fake_kube.writes() == []
    # The follower still serves: it wrote the pair into its own directory and is ready.
    assert (tmp_path / "b" / "tls.crt").read_bytes() == secret_data(fake_kube)["tls.crt"]
    assert b.ready()

    # A prompt second pass of the holder writes nothing, not even a renewal.
    fake_kube.clear_calls()
    assert not a.reconcile_once().changes
    assert fake_kube.writes() == []
    # After a third of the duration the holder renews.
    clock[0] += dt.timedelta(seconds=11)
    a.reconcile_once()
    assert [(c.resource, c.verb) for c in fake_kube.writes()] == [("leases", "update")]

    # Drift while the holder is gone: the follower takes over once the lease has expired.
    fake_kube.remove("", "secrets", "webhook-server-cert", NAMESPACE)
    clock[0] += dt.timedelta(seconds=20)
    assert b.reconcile_once().skipped  # not expired yet (renewed 20 s ago, 30 s duration)
    assert fake_kube.get("", "secrets", "webhook-server-cert", NAMESPACE) is None
    clock[0] += dt.timedelta(seconds=11)
    took_over = b.reconcile_once()
    assert took_over.ok and not took_over.skipped
    lease = fake_kube.get("coordination.k8s.io", "leases", LEASE, NAMESPACE)
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == "replica-b" and lease["spec"]["leaseTransitions"] == 1
    data = secret_data(fake_kube)
    assert all(bundle == data["ca.crt"] for bundle in all_bundles(fake_kube))
    assert a.reconcile_once().skipped
