"""The offline CLI: review (admission and conversion, JSON/YAML, stdin), lint plumbing,
settings flags/env, and serve --help documenting every setting."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.cli.main import build_parser, main
from app.server.cpus import default_workers
from app.server.settings import Settings, settings_from_args

ROOT = Path(__file__).resolve().parents[3]
EXE = Path(sys.executable).parent / "dynamo-webhook"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=60
    )


def test_review_admission_file() -> None:
    proc = run("review", "examples/admission/dgdsa-v1beta1-create.json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["kind"] == "AdmissionReview"
    assert out["response"]["uid"] == "e7a3c1c2-0007-4000-8000-000000000007"
    assert out["response"]["allowed"] is True


def test_review_yaml_from_stdin_and_yaml_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = json.loads((ROOT / "examples/admission/dgdsa-v1beta1-create.json").read_text())
    monkeypatch.setattr(sys, "stdin", io.StringIO(yaml.safe_dump(doc)))
    assert main(["review", "-", "-o", "yaml", "--path", "/mutate"]) == 0
    out = yaml.safe_load(capsys.readouterr().out)
    assert out["response"]["allowed"] is True


def test_review_conversion_failure_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "u1",
            "desiredAPIVersion": "nvidia.com/v1beta1",
            "objects": [{"apiVersion": "nvidia.com/v1alpha1", "kind": "Unknown", "metadata": {"name": "x"}}],
        },
    }
    path = tmp_path / "review.json"
    path.write_text(json.dumps(review))
    assert main(["review", str(path)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["response"]["result"]["status"] == "Failure"


@pytest.mark.parametrize("content", ["not: [valid", "{}", "[1, 2]", "a: 1\n---\nb: 2\n"])
def test_review_unreadable_input_exits_2(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    assert main(["review", str(path)]) == 2
    assert "dynamo-webhook review:" in capsys.readouterr().err


@pytest.mark.parametrize("path", ["/foo", "/convert"])
def test_review_unknown_path_names_the_valid_ones(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    from app.review.webhook_paths import WEBHOOK_ROUTES

    assert main(["review", "--path", path, str(ROOT / "examples/admission/dgdsa-v1beta1-create.json")]) == 2
    err = capsys.readouterr().err
    valid = [r.path for r in WEBHOOK_ROUTES if r.type != "convert"]
    assert "/mutate" in valid and "/validate" in valid
    assert err == (
        f"dynamo-webhook review: --path {path!r} is not an admission webhook path; "
        f"valid: {', '.join(valid)}\n"
    )


def test_review_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "/nonexistent/review.json"]) == 2


def test_lint_skips_non_dynamo_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
        + (ROOT / "examples/manifests/dgdsa-v1beta1.yaml").read_text()
    )
    assert main(["lint", str(path)]) == 0
    assert "1 Dynamo document(s) checked: 1 accepted, 0 refused; 1 other document(s) not checked" in (
        capsys.readouterr().err
    )


def test_convert_passes_non_dynamo_documents_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.yaml"
    docs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}},
    ]
    path.write_text(yaml.safe_dump_all(docs))
    assert main(["convert", "--to", "nvidia.com/v1beta1", str(path), "-q"]) == 0
    assert list(yaml.safe_load_all(capsys.readouterr().out)) == docs


def test_settings_from_env_and_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNAMO_WEBHOOK_PORT", "10443")
    monkeypatch.setenv("DYNAMO_WEBHOOK_FEATURE_GROVE", "true")
    parser = build_parser()
    settings = settings_from_args(
        parser.parse_args(["serve", "--namespace", "ops", "--no-feature-gpu-discovery"])
    )
    assert settings.port == 10443
    assert settings.namespace == "ops"
    assert settings.feature_grove is True
    assert settings.feature_gpu_discovery is False
    flag_wins = settings_from_args(parser.parse_args(["serve", "--port", "9000"]))
    assert flag_wins.port == 9000


def _replica_change_by(username: str, tmp_path: Path) -> str:
    """An UPDATE review in which ``username`` changes the replicas of a component with a scaling adapter."""
    review = json.loads((ROOT / "examples/admission/dgd-v1beta1-create.json").read_text())
    request = review["request"]
    old = request["object"]
    old["spec"]["components"][0]["scalingAdapter"] = {}
    new = json.loads(json.dumps(old))
    new["spec"]["components"][0]["replicas"] = 7
    request.update(operation="UPDATE", object=new, oldObject=old, userInfo={"username": username})
    path = tmp_path / "update.json"
    path.write_text(json.dumps(review))
    return str(path)


@pytest.mark.parametrize(
    ("setting", "username", "allowed"),
    [
        (None, "system:serviceaccount:team-a:planner-serviceaccount", True),
        (None, "system:serviceaccount:team-a:autoscaler", False),
        ("autoscaler", "system:serviceaccount:team-a:autoscaler", True),
        ("autoscaler", "system:serviceaccount:team-a:planner-serviceaccount", False),
    ],
)
def test_planner_service_account_setting_reaches_the_replica_rule(
    setting: str | None,
    username: str,
    allowed: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if setting is not None:
        monkeypatch.setenv("DYNAMO_WEBHOOK_PLANNER_SERVICE_ACCOUNT", setting)
    assert main(["review", _replica_change_by(username, tmp_path)]) == (0 if allowed else 1)
    response = json.loads(capsys.readouterr().out)["response"]
    assert response["allowed"] is allowed
    if not allowed:
        assert "scaling adapter is enabled" in response["status"]["message"]


def test_serve_help_documents_every_setting() -> None:
    proc = run("serve", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for name in Settings.model_fields:
        assert "--" + name.replace("_", "-") in text
        assert f"DYNAMO_WEBHOOK_{name.upper()}" in text


def test_serve_without_an_api_refuses_cluster_cert_modes(tmp_path: Path) -> None:
    proc = run(
        "serve", "--cert-dir", str(tmp_path), "--cert-mode", "manual", "--port", "0", "--metrics-port", "0"
    )
    assert proc.returncode == 1
    assert "cert mode manual needs a Kubernetes API" in proc.stderr


def test_lint_reports_each_cause_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: bad}\n"
        "spec:\n  priorityClassName: high\n  components:\n  - {name: Frontend, type: frontend}\n"
    )
    good = ROOT / "examples/manifests/dgd-agg-v1beta1.yaml"
    assert main(["lint", str(path), str(good)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert (
        f"{path}:5:3: error: DynamoGraphDeployment/bad (document 1): spec.priorityClassName: Forbidden: "
        in (captured.out)
    )
    errors = [line for line in lines if ": error: " in line]
    assert errors and all(
        line.startswith(f"{path}:") and " DynamoGraphDeployment/bad (document 1): " in line for line in errors
    )
    assert "2 Dynamo document(s) checked: 1 accepted, 1 refused" in captured.err


def test_lint_accepts_every_example_and_shows_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    manifests = sorted(str(p) for p in (ROOT / "examples/manifests").glob("*.yaml"))
    assert main(["lint", "--diff", *manifests]) == 0
    out = capsys.readouterr().out
    assert (
        "dgd-agg-v1beta1.yaml:2:1: default: DynamoGraphDeployment/llama-agg (document 1): add /metadata/annotations"
        in out
    )
    assert "nvidia.com/workload-provider" in out


# ------------------------------------------------------------------ first use: version, help, hints


def test_version_names_the_package_the_build_and_the_operator_commit() -> None:
    from app.cli.version import OPERATOR_COMMIT
    from app.server.build import build_kind

    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"dynamo-webhook 0.1.0 ({build_kind()} build), matching the operator of ai-dynamo/dynamo {OPERATOR_COMMIT}\n"
    )


def test_the_operator_commit_is_the_one_the_fixtures_come_from() -> None:
    from app.cli.version import OPERATOR_COMMIT

    fixtures = ROOT / "tests" / "fixtures"
    assert f" at {OPERATOR_COMMIT} " in (fixtures / "crds" / "README.md").read_text()
    named = {
        m
        for path in fixtures.rglob("*.jsonl")
        for m in re.findall(r"pinned upstream code \(ai-dynamo/dynamo ([0-9a-f]+)\)", path.read_text())
    }
    assert named == {OPERATOR_COMMIT}


#: Modules ``--help`` must not load: the server, the rules, the Kubernetes client and what only they need.
HEAVY = (
    "app.server.serve",
    "app.cluster.audit",
    "app.cluster.audit_command",
    "app.cluster.certs_cli",
    "app.cluster.storage_migrate",
    "app.review.dispatch",
    "uvicorn",
    "fastapi",
    "starlette",
    "kubernetes",
    "kinds",
    "conversion",
    "validation",
    "defaulting",
    "gocompat",
    "cryptography",
    "yaml",
    "orjson",
    "jsonpatch",
    "certs",
)


@pytest.mark.parametrize(
    "argv", [["--help"], ["serve", "--help"], ["audit", "--help"], ["certs", "status", "--help"]]
)
def test_help_loads_none_of_the_heavy_modules(argv: list[str]) -> None:
    code = (
        "import sys\nfrom app.cli.main import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.startswith("usage: dynamo-webhook"), proc.stderr
    loaded = proc.stderr.split()
    assert [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY] == []


def test_help_shows_every_default() -> None:
    serve = " ".join(run("serve", "--help").stdout.split())
    assert "--port PORT HTTPS port of the webhook server. [env DYNAMO_WEBHOOK_PORT] (default: 9443)" in serve
    assert "[env DYNAMO_WEBHOOK_FEATURE_GPU_DISCOVERY] (default: true)" in serve
    assert '[env DYNAMO_WEBHOOK_DGDR_DEFAULT_IMAGE] (default: "")' in serve
    assert (
        "Number of worker processes (1: one process serves, no supervisor). Default: the CPUs the process "
        "may use (its cgroup CPU quota rounded up, else its CPU affinity)"
    ) in serve
    assert f"[env DYNAMO_WEBHOOK_WORKERS] (default: {default_workers()})" in serve
    for name in Settings.model_fields:
        default = Settings.model_fields[name].get_default(call_default_factory=True)
        if default is not None:
            assert f"[env DYNAMO_WEBHOOK_{name.upper()}] (default: " in serve, name
    convert = " ".join(run("convert", "--help").stdout.split())
    assert "API version to convert to (default: nvidia.com/v1beta1)" in convert
    certs = " ".join(run("certs", "ensure", "--help").stdout.split())
    assert "(default: dynamo-operator-webhook-service)" in certs
    assert "else dynamo-system, as for serve)" in certs


def test_review_of_a_manifest_points_to_lint(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = "examples/manifests/dgd-agg-v1beta1.yaml"
    assert main(["review", str(ROOT / manifest)]) == 2
    err = capsys.readouterr().err
    assert "holds a DynamoGraphDeployment manifest, not a review: `dynamo-webhook lint " in err
    assert f"{manifest}` defaults and validates manifests as a CREATE" in err


def test_review_of_something_else_names_the_review_with_its_article(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    assert main(["review", str(path)]) == 2
    assert (
        "expected an AdmissionReview (admission.k8s.io/v1, admission.k8s.io/v1beta1), got"
        in capsys.readouterr().err
    )


def test_audit_without_a_kubeconfig_says_where_it_looked(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    proc = subprocess.run(
        [str(EXE), "audit", "-A"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "HOME": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "dynamo-webhook audit: no Kubernetes API configuration: no kubeconfig found (looked in $KUBECONFIG: not set; "
        f"{tmp_path}/.kube/config: no such file; in-cluster: "
    ), proc.stderr
    assert proc.stderr.rstrip().endswith("pass --kubeconfig")
