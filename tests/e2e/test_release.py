"""``dynamo-webhook crds release`` against a real API server, run as a ServiceAccount allowed only get and
patch on the four convertible CRDs (and get on the other converter's CA Secret). The CRDs' conversion
webhook names the service through a Service (an ExternalName Service to the local process: the API
server resolves it to ``127.0.0.1:<port>``, and verifies the serving certificate for
``<name>.<namespace>.svc``), as an installed chart leaves them. With objects still stored as v1alpha1
the command refuses and changes nothing; it hands the conversion over to another Service whatever is
stored; after ``storage-migrate`` it sets conversion to None, and with the service gone every object
still reads in both versions."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cluster import CONVERTIBLE, NAMESPACE, Cluster, ca_bundles, service_account_kubeconfig
from tests.e2e.legacy import ALPHA, APPS, BETA, Seeded, run_tool, seeded_cluster
from tests.e2e.testenv import wait_until

#: The chart, the packaging or the image: the same in both builds (tests/conftest.py).
pytestmark = pytest.mark.one_build

SERVICE = "dynamo-operator-webhook-service"  # serve's default name, in its certificate's SANs
OPERATOR = "operator"
ACCOUNT = "dynamo-webhook-crds-release"


@dataclass
class Env:
    cluster: Cluster
    objects: list[Seeded]
    migrate_kubeconfig: Path
    kubeconfig: Path  # get + patch on the four CRDs only


def service_stanza(port: int) -> dict[str, Any]:
    return {"namespace": NAMESPACE, "name": SERVICE, "port": port, "path": "/convert"}


def point_at_service(cluster: Cluster) -> None:
    """The CRDs' conversion webhook names the Service (and no URL); conversion works through it."""
    patch = {
        "spec": {
            "conversion": {
                "webhook": {"clientConfig": {"url": None, "service": service_stanza(cluster.service.port)}}
            }
        }
    }
    for crd in CONVERTIBLE:
        cluster.kubectl("patch", "crd", crd, "--type=merge", "-p", json.dumps(patch))


def converts(env: Env) -> bool:
    """Every seeded DGD stored as v1alpha1 reads as v1beta1 (the converter is reached)."""
    alphas = [o for o in env.objects if o.kind == "DynamoGraphDeployment" and o.created_as == ALPHA]
    return all(env.cluster.cp.raw("GET", o.path(BETA))[0] == 200 for o in alphas)


def account_kubeconfig(cluster: Cluster, path: Path) -> Path:
    kubectl = cluster.kubectl
    kubectl("create", "serviceaccount", ACCOUNT, "-n", NAMESPACE)
    kubectl(
        "create",
        "clusterrole",
        ACCOUNT,
        "--verb=get,patch",
        "--resource=customresourcedefinitions",
        *(f"--resource-name={c}" for c in CONVERTIBLE),
    )
    kubectl(
        "create",
        "clusterrolebinding",
        ACCOUNT,
        f"--clusterrole={ACCOUNT}",
        f"--serviceaccount={NAMESPACE}:{ACCOUNT}",
    )
    kubectl("create", "namespace", OPERATOR)
    kubectl(
        "create",
        "role",
        "ca-reader",
        "-n",
        OPERATOR,
        "--verb=get",
        "--resource=secrets",
        "--resource-name=webhook-server-cert",
    )
    kubectl(
        "create",
        "rolebinding",
        "ca-reader",
        "-n",
        OPERATOR,
        "--role=ca-reader",
        f"--serviceaccount={NAMESPACE}:{ACCOUNT}",
    )
    return service_account_kubeconfig(cluster.cp, kubectl, path, ACCOUNT)


@pytest.fixture(scope="module")
def env(bin_dir: Path) -> Iterator[Env]:
    with seeded_cluster(bin_dir, "dynamo-webhook-storage-migrate") as (
        cluster,
        objects,
        migrate_config,
        workdir,
    ):
        cluster.kubectl.apply(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": SERVICE, "namespace": NAMESPACE},
                "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
            }
        )
        e = Env(cluster, objects, migrate_config, account_kubeconfig(cluster, workdir / "release.kubeconfig"))
        point_at_service(cluster)
        wait_until(lambda: converts(e), 60, "conversion through the Service", 0.5)
        yield e


def crds(env: Env) -> dict[str, dict[str, Any]]:
    return {c: env.cluster.kubectl.get("crd", c) for c in CONVERTIBLE}


def release(env: Env, *args: str) -> Any:
    return run_tool(env.kubeconfig, "crds", "release", *args, env={"DYNAMO_WEBHOOK_NAMESPACE": NAMESPACE})


def test_objects_stored_as_v1alpha1_refuse_and_nothing_changes(env: Env) -> None:
    before = crds(env)
    for dry in ((), ("--dry-run",)):
        proc = release(env, *dry)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stderr.startswith("dynamo-webhook crds release: refused (no CRD changed): ")
        for crd in CONVERTIBLE:
            assert f"{crd}: storedVersions [v1beta1, v1alpha1]" in proc.stderr
        assert "dynamo-webhook storage-migrate" in proc.stderr
        assert crds(env) == before


def test_hand_over_names_the_other_service_and_its_ca(env: Env) -> None:
    ca_pem = env.cluster.cp.pki.client_ca  # any CA that is not the service's
    env.cluster.kubectl(
        "create",
        "secret",
        "generic",
        "webhook-server-cert",
        "-n",
        OPERATOR,
        f"--from-literal=ca.crt={ca_pem.decode()}",
    )
    proc = release(env, "--hand-over-to", f"{OPERATOR}/{SERVICE}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for crd, obj in crds(env).items():
        conversion = obj["spec"]["conversion"]
        assert conversion["strategy"] == "Webhook"
        assert conversion["webhook"]["conversionReviewVersions"] == ["v1"]
        assert conversion["webhook"]["clientConfig"] == {
            "service": {"namespace": OPERATOR, "name": SERVICE, "port": 443, "path": "/convert"},
            "caBundle": base64.b64encode(ca_pem).decode(),
        }, crd
        assert f"{crd}: conversion webhook handed over to {OPERATOR}/{SERVICE}:443/convert" in proc.stdout
    # Back to the service (as the chart's install hook would): its cert loop puts its own CA back.
    point_at_service(env.cluster)
    wait_until(lambda: converts(env), 60, "conversion through the service again", 0.5)
    # Each CRD gets the service's CA back as its watch sees the change, not all at once.
    wait_until(
        lambda: len(set(ca_bundles(env.cluster.kubectl).values())) == 1, 60, "one CA everywhere again", 0.5
    )


def test_after_storage_migrate_conversion_is_none_and_objects_read_without_the_service(env: Env) -> None:
    migrated = run_tool(env.migrate_kubeconfig, "storage-migrate", "--no-state")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    proc = release(env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for crd, obj in crds(env).items():
        assert obj["spec"]["conversion"] == {"strategy": "None"}, crd
        assert f"{crd}: conversion set to None (storedVersions [v1beta1])" in proc.stdout
    env.cluster.service.stop()  # the uninstall deletes it
    dgds = sorted(o.name for o in env.objects if o.kind == "DynamoGraphDeployment" and o.namespace == APPS)
    for version in (BETA, ALPHA):
        listed = env.cluster.kubectl(
            "get", f"dynamographdeployments.{version}.nvidia.com", "-n", APPS, "-o", "json"
        ).json()
        assert sorted(i["metadata"]["name"] for i in listed["items"]) == dgds
        assert {i["apiVersion"] for i in listed["items"]} == {f"nvidia.com/{version}"}
    # Nothing left to do: a rerun changes nothing.
    again = release(env)
    assert again.returncode == 0 and again.stdout.count("not ours (strategy None)") == len(CONVERTIBLE)
