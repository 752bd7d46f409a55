"""The Grafana dashboard and the alert rules query metrics the service exports, from the scrape
job the ServiceMonitor produces, and the PrometheusRule carries the rule file's groups."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

import app.server.observability
import certs.metrics
from tests.deploy.manifests import DEPLOY, OVERLAYS, build

Obj = dict[str, Any]
METRIC = re.compile(r"\b((?:controller_runtime|dynamo)_webhook_[a-z_]+)\b")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
PREFIXES = ("controller_runtime_webhook_", "dynamo_webhook_")


def exported() -> set[str]:
    """Sample names the service exposes (from its metric families, also those without samples)."""
    assert app.server.observability.REQUESTS is not None and certs.metrics.READY is not None
    names = set()
    for family in REGISTRY.collect():
        if family.name.startswith(PREFIXES):
            names |= {family.name + s for s in SUFFIXES[family.type]}
    return names


def dashboard() -> Obj:
    data: Obj = json.loads((DEPLOY / "grafana" / "dashboard.json").read_text())
    return data


def exprs_of(d: Obj) -> list[str]:
    return [t["expr"] for p in d["panels"] for t in p.get("targets", [])]


def alert_rules() -> list[Obj]:
    doc = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yaml").read_text())
    return [r for g in doc["groups"] for r in g["rules"]]


def scrape_job() -> str:
    """prometheus-operator names the job after the scraped Service (no jobLabel set)."""
    b = build(OVERLAYS[0])
    monitor = b.one("ServiceMonitor")
    assert "jobLabel" not in monitor["spec"]
    selector = monitor["spec"]["selector"]["matchLabels"]
    (service,) = [s for s in b.of_kind("Service") if selector.items() <= s["metadata"]["labels"].items()]
    return str(service["metadata"]["name"])


def test_metric_names_exist() -> None:
    names = exported()
    assert "controller_runtime_webhook_latency_seconds_bucket" in names
    used = [
        m for e in [*exprs_of(dashboard()), *(r["expr"] for r in alert_rules())] for m in METRIC.findall(e)
    ]
    assert used
    unknown = sorted(set(used) - names)
    assert not unknown, f"queried but not exported: {unknown}"


@pytest.mark.kubectl
def test_queries_select_the_scrape_job() -> None:
    job = scrape_job()
    for expr in [*exprs_of(dashboard()), *(r["expr"] for r in alert_rules())]:
        selectors = re.findall(r"(?:controller_runtime|dynamo)_webhook_[a-z_]+\{([^}]*)\}", expr)
        assert selectors and len(selectors) == len(METRIC.findall(expr)), expr
        for sel in selectors:
            assert f'job="{job}"' in sel, expr


def test_dashboard_covers_the_topics() -> None:
    d = dashboard()
    exprs = exprs_of(d)

    def has(pattern: str) -> bool:
        return any(re.search(pattern, e) for e in exprs)

    assert has(r"rate\(controller_runtime_webhook_requests_total")
    assert has(
        r"histogram_quantile\(0\.95, sum by \([^)]*\ble\b[^)]*\) \(rate\(controller_runtime_webhook_latency_seconds_bucket"
    )
    assert has(r"sum by \(kind, operation\) \(rate\(dynamo_webhook_admission_denials_total")
    assert has(r"rate\(dynamo_webhook_conversions_total")
    assert has(r"dynamo_webhook_conversion_failures_total")
    assert has(r"dynamo_webhook_cert_leaf_expiry_seconds") and has(r"dynamo_webhook_cert_ca_expiry_seconds")
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in d["templating"]["list"]}
    for expr in exprs:
        for var in re.findall(r"\$(\w+)", expr):
            assert var in variables, var
    for p in d["panels"]:
        for t in p.get("targets", []):
            assert t["datasource"]["uid"] == "${datasource}"


def test_alert_thresholds() -> None:
    rules = {r["alert"]: r for r in alert_rules()}
    cert = rules["DynamoWebhookCertificateExpiringSoon"]["expr"]
    assert (
        "dynamo_webhook_cert_leaf_expiry_seconds" in cert and "dynamo_webhook_cert_ca_expiry_seconds" in cert
    )
    assert cert.count("< 14 * 24 * 3600") == 2
    failures = rules["DynamoWebhookConversionFailures"]["expr"]
    assert "dynamo_webhook_conversion_failures_total" in failures and failures.strip().endswith("> 0")
    slow = rules["DynamoWebhookSlowResponses"]["expr"]
    assert "histogram_quantile(0.99," in slow and slow.strip().endswith("> 0.5")
    # 0.5 s is a bucket boundary, so "p99 above 500 ms" is not an interpolation artefact.
    assert 0.5 in app.server.observability.LATENCY._upper_bounds
    for rule in rules.values():
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]


@pytest.mark.kubectl
def test_prometheus_rule_carries_the_rule_file() -> None:
    groups = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yaml").read_text())["groups"]
    for overlay in OVERLAYS:
        assert build(overlay).one("PrometheusRule")["spec"]["groups"] == groups
