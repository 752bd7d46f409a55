"""charts/dynamo-webhook/README.md is what ``scripts/chart-readme`` writes (helm-docs, built by
``scripts/kube-testenv``, from README.md.gotmpl and the ``# --`` comments of values.yaml), and
``helm show readme`` shows it.

``undocumented_values`` names the values whose row in helm-docs' values table would have no
description, read from values.yaml's text alone; its cases are checked here both on their own and
against helm-docs itself.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tests.deploy.chart import CHART, run_helm
from tests.deploy.manifests import ROOT
from tests.e2e import testenv

sys.path.insert(0, str(ROOT / "scripts"))
import generate

README = CHART / "README.md"
REGENERATE = "scripts/generate"

# --- the values without a description -------------------------------------------------------------

#: helm-docs' reading of a ``# --`` line (pkg/helm/chart_info.go): text before `` --`` makes it an
#: old-style ``# key.path -- text`` comment, which does not describe the value below it.
_DESCRIPTION = re.compile(r"^\s*#\s*(.*)\s+--\s*(.*)$")
_VALUE_TYPE = re.compile(r"^\((.*?)\)\s*(.*)$")
#: Comment lines of a description that are not part of its text.
_ANNOTATION = re.compile(r"^\s*#\s+@raw|^\s*# @default -- |^\s*#\s+@notationType\s+--\s|^\s*# @section -- ")
_CONTINUATION = re.compile(r"^\s*#(\s?)(.*)$")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _comment_above(lines: list[str], line: int) -> list[str]:
    """The comment helm-docs' YAML parser (go-yaml v3) gives the key on line ``line`` (0-based) as its
    head comment, without indentation: the comment lines between the key and the content above,
    less those go-yaml gives others. A block right under a value and apart from the key is that
    value's; a block indented deeper than the key, the mapping's above; at the top of the file only
    a block right above the key is the key's (the others are the document's)."""
    top = line
    while top > 0 and (not lines[top - 1].strip() or lines[top - 1].lstrip().startswith("#")):
        top -= 1
    runs: list[tuple[int, int]] = []  # the blocks of comment lines, (first, last)
    for i in range(top, line):
        if lines[i].strip():
            if runs and runs[-1][1] == i - 1:
                runs[-1] = (runs[-1][0], i)
            else:
                runs.append((i, i))
    runs = [run for run in runs if _indent(lines[run[0]]) <= _indent(lines[line])]
    if top == 0:
        runs = runs[-1:] if runs and runs[-1][1] == line - 1 else []
    elif runs and runs[0][0] == top and runs[0][1] != line - 1 and not lines[top - 1].rstrip().endswith(":"):
        runs = runs[1:]
    return [lines[i].strip() for first, last in runs for i in range(first, last + 1)]


def _description(comment: list[str]) -> str:
    """The text helm-docs takes from a value's comment: the last ``# --`` line and the comment lines
    after it; empty for no ``# --`` line, an old-style ``# key -- text`` line or only a type."""
    starts = [i for i, text in enumerate(comment) if text.startswith("# --")]
    if not starts:
        return ""
    first, *rest = comment[starts[-1] :]
    match = _DESCRIPTION.match(first)
    if not match or match[1]:
        return ""
    text = match[2]
    typed = _VALUE_TYPE.match(text)
    if typed and typed[1]:
        text = typed[2]
    for line in rest:
        continued = _CONTINUATION.match(line)
        if not _ANNOTATION.match(line) and continued:
            text += " " + continued[2]
    return text.strip()


def _key(prefix: str, name: str) -> str:
    """helm-docs' name of a mapping entry: keys with a dot or a space quoted."""
    if "." in name or " " in name:
        name = f'"{name}"'
    return f"{prefix}.{name}" if prefix else name


def undocumented_values(values_yaml_text: str) -> list[str]:
    """The values of a values.yaml, named as helm-docs names them (``a.b``, ``a[0]``), that its values
    table would show without a description, in file order.

    As in helm-docs, a value is described by a ``# -- text`` comment above its key (or its list
    item), in the lines go-yaml gives the key (``_comment_above``); a described mapping or list is one row whose default is the whole of it,
    so the values under it need no description of their own. A scalar, an empty mapping and an
    empty list under no described parent need their own. Entries whose comment says ``@ignore``
    are left out, with everything under them. Old-style ``# key.path -- text`` comments elsewhere
    in the file are not read."""
    lines = values_yaml_text.splitlines()
    root = yaml.compose(values_yaml_text)
    if root is None:
        return []
    if not isinstance(root, MappingNode):
        raise ValueError(f"values.yaml is not a mapping: {root.tag}")
    found: list[str] = []

    def walk(path: str, anchor: Node, value: Node, covered: bool) -> None:
        """``anchor`` carries the comment: the key of a mapping entry, the item of a list."""
        own = _comment_above(lines, anchor.start_mark.line)
        if any("@ignore" in text for text in own):
            return
        described = bool(_description(own))
        if isinstance(value, MappingNode) and value.value:
            for key, child in value.value:
                walk(_key(path, str(key.value)), key, child, covered or described)
        elif isinstance(value, SequenceNode) and value.value:
            for i, item in enumerate(value.value):
                walk(f"{path}[{i}]", item, item, covered or described)
        elif not (covered or described):
            found.append(path)

    for key, child in root.value:
        if not isinstance(key, ScalarNode):
            raise ValueError(f"a key of values.yaml is not a scalar (line {key.start_mark.line + 1})")
        walk(_key("", str(key.value)), key, child, False)
    return found


#: (values.yaml, what undocumented_values finds in it)
CASES: dict[str, tuple[str, list[str]]] = {
    "plain comments": (
        "# Where the image comes from.\nimage:\n  # The repository.\n  repository: x\n  tag: ''\nreplicas: 2\n",
        ["image.repository", "image.tag", "replicas"],
    ),
    "every leaf described": (
        "image:\n  # -- The repository.\n  repository: x\n  # -- Empty: the appVersion.\n  tag: ''\n"
        "# -- How many.\nreplicas: 2\n",
        [],
    ),
    "a described mapping covers its leaves": (
        "# -- Requests and limits.\nresources:\n  requests:\n    cpu: 100m\n  limits: {}\nreplicas: 2\n",
        ["replicas"],
    ),
    "a described leaf under an undescribed mapping": (
        "features:\n  # -- Grove.\n  grove: null\n  checkpoint: null\n",
        ["features.checkpoint"],
    ),
    "continuation, type and default": (
        "# -- (string) Username of the operator,\n# exempt from the lock.\n# @default -- the service's\n"
        "operatorPrincipal: null\n",
        [],
    ),
    "only a type, or nothing after the dashes": (
        "# -- (int)\nreplicas: 2\n# --\nname: x\n",
        ["replicas", "name"],
    ),
    "a dash pair in the text makes it an old-style comment": (
        "# -- How many -- at least one.\nminimum: 1\n",
        ["minimum"],
    ),
    "blank lines around the comment": (
        "a: 1\n\n# -- Described.\n\nb: 2\nc: 3\n",
        ["a", "c"],
    ),
    "a comment right under a value, apart from the key": (
        "a: 1\n# -- The foot of a.\n\n# Plain.\nb: 2\nx:\n  # -- Of y.\n\n  y: 1\n",
        ["a", "b"],
    ),
    "a comment indented deeper than the key": (
        "x:\n  a: 1\n\n  # -- Of x.\n\ny: 2\n",
        ["x.a", "y"],
    ),
    "the document's comment": (
        "# -- The chart.\n\na: 1\n",
        ["a"],
    ),
    "empty mapping and list, list items": (
        "tolerations: []\nnodeSelector: {}\nargs:\n  - --one\n  # -- The second.\n  - --two\n"
        "# -- Extra volumes.\nvolumes:\n  - name: a\n",
        ["tolerations", "nodeSelector", "args[0]"],
    ),
    "keys helm-docs quotes": (
        "labels:\n  app.kubernetes.io/part-of: dynamo\n  with space: x\n",
        ['labels."app.kubernetes.io/part-of"', 'labels."with space"'],
    ),
    "ignored": (
        "# @ignored\ninternal:\n  a: 1\nb: 2\n",
        ["b"],
    ),
    "nothing": ("# only a comment\n", []),
}


@pytest.mark.parametrize(("text", "expected"), CASES.values(), ids=CASES.keys())
def test_undocumented_values(text: str, expected: list[str]) -> None:
    assert undocumented_values(text) == expected


def test_undocumented_values_does_not_read_old_style_comments() -> None:
    """helm-docs would take this for ``replicas``' description; the chart uses ``# --`` comments only."""
    assert undocumented_values("# replicas -- How many.\nreplicas: 2\n") == ["replicas"]


def test_undocumented_values_refuses_a_values_file_that_is_not_a_mapping() -> None:
    with pytest.raises(ValueError, match="not a mapping"):
        undocumented_values("- a\n- b\n")


def test_undocumented_values_reads_the_chart_values() -> None:
    """Every value of the chart is one of the names, whatever its comments say."""
    text = (CHART / "values.yaml").read_text()
    names = set(undocumented_values(text.replace("# --", "#")))

    def leaves(node: object, path: str) -> list[str]:
        if isinstance(node, dict) and node:
            return [leaf for k, v in node.items() for leaf in leaves(v, _key(path, k))]
        if isinstance(node, list) and node:
            return [leaf for i, v in enumerate(node) for leaf in leaves(v, f"{path}[{i}]")]
        return [path]

    assert names == set(leaves(yaml.safe_load(text), ""))


def test_every_value_is_documented() -> None:
    missing = undocumented_values((CHART / "values.yaml").read_text())
    assert not missing, (
        "values of charts/dynamo-webhook/values.yaml without a `# -- description` comment above them "
        f"(the README's values table shows them without one): {', '.join(missing)}"
    )


# --- helm-docs ------------------------------------------------------------------------------------


def helm_docs() -> str:
    """The helm-docs of ``scripts/kube-testenv``; a missing build fails the test, never skips it."""
    try:
        path = testenv.binaries() / "helm-docs"
    except testenv.TestenvUnavailable as err:
        pytest.fail(f"helm-docs is needed to write charts/dynamo-webhook/README.md: {err}")
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"helm-docs missing from {path.parent}: run scripts/kube-testenv (or scripts/kube-testenv --helm-docs)"
        )
    return str(path)


@pytest.mark.kubectl
def test_committed_readme_is_what_helm_docs_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``scripts/generate --check`` compares, here with the diff (and failing without helm-docs)."""
    monkeypatch.setenv("HELM_DOCS", helm_docs())
    made = generate.make_chart(generate.Options(operator=None, check=True))
    written, committed = made[README], README.read_bytes()
    if written.encode() != committed:
        diff = "".join(
            difflib.unified_diff(
                committed.decode().splitlines(keepends=True),
                written.splitlines(keepends=True),
                "charts/dynamo-webhook/README.md (committed)",
                "charts/dynamo-webhook/README.md (written by helm-docs)",
            )
        )
        pytest.fail(f"charts/dynamo-webhook/README.md is stale: run {REGENERATE} and commit it.\n{diff}")


@pytest.mark.kubectl
def test_helm_show_readme_prints_the_readme() -> None:
    proc = run_helm("show", "readme", str(CHART))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == README.read_text() + "\n"  # helm prints the file with a line break after it


#: A helm-docs template that lists the rows of the values table without a description, one a line.
UNDESCRIBED_ROWS = (
    "{{ range .Values }}{{ if not (or .Description .AutoDescription) }}{{ .Key }}\n{{ end }}{{ end }}"
)


@pytest.mark.kubectl
@pytest.mark.parametrize(
    "text",
    [*(text for text, _ in CASES.values()), (CHART / "values.yaml").read_text()],
    ids=[*CASES.keys(), "chart values.yaml"],
)
def test_undocumented_values_agrees_with_helm_docs(tmp_path: Path, text: str) -> None:
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: sample\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(text)
    (chart / "rows.gotmpl").write_text(UNDESCRIBED_ROWS)
    proc = subprocess.run(
        [
            helm_docs(),
            "--chart-search-root",
            str(tmp_path),
            "--template-files",
            "rows.gotmpl",
            "--output-file",
            "rows.txt",
            "--sort-values-order",
            "file",
            "--log-level",
            "warning",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert undocumented_values(text) == (chart / "rows.txt").read_text().splitlines()
