"""The settings a cluster sets on charts/dynamo-webhook, each rendered where Kubernetes expects it
(``helm template``, and ``helm lint --strict`` with all of them at once); the monitoring objects only
where the cluster serves their API; a PodDisruptionBudget only where it cannot block a node drain;
the hook Jobs cleaned up; the pre-delete hook and the ``helm test`` objects; the chart's metadata."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from certs.config import CONVERTIBLE_CRDS
from tests.deploy.chart import (
    CHART,
    CRD_JOB,
    MONITORING_APIS,
    RELEASE_JOB,
    Obj,
    env,
    is_hook,
    of_kind,
    one,
    refused,
    render,
    run_helm,
)
from tests.deploy.manifests import ROOT

pytestmark = pytest.mark.kubectl

MONITORING_KINDS = {"ServiceMonitor", "PrometheusRule"}


def kinds(objects: list[Obj]) -> set[str]:
    return {o["kind"] for o in objects}


def pod_spec(objects: list[Obj]) -> Obj:
    spec: Obj = one(objects, "Deployment")["spec"]["template"]["spec"]
    return spec


def container(objects: list[Obj]) -> Obj:
    (first, *_) = pod_spec(objects)["containers"]
    assert isinstance(first, dict)
    return first


def admission_webhooks(objects: list[Obj]) -> list[Obj]:
    return [
        hook
        for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
        for config in of_kind(objects, kind)
        for hook in config["webhooks"]
    ]


def hook_pods(objects: list[Obj]) -> dict[str, Obj]:
    """The pod spec of every hook Job and of the test Pod, by object name."""
    out: dict[str, Obj] = {}
    for obj in objects:
        if obj["kind"] == "Job":
            out[obj["metadata"]["name"]] = obj["spec"]["template"]["spec"]
        elif obj["kind"] == "Pod":
            out[obj["metadata"]["name"]] = obj["spec"]
    return out


# --- monitoring: only where the cluster serves the API -------------------------------------------


def test_monitoring_objects_need_their_api_by_default() -> None:
    assert not kinds(render(api_versions=())) & MONITORING_KINDS
    assert kinds(render(api_versions=MONITORING_APIS)) >= MONITORING_KINDS
    only_rules = render(api_versions=("monitoring.coreos.com/v1/PrometheusRule",))
    assert kinds(only_rules) & MONITORING_KINDS == {"PrometheusRule"}


def test_monitoring_switches_override_the_cluster() -> None:
    forced = render(
        "monitoring.serviceMonitor.enabled=true", "monitoring.prometheusRule.enabled=true", api_versions=()
    )
    assert kinds(forced) >= MONITORING_KINDS
    off = render("monitoring.serviceMonitor.enabled=false", "monitoring.prometheusRule.enabled=false")
    assert not kinds(off) & MONITORING_KINDS


def test_service_monitor_selects_the_metrics_service_only() -> None:
    chart = render()
    selector = one(chart, "ServiceMonitor")["spec"]["selector"]["matchLabels"]
    services = [
        s
        for s in of_kind(chart, "Service")
        if all(s["metadata"]["labels"].get(k) == v for k, v in selector.items())
    ]
    assert [s["metadata"]["name"] for s in services] == ["dynamo-webhook-metrics"]


# --- the pods' settings ---------------------------------------------------------------------------


def test_scheduling_settings_reach_the_pod_spec() -> None:
    toleration = {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "dynamo-webhook"}},
    }
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "node-role", "operator": "In", "values": ["infra"]}]}
                ]
            }
        }
    }
    chart = render(
        "nodeSelector.node-role=infra",
        f"tolerations[0].key={toleration['key']}",
        "tolerations[0].operator=Equal",
        "tolerations[0].value=infra",
        "tolerations[0].effect=NoSchedule",
        "topologySpreadConstraints[0].maxSkew=1",
        "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
        "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
        "topologySpreadConstraints[0].labelSelector.matchLabels.app\\.kubernetes\\.io/name=dynamo-webhook",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].key=node-role",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].operator=In",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].values[0]=infra",
        "priorityClassName=system-cluster-critical",
    )
    spec = pod_spec(chart)
    assert spec["nodeSelector"] == {"node-role": "infra"}
    assert spec["tolerations"] == [toleration]
    assert spec["topologySpreadConstraints"] == [spread]
    assert spec["affinity"] == affinity  # given, it replaces the default anti-affinity
    assert spec["priorityClassName"] == "system-cluster-critical"
    default = pod_spec(render())
    assert set(default["affinity"]) == {"podAntiAffinity"}
    assert not {
        "nodeSelector",
        "tolerations",
        "topologySpreadConstraints",
        "priorityClassName",
        "imagePullSecrets",
    } & set(default)


def test_pod_labels_and_annotations_keep_the_chart_selector() -> None:
    chart = render(
        "podLabels.team=inference",
        "podLabels.app\\.kubernetes\\.io/name=other",
        "podAnnotations.example\\.com/owner=team-a",
    )
    template = one(chart, "Deployment")["spec"]["template"]["metadata"]
    assert template["labels"] == {"team": "inference", "app.kubernetes.io/name": "dynamo-webhook"}
    assert template["annotations"] == {"example.com/owner": "team-a"}
    assert "annotations" not in one(render(), "Deployment")["spec"]["template"]["metadata"]


def test_pull_secrets_reach_every_pod_of_the_chart() -> None:
    chart = render("imagePullSecrets[0].name=regcred")
    pods = {"Deployment": pod_spec(chart), **hook_pods(chart)}
    assert set(pods) == {"Deployment", CRD_JOB, RELEASE_JOB, "dynamo-webhook-test"}
    for name, spec in pods.items():
        assert spec["imagePullSecrets"] == [{"name": "regcred"}], name


def test_images_by_digest() -> None:
    digest = "sha256:" + "a" * 64
    kubectl_digest = "sha256:" + "b" * 64
    chart = render(
        "image.repository=registry.example.com/dynamo-webhook",
        f"image.digest={digest}",
        f"crdConversion.image.digest={kubectl_digest}",
    )
    assert container(chart)["image"] == f"registry.example.com/dynamo-webhook@{digest}"
    pods = hook_pods(chart)
    assert pods[RELEASE_JOB]["containers"][0]["image"] == f"registry.example.com/dynamo-webhook@{digest}"
    for name in (CRD_JOB, "dynamo-webhook-test"):
        assert pods[name]["containers"][0]["image"] == f"registry.k8s.io/kubectl@{kubectl_digest}", name
    assert "/image/digest" in refused("image.digest=latest")


def test_log_level_extra_env_and_args() -> None:
    chart = render(
        "logLevel=debug",
        "extraEnv[0].name=DYNAMO_WEBHOOK_LOG_FORMAT",
        "extraEnv[0].value=text",
        "extraArgs[0]=--workers=2",
    )
    assert env(chart)["DYNAMO_WEBHOOK_LOG_LEVEL"] == "debug"
    assert env(chart)["DYNAMO_WEBHOOK_LOG_FORMAT"] == "text"
    assert container(chart)["args"] == ["--workers=2"]
    assert "args" not in container(render())
    assert "DYNAMO_WEBHOOK_LOG_LEVEL" not in env(render())
    assert "/logLevel" in refused("logLevel=verbose")


def test_extra_env_may_not_name_what_the_chart_sets() -> None:
    # Every variable the chart can set, with every value that sets one given.
    everything = render(
        "features.grove=true",
        "features.checkpoint=true",
        "features.gpuDiscovery=true",
        "operatorPrincipal=system:serviceaccount:a:b",
        "plannerServiceAccount=p",
        "logLevel=info",
    )
    names = [v["name"] for v in container(everything)["env"]]
    assert len(names) == len(set(names))
    for name in names:
        error = refused(f"extraEnv[0].name={name}", "extraEnv[0].value=x")
        assert f"extraEnv: {name} is set by the chart" in error, name


def test_webhook_timeout_and_selectors_reach_every_admission_webhook() -> None:
    chart = render(
        "webhooks.timeoutSeconds=20",
        "webhooks.namespaceSelector.matchLabels.dynamo=enabled",
        "webhooks.objectSelector.matchExpressions[0].key=skip-dynamo-webhook",
        "webhooks.objectSelector.matchExpressions[0].operator=DoesNotExist",
    )
    hooks = admission_webhooks(chart)
    assert len(hooks) == 9
    skip = {"key": "skip-dynamo-webhook", "operator": "DoesNotExist"}
    for hook in hooks:
        assert hook["timeoutSeconds"] == 20, hook["name"]
        assert hook["namespaceSelector"]["matchLabels"] == {"dynamo": "enabled"}, hook["name"]
        assert hook["objectSelector"]["matchExpressions"][-1] == skip, hook["name"]
    (pods,) = [h for h in hooks if h["name"] == "mpodcheckpointrestore.kb.io"]
    # The Pod restore mutator keeps its own selectors, the values' added.
    assert pods["namespaceSelector"]["matchExpressions"][0]["key"] == "kubernetes.io/metadata.name"
    assert [e["key"] for e in pods["objectSelector"]["matchExpressions"]] == [
        "nvidia.com/dynamo-component",
        "nvidia.com/dynamo-namespace",
        "nvidia.com/selector",
        "skip-dynamo-webhook",
    ]
    for case, where in (
        (("webhooks.timeoutSeconds=31",), "/webhooks/timeoutSeconds"),
        (
            (
                "webhooks.objectSelector.matchExpressions[0].key=a",
                "webhooks.objectSelector.matchExpressions[0].operator=Sometimes",
            ),
            "/webhooks/objectSelector",
        ),
    ):
        assert where in refused(*case)


# --- the disruption budget, the autoscaler, the network policy -------------------------------------


@pytest.mark.parametrize(
    ("values", "budget"),
    [
        ((), {"minAvailable": 1}),
        (("replicas=1",), None),
        (("replicas=2", "podDisruptionBudget.minAvailable=2"), None),
        (("replicas=3", "podDisruptionBudget.minAvailable=2"), {"minAvailable": 2}),
        (("replicas=1", "podDisruptionBudget.maxUnavailable=1"), {"maxUnavailable": 1}),
        (("podDisruptionBudget.maxUnavailable=50%",), {"maxUnavailable": "50%"}),
        (("autoscaling.enabled=true", "autoscaling.minReplicas=1"), None),
        (("replicas=1", "autoscaling.enabled=true", "autoscaling.minReplicas=3"), {"minAvailable": 1}),
        (("podDisruptionBudget.enabled=false",), None),
    ],
    ids=[
        "default",
        "one-replica",
        "min-equals-replicas",
        "three",
        "max-unavailable",
        "percent",
        "hpa-one",
        "hpa-three",
        "off",
    ],
)
def test_the_budget_never_blocks_a_drain(values: tuple[str, ...], budget: dict[str, Any] | None) -> None:
    chart = render(*values)
    found = of_kind(chart, "PodDisruptionBudget")
    if budget is None:
        assert not found
        return
    (pdb,) = found
    assert {k: v for k, v in pdb["spec"].items() if k in ("minAvailable", "maxUnavailable")} == budget


def notes(tmp_path: Path, *values: str) -> str:
    """The release notes as ``helm install`` prints them: NOTES.txt rendered as a plain template of a
    copy of the chart (``helm template`` leaves NOTES.txt out, ``helm install`` needs a cluster)."""
    copy = Path(tempfile.mkdtemp(dir=tmp_path)) / "chart"
    shutil.copytree(CHART, copy)
    text = (copy / "templates" / "NOTES.txt").read_text()
    (copy / "templates" / "NOTES.txt").unlink()
    # Helm reads every rendered template as YAML: the notes become one string of a document.
    (copy / "templates" / "_notes.tpl").write_text('{{- define "probe.notes" -}}\n' + text + "{{- end }}\n")
    (copy / "templates" / "notes.yaml").write_text('{{ dict "notes" (include "probe.notes" .) | toYaml }}\n')
    args = [
        "template",
        "dynamo-webhook",
        str(copy),
        "--namespace",
        "dynamo-system",
        "--show-only",
        "templates/notes.yaml",
    ]
    for value in values:
        args += ["--set", value]
    proc = run_helm(*args)
    assert proc.returncode == 0, proc.stderr
    rendered: str = yaml.safe_load(proc.stdout)["notes"]
    return rendered


def test_one_replica_notes_say_why_there_is_no_budget(tmp_path: Path) -> None:
    assert "No PodDisruptionBudget was rendered" in notes(tmp_path, "replicas=1")
    assert "No PodDisruptionBudget" not in notes(tmp_path)


def test_notes_say_what_uninstall_does(tmp_path: Path) -> None:
    assert "says to run\n`dynamo-webhook storage-migrate` first" in notes(tmp_path)
    assert "it hands it to dynamo-system/operator-webhook." in notes(
        tmp_path, "uninstall.handOverTo=dynamo-system/operator-webhook"
    )
    assert "switch the CRD conversion off" in notes(tmp_path, "uninstall.releaseConversion=false")
    assert "helm test dynamo-webhook --namespace dynamo-system" in notes(tmp_path)
    assert "helm test" not in notes(tmp_path, "tests.enabled=false")


def test_autoscaler_takes_the_replicas_over() -> None:
    chart = render(
        "autoscaling.enabled=true",
        "autoscaling.minReplicas=2",
        "autoscaling.maxReplicas=6",
        "autoscaling.targetCPUUtilizationPercentage=70",
    )
    hpa = one(chart, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "dynamo-webhook",
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 6)
    assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
    assert "replicas" not in one(chart, "Deployment")["spec"]
    assert not of_kind(render(), "HorizontalPodAutoscaler")


def test_network_policy_opens_the_webhook_and_metrics_ports() -> None:
    assert not of_kind(render(), "NetworkPolicy")
    policy = one(render("networkPolicy.enabled=true"), "NetworkPolicy")
    assert policy["spec"]["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "dynamo-webhook"}}
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    webhook, metrics = policy["spec"]["ingress"]
    ports = {p["name"]: p["containerPort"] for p in container(render())["ports"]}
    assert [p["port"] for p in webhook["ports"]] == ["webhook"] and "webhook" in ports
    assert "from" not in webhook  # the API server calls from addresses that are not pods
    assert [p["port"] for p in metrics["ports"]] == ["metrics"] and "metrics" in ports
    assert metrics["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    ]
    narrowed = one(
        render("networkPolicy.enabled=true", "networkPolicy.webhookFrom[0].ipBlock.cidr=10.0.0.0/24"),
        "NetworkPolicy",
    )
    assert narrowed["spec"]["ingress"][0]["from"] == [{"ipBlock": {"cidr": "10.0.0.0/24"}}]


# --- hooks: cleaned up; the pre-delete hook; helm test ----------------------------------------------


def test_hook_jobs_are_cleaned_up() -> None:
    chart = render("crdConversion.ttlSecondsAfterFinished=600")
    jobs = [o for o in chart if o["kind"] == "Job"]
    assert {j["metadata"]["name"] for j in jobs} == {CRD_JOB, RELEASE_JOB}
    for job in jobs:
        policy = job["metadata"]["annotations"]["helm.sh/hook-delete-policy"].split(",")
        assert {"before-hook-creation", "hook-succeeded"} <= set(policy), job["metadata"]["name"]
        assert job["spec"]["ttlSecondsAfterFinished"] == 600, job["metadata"]["name"]
    for obj in chart:
        if is_hook(obj):
            assert "helm.sh/hook-delete-policy" in obj["metadata"]["annotations"], obj["metadata"]["name"]


def test_pre_delete_hook_releases_the_conversion_as_the_service() -> None:
    chart = render("image.repository=registry.example.com/dynamo-webhook", "image.tag=1.2.3")
    job = one(chart, "Job", RELEASE_JOB)
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-delete"
    spec = job["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "dynamo-webhook" and spec["restartPolicy"] == "Never"
    (main,) = spec["containers"]
    assert main["image"] == "registry.example.com/dynamo-webhook:1.2.3"
    assert main["command"] == ["dynamo-webhook"]
    assert main["args"] == ["crds", "release", "--service=dynamo-system/dynamo-operator-webhook-service"]
    handed = one(
        render("uninstall.handOverTo=dynamo-system/platform-webhook:8443/convert"), "Job", RELEASE_JOB
    )
    assert handed["spec"]["template"]["spec"]["containers"][0]["args"][-1] == (
        "--hand-over-to=dynamo-system/platform-webhook:8443/convert"
    )
    assert not [
        o for o in render("uninstall.releaseConversion=false") if o["metadata"]["name"] == RELEASE_JOB
    ]
    # Handing over, it reads the other converter's CA: Secret webhook-server-cert of its namespace.
    assert not [o for o in chart if o["metadata"]["name"] == "dynamo-webhook-hand-over-ca"]
    reader = one(
        render("uninstall.handOverTo=platform/operator-webhook"), "Role", "dynamo-webhook-hand-over-ca"
    )
    assert reader["metadata"]["namespace"] == "platform"
    assert reader["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["webhook-server-cert"],
            "verbs": ["get"],
        }
    ]
    assert "/uninstall/handOverTo" in refused("uninstall.handOverTo=not a service")
    # The account may read and patch the four CRDs, by name.
    rules = one(chart, "ClusterRole", "dynamo-webhook")["rules"]
    crd_rule = next(r for r in rules if r["resources"] == ["customresourcedefinitions"])
    assert {"get", "patch"} <= set(crd_rule["verbs"]) and sorted(crd_rule["resourceNames"]) == sorted(
        CONVERTIBLE_CRDS
    )


def test_helm_test_creates_the_examples_dry_run_as_a_narrow_account() -> None:
    chart = render(namespace="dynamo")
    tests = [o for o in chart if (o["metadata"].get("annotations") or {}).get("helm.sh/hook") == "test"]
    assert {(o["kind"], o["metadata"]["name"]) for o in tests} == {
        (kind, "dynamo-webhook-test")
        for kind in ("ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Pod")
    }
    role = one(tests, "Role")
    assert role["rules"] == [
        {"apiGroups": ["nvidia.com"], "resources": ["dynamographdeployments"], "verbs": ["create"]}
    ]
    pod = one(tests, "Pod")
    assert pod["metadata"]["labels"]["app.kubernetes.io/name"] == "dynamo-webhook-test"
    (main,) = pod["spec"]["containers"]
    files = one(tests, "ConfigMap")["data"]
    assert main["command"] == ["kubectl"]
    assert main["args"] == [
        "create",
        "--dry-run=server",
        "--namespace=dynamo",
        *[f"--filename=/manifests/{name}" for name in sorted(files)],
    ]
    # The examples of the repository, under the test's names.
    for version in ("v1alpha1", "v1beta1"):
        test_doc = yaml.safe_load(files[f"dgd-{version}.yaml"])
        example = yaml.safe_load((ROOT / "examples" / "manifests" / f"dgd-agg-{version}.yaml").read_text())
        assert test_doc["metadata"] == {"name": f"dynamo-webhook-test-{version}"}
        assert {k: v for k, v in test_doc.items() if k != "metadata"} == {
            k: v for k, v in example.items() if k != "metadata"
        }
    assert not [o for o in render("tests.enabled=false") if o["metadata"]["name"] == "dynamo-webhook-test"]


# --- metadata ----------------------------------------------------------------------------------------


def test_instance_label_is_the_release_name() -> None:
    for obj in render(release="platform-webhook"):
        assert obj["metadata"]["labels"]["app.kubernetes.io/instance"] == "platform-webhook", obj["metadata"][
            "name"
        ]


def test_chart_metadata() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert chart["home"].startswith("https://") and chart["sources"]
    assert chart["icon"].startswith(("https://", "data:image/svg+xml;base64,"))
    annotations = chart["annotations"]
    assert annotations["artifacthub.io/license"] == "Apache-2.0"
    images = {i["name"]: i["image"] for i in yaml.safe_load(annotations["artifacthub.io/images"])}
    assert images == {
        "dynamo-webhook": f"{values['image']['repository']}:{chart['appVersion']}",
        "kubectl": f"{values['crdConversion']['image']['repository']}:{values['crdConversion']['image']['tag']}",
    }
    links = yaml.safe_load(annotations["artifacthub.io/links"])
    assert all(link["url"].startswith("https://") for link in links)


def test_helm_lint_with_every_setting() -> None:
    values = {
        "image": {
            "repository": "registry.example.com/dynamo-webhook",
            "tag": "0.1.0",
            "digest": "sha256:" + "c" * 64,
            "pullPolicy": "Always",
        },
        "imagePullSecrets": [{"name": "regcred"}],
        "replicas": 3,
        "podDisruptionBudget": {"enabled": True, "minAvailable": 1, "maxUnavailable": 1},
        "logLevel": "debug",
        "extraEnv": [{"name": "DYNAMO_WEBHOOK_LOG_FORMAT", "value": "text"}],
        "extraArgs": ["--workers=2"],
        "podAnnotations": {"a": "b"},
        "podLabels": {"c": "d"},
        "nodeSelector": {"e": "f"},
        "tolerations": [{"operator": "Exists"}],
        "affinity": {"podAntiAffinity": {}},
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}
        ],
        "priorityClassName": "system-cluster-critical",
        "webhooks": {
            "timeoutSeconds": 15,
            "namespaceSelector": {"matchLabels": {"g": "h"}},
            "objectSelector": {"matchExpressions": [{"key": "i", "operator": "DoesNotExist"}]},
        },
        "autoscaling": {
            "enabled": True,
            "minReplicas": 2,
            "maxReplicas": 4,
            "targetCPUUtilizationPercentage": 60,
        },
        "networkPolicy": {
            "enabled": True,
            "webhookFrom": [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
            "metricsFrom": [],
        },
        "uninstall": {"releaseConversion": True, "handOverTo": "dynamo-system/operator-webhook"},
        "monitoring": {"serviceMonitor": {"enabled": True}, "prometheusRule": {"enabled": False}},
    }
    args = ["lint", "--strict", str(CHART)]
    for name, value in values.items():
        args += ["--set-json", f"{name}={json.dumps(value)}"]
    proc = run_helm(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in proc.stdout


# --- what the operator's own chart met ---------------------------------------------------------------


@pytest.mark.parametrize(
    "values", [(), ("replicas=1",), ("autoscaling.enabled=true",)], ids=["two", "one", "hpa"]
)
def test_a_rollout_never_drops_a_ready_replica(values: tuple[str, ...]) -> None:
    """A single replica refusing connections during a rollout: the old pods keep serving until the
    new one is ready (maxUnavailable 0), whatever the replicas."""
    rolling = one(render(*values), "Deployment")["spec"]["strategy"]
    assert rolling == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}


def test_the_chart_holds_no_crd_and_templates_the_conversion_in_a_hook() -> None:
    """Helm cannot template anything in crds/: the chart ships none, and the conversion stanza the
    CRDs need (Service, namespace) is a templated hook's patch instead."""
    assert not (CHART / "crds").exists()
    for namespace in ("dynamo-system", "other"):
        chart = render(namespace=namespace)
        assert not of_kind(chart, "CustomResourceDefinition")
        job = one(chart, "Job", CRD_JOB)
        patch = json.loads(job["spec"]["template"]["spec"]["containers"][0]["args"][-1])
        assert patch["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["namespace"] == namespace
