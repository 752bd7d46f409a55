"""Every built manifest against the Kubernetes API schema of its kind.

Built-in kinds are deserialized with the ``kubernetes`` client's models (types and required
fields) and walked against their ``attribute_map`` (unknown fields are errors; the models would
drop them silently). The partial CRDs (conversion patches for server-side apply) get the walk
only, plus a full check of the conversion stanza. cert-manager and prometheus-operator kinds are
checked by hand: known fields and required fields."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s

from tests.deploy.manifests import DEPLOY, Build

Obj = dict[str, Any]

API = k8s.ApiClient()
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
GO_DURATION = re.compile(r"(\d+(\.\d+)?(h|m|s|ms))+")
PRIMITIVES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "datetime": (str,),
    "date": (str,),
}


def walk(value: Any, type_name: str, path: str) -> list[str]:
    """Errors of ``value`` against an OpenAPI type of the kubernetes client."""
    if type_name == "object":
        return []
    if type_name in PRIMITIVES:
        ok = isinstance(value, PRIMITIVES[type_name]) and not (
            type_name != "bool" and isinstance(value, bool)
        )
        return [] if ok else [f"{path}: expected {type_name}, got {value!r}"]
    if m := re.fullmatch(r"List\[(.+)\]", type_name):
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        return [e for i, item in enumerate(value) for e in walk(item, m.group(1), f"{path}[{i}]")]
    if m := re.fullmatch(r"Dict\[str, (.+)\]", type_name):
        if not isinstance(value, dict):
            return [f"{path}: expected a map"]
        return [e for k, item in value.items() for e in walk(item, m.group(1), f"{path}.{k}")]
    model = getattr(k8s, type_name)
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({type_name})"]
    by_json = {j: attr for attr, j in model.attribute_map.items()}
    errors = []
    for key, item in value.items():
        if key not in by_json:
            errors.append(f"{path}.{key}: unknown field of {type_name}")
            continue
        errors += walk(item, model.openapi_types[by_json[key]], f"{path}.{key}")
    return errors


def model_name(obj: Obj) -> str:
    version = obj["apiVersion"].rsplit("/", 1)[-1]
    return f"{version[0].upper()}{version[1:]}{obj['kind']}"


def check_metadata(obj: Obj) -> None:
    meta = obj["metadata"]
    assert not walk(meta, "V1ObjectMeta", "metadata")
    name = meta["name"]
    pattern = DNS_LABEL if obj["kind"] in ("Service", "Namespace") else DNS_SUBDOMAIN
    assert pattern.fullmatch(name) and len(name) <= (63 if pattern is DNS_LABEL else 253), name
    for key, value in meta.get("labels", {}).items():
        assert LABEL_VALUE.fullmatch(value) and len(value) <= 63, (key, value)
        assert len(key.rsplit("/", 1)[-1]) <= 63, key


def check_builtin(obj: Obj) -> None:
    name = model_name(obj)
    assert hasattr(k8s, name), f"no model {name} for {obj['apiVersion']} {obj['kind']}"
    errors = walk(obj, name, obj["kind"])
    assert not errors, errors
    API.deserialize(json.dumps(obj), name, "application/json")  # types and required fields


def check_partial_crd(obj: Obj) -> None:
    errors = walk(obj, "V1CustomResourceDefinition", "CustomResourceDefinition")
    assert not errors, errors
    API.deserialize(json.dumps(obj["spec"]["conversion"]), "V1CustomResourceConversion", "application/json")
    assert obj["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["name"]


def keys_within(obj: Obj, allowed: set[str], path: str, required: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    assert isinstance(obj, dict), path
    assert set(obj) <= allowed, f"{path}: unknown fields {set(obj) - allowed}"
    assert required <= set(obj), f"{path}: missing {required - set(obj)}"


ISSUER_TYPES = {"selfSigned", "ca", "acme", "vault", "venafi"}
CERT_SPEC = {
    "secretName",
    "secretTemplate",
    "issuerRef",
    "commonName",
    "dnsNames",
    "ipAddresses",
    "uris",
    "emailAddresses",
    "duration",
    "renewBefore",
    "usages",
    "privateKey",
    "isCA",
    "subject",
    "revisionHistoryLimit",
    "keystores",
    "literalSubject",
    "otherNames",
    "encodeUsagesInRequest",
    "additionalOutputFormats",
    "nameConstraints",
    "renewBeforePercentage",
}
USAGES = {
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
    "any",
    "server auth",
    "client auth",
    "code signing",
    "email protection",
    "s/mime",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "timestamping",
    "ocsp signing",
    "microsoft sgc",
    "netscape sgc",
}


def hours(duration: str) -> float:
    units = {"h": 1.0, "m": 1 / 60, "s": 1 / 3600, "ms": 1 / 3_600_000}
    return sum(float(n) * units[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ms|h|m|s)", duration))


def check_cert_manager(obj: Obj) -> None:
    assert obj["apiVersion"] == "cert-manager.io/v1"
    keys_within(obj, {"apiVersion", "kind", "metadata", "spec"}, obj["kind"], {"spec"})
    spec = obj["spec"]
    if obj["kind"] == "Issuer":
        kinds = set(spec) & ISSUER_TYPES
        assert len(kinds) == 1 and set(spec) == kinds, spec
        if "ca" in spec:
            keys_within(
                spec["ca"], {"secretName", "crlDistributionPoints", "ocspServers"}, "ca", {"secretName"}
            )
        if "selfSigned" in spec:
            keys_within(spec["selfSigned"], {"crlDistributionPoints"}, "selfSigned")
        return
    assert obj["kind"] == "Certificate", obj["kind"]
    keys_within(spec, CERT_SPEC, "Certificate.spec", {"secretName", "issuerRef"})
    keys_within(spec["issuerRef"], {"name", "kind", "group"}, "issuerRef", {"name"})
    assert spec.get("commonName") or spec.get("dnsNames"), "a Certificate needs a subject"
    assert len(spec.get("commonName", "")) <= 64
    keys_within(spec.get("privateKey", {}), {"algorithm", "size", "encoding", "rotationPolicy"}, "privateKey")
    assert spec.get("privateKey", {}).get("algorithm", "RSA") in {"RSA", "ECDSA", "Ed25519"}
    assert set(spec.get("usages", [])) <= USAGES
    keys_within(spec.get("secretTemplate", {}), {"labels", "annotations"}, "secretTemplate")
    for field in ("duration", "renewBefore"):
        assert GO_DURATION.fullmatch(spec[field]), spec[field]
    assert hours(spec["renewBefore"]) < hours(spec["duration"])
    assert isinstance(spec.get("isCA", False), bool)


def check_monitoring(obj: Obj) -> None:
    assert obj["apiVersion"] == "monitoring.coreos.com/v1"
    keys_within(obj, {"apiVersion", "kind", "metadata", "spec"}, obj["kind"], {"spec"})
    spec = obj["spec"]
    if obj["kind"] == "ServiceMonitor":
        keys_within(
            spec,
            {
                "selector",
                "endpoints",
                "namespaceSelector",
                "jobLabel",
                "targetLabels",
                "podTargetLabels",
                "sampleLimit",
            },
            "ServiceMonitor.spec",
            {"selector", "endpoints"},
        )
        assert not walk(spec["selector"], "V1LabelSelector", "selector")
        for ep in spec["endpoints"]:
            keys_within(
                ep,
                {
                    "port",
                    "targetPort",
                    "path",
                    "scheme",
                    "interval",
                    "scrapeTimeout",
                    "honorLabels",
                    "relabelings",
                    "metricRelabelings",
                    "tlsConfig",
                    "bearerTokenFile",
                    "authorization",
                },
                "endpoint",
            )
            assert ep.get("scheme", "http") in {"http", "https"}
            assert GO_DURATION.fullmatch(ep.get("interval", "30s"))
        return
    assert obj["kind"] == "PrometheusRule", obj["kind"]
    keys_within(spec, {"groups"}, "PrometheusRule.spec", {"groups"})
    check_rule_groups(spec["groups"])


def check_rule_groups(groups: list[Obj]) -> None:
    assert groups
    for group in groups:
        keys_within(
            group,
            {"name", "interval", "rules", "limit", "partial_response_strategy"},
            "group",
            {"name", "rules"},
        )
        for rule in group["rules"]:
            keys_within(
                rule,
                {"alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations"},
                "rule",
                {"expr"},
            )
            assert ("alert" in rule) != ("record" in rule)
            if "for" in rule:
                assert GO_DURATION.fullmatch(rule["for"])
            assert isinstance(rule["expr"], str) and rule["expr"].count("(") == rule["expr"].count(")")


@pytest.mark.kubectl
def test_every_manifest_matches_its_schema(built: Build) -> None:
    seen = set()
    for obj in built:
        keys_within(
            obj,
            {
                "apiVersion",
                "kind",
                "metadata",
                "spec",
                "rules",
                "roleRef",
                "subjects",
                "webhooks",
                "automountServiceAccountToken",
            },
            obj["kind"],
            {"apiVersion", "kind", "metadata"},
        )
        check_metadata(obj)
        group = obj["apiVersion"].rpartition("/")[0]
        if group == "cert-manager.io":
            check_cert_manager(obj)
        elif group == "monitoring.coreos.com":
            check_monitoring(obj)
        elif obj["kind"] == "CustomResourceDefinition":
            check_partial_crd(obj)
        else:
            check_builtin(obj)
        seen.add(obj["kind"])
    assert {
        "Deployment",
        "Service",
        "ServiceAccount",
        "PodDisruptionBudget",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "CustomResourceDefinition",
        "ServiceMonitor",
        "PrometheusRule",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
    } <= seen


@pytest.mark.kubectl
@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["spec"]["template"]["spec"]["containers"][0].update(readOnlyRootFs=True),
            "unknown field",
        ),
        (
            lambda d: d["spec"]["template"]["spec"]["containers"][0]["ports"][0].update(containerPort="9443"),
            "expected int",
        ),
        (lambda d: d["spec"]["template"]["spec"]["containers"][0].pop("name"), "name"),
        (lambda d: d["spec"].update(replicas=True), "expected int"),
    ],
)
def test_the_schema_check_rejects_broken_manifests(built: Build, mutate: Any, message: str) -> None:
    deployment = json.loads(json.dumps(built.deployment))
    mutate(deployment)
    with pytest.raises(Exception, match=message):
        errors = walk(deployment, "V1Deployment", "Deployment")
        if errors:
            raise AssertionError("; ".join(errors))
        API.deserialize(json.dumps(deployment), "V1Deployment", "application/json")


def test_alert_rule_file() -> None:
    doc = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yaml").read_text())
    assert set(doc) == {"groups"}
    check_rule_groups(doc["groups"])
