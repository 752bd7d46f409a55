"""Move the project to another operator commit in one command, and write the maintainer's worklist.

    scripts/repin OPERATOR_REPO [--commit C] [--grove GROVE_REPO] [--snapshot SNAPSHOT_REPO]

OPERATOR_REPO, GROVE_REPO and SNAPSHOT_REPO are local git checkouts (or git directories) of
ai-dynamo/dynamo, ai-dynamo/grove and ai-dynamo/snapshot, as ``tools/opdiff/prepare`` takes them
(``--grove``/``--snapshot`` default to ``$DYNAMO_WEBHOOK_GROVE_GIT``/``$DYNAMO_WEBHOOK_SNAPSHOT_GIT``);
``--commit`` defaults to OPERATOR_REPO's ``HEAD``. In order, it

1. builds the operator's handlers and the vector recorder at that commit (``tools/opdiff/prepare``
   into ``--work``, which keeps the operator module copy);
2. vendors the CRDs and runs every generator: ``scripts/generate --operator DIR`` (it copies every
   file of ``tests/fixtures/crds`` again from the operator's ``config/crd/bases``; when the
   operator's ``go.mod`` requires other Go modules than ``scripts/gen_gotypes.py`` pins, it stops
   before writing anything, and so does repin, saying which);
3. writes the commit into ``app/cli/version.py`` (``OPERATOR_COMMIT``, the one place it is named;
   the vectors' ``source`` and ``prepare`` read it from there) and into the vendored CRDs' README;
4. records the upstream vectors again (``tools/record``);
5. with ``--opdiff-fixtures``, records the differential harness's replay fixtures again
   (``tools/opdiff/drive.py``, which needs ``$DYNAMO_WEBHOOK_TESTENV_BIN``; it runs a real API
   server and both webhook servers over thousands of reviews, far longer than the rest, so it is
   left out unless asked for);
6. writes the report (``--report``, outside the tree by default): the CRD fields added, removed or
   changed per kind and version; the vectors whose expected answers changed, grouped by webhook
   and rule message and by conversion path; the hand-kept converter declarations that no longer
   match the CRDs; the documents that still name the old commit. Nothing to do: an empty report.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools.repin import crds, declarations, vectors  # noqa: E402

CRD_DIR = Path("tests/fixtures/crds")
VERSION_FILE = Path("app/cli/version.py")
ADMISSION = Path("tests/fixtures/admission")
CONVERSION = Path("tests/fixtures/conversion")
COMMIT_LINE = re.compile(r'^OPERATOR_COMMIT = "([0-9a-f]+)"$', re.MULTILINE)
#: Documents that may name the commit in prose (the report lists those still naming the old one).
DOCUMENTS = ("docs/*.md", "tools/*/README.md", "README.md")


class RepinError(Exception):
    """A step failed; the message says which and why, in one line."""


def run(cmd: list[str], cwd: Path, what: str, ok: tuple[int, ...] = (0,)) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise RepinError(f"{what} failed: {exc.strerror}: {exc.filename}") from exc
    if proc.returncode not in ok:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        raise RepinError(f"{what} failed (exit {proc.returncode}): {tail[0]}")
    return proc.stdout


def resolve_commit(repo: Path, commit: str) -> str:
    """The commit's 12-digit abbreviation, as the project names it."""
    try:
        full = run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
            repo,
            "git rev-parse",
        ).strip()
    except RepinError as exc:
        raise RepinError(f"no commit {commit} in {repo}") from exc
    return full[:12]


def pinned_commit(tree: Path) -> str:
    found = COMMIT_LINE.search((tree / VERSION_FILE).read_text())
    if found is None:
        raise RepinError(f"no OPERATOR_COMMIT line in {tree / VERSION_FILE}")
    return found.group(1)


def vector_files(tree: Path) -> dict[str, str]:
    """Every vector file's text by its path in the tree."""
    files = sorted((tree / ADMISSION).glob("*.jsonl")) + sorted((tree / CONVERSION).glob("*.jsonl"))
    return {str(p.relative_to(tree)): p.read_text() for p in files}


def write_commit(tree: Path, old: str, new: str) -> None:
    version = tree / VERSION_FILE
    version.write_text(COMMIT_LINE.sub(f'OPERATOR_COMMIT = "{new}"', version.read_text(), count=1))
    readme = tree / CRD_DIR / "README.md"
    readme.write_text(readme.read_text().replace(old, new))


def generate(tree: Path, operator: Path) -> None:
    """scripts/generate --operator: the CRDs copied again, every generated file written again (run
    with this interpreter: the tree may have no .venv of its own)."""
    run([sys.executable, "scripts/generate.py", "--operator", str(operator)], tree, "scripts/generate")


def record_opdiff(tree: Path, repo: Path, commit: str, work: Path) -> list[str]:
    """The replay fixtures again from the new operator; a note when answers differ (nothing to do
    when the service answers every review as the operator does)."""
    if not os.environ.get("DYNAMO_WEBHOOK_TESTENV_BIN"):
        raise RepinError(
            "--opdiff-fixtures needs DYNAMO_WEBHOOK_TESTENV_BIN (scripts/kube-testenv prints it)"
        )
    if not (tree / ".venv" / "bin" / "dynamo-webhook").is_file():
        raise RepinError(
            f"--opdiff-fixtures runs the tree's own service: no {tree / '.venv/bin/dynamo-webhook'} "
            "(scripts/bootstrap makes it)"
        )
    bases = work / "bases"
    shutil.rmtree(bases, ignore_errors=True)
    listed = run(
        [
            "git",
            "-C",
            str(repo),
            "grep",
            "-l",
            "-E",
            "^kind: Dynamo",
            commit,
            "--",
            "examples/*.yaml",
            "recipes/*.yaml",
            "deploy/*.yaml",
        ],
        repo,
        "listing the operator's manifests",
    )
    for line in listed.splitlines():
        name = line.split(":", 1)[1]
        target = bases / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(run(["git", "-C", str(repo), "show", f"{commit}:{name}"], repo, f"reading {name}"))
    report_file = work / "opdiff-report.txt"
    report_file.unlink(missing_ok=True)
    run(
        [
            sys.executable,
            "-m",
            "tools.opdiff.drive",
            "--opdiff",
            str(work / "opdiff"),
            "--bases",
            str(bases),
            "tests/fixtures/admission/manifests",
            "examples/manifests",
            "--count",
            "2500",
            "--seed",
            "1",
            "--fixtures",
            "tests/fixtures/opdiff/cases.jsonl.xz",
            "--report",
            str(report_file),
        ],
        tree,
        "tools/opdiff/drive.py",
        ok=(0, 1),
    )  # 1: answers differ (listed in the report)
    if not report_file.is_file():
        raise RepinError("tools/opdiff/drive.py wrote no report")
    differences = [line for line in report_file.read_text().splitlines() if line.startswith("#")]
    if not differences:
        return []
    return [f"tools/opdiff: {len(differences)} answers differ from the operator's; the list: {report_file}"]


def naming_old_commit(tree: Path, old: str, new: str) -> list[str]:
    if old == new:
        return []
    return sorted(
        str(p.relative_to(tree)) for pattern in DOCUMENTS for p in tree.glob(pattern) if old in p.read_text()
    )


def report(
    changes: list[crds.Change],
    old_vectors: dict[str, str],
    new_vectors: dict[str, str],
    mismatches: list[declarations.Mismatch],
    notes: list[str],
) -> str:
    """The worklist in Markdown; empty when there is nothing to do."""
    lines: list[str] = []
    if changes:
        lines += ["## CRD fields added, removed or changed"]
        for (kind, version), group in _by_kind(changes).items():
            lines += ["", f"### {kind} {version}", ""]
            lines += [f"- {c.what} `{c.path}`" + (f": {c.detail}" if c.detail else "") for c in group]
    admission: vectors.Groups = {}
    conversion: vectors.Groups = {}
    for name, text in new_vectors.items():
        old, new = vectors.parse(old_vectors.get(name, "")), vectors.parse(text)
        if name.endswith(".validating.jsonl"):
            continue  # the validating cases of <Kind>.jsonl again
        groups = (
            vectors.admission_changes(old, new)
            if name.startswith(str(ADMISSION))
            else vectors.conversion_changes(old, new)
        )
        target = admission if name.startswith(str(ADMISSION)) else conversion
        for title, items in groups.items():
            for item, names in items.items():
                target.setdefault(title, {}).setdefault(item, []).extend(names)
    if admission or conversion:
        lines += ["", "## Vectors whose expected answers changed"]
        lines += vectors.render(admission) + vectors.render(conversion)
    if mismatches:
        lines += ["", "## Hand-kept declarations that no longer match the CRDs", ""]
        lines += [f"- {m.declaration}: `{m.crd_path}` {m.problem}" for m in mismatches]
    if notes:
        lines += ["", "## Also", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines).strip("\n") + "\n" if lines else ""


def _by_kind(changes: list[crds.Change]) -> dict[tuple[str, str], list[crds.Change]]:
    out: dict[tuple[str, str], list[crds.Change]] = {}
    for c in changes:
        out.setdefault((c.kind, c.version), []).append(c)
    return out


def work_dir(args: argparse.Namespace, commit: str) -> Path:
    return Path(args.work or Path(tempfile.gettempdir()) / f"repin-{commit}").resolve()


def repin(args: argparse.Namespace) -> tuple[str, Path]:
    """Move ``args.tree`` to the commit; (the report, the work directory)."""
    tree: Path = args.tree.resolve()
    repo: Path = args.operator_repo.resolve()
    grove = args.grove or os.environ.get("DYNAMO_WEBHOOK_GROVE_GIT")
    snapshot = args.snapshot or os.environ.get("DYNAMO_WEBHOOK_SNAPSHOT_GIT")
    if not grove or not snapshot:
        raise RepinError(
            "name grove's and snapshot's git checkouts: --grove and --snapshot "
            "(or DYNAMO_WEBHOOK_GROVE_GIT and DYNAMO_WEBHOOK_SNAPSHOT_GIT)"
        )
    for name, path in (
        ("OPERATOR_REPO", repo),
        ("--grove", Path(grove)),
        ("--snapshot", Path(snapshot)),
        ("--tree", tree),
    ):
        if not path.is_dir():
            raise RepinError(f"{name}: no directory {path}")
    new = resolve_commit(repo, args.commit)
    old = pinned_commit(tree)
    work = work_dir(args, new)
    old_crds = crds.load(tree / CRD_DIR)
    old_vectors = vector_files(tree)
    print(f"repin: building the operator's handlers at {new} in {work}", file=sys.stderr)
    run(
        [str(tree / "tools" / "opdiff" / "prepare"), str(repo), grove, snapshot, str(work), new],
        tree,
        "tools/opdiff/prepare",
    )
    operator = work / "operator"
    notes: list[str] = []
    print("repin: vendoring the CRDs, running the generators", file=sys.stderr)
    generate(tree, operator)  # first: when it refuses the operator, it has written nothing
    write_commit(tree, old, new)
    print("repin: recording the upstream vectors", file=sys.stderr)
    run(
        [
            sys.executable,
            "-m",
            "tools.record.record",
            "--recorder",
            str(work / "record"),
            "--root",
            str(tree),
        ],
        tree,
        "tools/record",
    )
    if args.opdiff_fixtures:
        print("repin: recording the differential harness's fixtures (long)", file=sys.stderr)
        notes += record_opdiff(tree, repo, new, work)
    notes += [f"{doc} still names {old}" for doc in naming_old_commit(tree, old, new)]
    new_crds = crds.load(tree / CRD_DIR)
    text = report(
        crds.diff(old_crds, new_crds),
        old_vectors,
        vector_files(tree),
        declarations.mismatches(new_crds),
        notes,
    )
    return text, work


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/repin", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "operator_repo",
        type=Path,
        metavar="OPERATOR_REPO",
        help="git checkout of ai-dynamo/dynamo (or a fork) holding the commit",
    )
    parser.add_argument("--commit", default="HEAD", help="the operator commit to move to (default: HEAD)")
    parser.add_argument("--grove", help="git checkout of ai-dynamo/grove")
    parser.add_argument("--snapshot", help="git checkout of ai-dynamo/snapshot")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="the project tree to move (default: this one)"
    )
    parser.add_argument(
        "--work", type=Path, help="where the operator module is built (default: /tmp/repin-COMMIT)"
    )
    parser.add_argument("--report", type=Path, help="the report file (default: WORK/repin-report.md)")
    parser.add_argument(
        "--opdiff-fixtures",
        action="store_true",
        help="also record tests/fixtures/opdiff again (long: a real API server)",
    )
    args = parser.parse_args(argv)
    try:
        text, work = repin(args)
    except RepinError as exc:
        print(f"repin: {exc}", file=sys.stderr)
        return 1
    target = args.report or work / "repin-report.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    summary = "nothing to do" if not text else f"{len(text.splitlines())} lines"
    print(f"repin: report in {target} ({summary})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
