"""charts/dynamo-webhook and deploy/ are one deployment: ``helm template`` of each cert mode renders
the objects ``kubectl kustomize deploy/overlays/<overlay>`` builds, with the same content, in the
default namespace and in another one (Helm's own labels aside), and the CRD conversion hook
patches exactly the partial CRDs the overlay applies. ``helm lint`` passes, values change what
they name, and values.schema.json refuses bad values."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from certs.config import CONVERTIBLE_CRDS
from tests.deploy.chart import (
    CHART,
    CRD_JOB,
    MODE_VALUES,
    RELEASE_JOB,
    Obj,
    crd_job_patch,
    env,
    is_hook,
    key,
    of_kind,
    one,
    refused,
    render,
    run_helm,
    strip_helm_labels,
)
from tests.deploy.manifests import DEPLOY, OVERLAYS, build, kustomize, selects

# helm and kubectl come from scripts/kube-testenv, as the kubectl marker says.
pytestmark = pytest.mark.kubectl

OTHER_NAMESPACE = "dynamo"


def comparable(objects: list[Obj], release: str) -> dict[tuple[str, str, str, str], Obj]:
    """The chart's objects by identity, without the hooks and Helm's labels."""
    manifest = [o for o in objects if not is_hook(o)]
    out = {key(o): strip_helm_labels(o, release) for o in manifest}
    assert len(out) == len(manifest), "duplicate objects in the chart"
    return out


def assert_same(chart: list[Obj], built: list[Obj], release: str = "dynamo-webhook") -> None:
    ours = comparable(chart, release)
    theirs = {key(o): o for o in built if o["kind"] != "CustomResourceDefinition"}
    assert sorted(ours) == sorted(theirs)
    for k, obj in theirs.items():
        assert ours[k] == obj, f"{k} differs from deploy/"


def overlay_in(namespace: str, overlay: str, tmp: Path) -> list[Obj]:
    """The overlay built for another namespace, the way docs/operations.md says: its ``namespace:`` changed."""
    copy = tmp / "deploy"
    shutil.copytree(DEPLOY, copy)
    kustomization = copy / "overlays" / overlay / "kustomization.yaml"
    text = kustomization.read_text()
    assert text.count("\nnamespace: dynamo-system\n") == 1
    kustomization.write_text(text.replace("\nnamespace: dynamo-system\n", f"\nnamespace: {namespace}\n"))
    return kustomize(copy / "overlays" / overlay)


def expected_patch(partial: Obj) -> Obj:
    """The merge patch equivalent to server-side applying one partial CRD of the overlay."""
    patch: Obj = {"spec": partial["spec"]}
    annotations = partial["metadata"].get("annotations")
    if annotations:
        patch["metadata"] = {"annotations": annotations}
    return patch


# --- one deployment ------------------------------------------------------------------------------


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_chart_renders_the_overlay(overlay: str) -> None:
    assert_same(render(*MODE_VALUES[overlay]), list(build(overlay)))


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_chart_renders_the_overlay_in_another_namespace(overlay: str, tmp_path: Path) -> None:
    chart = render(*MODE_VALUES[overlay], namespace=OTHER_NAMESPACE, release="webhook")
    assert_same(chart, overlay_in(OTHER_NAMESPACE, overlay, tmp_path), release="webhook")
    assert "dynamo-system" not in yaml.safe_dump_all(chart)


@pytest.mark.parametrize("namespace", ["dynamo-system", OTHER_NAMESPACE])
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_crd_hook_patches_what_the_overlay_applies(overlay: str, namespace: str, tmp_path: Path) -> None:
    built = list(build(overlay)) if namespace == "dynamo-system" else overlay_in(namespace, overlay, tmp_path)
    partials = of_kind(built, "CustomResourceDefinition")
    names, patch = crd_job_patch(render(*MODE_VALUES[overlay], namespace=namespace))
    assert sorted(names) == sorted(p["metadata"]["name"] for p in partials) == sorted(CONVERTIBLE_CRDS)
    for partial in partials:
        assert patch == expected_patch(partial)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_crd_hook_runs_after_install_and_upgrade_as_the_service(overlay: str) -> None:
    chart = render(*MODE_VALUES[overlay])
    job = one(chart, "Job", CRD_JOB)
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"
    pod = job["spec"]["template"]
    assert (
        pod["spec"]["serviceAccountName"]
        == one(chart, "ServiceAccount", "dynamo-webhook")["metadata"]["name"]
    )
    assert pod["spec"]["restartPolicy"] == "Never" and job["spec"]["activeDeadlineSeconds"] > 0
    # The account may patch the four CRDs, by name, in every cert mode.
    rules = one(chart, "ClusterRole", "dynamo-webhook")["rules"]
    crd_rule = next(r for r in rules if r["resources"] == ["customresourcedefinitions"])
    assert "patch" in crd_rule["verbs"] and sorted(crd_rule["resourceNames"]) == sorted(CONVERTIBLE_CRDS)
    # Its pod is nothing the Services, the PDB or the Deployment select.
    labels = pod["metadata"]["labels"]
    for obj in chart:
        selector = obj["spec"].get("selector") if isinstance(obj.get("spec"), dict) else None
        if isinstance(selector, dict):
            assert not selects(selector.get("matchLabels", selector), labels), obj["metadata"]["name"]


def test_resources_carry_the_deployment_explanation() -> None:
    """values.yaml explains the resources with the words and figures of deploy/base/deployment.yaml."""

    def comment_above(text: str, line: str) -> list[str]:
        lines = text.splitlines()
        index = next(i for i, item in enumerate(lines) if item.strip() == line)
        block: list[str] = []
        for item in reversed(lines[:index]):
            if not item.strip().startswith("#"):
                break
            block.insert(0, item.strip().lstrip("#").strip())
        return block

    deployment = comment_above((DEPLOY / "base" / "deployment.yaml").read_text(), "resources:")
    values = comment_above((CHART / "values.yaml").read_text(), "resources:")
    # values.yaml's comment is helm-docs' description: "-- <summary>", then the explanation.
    assert values[0].startswith("-- ")
    assert deployment and values[1:] == deployment
    assert (
        yaml.safe_load((CHART / "values.yaml").read_text())["resources"]
        == (build("self-signed").container["resources"])
    )


# --- helm lint and values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        (),
        MODE_VALUES["cert-manager"],
        (
            "features.grove=true",
            "features.checkpoint=true",
            "replicas=3",
            "monitoring.serviceMonitor.enabled=false",
        ),
        ("certMode=certManager", "crdConversion.enabled=false", "podDisruptionBudget.enabled=false"),
    ],
    ids=["defaults", "cert-manager", "gates", "cert-manager-bare"],
)
def test_helm_lint(values: tuple[str, ...]) -> None:
    args = ["lint", "--strict", str(CHART)]
    for value in values:
        args += ["--set", value]
    proc = run_helm(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in proc.stdout


def test_feature_gates_and_principals_become_settings() -> None:
    chart = render(
        "features.grove=true",
        "features.checkpoint=true",
        "features.gpuDiscovery=false",
        "operatorPrincipal=system:serviceaccount:dynamo-system:platform-dynamo-operator",
        "plannerServiceAccount=",
    )
    got = env(chart)
    assert got["DYNAMO_WEBHOOK_FEATURE_GROVE"] == "true"
    assert got["DYNAMO_WEBHOOK_FEATURE_CHECKPOINT"] == "true"
    assert got["DYNAMO_WEBHOOK_FEATURE_GPU_DISCOVERY"] == "false"
    assert (
        got["DYNAMO_WEBHOOK_OPERATOR_PRINCIPAL"]
        == "system:serviceaccount:dynamo-system:platform-dynamo-operator"
    )
    assert got["DYNAMO_WEBHOOK_PLANNER_SERVICE_ACCOUNT"] == ""


def test_settings_left_null_are_not_set() -> None:
    got = env(render())
    for name in (
        "FEATURE_GROVE",
        "FEATURE_CHECKPOINT",
        "FEATURE_GPU_DISCOVERY",
        "OPERATOR_PRINCIPAL",
        "PLANNER_SERVICE_ACCOUNT",
    ):
        assert f"DYNAMO_WEBHOOK_{name}" not in got


def test_every_setting_the_chart_sets_is_a_setting() -> None:
    from app.server.settings import Settings

    names = {f"DYNAMO_WEBHOOK_{n.upper()}" for n in Settings.model_fields}
    chart = render(
        "features.grove=true",
        "features.checkpoint=false",
        "features.gpuDiscovery=true",
        "operatorPrincipal=system:serviceaccount:a:b",
        "plannerServiceAccount=p",
    )
    for variable in env(chart):
        if variable.startswith("DYNAMO_WEBHOOK_"):
            assert variable in names, variable


def test_image_replicas_and_budget() -> None:
    chart = render(
        "image.repository=registry.example.com/dynamo-webhook",
        "image.tag=1.2.3",
        "image.pullPolicy=Always",
        "replicas=3",
        "podDisruptionBudget.minAvailable=2",
    )
    deployment = one(chart, "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/dynamo-webhook:1.2.3"
    assert container["imagePullPolicy"] == "Always"
    assert deployment["spec"]["replicas"] == 3
    assert one(chart, "PodDisruptionBudget")["spec"]["minAvailable"] == 2
    appversion = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
    assert (
        one(render(), "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
        == f"dynamo-webhook:{appversion}"
    )


def test_toggles_leave_their_objects_out() -> None:
    full = {(o["kind"], o["metadata"]["name"]) for o in render()}
    for value, gone in (
        ("monitoring.serviceMonitor.enabled=false", ("ServiceMonitor", "dynamo-webhook")),
        ("monitoring.prometheusRule.enabled=false", ("PrometheusRule", "dynamo-webhook")),
        ("podDisruptionBudget.enabled=false", ("PodDisruptionBudget", "dynamo-webhook")),
        ("crdConversion.enabled=false", ("Job", CRD_JOB)),
        ("uninstall.releaseConversion=false", ("Job", RELEASE_JOB)),
    ):
        assert gone in full
        assert {(o["kind"], o["metadata"]["name"]) for o in render(value)} == full - {gone}, value
    tests = {
        (kind, "dynamo-webhook-test")
        for kind in ("ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Pod")
    }
    assert tests <= full
    assert {(o["kind"], o["metadata"]["name"]) for o in render("tests.enabled=false")} == full - tests


@pytest.mark.parametrize("mode", ["selfSigned", "certManager"])
def test_service_name_reaches_every_reference(mode: str) -> None:
    chart = render(f"certMode={mode}", "serviceName=dynamo-webhook-service")
    text = yaml.safe_dump_all(chart)
    assert "dynamo-operator-webhook-service" not in text
    one(chart, "Service", "dynamo-webhook-service")
    assert env(chart)["DYNAMO_WEBHOOK_SERVICE_NAME"] == "dynamo-webhook-service"
    for config in of_kind(chart, "ValidatingWebhookConfiguration") + of_kind(
        chart, "MutatingWebhookConfiguration"
    ):
        for hook in config["webhooks"]:
            assert hook["clientConfig"]["service"]["name"] == "dynamo-webhook-service"
    assert (
        crd_job_patch(chart)[1]["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["name"]
        == "dynamo-webhook-service"
    )
    if mode == "certManager":
        assert (
            "dynamo-webhook-service.dynamo-system.svc"
            in one(chart, "Certificate", "dynamo-webhook-serving-cert")["spec"]["dnsNames"]
        )


BAD_VALUES = {
    "negative replicas": (("replicas=-1",), "/replicas"),
    "no replicas": (("replicas=0",), "/replicas"),
    "replicas not a number": (("replicas=two",), "/replicas"),
    "unknown cert mode": (("certMode=vault",), "/certMode"),
    "gate not a boolean": (("features.grove=yes",), "/features/grove"),
    "unknown gate": (("features.teleport=true",), "/features"),
    "unknown key": (("replica=2",), "additional properties 'replica'"),
    "bad quantity": (("resources.limits.memory=lots",), "/resources/limits/memory"),
    "bad pull policy": (("image.pullPolicy=Sometimes",), "/image/pullPolicy"),
    "principal not a service account": (("operatorPrincipal=dynamo-operator",), "/operatorPrincipal"),
    "service name not a DNS label": (("serviceName=Dynamo_Webhook",), "/serviceName"),
    "toggle not a boolean": (
        ("monitoring.prometheusRule.enabled=maybe",),
        "/monitoring/prometheusRule/enabled",
    ),
    "negative budget": (("podDisruptionBudget.minAvailable=-1",), "/podDisruptionBudget/minAvailable"),
    "kubectl image without a tag": (("crdConversion.image.tag=",), "/crdConversion/image/tag"),
    "digest not a sha256": (("crdConversion.image.digest=v1",), "/crdConversion/image/digest"),
    "negative hook ttl": (
        ("crdConversion.ttlSecondsAfterFinished=-1",),
        "/crdConversion/ttlSecondsAfterFinished",
    ),
    "budget of no pods": (("podDisruptionBudget.maxUnavailable=0",), "/podDisruptionBudget/maxUnavailable"),
    "pull secret without a name": (("imagePullSecrets[0].nam=x",), "/imagePullSecrets/0"),
    "env without a name": (("extraEnv[0].value=x",), "/extraEnv/0"),
    "label not a string": (("podLabels.a=1",), "/podLabels/a"),
    "autoscaler from zero": (("autoscaling.minReplicas=0",), "/autoscaling/minReplicas"),
    "monitoring not a switch": (
        ("monitoring.serviceMonitor.enabled=auto",),
        "/monitoring/serviceMonitor/enabled",
    ),
    "unknown networkPolicy key": (("networkPolicy.egress=true",), "additional properties 'egress'"),
}


@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_schema_refuses_bad_values(case: str) -> None:
    values, where = BAD_VALUES[case]
    error = refused(*values)
    assert "values don't meet the specifications of the schema" in error, error
    assert where in error, error


def test_schema_describes_every_value() -> None:
    """values.yaml and values.schema.json name the same keys, so no value escapes the schema."""
    import json

    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert sorted(schema["properties"]) == sorted(values)
    assert schema["additionalProperties"] is False


def test_notes_tell_how_to_check() -> None:
    notes = (CHART / "templates" / "NOTES.txt").read_text()
    assert "get pods -l app.kubernetes.io/name=dynamo-webhook" in notes
    examples = re.findall(r"kubectl create --dry-run=server -f (\S+)", notes)
    assert examples
    for example in examples:
        assert (DEPLOY.parent / example).is_file(), example


# --- "Install with Helm" of docs/operations.md, and the README's install -----------------------------


def helm_section() -> str:
    operations = (DEPLOY.parent / "docs" / "operations.md").read_text()
    return operations.split("### Install with Helm", 1)[1].split("\n### ", 1)[0]


def readme_install() -> str:
    readme = (DEPLOY.parent / "README.md").read_text()
    return readme.split("## Install in a cluster", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("section", [helm_section, readme_install], ids=["docs", "readme"])
def test_readme_install_command_renders(section: Callable[[], str]) -> None:
    block = section().split("```sh", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    words = block.split()
    assert words[:4] == ["helm", "install", "dynamo-webhook", "charts/dynamo-webhook"], words
    sets = [words[i + 1] for i, w in enumerate(words) if w == "--set"]
    assert "--wait" in words and sets
    chart = render(*sets)
    assert one(chart, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"].startswith(
        "registry.example.com/dynamo-webhook:"
    )


def test_readme_values_table_names_chart_values() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    rows = [line for line in helm_section().splitlines() if line.startswith("| `")]
    assert rows
    for row in rows:
        for name in re.findall(r"`([a-zA-Z.]+)`", row.split("|")[1]):
            node = values
            for part in name.split("."):
                assert isinstance(node, dict) and part in node, name
                node = node[part]
