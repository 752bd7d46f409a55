"""DynamoGraphDeploymentRequest (DGDR) conversion, v1alpha1 ⇄ v1beta1 (hub = v1beta1).

Public functions: :func:`to_hub` and :func:`from_hub` (whole object in, new object
out; the input is never mutated).

Projections between the versions:

* α ``profilingConfig.config`` (an opaque JSON object) ⇄ β ``sla``, ``workload.{isl,osl}``,
  ``modelCache`` and ``features.planner``; the unprojectable remainder of the α blob is saved
  in the β ``nvidia.com/dgdr-spec`` payload and merged back under the live β values;
* α ``profilingConfig.{resources,tolerations,nodeSelector}`` ⇄ β
  ``overrides.profilingJob.template.spec`` (resources on the container named ``profiler``);
* α ``profilerImage`` / ``deploymentOverrides.workersImage`` → β ``image`` → α ``profilerImage``;
* α ``useMocker`` ⇄ β ``features.mocker``; α ``autoApply`` ⇄ β ``autoApply``;
* α ``status.state`` ⇄ β ``status.phase``, ``deployment.name`` ⇄ ``dgdName``,
  ``generatedDeployment`` ⇄ ``profilingResults.selectedConfig``.

Fields only one version can represent travel in sparse payload annotations (§1 of the
conversion rules): ``nvidia.com/dgdr-spec`` (envelope ``{"version":1,"spec":…}``) and
``nvidia.com/dgdr-status`` (plain status JSON). A payload holds the *other* version's type:
on a v1beta1 object an α sparse spec/status, on a v1alpha1 object a β sparse spec/status.
Live source fields always win; a payload only fills target-only fields. Undecodable payloads
are ignored (never an error). The retired per-field ``nvidia.com/dgdr-*`` keys are scrubbed.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from conversion.payloads import read_value_spec_payload, read_value_status_payload, scrub, set_annotation
from conversion.v1alpha1.dgdr.spec import job_containers, migrate_unnamed_profiler, spec_from_hub, spec_to_hub
from conversion.v1alpha1.dgdr.status import status_from_hub, status_to_hub
from conversion.v1alpha1.dgdr.types import ALPHA_SPEC, ALPHA_STATUS, BETA_SPEC, BETA_STATUS, Obj
from domain.constants import ALPHA_API_VERSION, ANN_DGDR_SPEC, ANN_DGDR_STATUS, HUB_API_VERSION, KIND_DGDR
from gocompat.decoding import decode_struct
from gocompat.encoding import encode
from gocompat.gotext import go_json_text
from gocompat.jsonvalue import deep_copy
from gocompat.typed import GO_LIVE, Struct, is_zero

__all__ = ["from_hub", "to_hub"]

#: per-field keys of older releases: scrubbed, never read
RETIRED_KEYS = (
    "nvidia.com/dgdr-config-map-ref",
    "nvidia.com/dgdr-output-pvc",
    "nvidia.com/dgdr-enable-gpu-discovery",
    "nvidia.com/dgdr-deployment-overrides",
    "nvidia.com/dgdr-profiling-config",
    "nvidia.com/dgdr-status-backend",
    "nvidia.com/dgdr-profiling-results",
    "nvidia.com/dgdr-deployment-status",
    "nvidia.com/dgdr-profiling-job-name",
)
_SCRUBBED_KEYS = (ANN_DGDR_SPEC, ANN_DGDR_STATUS, *RETIRED_KEYS)


def to_hub(obj: Obj) -> Obj:
    """Convert a v1alpha1 DGDR to v1beta1."""
    meta, spec_raw, status_raw = _take_payloads(obj)
    restored_spec = read_value_spec_payload(spec_raw, BETA_SPEC) if spec_raw else None
    if restored_spec is not None:
        overrides = restored_spec.get("overrides")
        if overrides is not None and overrides.get("profilingJob") is not None:
            migrate_unnamed_profiler(job_containers(overrides["profilingJob"]))
    restored_status = read_value_status_payload(status_raw, BETA_STATUS) if status_raw else None

    spec_save: Obj = {}
    spec = spec_to_hub(_root_part(obj, "spec", ALPHA_SPEC), restored_spec, spec_save)
    status_save: Obj = {}
    status = status_to_hub(_root_part(obj, "status", ALPHA_STATUS), restored_status, status_save)

    if "config" in spec_save.get("profilingConfig", {}) or not is_zero(spec_save, ALPHA_SPEC):
        set_annotation(
            meta, ANN_DGDR_SPEC, _dumps({"version": 1, "spec": encode(spec_save, ALPHA_SPEC, values=True)})
        )
    if not is_zero(status_save, ALPHA_STATUS):
        set_annotation(meta, ANN_DGDR_STATUS, _dumps(encode(status_save, ALPHA_STATUS, values=True)))

    out: Obj = {"apiVersion": HUB_API_VERSION, "kind": KIND_DGDR, "metadata": meta}
    # v1beta1 root normaliser: a value-typed struct that encodes to {} is dropped
    enc_spec = encode(spec, BETA_SPEC, values=True, strip=True)
    if enc_spec:
        out["spec"] = enc_spec
    enc_status = encode(status, BETA_STATUS, values=True, strip=True)
    if enc_status:
        out["status"] = enc_status
    return out


def from_hub(obj: Obj) -> Obj:
    """Convert a v1beta1 DGDR to v1alpha1."""
    meta, spec_raw, status_raw = _take_payloads(obj)
    restored_spec = read_value_spec_payload(spec_raw, ALPHA_SPEC) if spec_raw else None
    restored_status = read_value_status_payload(status_raw, ALPHA_STATUS) if status_raw else None

    spec_save: Obj = {}
    spec = spec_from_hub(_root_part(obj, "spec", BETA_SPEC), restored_spec, spec_save)
    status_save: Obj = {}
    status = status_from_hub(_root_part(obj, "status", BETA_STATUS), restored_status, status_save)

    if not is_zero(spec_save, BETA_SPEC):
        set_annotation(
            meta, ANN_DGDR_SPEC, _dumps({"version": 1, "spec": encode(spec_save, BETA_SPEC, values=True)})
        )
    if not is_zero(status_save, BETA_STATUS):
        set_annotation(meta, ANN_DGDR_STATUS, _dumps(encode(status_save, BETA_STATUS, values=True)))

    # v1alpha1 has no normaliser: spec and status are always written
    return {
        "apiVersion": ALPHA_API_VERSION,
        "kind": KIND_DGDR,
        "metadata": meta,
        "spec": encode(spec, ALPHA_SPEC, values=True),
        "status": encode(status, ALPHA_STATUS, values=True),
    }


def _take_payloads(obj: Obj) -> tuple[Obj, str | None, str | None]:
    """Copy metadata, take the two payload annotations out of it and scrub the retired keys.

    An annotation map left empty disappears (Go sets a nil map), even one that arrived empty.
    Empty payload strings count as absent.
    """
    src = obj.get("metadata")
    meta: Obj = deep_copy(src) if isinstance(src, dict) else {}
    anns = meta.get("annotations")
    spec_raw = status_raw = None
    if isinstance(anns, dict):
        spec_raw = anns.get(ANN_DGDR_SPEC)
        status_raw = anns.get(ANN_DGDR_STATUS)
        scrub(meta, _SCRUBBED_KEYS)
        if "annotations" in meta and not meta["annotations"]:
            del meta["annotations"]
    elif "annotations" in meta:
        del meta["annotations"]
    return (
        meta,
        spec_raw if isinstance(spec_raw, str) and spec_raw else None,
        status_raw if isinstance(status_raw, str) and status_raw else None,
    )


def _dumps(v: Any) -> str:
    try:
        return go_json_text(orjson.dumps(v).decode())
    except TypeError:  # an integer beyond 64 bits inside opaque JSON
        return go_json_text(json.dumps(v, separators=(",", ":"), ensure_ascii=False))


def _root_part(obj: Obj, key: str, t: Struct) -> Obj:
    """Decode ``spec``/``status`` of the root object (exact names; a mismatched field is dropped)."""
    v = obj.get(key)
    if not isinstance(v, dict):
        return {}
    decoded: Obj = decode_struct(v, t, GO_LIVE)
    return decoded
