"""What the offline commands (``review``, ``lint``, ``convert``) share: manifests read as JSON or
(multi-document) YAML the way kubectl reads them (:class:`apiserver.source.Loader`), written back so
that kubectl reads them the same, and exit codes."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import orjson
import yaml

from apiserver.source import Dumper, Loader

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class InputError(Exception):
    """A file could not be read or parsed."""


def read_text(source: str) -> str:
    try:
        if source == "-":
            return sys.stdin.read()
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{source}: {exc}") from None


def load_documents(source: str) -> list[Any]:
    """JSON or (multi-document) YAML; empty documents are dropped."""
    text = read_text(source)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [orjson.loads(text)]
        except orjson.JSONDecodeError:
            pass  # YAML flow style is a superset; let the YAML parser report the error
    try:
        return [doc for doc in yaml.load_all(text, Loader=Loader) if doc is not None]
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: not valid JSON or YAML: {exc}") from None
    except RecursionError:
        raise InputError(f"{source}: not valid JSON or YAML: nested too deeply") from None


def dump(docs: Sequence[Any], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        if len(docs) == 1:
            out.write(orjson.dumps(docs[0], option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            out.write(orjson.dumps(list(docs), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(yaml.dump_all(list(docs), Dumper=Dumper, sort_keys=False, allow_unicode=True, width=120))


@dataclass(slots=True)
class Document:
    source: str
    index: int
    body: Any

    @property
    def ident(self) -> str:
        if not isinstance(self.body, dict):
            return "(not an object)"
        meta = self.body.get("metadata") if isinstance(self.body.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        return f"{self.body.get('kind', '?')}/{meta.get('name', '')}"


def iter_documents(sources: Sequence[str]) -> Iterator[Document]:
    for source in sources:
        for index, body in enumerate(load_documents(source)):
            yield Document(source, index, body)


def is_dynamo(body: Any) -> bool:
    return isinstance(body, dict) and str(body.get("apiVersion", "")).startswith("nvidia.com/")
