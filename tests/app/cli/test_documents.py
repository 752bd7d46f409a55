"""The offline commands' inputs beside lint's: convert reads files, directories and standard input
through the same loader and caps as lint (its errors name the file, line and column), and review
names a file it cannot read in one line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from apiserver.inputs import MAX_FILE_BYTES, MAX_OBJECT_BYTES
from app.cli.documents import InputError, collect, load_documents
from app.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[3]
ALPHA = (ROOT / "examples" / "manifests" / "dgd-agg-v1alpha1.yaml").read_text()


def test_convert_reads_a_directory_and_skips_what_is_not_a_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "dgd.yaml").write_text(ALPHA)
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    (tmp_path / "config.yml").write_text("rules: {}\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.yaml").write_text(ALPHA)
    assert main(["convert", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert [(d["apiVersion"], d["kind"]) for d in yaml.safe_load_all(out)] == [
        ("v1", "ConfigMap"),
        ("nvidia.com/v1beta1", "DynamoGraphDeployment"),
    ]
    assert err.startswith(f"{tmp_path}/config.yml: skipped: not a Kubernetes manifest\n")
    found = collect([str(tmp_path)])
    assert (len(found.documents), found.skipped) == (2, [str(tmp_path / "config.yml")])


def test_convert_errors_name_the_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(ALPHA + "  extra: [\n")
    assert main(["convert", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dynamo-webhook convert: {path}:") and ": not valid YAML or JSON: " in err
    line, column = err.split(f"{path}:", 1)[1].split(":")[:2]
    assert line.isdigit() and column.isdigit() and len(err.splitlines()) == 1
    path.write_text("a: 1\n?\n")  # a null key: kubectl refuses it, and so does convert
    assert main(["convert", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"dynamo-webhook convert: {path}:2:2: not valid YAML or JSON: unsupported map key of type: <nil>\n"
    )
    assert main(["convert", "--skip-non-manifests", str(path)]) == 0
    assert capsys.readouterr().err == f"{path}: skipped: not a Kubernetes manifest\n"


def test_convert_refuses_what_is_too_large_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", "/dev/zero"]) == 2
    assert capsys.readouterr() == (
        "",
        f"dynamo-webhook convert: /dev/zero: too large: more than {MAX_FILE_BYTES} bytes\n",
    )
    body = yaml.safe_load(ALPHA)
    # one object past the API server's limit
    body["metadata"]["annotations"] = {"big": "x" * MAX_OBJECT_BYTES}
    path = tmp_path / "big.yaml"
    path.write_text(ALPHA + "---\n" + yaml.safe_dump(body))
    line = len(ALPHA.splitlines()) + 2
    for flags in ([], ["--check"], ["--validate", "ignore"]):
        assert main(["convert", str(path), *flags]) == 2
        assert capsys.readouterr() == (
            "",
            f"dynamo-webhook convert: {path}:{line}:1: DynamoGraphDeployment/llama-agg (document 2): "
            f"too large: more than {MAX_OBJECT_BYTES} bytes as JSON, the API server's limit on an object\n",
        )


def test_convert_reads_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(ALPHA))
    assert main(["convert", "-", "-q"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["apiVersion"] == "nvidia.com/v1beta1"


def test_review_of_a_missing_file_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "/nonexistent/review.json"]) == 2
    assert capsys.readouterr().err == (
        "dynamo-webhook review: /nonexistent/review.json: cannot read: No such file or directory\n"
    )


def test_review_reads_within_the_cap() -> None:
    with pytest.raises(InputError, match=f"^/dev/zero: too large: more than {MAX_FILE_BYTES} bytes$"):
        load_documents("/dev/zero")


def test_help_names_the_inputs_and_the_cap() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for command in ("lint", "convert"):
        help_text = " ".join(sub.choices[command].format_help().split())  # type: ignore[index]
        assert f"a file over {MAX_FILE_BYTES // 2**20} MiB is refused (exit 2)" in help_text
        assert "--skip-non-manifests" in help_text and "directories" in help_text
    review = " ".join(sub.choices["review"].format_help().split())  # type: ignore[index]
    assert f"over {MAX_FILE_BYTES // 2**20} MiB it is refused (exit 2)" in review
    lint = " ".join(sub.choices["lint"].format_help().split())  # type: ignore[index]
    assert "{text,json,github,sarif,junit}" in lint and "sorted by file, line and column" in lint
