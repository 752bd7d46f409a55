"""``dynamo-webhook convert``: migration of real manifests, order and pass-through, --check (the round
trip, and the API server's create of the converted document), and the report of what moved into
payload annotations."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import kinds
from app.cli.convert import convert_documents
from app.cli.documents import Document
from app.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples" / "manifests").glob("*.yaml"))
MANIFESTS = EXAMPLES + sorted((ROOT / "tests" / "fixtures" / "conversion").rglob("*.yaml"))


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_every_manifest_round_trips(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Several upstream manifests name placeholder images without a version tag, which the webhook
    # refuses without a runtimeVersionOverride: --check says so, and exits 1, for those.
    code = main(["convert", "--check", str(path)])
    lines = capsys.readouterr().err.splitlines()
    assert not [line for line in lines if "does not round-trip" in line or "conversion failed" in line]
    verdicts = [line for line in lines if ": the API server " in line]
    assert len(verdicts) == len([line for line in lines if "round-trips through" in line])
    assert code == (1 if any("the API server refuses it" in line for line in verdicts) else 0)


@pytest.mark.parametrize("to", ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_is_accepted_in_either_version(
    path: Path, to: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", "--check", "--to", to, str(path)]) == 0, capsys.readouterr().err


def test_check_reports_a_converted_document_the_api_server_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A v1alpha1 service key may be any string; a v1beta1 component name must match a pattern. The
    document is accepted as written, round-trips, and is refused once converted."""
    plain = yaml.safe_load((ROOT / "examples/manifests/dgd-agg-v1alpha1.yaml").read_text())
    underscored = yaml.safe_load((ROOT / "examples/manifests/dgd-agg-v1alpha1.yaml").read_text())
    underscored["spec"]["services"]["vllm_worker"] = underscored["spec"]["services"].pop("Worker")
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump_all([underscored, plain]))
    assert main(["lint", str(path)]) == 0, "as written, in v1alpha1, both are accepted"
    capsys.readouterr()
    assert main(["convert", "--check", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: DynamoGraphDeployment/llama-agg (document 1): round-trips through nvidia.com/v1beta1",
        f"{path}: DynamoGraphDeployment/llama-agg (document 1): the API server refuses it as nvidia.com/v1beta1: "
        'DynamoGraphDeployment.nvidia.com "llama-agg" is invalid: spec.components[1].name: Invalid value: '
        "\"vllm_worker\": spec.components[1].name in body should match '^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$'",
        f"{path}: DynamoGraphDeployment/llama-agg (document 2): round-trips through nvidia.com/v1beta1",
        f"{path}: DynamoGraphDeployment/llama-agg (document 2): the API server accepts it as nvidia.com/v1beta1",
    ]
    assert main(["convert", "--check", "-q", str(path)]) == 1
    assert [line.split(": ", 3)[2] for line in capsys.readouterr().err.splitlines()] == [
        "the API server refuses it as nvidia.com/v1beta1"
    ], "-q keeps the refusals only"
    assert main(["convert", "--check", "--to", "nvidia.com/v1alpha1", "-q", str(path)]) == 0


@pytest.mark.parametrize("to", ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"])
def test_multi_document_order_kept_and_others_untouched(
    tmp_path: Path, to: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}
    dgd = yaml.safe_load((ROOT / "examples/manifests/dgd-agg-v1alpha1.yaml").read_text())
    dcd = yaml.safe_load((ROOT / "examples/manifests/dcd-v1beta1.yaml").read_text())
    model = yaml.safe_load((ROOT / "examples/manifests/dynamomodel-lora.yaml").read_text())
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump_all([cm, dgd, model, dcd]))
    assert main(["convert", "--to", to, str(path)]) == 0
    out = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in out] == [
        "ConfigMap",
        "DynamoGraphDeployment",
        "DynamoModel",
        "DynamoComponentDeployment",
    ]
    assert out[0] == cm and out[2] == model
    assert out[1]["apiVersion"] == to and out[3]["apiVersion"] == to
    expected = kinds.convert(dgd, to) if dgd["apiVersion"] != to else dgd
    assert out[1] == expected


def test_json_output_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "examples/manifests/dgd-agg-v1beta1.yaml"
    assert main(["convert", "--to", "nvidia.com/v1alpha1", "-o", "json", str(path)]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["apiVersion"] == "nvidia.com/v1alpha1"
    assert "nvidia.com/v1beta1 -> nvidia.com/v1alpha1" in captured.err
    assert "+ annotation nvidia.com/dgd-spec" in captured.err


def test_check_names_fields_that_do_not_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    real = kinds.convert

    def lossy(obj: dict[str, Any], desired: str) -> dict[str, Any]:
        out = real(obj, desired)
        if desired.endswith("v1alpha1"):
            out["spec"].pop("backendFramework", None)
            for svc in out["spec"].get("services", {}).values():
                svc.pop("replicas", None)
        return out

    monkeypatch.setattr(kinds, "convert", lossy)
    body = yaml.safe_load((ROOT / "examples/manifests/dgd-agg-v1beta1.yaml").read_text())
    body["spec"]["backendFramework"] = "vllm"
    err = io.StringIO()
    code = convert_documents(
        [Document("m.yaml", 0, body)],
        "nvidia.com/v1beta1",
        check=True,
        output="yaml",
        report=True,
        out=io.StringIO(),
        err=err,
    )
    assert code == 1
    text = err.getvalue()
    assert "m.yaml: DynamoGraphDeployment/llama-agg (document 1): does not round-trip:" in text
    assert "spec.backendFramework" in text
    assert "replicas" in text


def test_conversion_failure_is_reported_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeployment",
                "metadata": {"name": "dup"},
                "spec": {"components": [{"name": "a"}, {"name": "a"}]},
            }
        )
    )
    assert main(["convert", "--to", "nvidia.com/v1alpha1", str(path)]) == 1
    assert 'duplicate component name "a"' in capsys.readouterr().err


def test_check_runs_the_webhooks_with_default_settings(capsys: pytest.CaptureFixture[str]) -> None:
    """Feature gates off, as lint's defaults: a checkpoint is refused by the webhook."""
    path = (
        ROOT
        / "tests/fixtures/conversion/manifests/v1beta1__DynamoGraphDeployment__qwen3-0-6b-trtllm-snapshot-restore.yaml"
    )
    assert main(["convert", "--check", "-q", str(path)]) == 1
    assert "checkpoint: Forbidden: checkpoint functionality is disabled in the operator configuration" in (
        capsys.readouterr().err
    )


def test_check_reports_kubectls_own_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = yaml.safe_load((ROOT / "examples/manifests/dgd-agg-v1alpha1.yaml").read_text())
    body["metadata"]["labels"] = {"a": 1}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(body))
    assert main(["convert", "--check", "-q", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"{path}: DynamoGraphDeployment/llama-agg (document 1): the API server refuses it as nvidia.com/v1beta1: unable to decode "
        f'"{path}": json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string\n'
    )


def test_converted_yaml_means_what_its_input_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A string go-yaml would read as something else (``'y'``, ``'1e3'``) is written quoted, so kubectl
    reads the converted manifest's values as the input's."""
    from apiserver.source import Loader

    doc: dict[str, Any] = yaml.safe_load(
        (ROOT / "examples" / "manifests" / "dgd-agg-v1alpha1.yaml").read_text()
    )
    doc["spec"]["envs"] = [{"name": "UCX_MEMTYPE_CACHE", "value": "y"}, {"name": "N", "value": "1e3"}]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    assert main(["convert", "-q", str(path)]) == 0
    text = capsys.readouterr().out
    assert 'value: "y"' in text and 'value: "1e3"' in text
    out = yaml.load(text, Loader=Loader)
    assert json.dumps(out).count('"value": "y"') == 1 and json.dumps(out).count('"value": "1e3"') == 1


# --------------------------------------------------------------------------- fields a conversion would drop


def _example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "manifests" / name).read_text())
    return loaded


def _misspelled() -> dict[str, Any]:
    body = _example("dgd-agg-v1alpha1.yaml")
    body["spec"]["services"]["Worker"]["componentTyp"] = body["spec"]["services"]["Worker"].pop(
        "componentType"
    )
    return body


def _convert(tmp_path: Path, docs: list[dict[str, Any]], *argv: str) -> tuple[int, str]:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return main(["convert", "-q", *argv, str(path)]), str(path)


def test_a_misspelled_field_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, path = _convert(tmp_path, [_example("dgd-agg-v1beta1.yaml"), _misspelled()])
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, ""), "a pipeline `> out.yaml` gets no lossy file"
    assert captured.err.splitlines() == [
        f"{path}: DynamoGraphDeployment/llama-agg (document 2): drops spec.services.Worker.componentTyp: "
        "unknown to the nvidia.com/v1alpha1 DynamoGraphDeployment schema",
        "nothing written: 1 document(s) would lose the fields named (--validate warn writes them anyway)",
    ]


def test_validate_warn_writes_the_output_and_ignore_says_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, path = _convert(tmp_path, [_misspelled()], "--validate", "warn")
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err == (
        f"{path}: DynamoGraphDeployment/llama-agg (document 1): drops "
        "spec.services.Worker.componentTyp: unknown to the nvidia.com/v1alpha1 "
        "DynamoGraphDeployment schema\n"
    )
    (converted,) = yaml.safe_load_all(captured.out)
    assert converted["apiVersion"] == "nvidia.com/v1beta1"
    assert "componentTyp" not in json.dumps(converted)
    assert _convert(tmp_path, [_misspelled()], "--validate", "ignore")[0] == 0
    captured = capsys.readouterr()
    assert captured.err == "" and list(yaml.safe_load_all(captured.out)) == [converted]


def test_nested_unknown_fields_in_either_direction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha = _example("dgd-agg-v1alpha1.yaml")
    alpha["spec"]["services"]["Worker"]["extraPodSpec"]["mainContainer"]["workingDirr"] = "/w"
    alpha["spec"]["services"]["Worker"]["extraPodSpec"]["nodeSelectr"] = {"a": "b"}
    beta = _example("dgd-agg-v1beta1.yaml")
    beta["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    beta["spec"]["components"][1]["replicaz"] = 3
    for body, to in ((alpha, "nvidia.com/v1beta1"), (beta, "nvidia.com/v1alpha1")):
        assert _convert(tmp_path, [body], "--to", to)[0] == 1
    dropped = [line.split(": ")[2] for line in capsys.readouterr().err.splitlines() if ": drops " in line]
    assert dropped == [
        "drops spec.services.Worker.extraPodSpec.mainContainer.workingDirr",
        "drops spec.services.Worker.extraPodSpec.nodeSelectr",
        "drops spec.components[1].podTemplate.spec.containers[0].imagePullPolicyy",
        "drops spec.components[1].replicaz",
    ]


def test_a_field_the_schema_keeps_but_the_conversion_cannot_carry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An EPP config keeps unknown fields in either schema; the conversion carries only the ones it knows."""
    body = _example("dgd-agg-v1alpha1.yaml")
    body["spec"]["services"]["Worker"]["eppConfig"] = {"config": {"pluginz": []}}
    code, path = _convert(tmp_path, [body])
    assert code == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{path}: DynamoGraphDeployment/llama-agg (document 1): drops spec.services.Worker.eppConfig.config.pluginz: "
        "the conversion to nvidia.com/v1beta1 and back does not carry it"
    )


def test_check_names_an_unknown_field_as_the_api_server_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--check reports a dropped field itself: carried, it is an unknown field to the API server."""
    body = _example("dgd-agg-v1beta1.yaml")
    body["metadata"]["labelz"] = {"a": "b"}
    code, path = _convert(tmp_path, [body], "--check", "--to", "nvidia.com/v1alpha1", "--validate", "ignore")
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: DynamoGraphDeployment/llama-agg (document 1): the API server refuses it")
    assert err.endswith('strict decoding error: unknown field "metadata.labelz"\n') and " drops " not in err


@pytest.mark.parametrize("to", ["nvidia.com/v1beta1", "nvidia.com/v1alpha1"])
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_a_clean_manifest_drops_nothing(path: Path, to: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", "--to", to, str(path)]) == 0
    captured = capsys.readouterr()
    assert " drops " not in captured.err and captured.out


def test_a_zero_go_leaves_out_is_not_a_drop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the API server's schema defaults add (``useAsCompilationCache: false``), the operator's
    types leave out when they encode the converted object and read back as the same zero: read
    from a cluster and converted, such an object loses nothing. A true value is carried."""
    for flag in (False, True):
        body = _example("dgd-agg-v1alpha1.yaml")
        body["spec"]["services"]["Worker"]["volumeMounts"] = [
            {"name": "cache", "mountPoint": "/cache", "useAsCompilationCache": flag}
        ]
        body["spec"]["services"]["Worker"]["dynamoNamespace"] = ""
        code, _ = _convert(tmp_path, [body])
        captured = capsys.readouterr()
        assert (code, captured.err) == (0, ""), flag
        (converted,) = yaml.safe_load_all(captured.out)
        assert ("compilationCache" in json.dumps(converted)) is flag
    # a zero that is not Go's omitted zero still counts: a misspelled field holding false
    body = _example("dgd-agg-v1alpha1.yaml")
    body["spec"]["services"]["Worker"]["volumeMounts"] = [{"name": "cache", "useAsCompilationCach": False}]
    assert _convert(tmp_path, [body])[0] == 1
    assert "drops spec.services.Worker.volumeMounts[0].useAsCompilationCach" in capsys.readouterr().err
