"""What lint and convert read: directories walked in sorted order without hidden entries, files that
are not manifests skipped (found in a directory, or with --skip-non-manifests) and counted, files
named on the command line that cannot be read still refused, and every input read within its cap,
in bounded memory, YAML bombs included."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apiserver import inputs, lint, report, source
from apiserver.source import SourceError
from app.cli.main import main
from app.cli.offline import OfflineService
from app.server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SERVICE = OfflineService(Settings())
DGD = (ROOT / "examples" / "manifests" / "dgd-agg-v1beta1.yaml").read_text()
TYPO = DGD.replace("replicas: 2", "replicsa: 2")
TEMPLATE = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n"
    "spec:\n  replicas: {{ .Values.x }}\n"
)


SKIPPED = (
    "broken.yaml",
    "chart/Chart.yaml",
    "chart/templates/deployment.yaml",
    "chart/templates/dgd.yaml",
    "config.yaml",
    "deploy/values.json",
)


def make_repo(root: Path) -> Path:
    """A repository with Dynamo manifests beside a Helm chart, a tool's config and broken YAML."""
    files = {
        "deploy/dgd.yaml": DGD,
        "deploy/nested/typo.yml": TYPO,
        "deploy/values.json": '{"replicas": 2}',
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "chart/templates/deployment.yaml": TEMPLATE,
        "chart/templates/dgd.yaml": DGD.replace("llama-agg", "{{ .Release.Name | quote }}"),
        "config.yaml": "rules:\n  line-length: 120\n",
        "broken.yaml": "a: [\n",
        "notes.txt": "apiVersion: nvidia.com/v1beta1\n",
        ".pre-commit-hooks.yaml": "- id: x\n  entry: x\n",
        ".git/config.yaml": "apiVersion: v1\nkind: ConfigMap\n",
        ".hidden/dgd.yaml": TYPO,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_directory_is_walked_in_sorted_order_without_hidden_entries(tmp_path: Path) -> None:
    make_repo(tmp_path)
    os.mkfifo(tmp_path / "deploy" / "pipe.yaml")  # opening it would wait for a writer
    names = [str(Path(i.path).relative_to(tmp_path)) for i in inputs.walk(str(tmp_path))]
    assert names == [
        "broken.yaml",
        "chart/Chart.yaml",
        "chart/templates/deployment.yaml",
        "chart/templates/dgd.yaml",
        "config.yaml",
        "deploy/dgd.yaml",
        "deploy/nested/typo.yml",
        "deploy/values.json",
    ]
    assert [i.found for i in inputs.expand([str(tmp_path / "config.yaml"), str(tmp_path / "deploy")])] == [
        False,
        True,
        True,
        True,
    ]


def test_a_directory_that_cannot_be_listed_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "locked").mkdir()
    walk = os.walk

    def refusing(top: str, onerror: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], list[str]]]:
        onerror(PermissionError(13, "Permission denied", str(tmp_path / "locked")))
        yield from walk(top)

    monkeypatch.setattr(os, "walk", refusing)
    assert main(["lint", str(tmp_path)]) == 2
    assert capsys.readouterr().out == f"{tmp_path}/locked:1:1: error: cannot read: Permission denied\n"


def test_a_directory_without_manifests_is_no_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.yaml").write_text("rules: {}\n")
    assert main(["lint", str(tmp_path)]) == 0
    assert capsys.readouterr().err == (
        "0 Dynamo document(s) checked: 0 accepted, 0 refused; 0 other document(s) not "
        "checked; 0 unreadable file(s); 1 file(s) skipped, not Kubernetes manifests\n"
    )


def test_files_that_are_not_manifests_are_skipped_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(tmp_path)
    assert main(["lint", str(tmp_path)]) == 1  # the typo; nothing else
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"{tmp_path}/deploy/nested/typo.yml:22:5: error: DynamoGraphDeployment/llama-agg "
        '(document 1): strict decoding error: unknown field "spec.components[1].replicsa"'
    ]
    assert err == (
        "2 Dynamo document(s) checked: 1 accepted, 1 refused; 0 other document(s) not checked; "
        "0 unreadable file(s); 6 file(s) skipped, not Kubernetes manifests\n"
    )
    assert main(["lint", "-o", "json", str(tmp_path)]) == 1
    answer = orjson.loads(capsys.readouterr().out)
    assert answer["skippedFiles"] == [str(tmp_path / n) for n in SKIPPED]
    assert answer["summary"]["skippedFiles"] == 6
    assert [d["file"] for d in answer["documents"]] == [
        str(tmp_path / "deploy/dgd.yaml"),
        str(tmp_path / "deploy/nested/typo.yml"),
    ]
    (tmp_path / "deploy/nested/typo.yml").write_text(DGD)
    assert main(["lint", str(tmp_path)]) == 0


def test_what_is_not_a_manifest(tmp_path: Path) -> None:
    make_repo(tmp_path)
    assert inputs.chart_template(str(tmp_path / "chart/templates/dgd.yaml"))
    assert not inputs.chart_template(str(tmp_path / "deploy/dgd.yaml"))
    (tmp_path / "templates").mkdir()
    assert not inputs.chart_template(str(tmp_path / "templates/x.yaml"))  # no Chart.yaml beside it
    assert not inputs.is_object({"apiVersion": "v2", "name": "c"})  # Chart.yaml: no kind
    assert not inputs.is_object(["apiVersion", "kind"])
    assert inputs.is_object({"apiVersion": "v1", "kind": "ConfigMap"})
    assert inputs.not_a_manifest("a: [\n", None)
    assert inputs.not_a_manifest("apiVersion: nvidia.com/v1beta1\nspec: {{ .Values.spec }}\n", None)
    assert not inputs.not_a_manifest("apiVersion: nvidia.com/v1beta1\nspec: [\n", None)
    assert not inputs.not_a_manifest('"apiVersion": "nvidia.com/v1beta1", [\n', None)


def test_a_broken_dynamo_manifest_in_a_directory_is_still_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dgd.yaml").write_text(DGD.replace("spec:\n", "spec: [\n", 1))
    assert main(["lint", str(tmp_path)]) == 2
    assert f"{tmp_path}/dgd.yaml:" in capsys.readouterr().out


def test_named_files_are_read_as_before_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(tmp_path)
    broken, config, missing = (str(tmp_path / n) for n in ("broken.yaml", "config.yaml", "missing.yaml"))
    assert main(["lint", broken]) == 2
    assert main(["lint", config]) == 0  # one document outside nvidia.com: not checked
    capsys.readouterr()
    assert main(["lint", "--skip-non-manifests", broken, config]) == 0
    assert "; 2 file(s) skipped, not Kubernetes manifests" in capsys.readouterr().err
    assert main(["lint", "--skip-non-manifests", missing]) == 2
    assert f"{missing}:1:1: error: cannot read: No such file or directory" in capsys.readouterr().out


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_any_file_in_a_directory_is_checked_or_skipped(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "x.yaml").write_bytes(data)
        [result] = lint.check_files([tmp], SERVICE)
        assert result.verdict in ("skipped", "accepted", "refused", "not-checked", "unreadable")
        if result.verdict == "unreadable":  # only a file that names a Dynamo apiVersion
            assert b"nvidia.com/" in data


def test_findings_are_sorted_by_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(TYPO)
    (tmp_path / "a.yaml").write_text(TYPO.replace("replicas: 1", "replicsa: 1") + "---\n" + TYPO)
    results = lint.check_files([str(tmp_path / "b.yaml"), str(tmp_path / "a.yaml")], SERVICE)
    out = io.StringIO()
    report.write(results, "text", out, io.StringIO())
    keys = [
        (line.split(":")[0], int(line.split(":")[1]), int(line.split(":")[2]))
        for line in out.getvalue().splitlines()
    ]
    assert keys == sorted(keys) and len({k[0] for k in keys}) == 2
    out = io.StringIO()
    report.write(results, "json", out, io.StringIO())
    docs = orjson.loads(out.getvalue())["documents"]
    assert [(d["file"], d["document"]) for d in docs] == sorted((d["file"], d["document"]) for d in docs)


def test_an_object_over_the_api_servers_request_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(
        DGD.replace(
            "metadata:\n", f"metadata:\n  annotations:\n    big: {'x' * inputs.MAX_OBJECT_BYTES}\n", 1
        )
    )
    [result] = lint.check_files([str(path)], SERVICE)
    assert (result.verdict, result.findings[0].message) == (
        "refused",
        "Request entity too large: limit is 3145728",
    )


def test_a_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(DGD)
    assert inputs.read_source(str(path), cap=len(DGD.encode())) == DGD
    with pytest.raises(SourceError, match=f"^{path}: too large: more than 100 bytes$"):
        inputs.read_source(str(path), cap=100)


# The child's own peak, VmHWM: getrusage's ru_maxrss survives exec, so a child of a big process
# (a pytest-xdist worker) would report its parent's peak.
PEAK = (
    "import re, sys\nfrom app.cli.main import main\ncode = main(sys.argv[1:])\n"
    "peak = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
    "print(peak, code, file=sys.stderr)\n"
)


def run_measured(
    args: list[str], stdin: int | IO[bytes] | None = subprocess.DEVNULL
) -> tuple[str, int, int, float]:
    """(stdout, exit code, peak RSS in KiB, seconds) of ``dynamo-webhook ARGS`` in a child process."""
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, *args],
        cwd=ROOT,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    peak, code = proc.stderr.split()[-2:]
    return proc.stdout, int(code), int(peak), time.monotonic() - start


@pytest.mark.parametrize("command", ["lint", "convert"])
def test_dev_zero_is_refused_in_bounded_memory(command: str) -> None:
    out, code, peak, _ = run_measured([command, "/dev/zero"])
    assert code == 2
    if command == "lint":
        assert out == f"/dev/zero:1:1: error: too large: more than {inputs.MAX_FILE_BYTES} bytes\n"
    assert peak < 3 * inputs.MAX_FILE_BYTES // 1024, peak  # the cap read once, and the interpreter


def test_a_big_pipe_on_stdin_is_refused_in_bounded_memory() -> None:
    feeder = subprocess.Popen(
        ["head", "-c", str(4 * inputs.MAX_FILE_BYTES), "/dev/zero"], stdout=subprocess.PIPE
    )
    try:
        out, code, peak, _ = run_measured(["lint", "-"], stdin=feeder.stdout)
    finally:
        feeder.kill()
        feeder.wait()
    assert (out, code) == (f"-:1:1: error: too large: more than {inputs.MAX_FILE_BYTES} bytes\n", 2)
    assert peak < 3 * inputs.MAX_FILE_BYTES // 1024, peak


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "a: &a [x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            ),
            "document contains excessive aliasing",
        ),
        (
            "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nspec: "
            + "[" * 100_000
            + "]" * 100_000
            + "\n",
            "nested too deeply",
        ),
    ],
)
def test_yaml_bombs_are_refused_quickly(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    out, code, peak, seconds = run_measured(["lint", str(path)])
    assert code == 2 and message in out, out
    assert peak < 400 * 1024 and seconds < 60, (peak, seconds)


FLOOR_SAMPLES = [
    DGD,
    TYPO.replace("metadata:\n", "metadata:\n  labels: {a: b}\n  labels: {c: d}\n", 1),
    "a: &x {k: 'v', n: 0x10, f: 1.000, t: ~, y: y, e: '', l: [], m: {}}\nb: *x\nc: {<<: *x, n: 2}\n",
    '{"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v\\u00e9\\n"}, "list": [1, 2.50, -3]}\n',
]


@pytest.mark.parametrize("text", FLOOR_SAMPLES)
def test_the_floor_never_exceeds_the_json(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a document is counted while composed is never more than its JSON, what kubectl sends: a
    document within the object limit is never refused for its size before it is read whole."""
    [doc] = source.documents(text, "f.yaml")
    size = len(orjson.dumps(doc.body))
    monkeypatch.setattr(source, "MAX_DOCUMENT_FLOOR", size)
    assert source.documents(text, "f.yaml")[0].body == doc.body
    monkeypatch.setattr(source, "MAX_DOCUMENT_FLOOR", size // 4)
    with pytest.raises(SourceError, match=r"^f\.yaml:\d+:\d+: too large: document 1 is more than "):
        source.documents(text, "f.yaml")


def test_a_document_no_object_can_be_is_refused_while_it_is_read(tmp_path: Path) -> None:
    """A single document of 48 MiB, within the file cap: refused once twice the object limit is passed,
    the rest of it never composed."""
    path = tmp_path / "big.yaml"
    item = "    - " + "x" * 1023 + "\n"
    with path.open("w") as f:
        f.write(
            "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata:\n  name: big\nspec:\n"
        )
        f.write("  list:\n" + item * (48 * 1024))
    out, code, peak, _ = run_measured(["lint", str(path)])
    assert code == 2 and out.startswith(f"{path}:") and out.count("\n") == 1, out
    line, rest = out.removeprefix(f"{path}:").split(":", 1)
    assert rest == (
        f"7: error: too large: document 1 is more than {source.MAX_DOCUMENT_FLOOR} bytes as JSON, twice "
        "the API server's limit on an object\n"
    )
    assert 7 < int(line) <= 7 + source.MAX_DOCUMENT_FLOOR // 1023  # within the list's first 6 MiB of 48
    # the file's bytes and its text, and the interpreter (composed whole: over 300 MiB, exit 1)
    assert peak < 4 * inputs.MAX_FILE_BYTES // 1024, peak
