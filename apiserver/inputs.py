"""What the offline commands (``lint``, ``convert``, ``review``) read: the files and directories named
on the command line expanded into files, each read within a size cap, and the rule that tells a
Kubernetes manifest from the other YAML a repository holds (a Helm template, a tool's config).

A directory is walked recursively in sorted order, so two runs list the same files in the same
order: its ``.yaml``, ``.yml`` and ``.json`` files, never a hidden file or what a hidden directory
(``.git``) holds, and only regular files (a FIFO would block the read). Symbolic links to
directories are not followed.

A file is read with at most :data:`MAX_FILE_BYTES` + 1 bytes in memory: past the cap it is refused
unread (``FILE: too large: more than N bytes``), whatever it is (``/dev/zero``, a pipe that never
ends). The cap is the largest request body the service reads (``--max-conversion-bytes``' default);
one object is further held to what the API server accepts in a request (:data:`MAX_OBJECT_BYTES`).
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from apiserver.source import MAX_OBJECT_BYTES as MAX_OBJECT_BYTES
from apiserver.source import Located, SourceError, documents

MAX_FILE_BYTES = 64 * 1024 * 1024
_CHUNK = 1024 * 1024
SUFFIXES = (".yaml", ".yml", ".json")

_DYNAMO_API_VERSION = re.compile(r"""^\s*["']?apiVersion["']?\s*:\s*["']?nvidia\.com/""", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Input:
    """One file to read: its name as shown in reports, and whether it was found in a directory
    (``False``: named on the command line, or standard input ``-``)."""

    path: str
    found: bool
    error: str = ""  # why a directory could not be listed


def _hidden(name: str) -> bool:
    return name.startswith(".") and name not in (".", "..")


def walk(directory: str) -> list[Input]:
    """The manifest files under ``directory``, in sorted order, hidden files and directories left
    out; a directory that cannot be listed is an :class:`Input` with its ``error``."""
    out: list[Input] = []

    def unlisted(exc: OSError) -> None:
        out.append(Input(str(exc.filename or directory), False, exc.strerror or str(exc)))

    for root, dirs, files in os.walk(directory, onerror=unlisted):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        names = (os.path.join(root, f) for f in sorted(files) if not _hidden(f) and f.endswith(SUFFIXES))
        out += [Input(path, True) for path in names if os.path.isfile(path)]  # no FIFO, socket or device
    return sorted(out, key=lambda i: Path(i.path).parts)


def expand(sources: Sequence[str]) -> list[Input]:
    """``sources`` in the order given, each directory replaced by the files :func:`walk` finds in it."""
    out: list[Input] = []
    for source in sources:
        if source != "-" and os.path.isdir(source):
            out += walk(source)
        else:
            out.append(Input(source, False))
    return out


def read_bytes(source: str, cap: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``source`` (``-``: standard input), at most ``cap``; raises :class:`SourceError`
    naming it when it cannot be read or holds more, having read at most ``cap`` + 1 bytes."""
    try:
        if source == "-":
            stream = getattr(sys.stdin, "buffer", None)  # a text stream in its place (tests) has none
            if stream is None:
                return _capped_bytes(sys.stdin.read(cap + 1).encode("utf-8"), source, cap)
            return _capped(stream, source, cap)
        with open(source, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > cap:
                raise _too_large(source, cap)
            return _capped(handle, source, cap)
    except OSError as exc:
        raise SourceError(f"{source}: cannot read: {exc.strerror or exc}") from None


def _capped(handle: BinaryIO, source: str, cap: int) -> bytes:
    # In chunks into one buffer that grows in place: read(cap + 1) on a pipe or a device keeps
    # every chunk and then joins them, twice the cap at its peak.
    data = bytearray()
    while len(data) <= cap:
        chunk = handle.read(min(_CHUNK, cap + 1 - len(data)))
        if not chunk:
            break
        data += chunk
    if len(data) > cap:
        raise _too_large(source, cap)
    return bytes(data)


def _capped_bytes(data: bytes, source: str, cap: int) -> bytes:
    if len(data) > cap:
        raise _too_large(source, cap)
    return data


def _too_large(source: str, cap: int) -> SourceError:
    return SourceError(f"{source}: too large: more than {cap} bytes")


def decode(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text; raises :class:`SourceError` naming ``source`` and the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"{source}: not a UTF-8 text file (byte {exc.start} is 0x{data[exc.start]:02x})"
        ) from None


def read_source(source: str, cap: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of ``source`` (:func:`read_bytes`); raises :class:`SourceError` naming it."""
    return decode(read_bytes(source, cap), source)


def is_object(body: object) -> bool:
    """A Kubernetes object: a mapping that names both its ``apiVersion`` and its ``kind``."""
    return isinstance(body, dict) and bool(body.get("apiVersion")) and bool(body.get("kind"))


def not_a_manifest(text: str, docs: Sequence[Located] | None) -> bool:
    """Whether a UTF-8 file is not a Kubernetes manifest (one that is not UTF-8 text is not one),
    from its text and its documents (``None``: it does not parse as YAML or JSON).

    A file that parses is a manifest when one of its documents at least is an object
    (:func:`is_object`). A file that does not parse is not one, unless it has a line
    ``apiVersion: nvidia.com/…`` and no template action ``{{``: a Dynamo manifest with a syntax
    error is still reported, a Helm template of one is not."""
    if docs is not None:
        return not any(is_object(doc.body) for doc in docs)
    return "{{" in text or not _DYNAMO_API_VERSION.search(text)


def chart_template(path: str) -> bool:
    """Whether ``path`` lies in a Helm chart's ``templates/`` directory (beside a ``Chart.yaml``):
    the text is a Go template that ``helm template`` renders, not a manifest yet."""
    if path == "-":
        return False
    parents = Path(path).parents
    return any(p.name == "templates" and (p.parent / "Chart.yaml").is_file() for p in parents)


def load(item: Input, skip_non_manifests: bool) -> list[Located] | None:
    """The documents of ``item``; ``None`` when it is to be skipped: it was found in a directory (or
    ``skip_non_manifests``) and is a chart's template (:func:`chart_template`) or not a manifest
    (:func:`not_a_manifest`). Raises
    :class:`SourceError` for a file that cannot be read, is too large, or is not to be skipped and
    does not parse."""
    if item.error:
        raise SourceError(f"{item.path}: cannot read: {item.error}")
    skip = item.found or skip_non_manifests
    if skip and chart_template(item.path):
        return None
    data = read_bytes(item.path)
    try:
        text = decode(data, item.path)
    except SourceError:
        if skip:
            return None
        raise
    try:
        docs = documents(text, item.path)
    except SourceError:
        if skip and not_a_manifest(text, None):
            return None
        raise
    if skip and not_a_manifest(text, docs):
        return None
    return docs
