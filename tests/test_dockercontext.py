"""tests/dockercontext.py reads .dockerignore as Docker does: the cases of moby's patternmatcher
and ignorefile tests (what ``docker build`` itself is tested against), and a context built from a
small tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dockercontext import Matcher, build_context, go_clean, read_patterns

#: The chart, the packaging or the image: the same in both builds (tests/conftest.py).
pytestmark = pytest.mark.one_build

#: (pattern, path, excluded): moby/patternmatcher's TestMatches table, the paths as Docker passes them.
SINGLE = [
    ("**", "file", True),
    ("**/", "file", True),
    ("**", "dir/file", True),
    ("**/**", "dir/file", True),
    ("dir/**", "dir/file", True),
    ("dir/**", "dir/dir2/file", True),
    ("**/dir", "dir", True),
    ("**/dir", "dir/file", True),
    ("**/dir2/*", "dir/dir2/file", True),
    ("**/dir2/**", "dir/dir2/dir3/file", True),
    ("**file", "file", True),
    ("**file", "dir/file", True),
    ("**/file", "dir/dir/file", True),
    ("**/file*", "dir/dir/file.txt", True),
    ("**/file*.txt", "dir/dir/file.txt", True),
    ("**/**/*.txt", "dir/dir/file.txt", True),
    ("**/**/*.txt2", "dir/dir/file.txt", False),
    ("**/*.txt", "file.txt", True),
    ("a**/*.txt", "a/dir/dir/file.txt", True),
    ("a/*.txt", "a/dir/file.txt", False),
    ("a/*.txt", "a/file.txt", True),
    ("a/*.txt**", "a/file.txt", True),
    ("a[b-d]e", "ae", False),
    ("a[b-d]e", "ace", True),
    ("a[^b-d]e", "aze", True),
    (".*", ".foo", True),
    (".*", "foo", False),
    ("abc.def", "abcdef", False),
    ("abc.def", "abc.def", True),
    ("abc?def", "abcZdef", True),
    ("abc?def", "abcdef", False),
    ("a\\\\", "a\\", True),
    ("a\\*b", "a*b", True),
    ("**/foo/bar", "foo/bar", True),
    ("**/foo/bar", "dir/dir2/foo/bar", True),
    ("abc/**", "abc", False),
    ("abc/**", "abc/def/ghi", True),
    ("**/.foo", ".foo", True),
    ("**/.foo", "bar.foo", False),
    ("a(b)c/def", "a(b)c/def", True),
    ("a(b)c/def", "a(b)c/xyz", False),
    ("a.|)$(}+{bc", "a.|)$(}+{bc", True),
    ("dist/*.whl", "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl", True),
    # a pattern naming a directory excludes what is in it
    ("app", "app/cli/main.py", True),
    ("app/", "app/cli/main.py", True),
    ("app", "apps/main.py", False),
    ("*", "app/cli/main.py", True),
]

#: (patterns, path, excluded): the last matching pattern wins; ``!`` re-includes.
MULTI = [
    (["**", "!util/docker/web"], "util/docker/web/foo", False),
    (["**", "!util/docker/web", "util/docker/web/foo"], "util/docker/web/foo", True),
    (["**", "!dist/*.whl"], "dist/proxy.py-2.4.0rc3.dev36+g08acad9-py3-none-any.whl", False),
    (["*", "!app/"], "app/cli/main.py", False),
    (["*", "!app/", "**/__pycache__"], "app/cli/__pycache__/main.cpython-311.pyc", True),
    (["*", "!requirements/runtime.txt"], "requirements/test.txt", True),
    (["*", "!requirements/runtime.txt"], "requirements/runtime.txt", False),
    (["!app", "*"], "app/x.py", True),
]


@pytest.mark.parametrize(("pattern", "path", "excluded"), SINGLE)
def test_one_pattern(pattern: str, path: str, excluded: bool) -> None:
    assert Matcher([pattern]).excluded(path) is excluded


@pytest.mark.parametrize(("patterns", "path", "excluded"), MULTI)
def test_later_patterns_override_earlier(patterns: list[str], path: str, excluded: bool) -> None:
    assert Matcher(patterns).excluded(path) is excluded


def test_a_lone_exclamation_mark_is_refused() -> None:
    with pytest.raises(ValueError, match="illegal exclusion"):
        Matcher(["!"])


@pytest.mark.parametrize(
    ("path", "cleaned"),
    [
        ("", "."),
        (".", "."),
        ("/", "/"),
        ("a//b/", "a/b"),
        ("./a/./b", "a/b"),
        ("a/../..", ".."),
        ("/../a", "/a"),
        ("a/b/../c", "a/c"),
        ("//a", "/a"),
    ],
)
def test_go_clean(path: str, cleaned: str) -> None:
    assert go_clean(path) == cleaned


def test_ignore_file_lines_as_docker_reads_them() -> None:
    """moby/patternmatcher/ignorefile's cases: comments only at the line's start, whitespace
    trimmed, paths cleaned and made relative, ``!`` kept in front."""
    text = "\ufeff# comment\ntest1\n/test2\n/a/file/here\n\nlastfile\n# this is a comment\n! /inverted/abs/path\n!\n! \n  #notacomment\n./a/../b//c/\n"
    assert read_patterns(text) == [
        "test1",
        "test2",
        "a/file/here",
        "lastfile",
        "!inverted/abs/path",
        "!",
        "!",
        "#notacomment",
        "b/c",
    ]


def test_the_context_holds_what_is_let_in_and_the_directories_to_it(tmp_path: Path) -> None:
    for name in (
        "pkg/__init__.py",
        "pkg/sub/mod.py",
        "pkg/__pycache__/x.pyc",
        "other/keep.txt",
        "other/drop.txt",
        "deep/a/b/c.txt",
        "top.txt",
        ".venv/bin/python",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    context = build_context(tmp_path, "*\n!pkg/\n!other/keep.txt\n!**/c.txt\n**/__pycache__\n")
    assert context.files == {"pkg/__init__.py", "pkg/sub/mod.py", "other/keep.txt", "deep/a/b/c.txt"}
    assert context.dirs == {"pkg", "pkg/sub", "other", "deep", "deep/a", "deep/a/b"}
    assert not context.has(".venv") and not context.has("pkg/__pycache__") and context.has("deep/a")


def test_an_excluded_directory_is_walked_only_when_something_below_could_come_back() -> None:
    matcher = Matcher(["*", "!requirements/*.txt", "!app/"])
    assert matcher.may_include_below("requirements")
    assert not matcher.may_include_below(".venv")
    assert not matcher.may_include_below("app")  # "!app" judges app/x as it judges app
    assert Matcher(["*", "!**/keep"]).may_include_below(".venv")
