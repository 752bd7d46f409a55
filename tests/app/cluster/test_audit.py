"""``dynamo-webhook audit`` without a cluster: the simulated requests, the table and JSON reports, the exit
codes, pagination and progress (against an in-memory API; tests/e2e runs it against a real one)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli.main import build_parser, main
from app.cluster import audit, audit_command
from app.cluster.audit import Auditor, as_manifest, run, writer_version
from app.cluster.audit_command import render_json, render_table
from app.cluster.inventory import KINDS, CrdInfo, Listing, Progress, RateLimiter, select_kinds
from app.server.settings import Settings
from certs.kube import ApiError
from domain.admission import AdmissionContext
from tests.app.cluster.dynamo_api import FakeApi

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "admission" / "manifests"
DGD, DCD, DGDR, DGDSA, DM, DCKPT = KINDS
HUB = CrdInfo(
    "dynamographdeployments.nvidia.com",
    "u",
    1,
    "1",
    "v1beta1",
    ("v1alpha1", "v1beta1"),
    ("v1beta1", "v1alpha1"),
    True,
)
DENIED = 'admission webhook "vdynamographdeployment.kb.io" denied the request: '
CHECKPOINT_OFF = (
    "spec.components[1].experimental.checkpoint: Forbidden: checkpoint functionality is disabled "
    "in the operator configuration"
)
OVERRIDE = (
    "runtimeVersionOverride: Required value: is required when the specified main container image has no "
    "parseable semantic-version tag"
)


def load(path: Path, name: str, namespace: str = "apps") -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    doc["metadata"].update(name=name, namespace=namespace)
    return doc


def checkpoint_dgd(name: str = "snap", namespace: str = "apps") -> dict[str, Any]:
    return load(
        FIXTURES / "v1beta1/DynamoGraphDeployment/qwen3-0-6b-trtllm-snapshot-restore.yaml", name, namespace
    )


def unversioned_dgd(name: str = "agg", namespace: str = "apps") -> dict[str, Any]:
    return load(FIXTURES / "v1beta1/DynamoGraphDeployment/vllm-agg__vllm-agg.yaml", name, namespace)


def good_dgd(name: str = "good", namespace: str = "apps") -> dict[str, Any]:
    return load(ROOT / "examples/manifests/dgd-agg-v1beta1.yaml", name, namespace)


def written_in(obj: dict[str, Any], version: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["managedFields"] = [
        {
            "manager": "kubectl",
            "operation": "Update",
            "apiVersion": f"nvidia.com/{version}",
            "time": "2025-01-02T00:00:00Z",
        },
        {
            "manager": "operator",
            "operation": "Update",
            "apiVersion": "nvidia.com/v1beta1",
            "time": "2025-03-01T00:00:00Z",
            "subresource": "status",
        },
    ]
    return obj


@pytest.fixture
def auditor() -> Auditor:
    return Auditor(AdmissionContext(settings=Settings().admission_settings()))


# --------------------------------------------------------------------------- the simulated requests


def test_writer_version_is_that_of_the_newest_write_to_the_object_itself() -> None:
    obj = {
        "metadata": {
            "managedFields": [
                {"operation": "Update", "apiVersion": "nvidia.com/v1beta1", "time": "2025-01-01T00:00:00Z"},
                {"operation": "Apply", "apiVersion": "nvidia.com/v1alpha1", "time": "2025-02-01T00:00:00Z"},
                {
                    "operation": "Update",
                    "apiVersion": "nvidia.com/v1beta1",
                    "time": "2025-03-01T00:00:00Z",
                    "subresource": "status",
                },
            ]
        }
    }
    assert writer_version(obj, ("v1alpha1", "v1beta1"), "v1beta1") == "v1alpha1"
    assert writer_version(obj, ("v1beta1",), "v1beta1") == "v1beta1"  # not served any more
    assert writer_version({"metadata": {}}, ("v1alpha1", "v1beta1"), "v1beta1") == "v1beta1"


def test_refusals_carry_the_message_the_api_server_would_return(auditor: Auditor) -> None:
    report = auditor.audit(DGD, checkpoint_dgd(), HUB)
    assert report.checked_as == "v1beta1"
    assert not report.update.allowed
    assert report.update.webhook == "vdynamographdeployment.kb.io"
    assert report.update.code == 422
    assert (
        report.update.error == f'{DENIED}DynamoGraphDeployment.nvidia.com "snap" is invalid: {CHECKPOINT_OFF}'
    )
    assert report.update.message == report.update.error.removeprefix(DENIED)
    assert not report.create.allowed and "spec.components[0]." + OVERRIDE in report.create.error
    assert report.refused and report.findings


def test_runtime_version_rule_refuses_only_a_re_creation(auditor: Auditor) -> None:
    report = auditor.audit(DGD, unversioned_dgd(), HUB)
    assert report.update.allowed
    assert report.create.error == (
        f'{DENIED}DynamoGraphDeployment.nvidia.com "agg" is invalid: [spec.components[0].{OVERRIDE}, '
        f"spec.components[1].{OVERRIDE}]"
    )


def test_objects_written_in_v1alpha1_are_checked_as_v1alpha1_requests(auditor: Auditor) -> None:
    report = auditor.audit(DGD, written_in(unversioned_dgd(), "v1alpha1"), HUB)
    assert report.checked_as == "v1alpha1"
    assert f"spec.services[Frontend].{OVERRIDE}" in report.create.error


def test_defaulting_of_the_next_update_is_reported_by_field(auditor: Auditor) -> None:
    obj = good_dgd()
    for component in obj["spec"]["components"]:
        del component["replicas"]
    report = auditor.audit(DGD, obj, HUB)
    assert report.update.allowed and report.create.allowed
    assert report.update.changes == ["add /spec/components/0/replicas", "add /spec/components/1/replicas"]
    assert report.defaulted and not report.refused


def test_round_trips_are_checked_through_both_versions(auditor: Auditor) -> None:
    report = auditor.audit(DGD, good_dgd(), HUB)
    assert report.roundtrip == {"v1alpha1": [], "v1beta1": []}
    assert not report.findings
    assert report.stored == ("v1beta1", "v1alpha1")
    model = load(ROOT / "examples/manifests/dynamomodel-lora.yaml", "lora")
    crd = CrdInfo("dynamomodels.nvidia.com", "u", 1, "1", "v1alpha1", ("v1alpha1",), ("v1alpha1",), True)
    report = auditor.audit(DM, model, crd)
    assert (report.roundtrip, report.stored, report.checked_as) == ({}, ("v1alpha1",), "v1alpha1")


def test_only_the_registered_webhooks_run_and_exact_ones_only_in_their_version(
    auditor: Auditor, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, str]] = []
    real = audit.review_admission

    def spy(doc: Any, review_type: Any, ctx: Any, expected: Any = None) -> Any:
        seen.append((review_type, doc["request"]["operation"]))
        return real(doc, review_type, ctx, expected)

    monkeypatch.setattr(audit, "review_admission", spy)
    dcd = load(ROOT / "examples/manifests/dcd-v1beta1.yaml", "worker")
    crd = CrdInfo(
        "dynamocomponentdeployments.nvidia.com",
        "u",
        1,
        "1",
        "v1beta1",
        ("v1alpha1", "v1beta1"),
        ("v1beta1",),
        True,
    )
    auditor.audit(DCD, dcd, crd)
    assert seen == [
        ("mutate", "UPDATE"),
        ("validate", "UPDATE"),
        ("mutate", "CREATE"),
        ("validate", "CREATE"),
    ]
    seen.clear()
    auditor.audit(DCD, written_in(dcd, "v1alpha1"), crd)  # the mutating DCD webhook matches v1beta1 exactly
    assert seen == [("validate", "UPDATE"), ("validate", "CREATE")]
    seen.clear()
    auditor.audit(DGDSA, load(ROOT / "examples/manifests/dgdsa-v1beta1.yaml", "a"), crd)
    assert seen == []


def test_a_re_creation_sends_the_manifest_only() -> None:
    obj = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "X",
        "spec": {"a": 1},
        "status": {"b": 2},
        "metadata": {
            "name": "n",
            "namespace": "ns",
            "uid": "u",
            "resourceVersion": "5",
            "generation": 3,
            "creationTimestamp": "t",
            "managedFields": [],
            "labels": {"l": "v"},
        },
    }
    assert as_manifest(obj) == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "X",
        "spec": {"a": 1},
        "metadata": {"name": "n", "namespace": "ns", "labels": {"l": "v"}},
    }


# --------------------------------------------------------------------------- a whole cluster


def cluster(*objects: dict[str, Any]) -> FakeApi:
    api = FakeApi()
    api.add_crd("dynamographdeployments", stored=("v1beta1", "v1alpha1"))
    api.add_crd("dynamomodels", storage="v1alpha1", stored=("v1alpha1",), served=("v1alpha1",))
    for obj in objects:
        api.add("dynamographdeployments", obj)
    return api


def test_report_json_lists_every_object_with_totals_per_kind_and_namespace() -> None:
    api = cluster(
        checkpoint_dgd("snap", "legacy"), unversioned_dgd("agg", "legacy"), good_dgd("good", "apps")
    )
    report = run(api, KINDS, None, Settings())
    out = io.StringIO()
    render_json(report, out)
    doc = json.loads(out.getvalue())
    assert report.exit_code == 1
    assert [(o["namespace"], o["name"]) for o in doc["objects"]] == [
        ("apps", "good"),
        ("legacy", "agg"),
        ("legacy", "snap"),
    ]
    snap = doc["objects"][2]
    assert snap["update"] == {
        "allowed": False,
        "webhook": "vdynamographdeployment.kb.io",
        "code": 422,
        "message": snap["update"]["error"].removeprefix(DENIED),
        "error": f'{DENIED}DynamoGraphDeployment.nvidia.com "snap" is invalid: {CHECKPOINT_OFF}',
    }
    assert snap["checkedAs"] == "nvidia.com/v1beta1"
    assert snap["storedAs"] == ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"]
    assert doc["objects"][0]["update"] == {"allowed": True}
    totals = doc["totals"]
    assert {k: totals[k] for k in ("objects", "refused", "refusedOnUpdate", "refusedOnCreate")} == {
        "objects": 3,
        "refused": 2,
        "refusedOnUpdate": 1,
        "refusedOnCreate": 2,
    }
    assert totals["byNamespace"]["apps"]["refused"] == 0
    assert totals["byNamespace"]["legacy"] == {
        "objects": 2,
        "refused": 2,
        "refusedOnUpdate": 1,
        "refusedOnCreate": 2,
        "defaulted": 0,
        "notRoundTripping": 0,
        "excluded": 0,
    }
    assert list(totals["byKind"]) == ["DynamoGraphDeployment"]
    kinds = {k["kind"]: k for k in doc["kinds"]}
    assert kinds["DynamoGraphDeployment"] == {
        "kind": "DynamoGraphDeployment",
        "crd": "dynamographdeployments.nvidia.com",
        "installed": True,
        "storageVersion": "nvidia.com/v1beta1",
        "storedVersions": ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"],
        "singleStoredVersion": False,
        "objects": 3,
    }
    assert kinds["DynamoCheckpoint"] == {
        "kind": "DynamoCheckpoint",
        "crd": "dynamocheckpoints.nvidia.com",
        "installed": False,
    }
    assert doc["scope"] == {"namespace": None, "allNamespaces": True}
    assert doc["settings"]["feature_checkpoint"] is False
    # Read-only: nothing but GETs.
    assert api.writes() == []


def test_table_shows_findings_sections_totals_and_stored_versions() -> None:
    obj = good_dgd("fresh", "apps")
    for component in obj["spec"]["components"]:
        del component["replicas"]
    api = cluster(checkpoint_dgd("snap", "legacy"), good_dgd("good", "apps"), obj)
    report = run(api, KINDS, "apps", Settings(operator_version="1.2.0"))
    out = io.StringIO()
    render_table(report, out)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0].startswith("Audit of 2 Dynamo object(s) in namespace apps (")
    assert lines[2].split() == [
        "NAMESPACE",
        "KIND",
        "NAME",
        "CHECKED",
        "AS",
        "UPDATE",
        "CREATE",
        "DEFAULTING",
        "ROUND",
        "TRIP",
        "STORED",
        "AS",
    ]
    assert lines[3].split() == [
        "apps",
        "DynamoGraphDeployment",
        "fresh",
        "v1beta1",
        "ok",
        "ok",
        "2",
        "field(s)",
        "ok",
        "v1beta1|v1alpha1",
    ]
    assert "(1 object(s) without findings not listed; --show-all lists them)" in lines
    assert (
        "  DynamoGraphDeployment apps/fresh: add /spec/components/0/replicas, add /spec/components/1/replicas"
        in lines
    )
    assert "Would be refused:" not in text
    crd_rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  dynamo")}
    assert crd_rows["dynamographdeployments.nvidia.com"] == [
        "v1beta1",
        "[v1beta1,",
        "v1alpha1]",
        "objects",
        "may",
        "still",
        "be",
        "stored",
        "in",
        "an",
        "older",
        "version:",
        "run",
        "storage-migrate",
    ]
    assert crd_rows["dynamomodels.nvidia.com"][:2] == ["v1alpha1", "[v1alpha1]"]
    assert crd_rows["dynamocheckpoints.nvidia.com"] == ["-", "-", "not", "installed"]
    assert "Settings: operator version 1.2.0;" in text
    assert (
        lines[-1] == "Result: 0 of 2 object(s) would be refused (0 on their next update, 0 if created again)"
    )
    assert report.exit_code == 0

    report = run(api, KINDS, "legacy", Settings())
    out = io.StringIO()
    render_table(report, out, show_all=True)
    text = out.getvalue()
    assert (
        "Would be refused:\n  DynamoGraphDeployment legacy/snap (next update, UPDATE as nvidia.com/v1beta1):\n"
        f'    {DENIED}DynamoGraphDeployment.nvidia.com "snap" is invalid: {CHECKPOINT_OFF}\n' in text
    )
    assert "  DynamoGraphDeployment legacy/snap (re-creation, CREATE as nvidia.com/v1beta1):" in text
    assert (
        text.splitlines()[-1]
        == "Result: 1 of 1 object(s) would be refused (1 on their next update, 1 if created again)"
    )


def test_namespaces_claimed_by_a_namespace_scope_lease_are_excluded() -> None:
    api = cluster(checkpoint_dgd("snap", "legacy"))
    api.leases = [
        {
            "metadata": {"name": "dynamo-operator-namespace-scope", "namespace": "legacy"},
            "spec": {"renewTime": "2099-01-01T00:00:00Z", "leaseDurationSeconds": 60},
        },
        {
            "metadata": {"name": "dynamo-operator-namespace-scope", "namespace": "old"},
            "spec": {"renewTime": "2001-01-01T00:00:00Z", "leaseDurationSeconds": 60},
        },
    ]
    report = run(api, KINDS, None, Settings())
    assert report.excluded_namespaces == ["legacy"]
    (obj,) = report.objects
    assert obj.excluded and not obj.refused
    out = io.StringIO()
    render_table(report, out, show_all=True)
    assert "excluded  excluded" in out.getvalue()
    assert (
        "claimed by a namespace-restricted operator (not admitted by this webhook): legacy" in out.getvalue()
    )


def test_listing_is_paginated_and_restarts_when_the_continue_token_expires() -> None:
    api = cluster(*(good_dgd(f"d{i}") for i in range(5)))
    expired = {"done": False}

    def before(call: Any) -> None:
        if dict(call.query).get("continue") == "4" and not expired["done"]:
            expired["done"] = True
            raise ApiError(410, "Expired", "continue token expired")

    api.before = before
    listing = Listing(api, "/apis/nvidia.com/v1beta1/dynamographdeployments", page_size=2)  # type: ignore[arg-type]
    names = [o["metadata"]["name"] for o in listing]
    assert names == ["d0", "d1", "d2", "d3", "d4"]
    assert listing.total == 5 and listing.restarts == 1
    lists = [dict(c.query) for c in api.calls]
    assert lists[:3] == [{"limit": "2"}, {"limit": "2", "continue": "2"}, {"limit": "2", "continue": "4"}]


def test_progress_goes_to_a_terminal_only() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    api = cluster(*(good_dgd(f"d{i}") for i in range(3)))
    run(api, [DGD], None, Settings(), page_size=2, progress=Progress(tty, interval=0))
    run(api, [DGD], None, Settings(), progress=Progress(pipe))
    assert "\r\x1b[Kaudit dynamographdeployments: 1/3" in tty.getvalue()
    assert "audit dynamographdeployments: 3/3" in tty.getvalue()
    assert tty.getvalue().endswith("\r\x1b[K")
    assert pipe.getvalue() == ""


# --------------------------------------------------------------------------- command line and exit codes


@pytest.fixture
def connected(monkeypatch: pytest.MonkeyPatch) -> FakeApi:
    from app.cluster.inventory import Connection

    api = cluster()
    monkeypatch.setattr(audit_command, "connect", lambda args, qps=0.0: Connection(api, None, "apps"))  # type: ignore[arg-type]
    for name in list(__import__("os").environ):
        if name.startswith("DYNAMO_WEBHOOK_"):
            monkeypatch.delenv(name)
    return api


def test_exit_0_when_nothing_would_be_refused(connected: FakeApi, capsys: pytest.CaptureFixture[str]) -> None:
    connected.add("dynamographdeployments", good_dgd("good", "apps"))
    connected.add("dynamographdeployments", checkpoint_dgd("snap", "legacy"))
    assert main(["audit"]) == 0  # the context's namespace: apps
    assert "in namespace apps" in capsys.readouterr().out


def test_exit_1_when_anything_would_be_refused(
    connected: FakeApi, capsys: pytest.CaptureFixture[str]
) -> None:
    connected.add("dynamographdeployments", checkpoint_dgd("snap", "legacy"))
    assert main(["audit", "-A", "-o", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["totals"]["refused"] == 1
    # The same object under the settings of a planned upgrade: checkpointing on.
    assert (
        main(["audit", "-A", "--feature-checkpoint", "--kinds", "dgd"]) == 1
    )  # still refused on re-creation
    out = capsys.readouterr().out
    assert "(0 on their next update, 1 if created again)" in out


def test_settings_come_from_the_environment_as_for_serve(
    connected: FakeApi, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DYNAMO_WEBHOOK_OPERATOR_VERSION", "9.9.9")
    assert main(["audit", "-A", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["operator_version"] == "9.9.9"


def test_exit_2_when_the_cluster_cannot_be_read(
    connected: FakeApi, capsys: pytest.CaptureFixture[str]
) -> None:
    def forbid(call: Any) -> None:
        if "/nvidia.com/" in call.path:
            raise ApiError(403, "Forbidden", "dynamographdeployments.nvidia.com is forbidden")

    connected.before = forbid
    assert main(["audit", "-A"]) == 2
    assert capsys.readouterr().err == (
        "dynamo-webhook audit: cannot read the cluster: the server refused the request "
        "(403 Forbidden): dynamographdeployments.nvidia.com is forbidden\n"
    )


def test_exit_2_on_usage_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert main(["audit", "--kinds", "pods"]) == 2
    assert "unknown kind 'pods'" in capsys.readouterr().err
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    assert main(["audit", "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err == (
        f"dynamo-webhook audit: no Kubernetes API configuration: kubeconfig {tmp_path / 'missing'}: no such file\n"
    )
    with pytest.raises(SystemExit):
        main(["audit", "-A", "-n", "x"])


def test_kind_selection() -> None:
    assert select_kinds("dgd,DynamoModel,dynamocheckpoints") == (DGD, DM, DCKPT)
    assert select_kinds(None) == KINDS
    assert select_kinds(None, convertible_only=True) == (DGD, DCD, DGDR, DGDSA)
    with pytest.raises(ValueError, match="single version"):
        select_kinds("dm", convertible_only=True)


def test_rate_limiter_spaces_requests() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(4, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        limiter.wait()
    assert slept == [0.25, 0.25, 0.25, 0.25]
    unlimited = RateLimiter(0, clock=lambda: now[0], sleep=sleep)
    unlimited.wait()
    assert len(slept) == 4


def test_audit_takes_exactly_the_settings_the_admission_rules_read() -> None:
    import dataclasses

    from app.server.settings import ADMISSION_FIELDS

    base = Settings().admission_settings()
    changed = {
        "feature_grove": True,
        "feature_checkpoint": True,
        "feature_gpu_discovery": False,
        "operator_principal": "u",
        "planner_service_account": "p",
        "operator_version": "9.0.0",
        "dgdr_default_image": "i",
    }
    assert set(changed) == set(ADMISSION_FIELDS)
    for name, value in changed.items():
        assert Settings(**{name: value}).admission_settings() != base, name  # type: ignore[arg-type]
    fields = {f.name for f in dataclasses.fields(base)} - {"cluster_lookups"}
    assert len(fields) == len(ADMISSION_FIELDS)
    parser = build_parser()
    audit_help = parser._subparsers._group_actions[0].choices["audit"].format_help()
    for name in ADMISSION_FIELDS:
        assert "--" + name.replace("_", "-") in audit_help
    assert "--port" not in audit_help and "--cert-mode" not in audit_help


def test_the_checkpoint_gate_from_flag_or_variable_flag_first(
    connected: FakeApi, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule settings are read as every command that applies the rules reads them
    (tests/app/cli/test_rule_settings.py): the flag, else the variable, else the default."""
    obj = good_dgd("snap", "apps")
    obj["spec"]["components"][1]["experimental"] = {"checkpoint": {"enabled": True}}
    connected.add("dynamographdeployments", obj)
    assert main(["audit", "-A"]) == 1
    assert "checkpoint functionality is disabled" in capsys.readouterr().out
    assert main(["audit", "-A", "--feature-checkpoint"]) == 0
    monkeypatch.setenv("DYNAMO_WEBHOOK_FEATURE_CHECKPOINT", "true")
    assert main(["audit", "-A"]) == 0
    assert main(["audit", "-A", "--no-feature-checkpoint"]) == 1
