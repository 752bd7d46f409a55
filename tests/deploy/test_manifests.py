"""Cross-references inside the built overlays and against the code: webhook paths are routes the
app serves, rules match the upstream registration, the Service reaches the container, the cert
SANs cover the Service, the Deployment is hardened."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.review.webhook_paths import WEBHOOK_ROUTES
from app.server.settings import Settings, default_cert_dir
from certs.config import (
    CERT_MANAGER_INJECT_ANNOTATION,
    CONVERTIBLE_CRDS,
    OPERATOR_NAMESPACE_LABEL,
    PART_OF_LABEL,
    PART_OF_VALUE,
    CertConfig,
)
from certs.leases import LEASE_NAME
from tests.deploy.manifests import DEPLOY, OVERLAYS, Build, build, kubectl, kustomize, port_number, selects

#: Every test here builds deploy/ with `kubectl kustomize`.
pytestmark = pytest.mark.kubectl

Obj = dict[str, Any]

CU = ("CREATE", "UPDATE")
#: The upstream registration (admission spec, "Registration"): webhook name ->
#: (configuration type, path, apiGroup, apiVersion, resource, operations, failurePolicy, matchPolicy).
REGISTRATION: dict[str, tuple[str, str, str, str, str, tuple[str, ...], str, str]] = {
    "vdynamocomponentdeployment.kb.io": (
        "validate",
        "/validate/nvidia.com/v1beta1/dynamocomponentdeployments",
        "nvidia.com",
        "v1beta1",
        "dynamocomponentdeployments",
        CU,
        "Fail",
        "Equivalent",
    ),
    "vdynamographdeployment.kb.io": (
        "validate",
        "/validate/nvidia.com/v1beta1/dynamographdeployments",
        "nvidia.com",
        "v1beta1",
        "dynamographdeployments",
        CU,
        "Fail",
        "Equivalent",
    ),
    "vdynamocheckpoint.kb.io": (
        "validate",
        "/validate-nvidia-com-v1alpha1-dynamocheckpoint",
        "nvidia.com",
        "v1alpha1",
        "dynamocheckpoints",
        CU,
        "Fail",
        "Equivalent",
    ),
    "vdynamomodel.kb.io": (
        "validate",
        "/validate-nvidia-com-v1alpha1-dynamomodel",
        "nvidia.com",
        "v1alpha1",
        "dynamomodels",
        CU,
        "Fail",
        "Equivalent",
    ),
    "vdynamographdeploymentrequest.kb.io": (
        "validate",
        "/validate-nvidia-com-v1beta1-dynamographdeploymentrequest",
        "nvidia.com",
        "v1beta1",
        "dynamographdeploymentrequests",
        CU,
        "Fail",
        "Equivalent",
    ),
    "mdynamographdeployment.kb.io": (
        "mutate",
        "/mutate/nvidia.com/v1beta1/dynamographdeployments",
        "nvidia.com",
        "v1beta1",
        "dynamographdeployments",
        CU,
        "Fail",
        "Equivalent",
    ),
    "mdynamocomponentdeploymentv1beta1.kb.io": (
        "mutate",
        "/mutate-nvidia-com-v1beta1-dynamocomponentdeployment",
        "nvidia.com",
        "v1beta1",
        "dynamocomponentdeployments",
        CU,
        "Fail",
        "Exact",
    ),
    "mdynamographdeploymentrequestv1beta1.kb.io": (
        "mutate",
        "/mutate-nvidia-com-v1beta1-dynamographdeploymentrequest",
        "nvidia.com",
        "v1beta1",
        "dynamographdeploymentrequests",
        CU,
        "Fail",
        "Equivalent",
    ),
    "mpodcheckpointrestore.kb.io": (
        "mutate",
        "/mutate-core-v1-pod-checkpoint-restore",
        "",
        "v1",
        "pods",
        ("CREATE",),
        "Ignore",
        "Equivalent",
    ),
}
#: Served for old registrations only: upstream no longer registers it (v1alpha1 DCDs reach the
#: v1beta1 path through matchPolicy Equivalent and conversion).
LEGACY_PATHS = {"/validate-nvidia-com-v1alpha1-dynamocomponentdeployment"}
ROUTES = {r.path: r for r in WEBHOOK_ROUTES}
CONFIG_TYPES = {"ValidatingWebhookConfiguration": "validate", "MutatingWebhookConfiguration": "mutate"}


def webhooks(b: Build) -> list[tuple[Obj, Obj]]:
    """(configuration, webhook) pairs of both configurations."""
    return [(cfg, w) for kind in CONFIG_TYPES for cfg in b.of_kind(kind) for w in cfg["webhooks"]]


def settings_of(b: Build) -> Settings:
    return Settings(**b.settings_overrides())  # type: ignore[arg-type]


def webhook_service(b: Build) -> Obj:
    names = {w["clientConfig"]["service"]["name"] for _, w in webhooks(b)}
    assert len(names) == 1
    return b.one("Service", names.pop())


def plural(kind: str) -> str:
    return kind.lower() + "s"


def test_every_object_is_namespaced_into_the_install_namespace(built: Build) -> None:
    cluster_scoped = {
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    }
    assert not built.of_kind("Namespace"), "the base must not create the namespace"
    for obj in built:
        meta = obj["metadata"]
        if obj["kind"] in cluster_scoped:
            assert "namespace" not in meta, obj["kind"]
        else:
            assert meta.get("namespace") == built.namespace == "dynamo-system", (obj["kind"], meta["name"])


def test_webhook_paths_are_served_routes_of_the_right_type(built: Build) -> None:
    for cfg, w in webhooks(built):
        path = w["clientConfig"]["service"]["path"]
        assert path in ROUTES, f"{w['name']}: {path} is not a route the app serves"
        route = ROUTES[path]
        assert route.type == CONFIG_TYPES[cfg["kind"]], w["name"]
        (rule,) = w["rules"]
        kinds = {plural(k) for k in route.kinds}
        assert rule["resources"] == [*kinds], (w["name"], rule["resources"], route.kinds)
        if route.expected_gvk is not None:
            # The route's GVK guard would deny any other version or group.
            assert rule["apiGroups"] == [route.expected_gvk.group]
            assert rule["apiVersions"] == [route.expected_gvk.version]
    for crd in built.of_kind("CustomResourceDefinition"):
        path = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["path"]
        assert ROUTES[path].type == "convert"


def test_registered_paths_are_exactly_the_per_kind_routes(built: Build) -> None:
    registered = [w["clientConfig"]["service"]["path"] for _, w in webhooks(built)]
    assert len(registered) == len(set(registered)), "one webhook per path"
    per_kind = {r.path for r in WEBHOOK_ROUTES if r.kinds}
    assert set(registered) == per_kind - LEGACY_PATHS


def test_rules_match_the_upstream_registration_and_nothing_else(built: Build) -> None:
    seen = {}
    for cfg, w in webhooks(built):
        (rule,) = w["rules"]
        seen[w["name"]] = (
            CONFIG_TYPES[cfg["kind"]],
            w["clientConfig"]["service"]["path"],
            *rule["apiGroups"],
            *rule["apiVersions"],
            *rule["resources"],
            tuple(rule["operations"]),
            w["failurePolicy"],
            w["matchPolicy"],
        )
        assert len(rule["apiGroups"]) == len(rule["apiVersions"]) == len(rule["resources"]) == 1
        assert rule["scope"] == "Namespaced"
    assert seen == REGISTRATION


def test_webhook_settings_a_careful_admin_wants(built: Build) -> None:
    service = webhook_service(built)
    ns = built.namespace
    for cfg, w in webhooks(built):
        assert w["sideEffects"] == "None"
        assert w["admissionReviewVersions"] == ["v1"]
        assert 1 <= w["timeoutSeconds"] <= 10
        assert "caBundle" not in w["clientConfig"], "caBundles are injected, never applied"
        ref = w["clientConfig"]["service"]
        assert (ref["name"], ref["namespace"], ref["port"]) == (service["metadata"]["name"], ns, 443)
        if cfg["kind"] == "MutatingWebhookConfiguration":
            assert w["reinvocationPolicy"] == "Never"
        (rule,) = w["rules"]
        if rule["apiGroups"] == ["nvidia.com"]:
            assert "namespaceSelector" not in w and "objectSelector" not in w, w["name"]
        else:
            expressions = w["namespaceSelector"]["matchExpressions"]
            assert expressions == [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", ns]}
            ]
            # Every pod without the operator's labels is answered without a patch; not sending
            # them changes nothing but the load.
            keys = {e["key"] for e in w["objectSelector"]["matchExpressions"]}
            assert keys == {
                "nvidia.com/dynamo-component",
                "nvidia.com/dynamo-namespace",
                "nvidia.com/selector",
            }
            assert {e["operator"] for e in w["objectSelector"]["matchExpressions"]} == {"Exists"}


def test_configurations_carry_the_labels_the_cert_loop_selects_on(built: Build) -> None:
    selector = CertConfig(mode="auto", namespace=built.namespace, service_name="x").selector
    assert selector == {PART_OF_LABEL: PART_OF_VALUE, OPERATOR_NAMESPACE_LABEL: built.namespace}
    for kind in CONFIG_TYPES:
        cfg = built.one(kind)
        assert selects(selector, cfg["metadata"]["labels"]), cfg["metadata"]["name"]


def test_crd_conversion_patches(built: Build) -> None:
    crds = built.of_kind("CustomResourceDefinition")
    assert sorted(c["metadata"]["name"] for c in crds) == sorted(CONVERTIBLE_CRDS)
    service = webhook_service(built)
    for crd in crds:
        # A partial object for server-side apply: name, (annotations), the conversion stanza.
        assert set(crd) == {"apiVersion", "kind", "metadata", "spec"}
        assert set(crd["spec"]) == {"conversion"}
        conversion = crd["spec"]["conversion"]
        assert conversion["strategy"] == "Webhook"
        assert conversion["webhook"]["conversionReviewVersions"] == ["v1"]
        client = conversion["webhook"]["clientConfig"]
        assert "caBundle" not in client
        assert client["service"] == {
            "name": service["metadata"]["name"],
            "namespace": built.namespace,
            "path": "/convert",
            "port": 443,
        }
        assert set(crd["metadata"]) <= {"name", "annotations"}
        assert "labels" not in crd["metadata"], "the operator's CRDs keep their own labels"


def test_service_reaches_the_container_and_the_settings_agree(built: Build) -> None:
    settings = settings_of(built)
    service = webhook_service(built)
    pod_labels = built.deployment["spec"]["template"]["metadata"]["labels"]
    assert selects(service["spec"]["selector"], pod_labels)
    (port,) = service["spec"]["ports"]
    assert port["port"] == 443
    assert port_number(built.container, port["targetPort"]) == settings.port == 9443
    assert settings.service_name == service["metadata"]["name"]
    assert settings.namespace == service["metadata"]["namespace"]
    assert settings.cert_mode == built.mode
    # The metrics Service (scraped by the ServiceMonitor) reaches the plain-HTTP metrics port.
    monitor = built.one("ServiceMonitor")
    metrics_services = [
        s
        for s in built.of_kind("Service")
        if selects(monitor["spec"]["selector"]["matchLabels"], s["metadata"]["labels"])
    ]
    assert len(metrics_services) == 1 and metrics_services[0] is not service
    (mport,) = metrics_services[0]["spec"]["ports"]
    assert selects(metrics_services[0]["spec"]["selector"], pod_labels)
    assert port_number(built.container, mport["targetPort"]) == settings.metrics_port == 8080
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [mport["name"]]


def test_every_env_variable_is_a_setting(built: Build) -> None:
    fields = set(Settings.model_fields)
    for name in built.env():
        if name.startswith("DYNAMO_WEBHOOK_"):
            assert name[len("DYNAMO_WEBHOOK_") :].lower() in fields, name
    ns_var = next(v for v in built.container["env"] if v["name"] == "DYNAMO_WEBHOOK_NAMESPACE")
    assert ns_var["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert {"POD_NAME", "POD_NAMESPACE"} <= set(built.env())


def test_cert_sans_cover_the_service_dns_name(built: Build) -> None:
    settings = settings_of(built)
    service = webhook_service(built)
    svc_dns = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    config = CertConfig(
        mode=settings.cert_mode,
        namespace=settings.namespace,
        service_name=settings.service_name,
        cluster_domain=settings.cluster_domain,
    )
    assert config.dns_names[0] == svc_dns
    if built.mode == "manual":
        cert = built.one("Certificate", "dynamo-webhook-serving-cert")
        assert cert["spec"]["dnsNames"] == config.dns_names
        assert cert["spec"]["commonName"] == svc_dns


def test_secret_mount_matches_the_cert_dir_and_secret_name(built: Build) -> None:
    settings = settings_of(built)
    assert settings.cert_dir == default_cert_dir() == Path("/tmp/k8s-webhook-server/serving-certs")
    pod = built.deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in built.container["volumeMounts"]}
    cert_mount = mounts[str(settings.cert_dir)]
    assert cert_mount["readOnly"] is True
    secret = volumes[cert_mount["name"]]["secret"]
    assert secret["secretName"] == settings.secret_name
    assert secret["optional"] is True
    assert secret["defaultMode"] & 0o007 == 0, "the key is not world-readable"
    # Read-only root filesystem: /tmp (the cert dir's parent, multiprocess metrics) is an emptyDir.
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]
    if built.mode == "manual":
        cert = built.one("Certificate", "dynamo-webhook-serving-cert")
        assert cert["spec"]["secretName"] == settings.secret_name


def test_deployment_availability(built: Build) -> None:
    spec = built.deployment["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pod_labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= pod_labels.items()
    terms = spec["template"]["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert any(
        t["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
        and selects(t["podAffinityTerm"]["labelSelector"]["matchLabels"], pod_labels)
        for t in terms
    )
    pdb = built.one("PodDisruptionBudget")
    assert selects(pdb["spec"]["selector"]["matchLabels"], pod_labels)
    assert 1 <= pdb["spec"]["minAvailable"] < spec["replicas"]


def test_probes(built: Build) -> None:
    settings = settings_of(built)
    c = built.container
    expected = {"startupProbe": "/healthz", "readinessProbe": "/readyz", "livenessProbe": "/healthz"}
    for probe, path in expected.items():
        get = c[probe]["httpGet"]
        assert (get["path"], get["scheme"]) == (path, "HTTPS"), probe
        assert port_number(c, get["port"]) == settings.port
    startup = c["startupProbe"]
    # serve waits up to cert_wait_timeout for the first pair before it listens.
    assert startup["periodSeconds"] * startup["failureThreshold"] > settings.cert_wait_timeout
    grace = built.deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > settings.drain_seconds + 30  # drain, then uvicorn's graceful shutdown


def test_resources(built: Build) -> None:
    resources = built.container["resources"]
    assert resources["requests"] == {"cpu": "100m", "memory": "128Mi"}
    assert resources["limits"] == {"cpu": "1", "memory": "256Mi"}


def test_pod_security(built: Build) -> None:
    pod = built.deployment["spec"]["template"]["spec"]
    c = built.container
    sc = c["securityContext"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 65532 == sc["runAsUser"]
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert pod["automountServiceAccountToken"] is True  # the cert loop and Lease watcher
    sa = built.one("ServiceAccount")
    assert pod["serviceAccountName"] == sa["metadata"]["name"]
    assert sa["automountServiceAccountToken"] is False
    image = c["image"]
    assert re.fullmatch(r"[\w./-]+:[\w.-]+", image) and not image.endswith(":latest"), image
    assert not c.get("command"), "the image's ENTRYPOINT starts serve"


def test_cert_manager_injection(built: Build) -> None:
    if built.mode != "manual":
        for obj in built:
            assert CERT_MANAGER_INJECT_ANNOTATION not in obj["metadata"].get("annotations", {})
        assert not built.of_kind("Certificate") and not built.of_kind("Issuer")
        return
    serving = built.one("Certificate", "dynamo-webhook-serving-cert")
    ref = f"{built.namespace}/{serving['metadata']['name']}"
    targets = [*built.of_kind("CustomResourceDefinition"), *(built.one(k) for k in CONFIG_TYPES)]
    for obj in targets:
        assert obj["metadata"]["annotations"] == {CERT_MANAGER_INJECT_ANNOTATION: ref}, obj["metadata"][
            "name"
        ]
    issuers = {i["metadata"]["name"]: i for i in built.of_kind("Issuer")}
    certs = {c["metadata"]["name"]: c for c in built.of_kind("Certificate")}
    # serving cert <- CA issuer <- root CA secret <- root CA certificate <- self-signed issuer
    ca_issuer = issuers[serving["spec"]["issuerRef"]["name"]]
    root = next(c for c in certs.values() if c["spec"]["secretName"] == ca_issuer["spec"]["ca"]["secretName"])
    assert root["spec"]["isCA"] is True
    assert "selfSigned" in issuers[root["spec"]["issuerRef"]["name"]]["spec"]
    assert serving["spec"].get("isCA", False) is False
    assert "server auth" in serving["spec"]["usages"]


def test_lease_name_matches_the_watcher() -> None:
    b = build(OVERLAYS[0])
    rules = [r for role in b.of_kind("ClusterRole") for r in role["rules"] if r["resources"] == ["leases"]]
    assert rules and all(r["resourceNames"] == [LEASE_NAME] for r in rules)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_namespace_is_set_in_one_place(overlay: str, tmp_path: Path) -> None:
    """Changing `namespace:` in an overlay moves every namespace reference with it."""
    copy = tmp_path / "deploy"
    shutil.copytree(DEPLOY, copy)
    kfile = copy / "overlays" / overlay / "kustomization.yaml"
    text = kfile.read_text()
    assert "\nnamespace: dynamo-system\n" in text
    kfile.write_text(text.replace("\nnamespace: dynamo-system\n", "\nnamespace: webhooks-elsewhere\n"))
    objects = kustomize(copy / "overlays" / overlay)
    rendered = "\n".join(str(o) for o in objects)
    assert "dynamo-system" not in rendered
    moved = Build(overlay, tuple(objects))
    assert moved.namespace == "webhooks-elsewhere"
    test_webhook_settings_a_careful_admin_wants(moved)
    test_configurations_carry_the_labels_the_cert_loop_selects_on(moved)
    test_cert_sans_cover_the_service_dns_name(moved)
    test_cert_manager_injection(moved)
    for binding in [*moved.of_kind("RoleBinding"), *moved.of_kind("ClusterRoleBinding")]:
        assert [s["namespace"] for s in binding["subjects"]] == ["webhooks-elsewhere"]


def test_name_label_selects_everything_but_the_crds(built: Build) -> None:
    """Uninstall and staged apply use `-l app.kubernetes.io/name=dynamo-webhook`: it must match
    every object of the service and never the operator's CRDs."""
    for obj in built:
        labels = obj["metadata"].get("labels", {})
        if obj["kind"] == "CustomResourceDefinition":
            assert "app.kubernetes.io/name" not in labels
        else:
            assert labels.get("app.kubernetes.io/name") == "dynamo-webhook", (
                obj["kind"],
                obj["metadata"]["name"],
            )
            assert labels.get(PART_OF_LABEL) == PART_OF_VALUE


def test_platform_chart_post_renderer_drops_only_the_webhook_configurations(tmp_path: Path) -> None:
    path = f"{Path(kubectl()).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the script runs kubectl kustomize
    chart = [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": f"dynamo-platform-dynamo-operator-{suffix}"},
            "webhooks": [],
        }
        for kind, suffix in (
            ("ValidatingWebhookConfiguration", "validating"),
            ("MutatingWebhookConfiguration", "mutating"),
        )
    ]
    chart.append(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "dynamo-platform-dynamo-operator-webhook-service"},
        }
    )
    chart.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "dynamo-platform-dynamo-operator"},
        }
    )
    proc = subprocess.run(
        [str(DEPLOY / "platform-chart" / "drop-webhooks.sh")],
        input=yaml.safe_dump_all(chart),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": path},
    )
    assert proc.returncode == 0, proc.stderr
    kept = [(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(proc.stdout) if d]
    assert sorted(kept) == [
        ("Deployment", "dynamo-platform-dynamo-operator"),
        ("Service", "dynamo-platform-dynamo-operator-webhook-service"),
    ]
