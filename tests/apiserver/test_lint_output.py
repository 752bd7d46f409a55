"""lint's report: positions, 1-based documents, the three formats, exit codes, and files it cannot
read named with what is wrong; any bytes at all get an answer, never a traceback."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver import lint, report
from app.cli.main import main
from app.cli.offline import OfflineService
from app.server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SERVICE = OfflineService(Settings())
TYPO = (
    (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml")
    .read_text()
    .replace("replicas: 2", "replicsa: 2")
)


def test_a_typo_points_at_its_line_and_column(tmp_path: Path, capsys: object) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(TYPO)
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert out.splitlines()[0] == (
        f"{path}:22:5: error: DynamoGraphDeployment/llama-agg (document 1): strict decoding error: "
        'unknown field "spec.components[1].replicsa"'
    )


def test_json_and_github_formats(tmp_path: Path, service: OfflineService) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\n---\n" + TYPO)
    results = lint.check_files([str(path)], service)
    out, err = io.StringIO(), io.StringIO()
    report.write(results, "json", out, err)
    doc = orjson.loads(out.getvalue())["documents"][1]
    assert (doc["document"], doc["verdict"], doc["status"]["code"]) == (2, "refused", 400)
    assert doc["findings"][0]["line"] == 25 and doc["findings"][0]["field"] == "spec.components[1].replicsa"
    out = io.StringIO()
    report.write(results, "github", out, err)
    assert out.getvalue().startswith(
        f"::error file={path},line=25,col=5,title=DynamoGraphDeployment/llama-agg::"
    )


def test_exit_codes_and_unreadable_files(tmp_path: Path, capsys: object) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert main(["lint", str(empty)]) == 1
    assert "error: no objects passed to create" in capsys.readouterr().out  # type: ignore[attr-defined]
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    assert main(["lint", str(binary), str(broken), str(tmp_path / "missing.yaml")]) == 2
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert f"{binary}:1:1: error: not a UTF-8 text file (byte 0 is 0xff)" in out
    assert f"{broken}:2:1: error: not valid YAML or JSON: " in out
    assert f"{tmp_path / 'missing.yaml'}:1:1: error: cannot read: No such file or directory" in out


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_get_an_answer(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.yaml"
        path.write_bytes(b"apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\n" + data)
        results = lint.check_files([str(path)], SERVICE)
        assert lint.exit_code(results) in (0, 1, 2)
        assert all(r.findings or r.verdict in ("accepted", "not-checked") for r in results)


def test_mapping_keys_are_named_as_kubectl_names_them(tmp_path: Path) -> None:
    """kubectl's YAML-to-JSON conversion writes integer and boolean keys as JSON strings (``1`` and ``true``
    are two keys, not one) and refuses a null or a collection as a key."""
    from apiserver.source import SourceError, documents

    [doc] = documents("a: 1\n1: x\ntrue: w\n1.5: z\n'y': v\n", "f.yaml")
    assert doc.body == {"a": 1, "1": "x", "true": "w", "1.5": "z", "y": "v"}
    for text, where, kind in (("a: 1\n?\n", "2:2", "<nil>"), ("a:\n  [1]: 2\n", "2:3", "list")):
        with pytest.raises(SourceError) as err:
            documents(text, "f.yaml")
        assert (
            str(err.value) == f"f.yaml:{where}: not valid YAML or JSON: unsupported map key of type: {kind}"
        )
    bad = tmp_path / "null-key.yaml"
    bad.write_text("apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\n?\n")
    assert lint.exit_code(lint.check_files([str(bad)], SERVICE)) == 2


def test_an_unquoted_y_is_a_boolean_as_kubectl_reads_it(tmp_path: Path, capsys: object) -> None:
    """``value: y`` is true to go-yaml, so the env entry's value is a boolean and the defaulter refuses it,
    as in a cluster; quoted, it is the string ``y``."""
    env = "          env:\n          - name: UCX_MEMTYPE_CACHE\n            value: {}\n"
    base = (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text()
    marker = "          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0\n"
    path = tmp_path / "y.yaml"
    path.write_text(base.replace(marker, marker + env.format("y"), 1))
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert (
        "spec.components[0].podTemplate.spec.containers[0].env[0].value: expected string, got boolean" in out
    )
    path.write_text(base.replace(marker, marker + env.format("'y'"), 1))
    assert main(["lint", str(path)]) == 0
