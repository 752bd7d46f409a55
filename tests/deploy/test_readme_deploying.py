"""The "Deploying" commands of docs/operations.md (and the README's short install) agree with the
manifests: the `kubectl patch` fallback sets the
same conversion stanza the overlays apply, the uninstall patch turns conversion off, every CRD and
object name it uses exists in the build, and its selector leaves the CRDs out."""

from __future__ import annotations

import json
import re

import pytest

from tests.deploy.manifests import DEPLOY, OVERLAYS, build

OPERATIONS = (DEPLOY.parent / "docs" / "operations.md").read_text()
README = (DEPLOY.parent / "README.md").read_text()
KINDS = {
    "validatingwebhookconfiguration": "ValidatingWebhookConfiguration",
    "mutatingwebhookconfiguration": "MutatingWebhookConfiguration",
}
SECTION = OPERATIONS.split("## Deploying", 1)[1].split("\n## ", 1)[0]
#: The README's "Install in a cluster": the same commands, shorter.
README_INSTALL = README.split("## Install in a cluster", 1)[1].split("\n## ", 1)[0]


def crd_loop_names() -> list[list[str]]:
    return [m.split() for m in re.findall(r"for crd in ([a-z ]+); do", SECTION)]


def test_section_sits_first_and_the_readme_points_at_it() -> None:
    assert OPERATIONS.index("## Deploying") < OPERATIONS.index("## Upgrading a cluster")
    assert "(docs/operations.md#deploying)" in README_INSTALL


def test_readme_install_commands_are_the_sections() -> None:
    """Every kubectl command of the README's install appears, the same, in the Deploying section."""
    flat = SECTION.replace("\\\n", " ")
    commands = [
        line.split("#")[0].strip() for line in README_INSTALL.splitlines() if line.startswith("kubectl ")
    ]
    assert len(commands) >= 4
    for command in commands:
        assert re.sub(r"\s+", " ", command) in re.sub(r"\s+", " ", flat), command


@pytest.mark.kubectl
def test_crd_loops_name_the_convertible_crds() -> None:
    loops = crd_loop_names()
    assert len(loops) == 1  # the patch fallback of the install
    expected = sorted(
        c["metadata"]["name"].removesuffix(".nvidia.com")
        for c in build(OVERLAYS[0]).of_kind("CustomResourceDefinition")
    )
    for names in loops:
        assert sorted(names) == expected


@pytest.mark.kubectl
def test_patch_fallback_matches_the_overlay() -> None:
    (merge,) = re.findall(r"--type=merge -p '([^']+)'", SECTION)
    patch = json.loads(merge)
    for crd in build("self-signed").of_kind("CustomResourceDefinition"):
        assert patch == {"spec": crd["spec"]}


@pytest.mark.kubectl
def test_uninstall_releases_the_conversion_before_deleting() -> None:
    uninstall = SECTION.split("### Uninstalling", 1)[1]
    (service,) = re.findall(r"dynamo-webhook crds release --service (\S+)", uninstall)
    namespace, name = service.split("/")
    assert namespace == "dynamo-system"
    assert ("Service", name) in {(o["kind"], o["metadata"]["name"]) for o in build("self-signed")}
    assert uninstall.index("crds release") < uninstall.index("kubectl delete validatingwebhookconfiguration")


@pytest.mark.kubectl
def test_named_objects_exist() -> None:
    for overlay in OVERLAYS:
        b = build(overlay)
        names = {(o["kind"], o["metadata"]["name"]) for o in b}
        assert ("ValidatingWebhookConfiguration", "dynamo-webhook-validating") in names
        assert ("MutatingWebhookConfiguration", "dynamo-webhook-mutating") in names
        assert ("Deployment", "dynamo-webhook") in names
        deleted = re.findall(
            r"kubectl delete (validatingwebhookconfiguration|mutatingwebhookconfiguration) (\S+)", SECTION
        )
        assert len(deleted) == 2
        for resource, name in deleted:
            assert (KINDS[resource], name) in names
    assert "certificate/dynamo-webhook-serving-cert" in SECTION
    build("cert-manager").one("Certificate", "dynamo-webhook-serving-cert")
    secrets = {c["spec"]["secretName"] for c in build("cert-manager").of_kind("Certificate")}
    assert f"delete secret {' '.join(sorted(secrets, key=lambda s: s != 'webhook-server-cert'))}" in SECTION


@pytest.mark.kubectl
def test_selector_in_the_commands_is_the_one_the_manifests_carry() -> None:
    selectors = set(re.findall(r"-l (\S+)", SECTION + README_INSTALL))
    assert selectors == {"app.kubernetes.io/name=dynamo-webhook"}
    key, value = selectors.pop().split("=")
    for overlay in OVERLAYS:
        for obj in build(overlay):
            matched = obj["metadata"].get("labels", {}).get(key) == value
            assert matched == (obj["kind"] != "CustomResourceDefinition"), obj["metadata"]["name"]
