"""Read Go API types (structs, their JSON tags, named types) from Go source in the module cache.

Used by the table generators in this directory; nothing at run time imports it. It reads only
what ``encoding/json`` sees of a type: exported struct fields with their ``json`` tags, embedded
structs, named types and their underlying types, and which types bring their own
``UnmarshalJSON`` (those are decoded by hand-written rules, never by their fields).

The parser understands the subset of Go that API type files use: top-level ``type`` declarations
(single or grouped), struct bodies of one field per line, comments, and import blocks. Anything
else in a struct body stops the generator with an error instead of being guessed.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BUILTIN_KINDS = frozenset(
    (
        "string",
        "bool",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "float32",
        "float64",
        "byte",
        "rune",
        "any",
        "interface{}",
    )
)


class GoParseError(Exception):
    pass


@dataclass
class GoField:
    """One struct field: Go name (the type name for an embedded field), type expression as
    written, the JSON tag (None when the field has none) and whether it is embedded."""

    name: str
    type_expr: str
    tag: str | None
    embedded: bool


@dataclass
class GoPackage:
    path: str
    name: str
    structs: dict[str, list[GoField]] = field(default_factory=dict)
    named: dict[str, str] = field(default_factory=dict)  # type X Y
    aliases: dict[str, str] = field(default_factory=dict)  # type X = Y
    imports: dict[str, dict[str, str]] = field(default_factory=dict)  # type name -> its file's imports
    unmarshalers: set[str] = field(default_factory=set)  # types with their own UnmarshalJSON/UnmarshalText


_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_IMPORT_LINE = re.compile(r'^\s*(?:([A-Za-z_][A-Za-z0-9_]*|\.)\s+)?"([^"]+)"\s*$')
_METHOD = re.compile(r"^func\s*\(\s*\w+\s+\*?(\w+)\s*\)\s*(UnmarshalJSON|UnmarshalText)\s*\(", re.M)
_TYPE_HEAD = re.compile(r"^type\s+(\w+)(\s*=)?\s*(.*)$")


def _strip_line_comment(line: str) -> str:
    """The line without its ``//`` comment (quoted and back-quoted text is skipped over)."""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "/" and line.startswith("//", i):
            return line[:i]
        if c in "`\"'":
            end = line.find(c, i + 1)
            while c != "`" and end > 0 and line[end - 1] == "\\":
                end = line.find(c, end + 1)
            if end < 0:
                return line
            i = end
        i += 1
    return line


def _strip_comments(src: str) -> str:
    src = _BLOCK_COMMENT.sub("", src)
    return "\n".join(_strip_line_comment(line) for line in src.split("\n"))


def _imports(src: str, pkg_names: dict[str, str]) -> dict[str, str]:
    """Local name -> import path for one file (a default name is the package's own name)."""
    out: dict[str, str] = {}
    lines: list[str] = []
    for m in re.finditer(r"^import\s*\((.*?)^\)", src, re.S | re.M):
        lines += m.group(1).split("\n")
    lines += re.findall(r'^import\s+((?:\w+\s+)?"[^"]+")\s*$', src, re.M)
    for line in lines:
        im = _IMPORT_LINE.match(line)
        if not im:
            continue
        alias, path = im.group(1), im.group(2)
        out[alias or pkg_names.get(path, path.rsplit("/", 1)[-1])] = path
    return out


def _split_field(line: str) -> list[GoField]:
    tag = None
    if "`" in line:
        line, _, rest = line.partition("`")
        tag = rest.rpartition("`")[0]
    names, sep, expr = line.strip().partition(" ")
    if not sep:
        name = names.lstrip("*").rsplit(".", 1)[-1]
        return [GoField(name, names, _json_tag(tag), True)]
    while names.endswith(","):
        more, _, expr = expr.strip().partition(" ")
        names += more
    if not expr.strip():
        raise GoParseError(f"cannot read struct field {line!r}")
    return [GoField(n, expr.replace(" ", ""), _json_tag(tag), False) for n in names.split(",")]


def _json_tag(tag: str | None) -> str | None:
    if tag is None:
        return None
    m = re.search(r'(?:^|\s)json:"([^"]*)"', tag)
    return m.group(1) if m else None


def parse_package(directory: Path, import_path: str, pkg_names: dict[str, str]) -> GoPackage:
    files = sorted(p for p in directory.glob("*.go") if not p.name.endswith("_test.go"))
    if not files:
        raise GoParseError(f"no Go files in {directory}")
    pkg: GoPackage | None = None
    for path in files:
        raw = path.read_text()
        if re.search(r"^//go:build\s+ignore", raw, re.M):
            continue
        src = _strip_comments(raw)
        m = re.search(r"^package\s+(\w+)", src, re.M)
        if not m:
            continue
        if pkg is None:
            pkg = GoPackage(import_path, m.group(1))
        imports = _imports(src, pkg_names)
        for mm in _METHOD.finditer(src):
            pkg.unmarshalers.add(mm.group(1))
        _read_types(src, pkg, imports)
    if pkg is None:
        raise GoParseError(f"no package clause in {directory}")
    return pkg


def _read_types(src: str, pkg: GoPackage, imports: dict[str, str]) -> None:
    lines = src.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line == "type (":
            i += 1
            while i < len(lines) and lines[i].strip() != ")":
                i = _read_one(lines, i, "type " + lines[i].strip(), pkg, imports)
            i += 1
            continue
        if line.startswith("type "):
            i = _read_one(lines, i, line, pkg, imports)
            continue
        i += 1


def _read_one(lines: list[str], i: int, line: str, pkg: GoPackage, imports: dict[str, str]) -> int:
    m = _TYPE_HEAD.match(line)
    if not m or not m.group(3):
        return i + 1
    name, alias, rest = m.group(1), m.group(2), m.group(3).strip()
    if re.match(r"^\w+\[", line[5:].strip()):
        return i + 1  # generic types are never API fields here
    pkg.imports[name] = imports
    if alias:
        pkg.aliases[name] = rest
        return i + 1
    if rest.startswith("struct"):
        body = rest[len("struct") :].strip()
        if body.startswith("{") and body.endswith("}"):
            inner = body[1:-1].strip()
            pkg.structs[name] = [f for part in inner.split(";") if part.strip() for f in _split_field(part)]
            return i + 1
        if not rest.endswith("{"):
            raise GoParseError(f"unexpected struct declaration {line!r}")
        fields: list[GoField] = []
        i += 1
        while i < len(lines):
            body = lines[i].strip()
            if body == "}":
                break
            if body:
                if body.endswith("{"):
                    raise GoParseError(f"nested struct in {name}: {body!r}")
                fields.extend(_split_field(body))
            i += 1
        pkg.structs[name] = fields
        return i + 1
    if rest.startswith("interface"):
        depth = rest.count("{") - rest.count("}")
        while depth > 0 and i + 1 < len(lines):
            i += 1
            depth += lines[i].count("{") - lines[i].count("}")
        pkg.named[name] = "any"
        return i + 1
    if rest.startswith("func"):
        return i + 1
    pkg.named[name] = rest
    return i + 1


# --------------------------------------------------------------------------- module cache


def gomodcache() -> Path:
    env = os.environ.get("GOMODCACHE")
    if env:
        return Path(env)
    try:
        out = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise GoParseError("set GOMODCACHE or put the go tool on PATH") from exc
    return Path(out.strip())


def _escape(module: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)


def _goroot_src() -> Path:
    out = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout
    return Path(out.strip()) / "src"


class Modules:
    """Import paths resolved to source directories: pinned modules in the module cache, and
    the standard library from GOROOT. Missing modules are downloaded with ``go mod download``
    and checked against the ``h1:`` hash pinned for them."""

    def __init__(self, pins: dict[str, tuple[str, str]], local: dict[str, Path] | None = None) -> None:
        self.pins = pins  # module -> (version, h1 hash of the module zip)
        self.local = local or {}  # module -> a source checkout of it
        self.cache = gomodcache()
        self._packages: dict[str, GoPackage] = {}
        self._names: dict[str, str] = {}

    def module_dir(self, module: str) -> Path:
        version, want = self.pins[module]
        d = self.cache / f"{_escape(module)}@{version}"
        hash_file = self.cache / "cache" / "download" / _escape(module) / "@v" / f"{version}.ziphash"
        if not d.is_dir() or not hash_file.is_file():
            with tempfile.TemporaryDirectory() as tmp:
                subprocess.run(["go", "mod", "init", "gen"], cwd=tmp, capture_output=True, check=True)
                env = dict(os.environ, GOFLAGS="-mod=mod", GONOSUMDB=module, GONOSUMCHECK="1")
                subprocess.run(["go", "mod", "download", f"{module}@{version}"], cwd=tmp, env=env, check=True)
        got = hash_file.read_text().strip()
        if got != want:
            raise GoParseError(f"{module}@{version}: module hash {got} is not the pinned {want}")
        return d

    def directory(self, import_path: str) -> Path:
        for module, root in self.local.items():
            if import_path == module or import_path.startswith(module + "/"):
                return root / import_path[len(module) :].lstrip("/")
        best = max(
            (m for m in self.pins if import_path == m or import_path.startswith(m + "/")),
            key=len,
            default=None,
        )
        if best is None:
            d = _goroot_src() / import_path
            if not d.is_dir():
                raise GoParseError(f"no pinned module provides {import_path}")
            return d
        return self.module_dir(best) / import_path[len(best) :].lstrip("/")

    def package(self, import_path: str) -> GoPackage:
        pkg = self._packages.get(import_path)
        if pkg is None:
            pkg = parse_package(self.directory(import_path), import_path, self._names)
            self._packages[import_path] = pkg
            self._names[import_path] = pkg.name
        return pkg


def pins_from_go_mod(module_dir: Path) -> tuple[str, dict[str, tuple[str, str]]]:
    """(module path, module -> (version, h1 hash)) from a module's ``go.mod`` and ``go.sum``."""
    go_mod = (module_dir / "go.mod").read_text()
    m = re.search(r"^module\s+(\S+)", go_mod, re.M)
    if m is None:
        raise GoParseError(f"{module_dir}/go.mod has no module line")
    sums: dict[tuple[str, str], str] = {}
    for line in (module_dir / "go.sum").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and not parts[1].endswith("/go.mod"):
            sums[(parts[0], parts[1])] = parts[2]
    pins: dict[str, tuple[str, str]] = {}
    for mod, version in re.findall(r"^\s*([\w./~-]+)\s+(v[\w.+-]+)(?:\s*//.*)?$", go_mod, re.M):
        if (mod, version) in sums:
            pins[mod] = (version, sums[(mod, version)])
    return m.group(1), pins


def replaces_from_go_mod(module_dir: Path) -> dict[str, Path]:
    """module -> directory, for the ``replace`` lines of a module's ``go.mod`` that point at a
    local directory (``replace M => ../dir`` or ``replace M v1.2.3 => /abs/dir``)."""
    go_mod = (module_dir / "go.mod").read_text()
    out: dict[str, Path] = {}
    for mod, target in re.findall(
        r"^\s*(?:replace\s+)?([\w./~-]+)(?:\s+v\S+)?\s+=>\s+(\S+)\s*$", go_mod, re.M
    ):
        if target.startswith(("./", "../", "/")):
            out[mod] = (module_dir / target).resolve()
    return out
