"""What the offline commands (``review``, ``lint``, ``convert``) share: manifests read as JSON or
(multi-document) YAML the way kubectl reads them (:class:`apiserver.source.Loader`), within the
size cap of :mod:`apiserver.inputs`, written back so that kubectl reads them the same, and exit
codes. ``convert`` reads its files, directories and standard input as ``lint`` does
(:func:`apiserver.inputs.load`): its errors name the file, line and column."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import orjson
import yaml

from apiserver import inputs
from apiserver.source import Dumper, Loader, SourceError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class InputError(Exception):
    """A file could not be read or parsed."""


def read_text(source: str) -> str:
    """The text of ``source`` (``-``: standard input) within :data:`apiserver.inputs.MAX_FILE_BYTES`."""
    try:
        return inputs.read_source(source)
    except SourceError as exc:
        raise InputError(str(exc)) from None


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


@dataclass(slots=True)
class Collected:
    """The documents of some files, in order, and the files skipped as not manifests."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def collect(sources: Sequence[str], skip_non_manifests: bool = False) -> Collected:
    """Every document of ``sources`` (files, directories, ``-``) read as ``lint`` reads them
    (:func:`apiserver.inputs.load`); raises :class:`InputError` naming the file (and line and column),
    for a document larger than the API server reads of an object (:data:`apiserver.inputs.MAX_OBJECT_BYTES`
    as JSON) too: no cluster would take it, and converting it would hold many times its size."""
    out = Collected()
    for item in inputs.expand(sources):
        try:
            docs = inputs.load(item, skip_non_manifests)
        except SourceError as exc:
            raise InputError(str(exc)) from None
        if docs is None:
            out.skipped.append(item.path)
            continue
        for doc in docs:
            document = Document(item.path, doc.number - 1, doc.body)
            if len(orjson.dumps(doc.body)) > inputs.MAX_OBJECT_BYTES:
                raise InputError(
                    f"{item.path}:{doc.line}:1: {document.ident} (document {doc.number}): too large: "
                    f"more than {inputs.MAX_OBJECT_BYTES} bytes as JSON, the API server's limit on an object"
                )
            out.documents.append(document)
    return out


def is_dynamo(body: Any) -> bool:
    return isinstance(body, dict) and str(body.get("apiVersion", "")).startswith("nvidia.com/")
