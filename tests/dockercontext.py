"""The build context Docker sends for this repository: the files ``.dockerignore`` lets in.

Reproduces Docker's own reading of the file (moby's ``patternmatcher`` and its ``ignorefile``,
which BuildKit's context transfer uses) rather than an approximation of it:

* a line starting with ``#`` is a comment (before trimming: `` #x`` is a pattern); blank lines are
  skipped; a leading ``!`` re-includes; each pattern is cleaned like Go's ``filepath.Clean`` and a
  leading ``/`` dropped, so patterns are relative to the context root;
* a pattern is Go's ``filepath.Match`` syntax (``*`` and ``?`` stay within one path element,
  ``[...]`` classes, ``\\`` escapes) plus ``**``, which spans any number of elements;
* a path is excluded when the last pattern matching it, or matching one of its parent
  directories, is not a ``!`` pattern.

Docker's pattern-to-regex translation escapes only ``.+()$`` (its escape table cannot hold ``|``,
``{`` and ``}``): that is reproduced too, since a pattern means what Docker makes of it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

#: The characters Docker's translation escapes; every other one goes into the regex as it is.
_ESCAPED = frozenset(".+()$")


def go_clean(path: str) -> str:
    """Go's ``path/filepath.Clean`` on a slash-separated path."""
    if not path:
        return "."
    rooted = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(part)
    cleaned = "/" * rooted + "/".join(parts)
    return cleaned or ("/" if rooted else ".")


def go_dir(path: str) -> str:
    """Go's ``path/filepath.Dir``: all but the last element, cleaned."""
    return go_clean(path[: path.rfind("/") + 1])


@dataclass
class Pattern:
    """One cleaned pattern, compiled the way ``patternmatcher.Pattern.compile`` does."""

    text: str
    exclusion: bool = False
    kind: str = field(init=False, default="exact")
    regex: re.Pattern[str] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        source, kind, i, text = "^", "exact", 0, self.text
        while i < len(text):
            ch = text[i]
            first = i == 0
            i += 1
            if ch == "*" and text[i : i + 1] == "*":
                i += 1
                if text[i : i + 1] == "/":  # "**/" reads as "**"
                    i += 1
                if i == len(text):
                    if kind == "exact":
                        kind = "prefix"
                    else:
                        source, kind = source + ".*", "regex"
                else:
                    source, kind = source + "(.*/)?", "regex"
                if first:
                    kind = "suffix"
            elif ch == "*":
                source, kind = source + "[^/]*", "regex"
            elif ch == "?":
                source, kind = source + "[^/]", "regex"
            elif ch in _ESCAPED:
                source += "\\" + ch
            elif ch == "\\":
                if i < len(text):
                    source, kind = source + "\\" + text[i], "regex"
                    i += 1
                else:
                    source += "\\\\"
            elif ch in "[]":
                source, kind = source + ch, "regex"
            else:
                source += ch
        self.kind = kind
        if kind == "regex":
            self.regex = re.compile(source + "$")

    def match(self, path: str) -> bool:
        if self.kind == "exact":
            return path == self.text
        if self.kind == "prefix":
            return path.startswith(self.text[:-2])
        if self.kind == "suffix":
            suffix = self.text[2:]
            return path.endswith(suffix) or (suffix[:1] == "/" and path == suffix[1:])
        assert self.regex is not None
        return self.regex.search(path) is not None  # Go's MatchString: the regex is anchored


def read_patterns(text: str) -> list[str]:
    """The patterns of a .dockerignore, as ``ignorefile.ReadAll`` reads them."""
    patterns = []
    for number, line in enumerate(text.splitlines()):
        if number == 0:
            line = line.removeprefix("\ufeff")
        if line.startswith("#"):
            continue
        line = line.strip()
        if not line:
            continue
        invert = line.startswith("!")
        if invert:
            line = line[1:].strip()
        if line:
            line = go_clean(line)
            if len(line) > 1 and line.startswith("/"):
                line = line[1:]
        patterns.append("!" * invert + line)
    return patterns


class Matcher:
    """``patternmatcher.New`` and ``MatchesOrParentMatches``: whether a path is excluded."""

    def __init__(self, patterns: list[str]) -> None:
        self.patterns: list[Pattern] = []
        for raw in patterns:
            text = raw.strip()
            if not text:
                continue
            text = go_clean(text)
            exclusion = text.startswith("!")
            if exclusion:
                if text == "!":
                    raise ValueError('illegal exclusion pattern: "!"')
                text = text[1:]
            self.patterns.append(Pattern(text, exclusion))

    def excluded(self, path: str) -> bool:
        parent = go_dir(path)
        parents = parent.split("/")
        matched = False
        for pattern in self.patterns:
            if pattern.exclusion != matched:
                continue
            hit = pattern.match(path)
            if not hit and parent != ".":
                hit = any(pattern.match("/".join(parents[: i + 1])) for i in range(len(parents)))
            if hit:
                matched = not pattern.exclusion
        return matched

    def may_include_below(self, directory: str) -> bool:
        """Whether a ``!`` pattern could let in something under the excluded ``directory``
        (erring towards yes): only then is the directory walked."""
        parts = directory.split("/")
        for pattern in self.patterns:
            if not pattern.exclusion:
                continue
            if any(c in pattern.text for c in "[\\|") or "**" in pattern.text:
                return True  # may span elements, or too irregular to rule out
            # Without "**" a pattern matches paths of exactly its number of elements: one no
            # deeper than the directory judges what is below it as it judges the directory.
            elements = pattern.text.split("/")
            if len(elements) > len(parts) and all(
                Pattern(element).match(part) for element, part in zip(elements, parts, strict=False)
            ):
                return True
        return False


@dataclass(frozen=True)
class Context:
    """The files and directories of a build context, as paths relative to its root."""

    root: Path
    files: frozenset[str]
    dirs: frozenset[str]

    def has(self, path: str) -> bool:
        return path in self.files or path in self.dirs


def build_context(root: Path, dockerignore: str | None = None) -> Context:
    """What ``docker build root`` sends: every file ``.dockerignore`` (or the text given for it)
    does not exclude, with the directories leading to them."""
    if dockerignore is None:
        ignore_file = root / ".dockerignore"
        dockerignore = ignore_file.read_text() if ignore_file.is_file() else ""
    matcher = Matcher(read_patterns(dockerignore))
    files: set[str] = set()
    dirs: set[str] = set()
    for current, subdirs, names in os.walk(root):
        base = Path(current).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        kept = []
        for name in sorted(subdirs):
            path = prefix + name
            if not matcher.excluded(path):
                dirs.add(path)
                kept.append(name)
            elif matcher.may_include_below(path):
                kept.append(name)
        subdirs[:] = kept
        for name in names:
            path = prefix + name
            if not matcher.excluded(path):
                files.add(path)
                parts = path.split("/")
                dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return Context(root, frozenset(files), frozenset(dirs))
