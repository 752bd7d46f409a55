"""The RBAC of each overlay grants exactly the Kubernetes API calls the service makes.

The calls are not listed by hand: ``serve``'s cluster services (the cert loop with its watches,
and the namespace-scope Lease watcher) run against the fake API server seeded with the built
manifests, and the fake's record of every request is checked against the overlay's Roles and
ClusterRoles with the authorizer's rules (resourceNames match the object name, or the
``metadata.name`` field selector of a list/watch)."""

from __future__ import annotations

import base64
import contextlib
import copy
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
import yaml

from app.server.cluster_services import ClusterServices, build_cluster_services
from app.server.settings import Settings
from certs import pki
from domain.admission import LookupNotFound
from tests.deploy.manifests import OVERLAYS, Build, build
from tests.fakekube.api import Call
from tests.fakekube.server import FakeKube

#: Every test here builds deploy/ with `kubectl kustomize`.
pytestmark = pytest.mark.kubectl

FIXTURE_CRDS = Path(__file__).resolve().parents[1] / "fixtures" / "certs" / "crds.yaml"
ADMISSION = "admissionregistration.k8s.io"
CRD_GROUP = "apiextensions.k8s.io"
# Objects the service reads by a name a user chose (in a DynamoGraphDeployment): their grant
# cannot list names.
NAMED_BY_USERS = {"clustertopologybindings"}
CONFIG_PLURALS = {
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
}

Obj = dict[str, Any]


@dataclass(frozen=True)
class Request:
    namespace: str | None
    group: str
    resource: str
    verb: str
    name: str | None


@dataclass(frozen=True)
class Grant:
    namespace: str | None  # None: every namespace (ClusterRole through a ClusterRoleBinding)
    group: str
    resource: str
    verb: str
    name: str | None  # None: any name

    def allows(self, req: Request) -> bool:
        return (
            (self.namespace is None or self.namespace == req.namespace)
            and (self.group, self.resource, self.verb) == (req.group, req.resource, req.verb)
            and (self.name is None or self.name == req.name)
        )


def request_of(call: Call) -> Request:
    name = call.name
    if name is None and call.verb in ("list", "watch"):
        for term in parse_qs(call.query).get("fieldSelector", [""])[0].split(","):
            key, _, value = term.partition("=")
            if key == "metadata.name":
                name = value
    return Request(call.namespace, call.group, call.resource, call.verb, name)


def expand(rules: Iterable[Obj], namespace: str | None) -> set[Grant]:
    out = set()
    for rule in rules:
        for value in (*rule["apiGroups"], *rule["resources"], *rule["verbs"]):
            assert "*" not in value, f"wildcard in {rule}"
        names = rule.get("resourceNames") or [None]
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    out |= {Grant(namespace, group, resource, verb, n) for n in names}
    return out


def grants_of(b: Build) -> set[Grant]:
    """Everything the Deployment's service account may do, from the overlay's RBAC objects."""
    pod = b.deployment["spec"]["template"]["spec"]
    subject = {"kind": "ServiceAccount", "name": pod["serviceAccountName"], "namespace": b.namespace}
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in b.of_kind("Role")}
    cluster_roles = {r["metadata"]["name"]: r for r in b.of_kind("ClusterRole")}
    out: set[Grant] = set()
    for binding in [*b.of_kind("RoleBinding"), *b.of_kind("ClusterRoleBinding")]:
        assert binding["subjects"] == [subject], binding["metadata"]["name"]
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace")
        if ref["kind"] == "Role":
            out |= expand(roles[(namespace, ref["name"])]["rules"], namespace)
        else:
            out |= expand(cluster_roles[ref["name"]]["rules"], namespace)
    bound = {
        (b_["roleRef"]["kind"], b_["roleRef"]["name"])
        for b_ in [*b.of_kind("RoleBinding"), *b.of_kind("ClusterRoleBinding")]
    }
    unbound = {("Role", n) for _, n in roles} | {("ClusterRole", n) for n in cluster_roles}
    assert unbound <= bound, f"roles without a binding: {unbound - bound}"
    return out


def wait_for(cond: Callable[[], bool], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def seed(fake: FakeKube, b: Build, *, annotated_crds: bool) -> None:
    """The cluster as after `kubectl apply --server-side -k`: the operator's CRDs with the
    overlay's conversion stanza merged in, and the overlay's webhook configurations."""
    crds = {d["metadata"]["name"]: d for d in yaml.safe_load_all(FIXTURE_CRDS.read_text()) if d}
    for partial in b.of_kind("CustomResourceDefinition"):
        crd = copy.deepcopy(crds[partial["metadata"]["name"]])
        crd["spec"]["conversion"] = copy.deepcopy(partial["spec"]["conversion"])
        if annotated_crds and "annotations" in partial["metadata"]:
            crd["metadata"]["annotations"] = dict(partial["metadata"]["annotations"])
        fake.put(CRD_GROUP, "customresourcedefinitions", crd)
    for kind, plural in CONFIG_PLURALS.items():
        fake.put(ADMISSION, plural, copy.deepcopy(b.one(kind)))


def put_issued_secret(fake: FakeKube, b: Build, settings: Settings) -> None:
    """A Secret as cert-manager writes it (tls.crt, tls.key, ca.crt)."""
    ca = pki.generate_ca()
    names = pki.service_dns_names(settings.service_name, settings.namespace)
    leaf = pki.generate_serving_cert(ca, names)
    data = {"tls.crt": leaf.cert_pem, "tls.key": leaf.key_pem, "ca.crt": ca.cert_pem}
    fake.put(
        "",
        "secrets",
        {
            "metadata": {"name": settings.secret_name, "namespace": settings.namespace},
            "type": "kubernetes.io/tls",
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
        },
    )


def concurrent_writer(fake: FakeKube) -> None:
    """Another writer changes each webhook configuration just before the loop's first patch of
    it, so the loop meets a conflict and re-reads (as it can in a real cluster)."""
    fired: set[str] = set()
    lock = threading.Lock()

    def match(verb: str, path: str) -> bool:
        plural = next((p for p in CONFIG_PLURALS.values() if f"/{p}/" in path), None)
        if verb != "patch" or plural is None:
            return False
        with lock:
            if plural in fired:
                return False
            fired.add(plural)
        name = path.rsplit("/", 1)[1]
        obj = fake.get(ADMISSION, plural, name)
        assert obj is not None
        obj["metadata"].setdefault("annotations", {})["example.com/touched"] = "true"
        fake.put(ADMISSION, plural, obj)
        return False  # no injected failure: the conflict is real

    fake.faults.match = match


def run_services(fake: FakeKube, settings: Settings) -> ClusterServices:
    """serve's cluster services: one start, the first pass done, every watch open, then stop."""
    services = build_cluster_services(settings)
    assert services.reconciler is not None and services.scope is not None
    services.start()
    try:
        assert wait_for(lambda: services.reconciler.passes >= 1 and services.scope.wait_synced(0))

        def quiet() -> bool:  # no new request for half a second: every informer is watching
            before = len(fake.calls)
            time.sleep(0.5)
            return len(fake.calls) == before

        assert wait_for(quiet)
        # The admission look-ups a DGD can trigger (a named ClusterTopologyBinding, InferencePool
        # discovery) go through the same client.
        assert services.lookups is not None
        with contextlib.suppress(LookupNotFound):
            services.lookups.cluster_topology("example-topology")
        services.lookups.inference_pool_available()
        assert services.reconciler.last_result is not None
        assert services.reconciler.last_result.ok, services.reconciler.last_result.errors
    finally:
        services.stop()
    return services


def service_settings(b: Build, kubeconfig: Path, cert_dir: Path) -> Settings:
    overrides: dict[str, Any] = {**b.settings_overrides(), "kubeconfig": kubeconfig, "cert_dir": cert_dir}
    return Settings(**overrides)


def recorded_requests(b: Build, fake: FakeKube, kubeconfig: Path, tmp_path: Path) -> list[Request]:
    """Run the service's cluster side in the overlay's cert mode through every path it takes:
    auto from a fresh install (no Secret yet, one write conflict); manual with the CRDs as
    deployed (annotated for cert-manager's injector) and with the annotation lost."""
    settings = service_settings(b, kubeconfig, tmp_path / "certs")
    assert settings.cert_mode == b.mode
    if b.mode == "auto":
        seed(fake, b, annotated_crds=True)
        concurrent_writer(fake)
        run_services(fake, settings)
        secret = fake.get("", "secrets", settings.secret_name, settings.namespace)
        assert secret is not None
        ca = secret["data"]["ca.crt"]
        # The loop found and injected the overlay's configurations and CRDs.
        for kind, plural in CONFIG_PLURALS.items():
            cfg = fake.get(ADMISSION, plural, b.one(kind)["metadata"]["name"])
            assert cfg is not None
            assert {w["clientConfig"].get("caBundle") for w in cfg["webhooks"]} == {ca}, kind
    else:
        put_issued_secret(fake, b, settings)
        seed(fake, b, annotated_crds=True)
        run_services(fake, settings)
        seed(fake, b, annotated_crds=False)
        run_services(fake, settings)
    for partial in b.of_kind("CustomResourceDefinition"):
        crd = fake.get(CRD_GROUP, "customresourcedefinitions", partial["metadata"]["name"])
        assert crd is not None and crd["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle")
    calls = [c for c in fake.calls if c.resource]
    assert all(c.status < 400 or c.status == 404 or c.status == 409 for c in calls), calls
    return [request_of(c) for c in calls]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rbac_grants_exactly_what_the_service_calls(
    overlay: str, fake_kube: FakeKube, kubeconfig_path: Path, tmp_path: Path
) -> None:
    b = build(overlay)
    requests = recorded_requests(b, fake_kube, kubeconfig_path, tmp_path)
    grants = grants_of(b)
    denied = sorted({r for r in requests if not any(g.allows(r) for g in grants)}, key=str)
    assert not denied, f"calls the RBAC of {overlay} does not allow: {denied}"
    unused = sorted({g for g in grants if not any(g.allows(r) for r in requests)}, key=str)
    assert not unused, f"grants of {overlay} the service never uses: {unused}"
    # A grant open to any name is only there for a call that names no object (create, or a
    # list/watch without a metadata.name field selector).
    for g in grants:
        if g.name is None and g.resource not in NAMED_BY_USERS:
            assert any(g.allows(r) and r.name is None for r in requests), f"{g} could be limited by name"
    # Namespaced grants only in the install namespace.
    assert {g.namespace for g in grants} <= {None, b.namespace}
    assert {(g.resource, g.namespace) for g in grants if g.namespace} == {("secrets", b.namespace)}


def test_modes_differ_only_in_what_auto_mode_writes() -> None:
    auto, manual = (grants_of(build(o)) for o in ("self-signed", "cert-manager"))
    assert manual < auto
    extra = {(g.resource, g.verb) for g in auto - manual}
    assert extra == {
        ("secrets", "create"),
        ("secrets", "update"),
        ("validatingwebhookconfigurations", "get"),
        ("validatingwebhookconfigurations", "patch"),
        ("validatingwebhookconfigurations", "list"),
        ("validatingwebhookconfigurations", "watch"),
        ("mutatingwebhookconfigurations", "get"),
        ("mutatingwebhookconfigurations", "patch"),
        ("mutatingwebhookconfigurations", "list"),
        ("mutatingwebhookconfigurations", "watch"),
    }
