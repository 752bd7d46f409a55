"""The kind registry: one entry per kind, and the facts it states agree with the CRDs, the
conversion code and deploy/."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

import kinds
from domain.constants import GROUP, HUB_API_VERSION
from kinds.registry import Kind, Registry, WebhookPath

CRDS = Path(__file__).resolve().parents[1] / "fixtures" / "crds"


def crd_of(kind: Kind) -> dict[str, Any] | None:
    path = CRDS / f"{kind.group}_{kind.plural}.yaml"
    if not path.exists():
        return None
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    return doc


def test_registering_a_kind_twice_is_an_error() -> None:
    registry = Registry()
    dgd = kinds.REGISTRY.get(GROUP, "DynamoGraphDeployment")
    assert dgd is not None
    registry.register(dgd)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(dgd)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(dataclasses.replace(dgd, kind="Other", converter=None, default_spokes=False))


def test_a_webhook_path_belongs_to_one_kind() -> None:
    registry = Registry()
    registry.register(Kind("A", "as", webhooks=(WebhookPath("/validate-a", "validate", "v1beta1"),)))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Kind("B", "bs", webhooks=(WebhookPath("/validate-a", "validate", "v1beta1"),)))


def test_inconsistent_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="hub version"):
        Registry().register(Kind("A", "as", hub="v2", served=("v1",)))
    with pytest.raises(ValueError, match="defaulter and a converter"):
        Registry().register(Kind("A", "as", default_spokes=True))


@pytest.mark.parametrize("kind", [k for k in kinds.REGISTRY if k.group == GROUP], ids=lambda k: k.kind)
def test_entries_agree_with_the_crds(kind: Kind) -> None:
    crd = crd_of(kind)
    if crd is None:
        # DynamoCheckpoint's CRD is not vendored: a single version, no conversion.
        assert kind.served == (kind.hub,) and not kind.convertible
        return
    spec = crd["spec"]
    assert crd["metadata"]["name"] == kind.crd_name
    assert spec["names"]["kind"] == kind.kind and spec["names"]["plural"] == kind.plural
    assert kind.short in spec["names"].get("shortNames", [kind.short])
    served = [v["name"] for v in spec["versions"] if v.get("served")]
    assert sorted(served) == sorted(kind.served)
    storage = [v["name"] for v in spec["versions"] if v.get("storage")]
    assert storage == [kind.hub]
    assert kind.convertible == (len(served) > 1)


@pytest.mark.parametrize("kind", [k for k in kinds.REGISTRY if k.convertible], ids=lambda k: k.kind)
def test_converters_and_payload_keys(kind: Kind) -> None:
    assert kind.converter is not None and kind.converter.kind == kind.kind
    for key in kind.payload_keys:
        assert key.startswith(f"{GROUP}/{kind.payload}-")
    assert kind.api_version(kind.hub) == HUB_API_VERSION


def test_every_webhook_has_its_handler() -> None:
    for kind in kinds.REGISTRY:
        for hook in kind.webhooks:
            if hook.type == "validate":
                assert kind.validator is not None, hook.path
            else:
                assert kind.defaulter is not None or kind.mutator is not None, hook.path
            assert hook.version in kind.served, hook.path
            if hook.guarded:
                assert kind.gvk_guard, hook.path


def test_deploy_registers_every_named_webhook_as_the_registry_says() -> None:
    """Each webhook the registry names is in deploy/base with its path, version, resource and
    matchPolicy, and deploy/ registers no other."""
    deploy = Path(__file__).resolve().parents[2] / "deploy" / "base" / "webhook-configurations.yaml"
    registered = {}
    for config in yaml.safe_load_all(deploy.read_text()):
        if not config:
            continue
        for hook in config["webhooks"]:
            (rule,) = hook["rules"]
            registered[hook["name"]] = (
                "mutate" if config["kind"] == "MutatingWebhookConfiguration" else "validate",
                hook["clientConfig"]["service"]["path"],
                tuple(rule["apiGroups"]),
                tuple(rule["apiVersions"]),
                tuple(rule["resources"]),
                hook.get("matchPolicy") == "Exact",
            )
    expected = {
        hook.name: (hook.type, hook.path, (kind.group,), (hook.version,), (kind.plural,), hook.exact)
        for kind in kinds.REGISTRY
        for hook in kind.webhooks
        if hook.name
    }
    assert registered == expected
