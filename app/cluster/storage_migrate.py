"""``dynamo-webhook storage-migrate``: rewrite every object of the convertible Dynamo CRDs in their
storage version, then drop the older versions from the CRDs' ``status.storedVersions``.

How an object is rewritten: the object as listed is PUT back, unchanged, to its **status
subresource** with its ``resourceVersion`` (optimistic concurrency). The API server re-encodes the whole
object in the current storage version and writes it; a status update cannot change spec or metadata
(the server keeps both from the stored object), and the admission webhooks, which are registered for
the objects and not their status, are not involved, so nothing but the encoding changes. An object
already stored in the storage version is not written at all (same bytes), so a repeated rewrite costs
one request and no write. A 409 conflict re-reads the object and tries again; a 404 means it was
deleted meanwhile and is skipped. Objects created or updated during the run are written in the
storage version by whoever writes them. A few objects are rewritten at a time (``--workers``), every
request of the run within ``--qps``.

Resumable: progress is kept in a local state file, per CRD (by uid) for the CRD generation and storage
version it was made under: the uids of the objects already rewritten. A rerun skips those and does only
what is left; a CRD whose generation or storage version changed since starts over. A CRD whose
``status.storedVersions`` already holds only its storage version is done, state file or not.

Only when every object of a CRD was rewritten (none failed) and the CRD did not change during the run is
``status.storedVersions`` set to the storage version alone (a merge patch on the CRD's status with its
``resourceVersion``), which later lets a version stop being served.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

import orjson
from kubernetes.config.config_exception import ConfigException

from app.cluster.inventory import (
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CrdInfo,
    JsonObj,
    Listing,
    Progress,
    cluster_failure,
    collection_path,
    connect,
    fail,
    join,
    object_path,
    read_crd,
    select_kinds,
)
from certs.kube import MERGE_PATCH, ApiError, Kube, crd_path
from domain.constants import GROUP
from kinds.registry import Kind

FIELD_MANAGER = "dynamo-webhook-storage-migrate"
MAX_CONFLICTS = 10


def default_state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "dynamo-webhook" / "storage-migrate.json"


class Busy(Exception):
    """Another storage-migrate holds the state file."""


class State:
    """Rewritten object uids per CRD uid, valid for one CRD generation and storage version."""

    def __init__(self, path: Path | None, save_every: float = 2.0) -> None:
        self.path = path
        self.save_every = save_every
        self.data: dict[str, Any] = {"crds": {}}
        self._dirty = False
        self._saved = time.monotonic()
        self._lock: Any = None

    @contextlib.contextmanager
    def opened(self) -> Iterator[State]:
        """Lock the file (one run at a time per state file), load it, save it on the way out."""
        if self.path is None:
            yield self
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Busy(f"another storage-migrate is using {self.path}") from None
            if self.path.exists():
                loaded = orjson.loads(self.path.read_bytes())
                if isinstance(loaded, dict) and isinstance(loaded.get("crds"), dict):
                    self.data = loaded
            try:
                yield self
            finally:
                self.save()

    def done(self, crd: CrdInfo) -> set[str]:
        """The uids already rewritten for ``crd`` as it is now (empty if it changed since)."""
        entry = self.data["crds"].get(crd.uid)
        if (
            not isinstance(entry, dict)
            or entry.get("generation") != crd.generation
            or entry.get("storageVersion") != crd.storage_version
        ):
            entry = {
                "crd": crd.name,
                "generation": crd.generation,
                "storageVersion": crd.storage_version,
                "done": [],
            }
            self.data["crds"][crd.uid] = entry
            self._dirty = True
        done = entry["done"]
        return set(done) if isinstance(done, list) else set()

    def mark(self, crd: CrdInfo, uid: str) -> None:
        self.data["crds"][crd.uid]["done"].append(uid)
        self._dirty = True
        if time.monotonic() - self._saved >= self.save_every:
            self.save()

    def forget(self, crd: CrdInfo) -> None:
        if self.data["crds"].pop(crd.uid, None) is not None:
            self._dirty = True

    def save(self) -> None:
        self._saved = time.monotonic()
        if self.path is None or not self._dirty:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(orjson.dumps(self.data))
        os.replace(tmp, self.path)
        self._dirty = False


@dataclass
class CrdResult:
    kind: Kind
    crd: CrdInfo | None = None
    objects: int = 0  # listed
    rewritten: int = 0
    earlier: int = 0  # rewritten by an earlier run (state file)
    conflicts: int = 0  # 409 answers retried
    deleted: int = 0  # gone before their rewrite
    failed: list[str] = field(default_factory=list)
    stored_after: tuple[str, ...] = ()
    stored_versions_set: bool = False
    note: str = ""
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        """Every object is stored in the storage version and the CRD says so (or there is no CRD)."""
        return self.crd is None or (self.stored_after == (self.crd.storage_version,))

    def as_json(self) -> JsonObj:
        out: JsonObj = {"kind": self.kind.kind, "crd": self.kind.crd_name, "installed": self.crd is not None}
        if self.crd is not None:
            out.update(
                storageVersion=self.crd.storage_version,
                storedVersionsBefore=list(self.crd.stored_versions),
                storedVersionsAfter=list(self.stored_after),
                storedVersionsSet=self.stored_versions_set,
                objects=self.objects,
                rewritten=self.rewritten,
                rewrittenEarlier=self.earlier,
                conflicts=self.conflicts,
                deleted=self.deleted,
                failed=self.failed,
                seconds=round(self.seconds, 3),
            )
        out["note"] = self.note
        return out


@dataclass
class Rewrite:
    """What became of one object."""

    uid: str
    outcome: Literal["rewritten", "deleted", "failed"] = "rewritten"
    conflicts: int = 0
    error: str = ""


class Migrator:
    def __init__(
        self,
        kube: Kube,
        state: State,
        *,
        dry_run: bool = False,
        page_size: int = 500,
        workers: int = 1,
        progress: Progress | None = None,
    ) -> None:
        self.kube = kube
        self.workers = workers
        self.state = state
        self.dry_run = dry_run
        self.page_size = page_size
        self.progress = progress or Progress(enabled=False)

    def migrate(self, kind: Kind) -> CrdResult:
        started = time.monotonic()
        result = CrdResult(kind, read_crd(self.kube, kind))
        crd = result.crd
        if crd is None:
            result.note = "CRD not installed"
            return result
        result.stored_after = crd.stored_versions
        try:
            if crd.migrated:
                self.state.forget(crd)
                result.note = f"nothing to do: storedVersions is already {join(crd.stored_versions)}"
            elif not crd.served:
                result.note = "no version of the CRD is served: its objects cannot be read"
            elif not crd.status_subresource:
                result.note = (
                    "the storage version has no status subresource: objects cannot be rewritten unchanged"
                )
            else:
                self._rewrite_all(kind, crd, result)
                self._finish(crd, result)
        finally:
            self.progress.clear()
            result.seconds = time.monotonic() - started
        return result

    def _rewrite_all(self, kind: Kind, crd: CrdInfo, result: CrdResult) -> None:
        version = crd.storage_version if crd.storage_version in crd.served else crd.served[0]
        done = self.state.done(crd)
        listing = Listing(self.kube, collection_path(kind, version), self.page_size)
        label = f"storage-migrate {kind.plural}"
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="storage-migrate")
        pending: set[Future[Rewrite]] = set()

        def collect(until: str) -> None:
            finished, _ = wait(pending, return_when=until)
            for future in finished:
                pending.discard(future)
                self._record(future.result(), crd, result)
            self.progress.update(label, result.objects - len(pending), listing.total)

        try:
            for obj in listing:
                result.objects += 1
                uid = str((obj.get("metadata") or {}).get("uid", ""))
                if uid in done:
                    result.earlier += 1
                elif not self.dry_run:
                    pending.add(pool.submit(self._rewrite, kind, version, obj))
                    if len(pending) >= 2 * self.workers:
                        collect(FIRST_COMPLETED)
                        continue
                self.progress.update(label, result.objects - len(pending), listing.total)
            collect(ALL_COMPLETED)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            # Keep what finished before an interruption.
            for future in pending:
                if future.done() and not future.cancelled() and future.exception() is None:
                    self._record(future.result(), crd, result)

    def _record(self, rewrite: Rewrite, crd: CrdInfo, result: CrdResult) -> None:
        result.conflicts += rewrite.conflicts
        if rewrite.outcome == "failed":
            result.failed.append(rewrite.error)
            return
        if rewrite.outcome == "deleted":
            result.deleted += 1
        else:
            result.rewritten += 1
        self.state.mark(crd, rewrite.uid)

    def _rewrite(self, kind: Kind, version: str, obj: JsonObj) -> Rewrite:
        """PUT the object unchanged to its status (in a worker thread); raises when not allowed to."""
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        rewrite = Rewrite(str(meta.get("uid", "")))
        path = object_path(kind, version, namespace, name)
        body = obj
        for _ in range(MAX_CONFLICTS):
            try:
                self.kube.request("PUT", f"{path}/status", query=[("fieldManager", FIELD_MANAGER)], body=body)
            except ApiError as err:
                if err.not_found:
                    rewrite.outcome = "deleted"
                    return rewrite
                if err.conflict:
                    rewrite.conflicts += 1
                    fresh = self.kube.get(path)
                    if fresh is None:
                        rewrite.outcome = "deleted"
                        return rewrite
                    body = fresh
                    continue
                if err.status in (401, 403):
                    raise
                rewrite.outcome, rewrite.error = "failed", f"{namespace}/{name}: {err}"
                return rewrite
            return rewrite
        rewrite.outcome = "failed"
        rewrite.error = f"{namespace}/{name}: still conflicting after {MAX_CONFLICTS} attempts"
        return rewrite

    def _finish(self, crd: CrdInfo, result: CrdResult) -> None:
        target = [crd.storage_version]
        left = result.objects - result.earlier
        if self.dry_run:
            result.note = (
                f"would rewrite {left} of {result.objects} object(s) ({result.earlier} rewritten by an earlier run), "
                f"then set storedVersions to {join(target)}"
            )
            return
        if result.failed:
            result.note = (
                f"storedVersions left at {join(crd.stored_versions)}: {len(result.failed)} object(s) "
                "could not be rewritten; fix them and run again"
            )
            return
        for _ in range(MAX_CONFLICTS):
            fresh = read_crd(self.kube, result.kind)
            if fresh is None or fresh.uid != crd.uid:
                result.note = "the CRD was deleted or replaced during the run"
                return
            if fresh.generation != crd.generation or fresh.storage_version != crd.storage_version:
                result.stored_after = fresh.stored_versions
                result.note = (
                    f"the CRD changed during the run (generation {crd.generation} -> {fresh.generation}): "
                    "storedVersions left as is; run again"
                )
                return
            patch = {
                "metadata": {"resourceVersion": fresh.resource_version},
                "status": {"storedVersions": target},
            }
            try:
                self.kube.request(
                    "PATCH", crd_path(crd.name) + "/status", body=patch, content_type=MERGE_PATCH
                )
            except ApiError as err:
                if err.conflict:
                    continue
                raise
            self.state.forget(crd)
            result.stored_after = tuple(target)
            result.stored_versions_set = True
            result.note = (
                f"storedVersions set to {join(target)} (was {join(crd.stored_versions)}): "
                f"every object is stored as {GROUP}/{crd.storage_version}"
            )
            return
        result.note = "the CRD kept changing: storedVersions left as is; run again"


def render(results: Sequence[CrdResult], out: TextIO, *, dry_run: bool) -> None:
    for r in results:
        if r.crd is None:
            out.write(f"{r.kind.crd_name}: {r.note}\n")
            continue
        out.write(
            f"{r.kind.crd_name}: storage version {r.crd.storage_version}, storedVersions "
            f"{join(r.crd.stored_versions)}\n"
        )
        if r.objects and not dry_run:
            out.write(
                f"  {r.rewritten} of {r.objects} object(s) rewritten in {r.seconds:.1f} s ({r.earlier} by an earlier "
                f"run, {r.deleted} deleted meanwhile, {r.conflicts} conflict(s) retried)\n"
            )
        for failure in r.failed:
            out.write(f"  failed: {failure}\n")
        out.write(f"  {r.note}\n")


def cmd_storage_migrate(args: argparse.Namespace) -> int:
    try:
        kinds = select_kinds(args.kinds, convertible_only=True)
    except ValueError as exc:
        return fail("storage-migrate", str(exc))
    if args.qps < 0:
        return fail("storage-migrate", "--qps must be 0 (no limit) or more")
    if args.workers < 1:
        return fail("storage-migrate", "--workers must be 1 or more")
    state = State(None if args.dry_run or args.no_state else Path(args.state_file or default_state_file()))
    results: list[CrdResult] = []
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        conn = connect(args, qps=args.qps)
        with state.opened():
            migrator = Migrator(
                conn.kube,
                state,
                dry_run=args.dry_run,
                page_size=args.page_size,
                workers=args.workers,
                progress=Progress(),
            )
            for kind in kinds:
                results.append(migrator.migrate(kind))
    except Busy as exc:
        return fail("storage-migrate", str(exc))
    except (ConfigException, ApiError) as exc:
        render(results, sys.stdout, dry_run=args.dry_run)
        return cluster_failure("storage-migrate", exc, "stopped: ")
    except KeyboardInterrupt:
        sys.stderr.write(
            "dynamo-webhook storage-migrate: interrupted; progress is saved, run again to continue\n"
        )
        return EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.output == "json":
        sys.stdout.write(
            orjson.dumps(
                {"dryRun": args.dry_run, "crds": [r.as_json() for r in results]}, option=orjson.OPT_INDENT_2
            ).decode()
            + "\n"
        )
    else:
        render(results, sys.stdout, dry_run=args.dry_run)
    if args.dry_run:
        return EXIT_OK
    return EXIT_OK if all(r.complete for r in results) else EXIT_FINDINGS


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
