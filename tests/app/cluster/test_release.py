"""``dynamo-webhook crds release`` against the in-process fake API server (tests/fakekube), through the
command line and the real client: each decision, the all-or-nothing refusal, conflicts, dry runs and
access refused (tests/e2e/test_release.py runs it against a real API server)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.cluster.release import MAX_CONFLICTS, ServiceRef
from tests.fakekube.api import ApiStatus
from tests.fakekube.server import FakeKube

CRDS = "apiextensions.k8s.io", "customresourcedefinitions"
#: The registry's order, the order they are decided, patched and reported in.
DGD, DCD, DGDR, DGDSA = (
    "dynamographdeployments.nvidia.com",
    "dynamocomponentdeployments.nvidia.com",
    "dynamographdeploymentrequests.nvidia.com",
    "dynamographdeploymentscalingadapters.nvidia.com",
)
OURS = {
    "namespace": "dynamo-system",
    "name": "dynamo-operator-webhook-service",
    "port": 443,
    "path": "/convert",
}
OUR_CA = base64.b64encode(b"our CA").decode()
OTHER_PEM = b"-----BEGIN CERTIFICATE-----\nb3RoZXI=\n-----END CERTIFICATE-----\n"


def crd(
    name: str, stored: tuple[str, ...] = ("v1beta1",), service: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "group": "nvidia.com",
            "versions": [
                {"name": "v1alpha1", "served": True, "storage": False},
                {"name": "v1beta1", "served": True, "storage": True},
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": dict(service or OURS), "caBundle": OUR_CA},
                },
            },
        },
        "status": {"storedVersions": list(stored)},
    }


def install(fake: FakeKube, *objs: dict[str, Any]) -> None:
    for obj in objs:
        fake.put(*CRDS, obj)
    fake.clear_calls()


def conversion(fake: FakeKube, name: str) -> Any:
    obj = fake.get(*CRDS, name)
    assert obj is not None
    return obj["spec"]["conversion"]


def release(kubeconfig: Path, *args: str) -> int:
    return main(["crds", "release", "--kubeconfig", str(kubeconfig), *args])


@pytest.fixture(autouse=True)
def no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DYNAMO_WEBHOOK_NAMESPACE", "DYNAMO_WEBHOOK_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)


def test_crds_holding_only_the_storage_version_get_conversion_none(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(fake_kube, *(crd(n) for n in (DGD, DCD, DGDR, DGDSA)))
    assert release(kubeconfig_path) == 0
    for name in (DGD, DCD, DGDR, DGDSA):
        assert conversion(fake_kube, name) == {"strategy": "None"}
    # Every CRD is read before any is patched.
    assert [(c.verb, c.name) for c in fake_kube.calls] == [
        *(("get", n) for n in (DGD, DCD, DGDR, DGDSA)),
        *(("patch", n) for n in (DGD, DCD, DGDR, DGDSA)),
    ]
    assert capsys.readouterr().out.splitlines() == [
        f"{n}: conversion set to None (storedVersions [v1beta1])" for n in (DGD, DCD, DGDR, DGDSA)
    ]


def test_one_crd_with_objects_in_another_version_refuses_and_changes_nothing(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(
        fake_kube, crd(DGDR), crd(DGD, ("v1beta1", "v1alpha1")), crd(DCD), crd(DGDSA, ("v1alpha1", "v1beta1"))
    )
    assert release(kubeconfig_path) == 1
    assert fake_kube.writes() == []
    out, err = capsys.readouterr()
    assert f"{DGDR}: left as is (another CRD is refused); would be conversion set to None" in out
    assert (
        f"{DGD}: refused: storedVersions [v1beta1, v1alpha1], storage version v1beta1: objects may still be "
        "stored in another version"
    ) in out
    assert err.count("\n") == 1
    assert err.startswith(
        f"dynamo-webhook crds release: refused (no CRD changed): {DGD}: storedVersions [v1beta1, v1alpha1]"
    )
    assert f"{DGDSA}: storedVersions [v1alpha1, v1beta1]" in err
    assert (
        "dynamo-webhook storage-migrate" in err and "--hand-over-to" in err and "retry the uninstall" in err
    )


def test_crds_naming_another_converter_and_missing_crds_are_left_alone(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = crd(DGD, ("v1beta1", "v1alpha1"), service={**OURS, "namespace": "operator"})
    by_url = crd(DCD, ("v1beta1", "v1alpha1"))
    by_url["spec"]["conversion"]["webhook"]["clientConfig"] = {"url": "https://converter.example/convert"}
    plain = crd(DGDSA, ("v1beta1", "v1alpha1"))
    plain["spec"]["conversion"] = {"strategy": "None"}
    install(fake_kube, other, by_url, plain)
    assert release(kubeconfig_path, "-o", "json") == 0
    assert fake_kube.writes() == []
    report = json.loads(capsys.readouterr().out)
    assert [(c["crd"], c["action"], c["changed"], c["note"]) for c in report["crds"]] == [
        (
            DGD,
            "not-ours",
            False,
            "not ours (webhook names Service operator/dynamo-operator-webhook-service): left as is",
        ),
        (DCD, "not-ours", False, "not ours (webhook names a URL): left as is"),
        (DGDR, "missing", False, "CRD not installed: skipped"),
        (DGDSA, "not-ours", False, "not ours (strategy None): left as is"),
    ]
    assert report["refused"] is False and report["service"] == "dynamo-system/dynamo-operator-webhook-service"


def test_the_service_comes_from_serve_s_settings(
    fake_kube: FakeKube, kubeconfig_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = {**OURS, "namespace": "platform", "name": "webhook"}
    install(fake_kube, crd(DGD, service=mine), crd(DCD))
    monkeypatch.setenv("DYNAMO_WEBHOOK_NAMESPACE", "platform")
    monkeypatch.setenv("DYNAMO_WEBHOOK_SERVICE_NAME", "webhook")
    assert release(kubeconfig_path) == 0
    assert conversion(fake_kube, DGD) == {"strategy": "None"}
    assert conversion(fake_kube, DCD)["strategy"] == "Webhook"
    assert release(kubeconfig_path, "--service", "dynamo-system/dynamo-operator-webhook-service") == 0
    assert conversion(fake_kube, DCD) == {"strategy": "None"}


def put_secret(fake: FakeKube, namespace: str, name: str, data: dict[str, bytes]) -> None:
    fake.put(
        "",
        "secrets",
        {
            "metadata": {"name": name, "namespace": namespace},
            "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
        },
    )
    fake.clear_calls()


def test_hand_over_points_the_webhook_at_the_other_service_with_its_ca(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(
        fake_kube, crd(DGD, ("v1beta1", "v1alpha1")), crd(DCD), crd(DGDSA, service={**OURS, "name": "other"})
    )
    put_secret(fake_kube, "operator", "webhook-server-cert", {"ca.crt": OTHER_PEM, "tls.key": b"secret"})
    assert release(kubeconfig_path, "--hand-over-to", "operator/dynamo-operator-webhook-service") == 0
    for name in (DGD, DCD):
        assert conversion(fake_kube, name) == {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {**OURS, "namespace": "operator"},
                    "caBundle": base64.b64encode(OTHER_PEM).decode(),
                },
            },
        }
    assert conversion(fake_kube, DGDSA)["webhook"]["clientConfig"]["caBundle"] == OUR_CA  # not ours
    assert [(c.verb, c.resource, c.name) for c in fake_kube.calls if c.resource == "secrets"] == [
        ("get", "secrets", "webhook-server-cert")
    ]
    out = capsys.readouterr().out
    assert (
        f"{DGD}: conversion webhook handed over to operator/dynamo-operator-webhook-service:443/convert "
        "(storedVersions [v1beta1, v1alpha1])"
    ) in out


def test_hand_over_with_port_path_and_ca_file(
    fake_kube: FakeKube, kubeconfig_path: Path, tmp_path: Path
) -> None:
    install(fake_kube, crd(DGD))
    (tmp_path / "ca.pem").write_bytes(OTHER_PEM)
    assert (
        release(
            kubeconfig_path,
            "--hand-over-to",
            "operator/conv:8443/v/convert",
            "--hand-over-ca-file",
            str(tmp_path / "ca.pem"),
        )
        == 0
    )
    client_config = conversion(fake_kube, DGD)["webhook"]["clientConfig"]
    assert client_config == {
        "service": {"namespace": "operator", "name": "conv", "port": 8443, "path": "/v/convert"},
        "caBundle": base64.b64encode(OTHER_PEM).decode(),
    }
    assert not [c for c in fake_kube.calls if c.resource == "secrets"]


def test_hand_over_without_a_ca_changes_nothing(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(fake_kube, crd(DGD), crd(DCD))
    assert release(kubeconfig_path, "--hand-over-to", "operator/svc") == 2
    assert (
        "no CA for the other converter (no CRD changed): Secret operator/webhook-server-cert key ca.crt: "
        "the Secret does not exist" in capsys.readouterr().err
    )
    put_secret(fake_kube, "elsewhere", "ca", {"tls.crt": OTHER_PEM})
    assert (
        release(kubeconfig_path, "--hand-over-to", "operator/svc", "--hand-over-ca-secret", "elsewhere/ca")
        == 2
    )
    assert "Secret elsewhere/ca key ca.crt: no PEM certificate" in capsys.readouterr().err
    assert fake_kube.writes() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--service", "just-a-name"], "'just-a-name' is not NAMESPACE/NAME"),
        (["--hand-over-to", "ns/svc:99999"], "port 99999 is out of range"),
        (["--hand-over-to", "dynamo-system/dynamo-operator-webhook-service"], "the Service being removed"),
        (["--hand-over-ca-file", "x.pem"], "apply with --hand-over-to only"),
    ],
)
def test_usage_errors(
    kubeconfig_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert release(kubeconfig_path, *args) == 2
    assert message in capsys.readouterr().err


def test_service_refs() -> None:
    assert ServiceRef.parse("a/b", endpoint=True) == ServiceRef("a", "b", 443, "/convert")
    assert ServiceRef.parse("a/b/hook", endpoint=True).endpoint == "a/b:443/hook"
    with pytest.raises(ValueError, match="is not NAMESPACE/NAME"):
        ServiceRef.parse("a/b:80", endpoint=False)


def test_dry_run_changes_nothing_and_exits_as_the_run_would(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(fake_kube, crd(DGD), crd(DCD))
    assert release(kubeconfig_path, "--dry-run") == 0
    assert fake_kube.writes() == []
    assert f"{DGD}: dry run; would be conversion set to None" in capsys.readouterr().out
    install(fake_kube, crd(DGDSA, ("v1beta1", "v1alpha1")))
    assert release(kubeconfig_path, "--dry-run") == 1
    assert fake_kube.writes() == []


def on_first_patch(fake: FakeKube, action: Any) -> list[str]:
    """Run ``action`` (as another client) just before the first patch request is handled."""
    seen: list[str] = []
    original = fake._maybe_fault

    def hook(verb: str, path: str, before: bool) -> None:
        if verb == "patch" and before and not seen:
            seen.append(path)
            action()
        original(verb, path, before)

    fake._maybe_fault = hook  # type: ignore[method-assign]
    return seen


def test_a_conflict_reads_the_crd_again_and_decides_again(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(fake_kube, crd(DGD), crd(DGDR))
    labelled = crd(DGD)
    labelled["metadata"]["labels"] = {"touched": "yes"}
    on_first_patch(fake_kube, lambda: fake_kube.put(*CRDS, labelled))
    assert release(kubeconfig_path, "-o", "json") == 0
    assert [(c.verb, c.name, c.status) for c in fake_kube.calls if c.name == DGD] == [
        ("get", DGD, 200),
        ("patch", DGD, 409),
        ("get", DGD, 200),
        ("patch", DGD, 200),
    ]
    after = fake_kube.get(*CRDS, DGD)
    assert after is not None and after["metadata"]["labels"] == {"touched": "yes"}
    assert after["spec"]["conversion"] == {"strategy": "None"}
    first = json.loads(capsys.readouterr().out)["crds"][0]
    assert (first["crd"], first["conflicts"], first["changed"]) == (DGD, 1, True)


def test_a_conflict_that_now_refuses_keeps_that_crd_and_says_what_changed(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(fake_kube, crd(DGD), crd(DGDR))
    on_first_patch(fake_kube, lambda: fake_kube.put(*CRDS, crd(DGD, ("v1beta1", "v1alpha1"))))
    assert release(kubeconfig_path) == 1
    assert conversion(fake_kube, DGD)["strategy"] == "Webhook"
    assert conversion(fake_kube, DGDR) == {"strategy": "None"}
    assert (
        f"refused (changed meanwhile: {DGDR}): {DGD}: storedVersions [v1beta1, v1alpha1]"
        in capsys.readouterr().err
    )


def test_retries_are_bounded(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(fake_kube, crd(DGD))
    original = fake_kube._maybe_fault

    def always_changed(verb: str, path: str, before: bool) -> None:
        if verb == "patch" and before:
            fake_kube.put(*CRDS, crd(DGD))
        original(verb, path, before)

    fake_kube._maybe_fault = always_changed  # type: ignore[method-assign]
    assert release(kubeconfig_path) == 1
    assert len([c for c in fake_kube.calls if c.verb == "patch"]) == MAX_CONFLICTS
    assert conversion(fake_kube, DGD)["strategy"] == "Webhook"
    assert "the CRD kept changing" in capsys.readouterr().err


def test_access_refused_is_one_line_naming_what_it_needs(
    fake_kube: FakeKube, kubeconfig_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(fake_kube, crd(DGD), crd(DGDR))
    original = fake_kube._maybe_fault

    def forbidden(verb: str, path: str, before: bool) -> None:
        if verb == "patch" and path.endswith(DGDR):
            raise ApiStatus(
                403,
                "Forbidden",
                f'customresourcedefinitions.apiextensions.k8s.io "{DGDR}" is '
                'forbidden: User "system:serviceaccount:dynamo-system:x" cannot patch resource',
            )
        original(verb, path, before)

    fake_kube._maybe_fault = forbidden  # type: ignore[method-assign]
    assert release(kubeconfig_path) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    server = fake_kube.url.removeprefix("http://")
    assert err.startswith(
        f"dynamo-webhook crds release: the server {server} refused the request (403 Forbidden): "
        f'customresourcedefinitions.apiextensions.k8s.io "{DGDR}" is forbidden: User'
    )
    assert "it needs get and patch on the convertible CRDs" in err
    assert err.endswith(f"(already changed: {DGD})\n")


def test_no_api_server_is_an_error_not_a_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dead = FakeKube().start()
    config = dead.kubeconfig(tmp_path / "kubeconfig")
    dead.stop()
    assert main(["crds", "release", "--kubeconfig", str(config), "--request-timeout", "2"]) == 2
    server = dead.url.removeprefix("http://")
    assert capsys.readouterr().err == (
        f"dynamo-webhook crds release: the connection to the server {server} was "
        "refused - did you specify the right host or port? (no CRD changed)\n"
    )
