"""``dynamo-webhook review --apiserver``: the review's objects go through what the API server does
before it calls the webhook at ``--path``; its refusal is printed as the response review, else the
webhook answers the decoded objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import app.review.dispatch
from app.cli.main import main
from tests.examples import admission_review

ROOT = Path(__file__).resolve().parents[3]
Obj = dict[str, Any]


def _write(tmp_path: Path, review: Obj) -> str:
    path = tmp_path / "review.json"
    path.write_text(json.dumps(review))
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Obj]:
    code = main(["review", *args])
    out: Obj = json.loads(capsys.readouterr().out)
    return code, out


def _misspelt(tmp_path: Path) -> str:
    review = admission_review("dgd-v1beta1-create.json")
    review["request"]["object"]["spec"]["components"][0]["replicsa"] = 1
    return _write(tmp_path, review)


def test_an_unknown_field_is_refused_before_the_webhook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _misspelt(tmp_path)
    code, out = _run(capsys, "--apiserver", "--path", "/mutate", path)
    assert code == 1
    assert out == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {
            "uid": "e7a3c1c2-0001-4000-8000-000000000001",
            "allowed": False,
            "status": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": 'DynamoGraphDeployment in version "v1beta1" cannot be handled as a DynamoGraphDeployment: '
                'strict decoding error: unknown field "spec.components[0].replicsa"',
                "reason": "BadRequest",
                "code": 400,
            },
        },
    }
    # without the flag, today's answer: the webhook's own
    code, plain = _run(capsys, "--path", "/mutate", path)
    assert code == 0 and plain["response"]["allowed"] is True


def test_validate_warn_and_ignore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _misspelt(tmp_path)
    code, warned = _run(capsys, "--apiserver", "--validate", "warn", path)
    assert code == 0 and warned["response"]["allowed"] is True
    assert warned["response"]["warnings"] == ['unknown field "spec.components[0].replicsa"']
    code, ignored = _run(capsys, "--apiserver", "--validate", "ignore", path)
    assert code == 0 and ignored["response"]["allowed"] is True and "warnings" not in ignored["response"]


def test_a_schema_error_is_refused_before_a_validating_webhook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    review = admission_review("dgdsa-v1beta1-create.json")
    review["request"]["object"]["spec"]["replicas"] = -1
    path = _write(tmp_path, review)
    code, out = _run(capsys, "--apiserver", "--path", "/validate", path)
    assert code == 1
    response = out["response"]
    assert response["uid"] == "e7a3c1c2-0007-4000-8000-000000000007" and response["allowed"] is False
    assert response["status"]["code"] == 422 and response["status"]["reason"] == "Invalid"
    assert response["status"]["message"] == (
        'DynamoGraphDeploymentScalingAdapter.nvidia.com "llama-agg-worker" is invalid: [spec.replicas: Invalid '
        "value: -1: spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: "
        "-1: should be a non-negative integer]"
    )
    assert response["status"]["details"]["causes"][0]["field"] == "spec.replicas"
    # a mutating webhook is called before that validation: it answers
    code, mutating = _run(capsys, "--apiserver", "--path", "/mutate", path)
    assert mutating["response"]["status"]["code"] != 422


def test_the_webhook_answers_the_defaulted_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    review = admission_review("dgd-v1beta1-create.json")
    container = review["request"]["object"]["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    container["ports"] = [{"containerPort": 8000, "name": "http"}]
    seen: list[Obj] = []
    real = app.review.dispatch.review_admission

    def spy(doc: Any, *args: Any) -> Any:
        seen.append(doc)
        return real(doc, *args)

    monkeypatch.setattr(app.review.dispatch, "review_admission", spy)
    path = _write(tmp_path, review)
    code, out = _run(capsys, "--apiserver", "--path", "/mutate", path)
    assert code == 0 and out["response"]["allowed"] is True and out["response"]["patch"]
    sent = seen[-1]["request"]["object"]
    assert sent["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 8000, "name": "http", "protocol": "TCP"}
    ]
    _run(capsys, "--path", "/mutate", path)
    assert (
        "protocol"
        not in seen[-1]["request"]["object"]["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0][
            "ports"
        ][0]
    ), "without --apiserver the webhook gets the object as written"


def test_an_update(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    review = admission_review("dgd-v1beta1-update-backend.json")
    review["request"]["oldObject"]["spec"]["removedField"] = True  # pruned when read from storage
    path = _write(tmp_path, review)
    code, out = _run(capsys, "--apiserver", path)
    assert code == 1, "the webhook's own denial: backendFramework is immutable"
    assert out["response"]["status"]["message"].endswith("is immutable and cannot be changed after creation")
    review["request"]["object"]["spec"]["backendFramwork"] = "vllm"
    code, out = _run(capsys, "--apiserver", _write(tmp_path, review))
    assert code == 1 and out["response"]["status"]["code"] == 400
    assert out["response"]["status"]["message"].endswith(
        'strict decoding error: unknown field "spec.backendFramwork"'
    )
    code, out = _run(capsys, "--apiserver", "--validate", "warn", _write(tmp_path, review))
    assert code == 1 and out["response"]["status"]["message"].endswith(
        "is immutable and cannot be changed after creation"
    )
    assert out["response"]["warnings"] == [
        'unknown field "spec.backendFramwork"',
        "Changing spec.backendFramework may cause unexpected behavior",
    ], "the API server's warnings first, then the webhook's"


def test_a_deprecated_version_warns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "--apiserver", str(ROOT / "examples/admission/dgd-v1alpha1-create.json"))
    assert code == 0
    assert out["response"]["warnings"][0] == (
        "nvidia.com/v1alpha1 DynamoGraphDeployment is deprecated; use nvidia.com/v1beta1 DynamoGraphDeployment"
    )


@pytest.mark.parametrize(
    ("change", "args", "message"),
    [
        (
            {"apiVersion": "v1", "kind": "ConfigMap"},
            ["--apiserver"],
            "--apiserver models the API server for nvidia.com custom resources only",
        ),
        ({"kind": "DynamoGraphDeploy"}, ["--apiserver"], "no vendored CRD serves kind 'DynamoGraphDeploy'"),
        (
            {"metadata": {"name": "x", "labels": {"a": 1}}},
            ["--apiserver"],
            "kubectl refuses to send it: unable to decode",
        ),
        ({}, ["--validate", "warn"], "--validate applies with --apiserver only"),
        ({}, ["--apiserver", "--path", "/convert"], "--path '/convert' is not an admission webhook path"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Obj, args: list[str], message: str
) -> None:
    review = admission_review("dgdsa-v1beta1-create.json")
    review["request"]["object"].update(change)
    assert main(["review", *args, _write(tmp_path, review)]) == 2
    assert message in capsys.readouterr().err


def test_a_conversion_review_is_not_sent_through_admission(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "--apiserver", str(ROOT / "examples/conversion/dgd-to-v1beta1.json")]) == 2
    assert "--apiserver applies to AdmissionReviews" in capsys.readouterr().err
