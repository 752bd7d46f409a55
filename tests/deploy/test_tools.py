"""deploy/tools: the ClusterRoles of ``audit`` (read-only) and ``storage-migrate`` (status writes only),
kept out of the overlays; and the webhook registration ``audit`` simulates is deploy/'s."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from app.cluster.audit import REGISTRATION
from app.cluster.inventory import KINDS
from certs.leases import LEASE_NAME
from tests.deploy.manifests import DEPLOY, OVERLAYS, build, kustomize

Obj = dict[str, Any]
READ_VERBS = {"get", "list", "watch"}
ROLES = ("dynamo-webhook-audit", "dynamo-webhook-storage-migrate")


def tools() -> dict[str, Obj]:
    built = kustomize(DEPLOY / "tools")
    assert {o["kind"] for o in built} == {"ClusterRole"}, "deploy/tools binds nobody: admins bind the roles"
    return {o["metadata"]["name"]: o for o in built}


def grants(role: Obj) -> set[tuple[str, str, str, str | None]]:
    """(apiGroup, resource, verb, resourceName or None) for every rule of ``role``."""
    out = set()
    for rule in role["rules"]:
        for value in (*rule["apiGroups"], *rule["resources"], *rule["verbs"]):
            assert "*" not in value, rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    for name in rule.get("resourceNames") or [None]:
                        out.add((group, resource, verb, name))
    return out


@pytest.mark.kubectl
def test_the_tool_roles_are_separate_from_the_service_install() -> None:
    assert sorted(tools()) == sorted(ROLES)
    for overlay in OVERLAYS:
        names = {o["metadata"]["name"] for o in build(overlay)}
        assert not names & set(ROLES), overlay


@pytest.mark.kubectl
def test_the_audit_role_is_read_only_and_covers_what_audit_reads() -> None:
    role = tools()["dynamo-webhook-audit"]
    got = grants(role)
    assert {verb for _, _, verb, _ in got} <= READ_VERBS
    expected = {("nvidia.com", k.plural, "list", None) for k in KINDS}
    expected |= {("apiextensions.k8s.io", "customresourcedefinitions", "get", k.crd_name) for k in KINDS}
    expected |= {
        ("coordination.k8s.io", "leases", "list", LEASE_NAME),
        ("grove.io", "clustertopologybindings", "get", None),
    }
    expected |= {("", "pods", "list", None)} | {
        ("admissionregistration.k8s.io", f"{t}webhookconfigurations", "list", None)
        for t in ("mutating", "validating")
    }
    assert got == expected


@pytest.mark.kubectl
def test_the_migrate_role_can_change_no_spec() -> None:
    role = tools()["dynamo-webhook-storage-migrate"]
    got = grants(role)
    convertible = [k for k in KINDS if k.convertible]
    writes = {g for g in got if g[2] not in READ_VERBS}
    assert writes == {("nvidia.com", f"{k.plural}/status", "update", None) for k in convertible} | {
        ("apiextensions.k8s.io", "customresourcedefinitions/status", "patch", k.crd_name) for k in convertible
    }
    reads = got - writes
    assert reads == {("nvidia.com", k.plural, v, None) for k in convertible for v in ("get", "list")} | {
        ("apiextensions.k8s.io", "customresourcedefinitions", "get", k.crd_name) for k in convertible
    }


def test_audit_simulates_the_registration_of_deploy() -> None:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "base" / "webhook-configurations.yaml").read_text()) if d]
    plural_kind = {k.plural: k.kind for k in KINDS}
    registered: dict[str, list[Any]] = {kind: [None, None] for kind in REGISTRATION}
    for config in docs:
        slot = 0 if config["kind"] == "MutatingWebhookConfiguration" else 1
        for hook in config["webhooks"]:
            (rule,) = hook["rules"]
            if rule["apiGroups"] != ["nvidia.com"]:
                continue
            (resource,) = rule["resources"]
            (version,) = rule["apiVersions"]
            assert sorted(rule["operations"]) == ["CREATE", "UPDATE"]
            registered[plural_kind[resource]][slot] = (
                hook["name"],
                hook["clientConfig"]["service"]["path"],
                version,
                hook["matchPolicy"] == "Exact",
            )
    simulated = {
        kind: [None if h is None else (h.name, h.path, h.version, h.exact) for h in hooks]
        for kind, hooks in REGISTRATION.items()
    }
    assert simulated == registered
