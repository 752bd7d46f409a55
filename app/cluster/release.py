"""``dynamo-webhook crds release``: take the convertible Dynamo CRDs' conversion webhook away from a
Service that is about to be deleted (the uninstall's pre-delete step), so that no CRD is left naming a
converter that no longer exists.

Why: a CRD whose conversion webhook is gone cannot serve an object stored in a version other than the
one asked for; every read, list and watch of such an object fails. Deleting the Service is safe only
once each CRD either needs no converter or names another one.

For each convertible CRD (the kind registry's) whose ``spec.conversion`` is a webhook naming the given
Service, one of:

* ``--hand-over-to``: the webhook is pointed at another Service (the operator's own converter);
  ``conversionReviewVersions`` is kept, and ``caBundle`` becomes the other converter's CA (the one in
  place is this service's and would not verify it). The upstream operator puts its CA into the CRDs
  only when it starts (from ``ca.crt`` of its webhook Secret, ``webhook-server-cert`` in its
  namespace; cert-manager annotations are on its webhook configurations, not on the CRDs), so the CA
  is copied here from that Secret, or from a file.
* otherwise, when ``status.storedVersions`` holds only the storage version (every object is stored in
  it): ``spec.conversion`` becomes ``{strategy: None}``. Objects are then served in any version
  without conversion (the API server relabels ``apiVersion`` only).
* otherwise objects may still be stored in another version, and the CRD is *refused*. One refusal
  changes nothing on any CRD: every CRD is decided first, and only a plan without refusals is applied.

A CRD that names another Service or a URL, or uses no webhook, is left alone ("not ours"); a missing CRD
is skipped. Every patch is a JSON merge patch carrying the ``resourceVersion`` the decision was made
on; a 409 conflict re-reads that CRD and decides again, a bounded number of times. What it needs:
``get`` and ``patch`` on the four CRDs (and ``get`` on the CA Secret when handing over).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

import orjson
from kubernetes.config.config_exception import ConfigException

from app.cluster.inventory import (
    EXIT_FINDINGS,
    EXIT_OK,
    CrdInfo,
    JsonObj,
    cluster_failure,
    connect,
    fail,
    join,
    select_kinds,
)
from app.server.settings import settings_default
from certs.kube import ApiError, Kube, crd_path, in_cluster_namespace, secret_path
from certs.kubeerrors import describe

COMMAND = "crds release"
MAX_CONFLICTS = 5
#: Where the upstream operator keeps the CA it puts into the CRDs: this Secret, in its namespace.
OPERATOR_SECRET = "webhook-server-cert"
CA_KEY = "ca.crt"
PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"

Action = Literal["missing", "not-ours", "none", "hand-over", "refused"]

_REF = re.compile(r"^(?P<ns>[a-z0-9.-]+)/(?P<name>[a-z0-9.-]+)(?::(?P<port>\d+))?(?P<path>/.*)?$")


@dataclass(frozen=True)
class ServiceRef:
    """A Service (with the port and path of a webhook on it)."""

    namespace: str
    name: str
    port: int = 443
    path: str = "/convert"

    @classmethod
    def parse(cls, spec: str, *, endpoint: bool) -> ServiceRef:
        """``NAMESPACE/NAME``, with ``endpoint`` also ``[:PORT][/PATH]``; raises ``ValueError``."""
        match = _REF.match(spec.strip())
        form = "NAMESPACE/NAME[:PORT][/PATH]" if endpoint else "NAMESPACE/NAME"
        if match is None or (not endpoint and (match["port"] or match["path"])):
            raise ValueError(f"{spec!r} is not {form}")
        port = int(match["port"] or 443)
        if not 1 <= port <= 65535:
            raise ValueError(f"{spec!r}: port {port} is out of range")
        return cls(match["ns"], match["name"], port, match["path"] or "/convert")

    def names(self, service: Any) -> bool:
        """Whether a ``clientConfig.service`` stanza names this Service (any port or path)."""
        return (
            isinstance(service, dict)
            and service.get("namespace") == self.namespace
            and service.get("name") == self.name
        )

    @property
    def service(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def endpoint(self) -> str:
        return f"{self.service}:{self.port}{self.path}"

    def stanza(self) -> JsonObj:
        return {"namespace": self.namespace, "name": self.name, "port": self.port, "path": self.path}


def default_service() -> str:
    """The Service ``serve`` runs behind: its settings' variables, else the pod's namespace and the
    settings' defaults."""
    namespace = (
        os.environ.get("DYNAMO_WEBHOOK_NAMESPACE") or in_cluster_namespace() or settings_default("namespace")
    )
    name = os.environ.get("DYNAMO_WEBHOOK_SERVICE_NAME") or settings_default("service_name")
    return f"{namespace}/{name}"


@dataclass
class Decision:
    """What is (or would be) done to one CRD."""

    crd: str
    action: Action
    note: str
    crd_info: CrdInfo | None = None
    done: bool = False
    conflicts: int = 0

    def as_json(self) -> JsonObj:
        out: JsonObj = {"crd": self.crd, "action": self.action, "changed": self.done, "note": self.note}
        if self.crd_info is not None:
            out.update(
                storageVersion=self.crd_info.storage_version,
                storedVersions=list(self.crd_info.stored_versions),
            )
        if self.conflicts:
            out["conflicts"] = self.conflicts
        return out


def decide(name: str, crd: JsonObj | None, ours: ServiceRef, hand_over: ServiceRef | None) -> Decision:
    """What to do to one CRD as it is now."""
    if crd is None:
        return Decision(name, "missing", "CRD not installed: skipped")
    info = CrdInfo.parse(crd)
    conversion = (crd.get("spec") or {}).get("conversion") or {}
    client_config = (conversion.get("webhook") or {}).get("clientConfig") or {}
    stored = f"storedVersions {join(info.stored_versions)}"
    if conversion.get("strategy") != "Webhook" or not ours.names(client_config.get("service")):
        return Decision(name, "not-ours", f"not ours ({_describe(conversion)}): left as is", info)
    if hand_over is not None:
        return Decision(
            name, "hand-over", f"conversion webhook handed over to {hand_over.endpoint} ({stored})", info
        )
    if info.migrated:
        return Decision(name, "none", f"conversion set to None ({stored})", info)
    return Decision(
        name,
        "refused",
        f"refused: {stored}, storage version {info.storage_version}: objects may "
        "still be stored in another version",
        info,
    )


def _describe(conversion: JsonObj) -> str:
    strategy = conversion.get("strategy") or "None"
    if strategy != "Webhook":
        return f"strategy {strategy}"
    client_config = (conversion.get("webhook") or {}).get("clientConfig") or {}
    service = client_config.get("service")
    if isinstance(service, dict):
        return f"webhook names Service {service.get('namespace')}/{service.get('name')}"
    return "webhook names a URL" if client_config.get("url") else "webhook names no converter"


def patch_for(decision: Decision, hand_over: ServiceRef | None, ca_bundle: str | None) -> JsonObj:
    """The merge patch of a decision, conditional on the resourceVersion it was made on."""
    assert decision.crd_info is not None
    meta = {"resourceVersion": decision.crd_info.resource_version}
    if decision.action == "none":
        return {"metadata": meta, "spec": {"conversion": {"strategy": "None", "webhook": None}}}
    assert decision.action == "hand-over" and hand_over is not None
    client_config: JsonObj = {"service": hand_over.stanza(), "caBundle": ca_bundle}
    return {"metadata": meta, "spec": {"conversion": {"webhook": {"clientConfig": client_config}}}}


class CaUnavailable(Exception):
    """The other converter's CA could not be read."""


def read_ca_bundle(kube: Kube, secret: ServiceRef | None, ca_file: Path | None) -> str:
    """The caBundle (base64 of PEM) from ``ca_file``, else from ``ca.crt`` of Secret ``secret``."""
    if ca_file is not None:
        try:
            pem = ca_file.read_bytes()
        except OSError as exc:
            raise CaUnavailable(f"--hand-over-ca-file: {exc}") from exc
        where = str(ca_file)
    else:
        assert secret is not None
        where = f"Secret {secret.service} key {CA_KEY}"
        obj = kube.get(secret_path(secret.namespace, secret.name))
        if obj is None:
            raise CaUnavailable(f"{where}: the Secret does not exist")
        try:
            pem = base64.b64decode(str((obj.get("data") or {}).get(CA_KEY) or ""), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise CaUnavailable(f"{where}: not base64: {exc}") from exc
    if PEM_CERTIFICATE not in pem:
        raise CaUnavailable(f"{where}: no PEM certificate")
    return base64.b64encode(pem).decode()


@dataclass
class Release:
    """Decide for every CRD, then (when nothing is refused) patch."""

    kube: Kube
    ours: ServiceRef
    crd_names: Sequence[str]
    hand_over: ServiceRef | None = None
    ca_bundle: str | None = None
    dry_run: bool = False
    decisions: list[Decision] = field(default_factory=list)

    def plan(self) -> list[Decision]:
        self.decisions = [self._decide(name) for name in self.crd_names]
        return self.decisions

    def _decide(self, name: str) -> Decision:
        return decide(name, self.kube.get(crd_path(name)), self.ours, self.hand_over)

    @property
    def refused(self) -> list[Decision]:
        return [d for d in self.decisions if d.action == "refused"]

    @property
    def changed(self) -> list[str]:
        return [d.crd for d in self.decisions if d.done]

    @property
    def needs_ca(self) -> bool:
        return any(d.action == "hand-over" for d in self.decisions)

    def apply(self) -> None:
        """Patch each CRD as decided (nothing when a CRD is refused, or in a dry run)."""
        if self.refused or self.dry_run:
            return
        for index, decision in enumerate(self.decisions):
            self.decisions[index] = self._apply(decision)

    def _apply(self, decision: Decision) -> Decision:
        conflicts = 0
        while decision.action in ("none", "hand-over"):
            try:
                self.kube.merge_patch(
                    crd_path(decision.crd), patch_for(decision, self.hand_over, self.ca_bundle)
                )
            except ApiError as err:
                if not err.conflict and not err.not_found:
                    raise
                conflicts += 1
                if conflicts >= MAX_CONFLICTS:
                    decision = Decision(
                        decision.crd,
                        "refused",
                        f"refused: the CRD kept changing ({conflicts} conflicts); left as is, run again",
                        decision.crd_info,
                    )
                    break
                decision = self._decide(decision.crd)  # changed or deleted meanwhile: decide again
                continue
            decision.done = True
            break
        decision.conflicts = conflicts
        return decision


def render(decisions: Sequence[Decision], out: TextIO, *, dry_run: bool) -> None:
    """One line per CRD: what was done (or would be, or was held back by a refusal)."""
    blocked = any(d.action == "refused" for d in decisions)
    for d in decisions:
        note = d.note
        if d.action in ("none", "hand-over") and not d.done:
            note = (
                "left as is (another CRD is refused); would be " if blocked else "dry run; would be "
            ) + note
        out.write(f"{d.crd}: {note}\n")


def refusal_message(refused: Sequence[Decision], changed: Sequence[str]) -> str:
    crds = "; ".join(f"{d.crd}: {d.note.removeprefix('refused: ')}" for d in refused)
    done = f"changed meanwhile: {', '.join(changed)}" if changed else "no CRD changed"
    return (
        f"refused ({done}): {crds}. Objects may still be stored in a version other than the storage "
        "version, and without a converter they could not be read. Run `dynamo-webhook storage-migrate` first "
        "(the deploy/tools/storage-migrate.yaml Job or the command line), or hand the conversion over to "
        "another converter with --hand-over-to; then retry the uninstall"
    )


def cmd_release(args: argparse.Namespace) -> int:
    try:
        ours = ServiceRef.parse(args.service or default_service(), endpoint=False)
        hand_over = ServiceRef.parse(args.hand_over_to, endpoint=True) if args.hand_over_to else None
        ca_secret = None
        if hand_over is not None and args.hand_over_ca_file is None:
            ca_secret = ServiceRef.parse(
                args.hand_over_ca_secret or f"{hand_over.namespace}/{OPERATOR_SECRET}", endpoint=False
            )
    except ValueError as exc:
        return fail(COMMAND, str(exc))
    if hand_over is None and (args.hand_over_ca_secret or args.hand_over_ca_file):
        return fail(COMMAND, "--hand-over-ca-secret and --hand-over-ca-file apply with --hand-over-to only")
    if hand_over is not None and hand_over.service == ours.service:
        return fail(COMMAND, f"--hand-over-to names {ours.service}, the Service being removed")
    crd_names = [k.crd_name for k in select_kinds(None, convertible_only=True)]
    try:
        kube = connect(args).kube
    except ConfigException as exc:
        return cluster_failure(COMMAND, exc)
    release = Release(kube, ours, crd_names, hand_over, dry_run=args.dry_run)
    try:
        release.plan()
        if release.needs_ca and not release.refused:
            release.ca_bundle = read_ca_bundle(kube, ca_secret, args.hand_over_ca_file)
        release.apply()
    except CaUnavailable as exc:
        return fail(COMMAND, f"no CA for the other converter (no CRD changed): {exc}")
    except ApiError as exc:
        return fail(COMMAND, api_failure(exc, release.changed))
    if args.output == "json":
        sys.stdout.write(
            orjson.dumps(
                {
                    "service": ours.service,
                    "handOverTo": hand_over.endpoint if hand_over else None,
                    "dryRun": args.dry_run,
                    "refused": bool(release.refused),
                    "crds": [d.as_json() for d in release.decisions],
                },
                option=orjson.OPT_INDENT_2,
            ).decode()
            + "\n"
        )
    else:
        render(release.decisions, sys.stdout, dry_run=args.dry_run)
    if release.refused:
        sys.stderr.write(f"dynamo-webhook {COMMAND}: {refusal_message(release.refused, release.changed)}\n")
        return EXIT_FINDINGS
    return EXIT_OK


def api_failure(err: ApiError, changed: Sequence[str]) -> str:
    """One line: what failed, the RBAC it takes when access was refused, and what was changed before."""
    text = describe(err)
    if err.status in (401, 403):
        text += (
            "; it needs get and patch on the convertible CRDs (customresourcedefinitions.apiextensions.k8s.io, "
            "by name), and get on the CA Secret with --hand-over-to"
        )
    return text + (f" (already changed: {', '.join(changed)})" if changed else " (no CRD changed)")
