"""DynamoGraphDeploymentRequest validation on the v1beta1 hub (upstream
``validateDynamoGraphDeploymentRequestSpec`` and ``validateDynamoGraphDeploymentRequestSpecUpdate`` in
deploy/operator/internal/webhook/validation/dynamographdeploymentrequest.go).

A v1alpha1 object is converted to the hub first (the converter turns a v1alpha1
``profilingConfig.profilerImage``, else ``deploymentOverrides.workersImage``, into
``spec.image``), so every rule runs on, and reports, hub paths.

CREATE: hardware, searchStrategy, runtimeVersionOverride. UPDATE runs only the update
rules, which are ratcheted forms of the create rules followed by the phase lock. DGDR
validation never emits warnings.
"""

from __future__ import annotations

import re
from typing import Any, Final

from conversion import dgdr as dgdr_conversion
from conversion.errors import ConversionError
from domain.admission import AdmissionContext, AdmissionInput, AdmissionSettings, Decision, JSONObject
from domain.constants import HUB_API_VERSION, KIND_DGDR
from gocompat.fielderrors import FieldError, GoJSON, Path, forbidden, invalid, required, to_decision
from gocompat.gotext import go_quote

__all__ = [
    "KIND_DGDR",
    "create_errors",
    "image_has_semver_tag",
    "json_equal",
    "semantic_spec",
    "update_errors",
    "validate",
]


PHASE_PROFILING: Final = "Profiling"
PHASE_READY: Final = "Ready"
IMMUTABLE_PHASES: Final = frozenset({PHASE_PROFILING, PHASE_READY, "Deploying", "Deployed"})

_SPEC: Final = Path("spec")
_HARDWARE_DETAIL: Final = "GPU hardware configuration is required when GPU discovery is disabled"
_OVERRIDE_DETAIL: Final = "is required when spec.image has no parseable semantic-version tag"

# --- image tag parsing (the operator's runtimeversion.ParseImageVersion) --------------------

# Go's strings.TrimSpace: Unicode White_Space (Python's str.isspace also counts U+001C..U+001F).
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_IMAGE_TAG: Final = re.compile(
    r"[vV]?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-((?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)
_UINT64_MAX: Final = (1 << 64) - 1


def image_has_semver_tag(image: str) -> bool:
    """Whether the image reference carries a semantic-version tag.

    The reference is trimmed, cut at its first ``@`` (digest), and the tag is the text after
    the last ``:`` that follows the last ``/``. The tag must be a full
    ``[vV]MAJOR.MINOR.PATCH[-pre][+build]`` version whose numbers fit in uint64.
    """
    ref = image.strip(_GO_SPACE)
    at = ref.find("@")
    if at >= 0:
        ref = ref[:at]
    colon = ref.rfind(":")
    if colon <= ref.rfind("/"):
        return False
    tag = ref[colon + 1 :].strip(_GO_SPACE)
    m = _IMAGE_TAG.fullmatch(tag)
    if m is None:
        return False
    return all(int(m.group(i)) <= _UINT64_MAX for i in (1, 2, 3))


# --- typed reads -------------------------------------------------------------------------


def _obj(value: Any) -> JSONObject | None:
    return value if isinstance(value, dict) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _has_manual_hardware(spec: JSONObject) -> bool:
    hardware = _obj(spec.get("hardware"))
    return hardware is not None and (
        _str(hardware.get("gpuSku")) != ""
        or hardware.get("vramMb") is not None
        or hardware.get("numGpusPerNode") is not None
    )


def _incompatible_search(spec: JSONObject) -> bool:
    return _str(spec.get("searchStrategy")) == "thorough" and _str(spec.get("backend")) == "auto"


def _override_required(spec: JSONObject) -> bool:
    image = _str(spec.get("image"))
    if not image or _str(spec.get("runtimeVersionOverride")):
        return False
    return not image_has_semver_tag(image)


def _search_error(spec: JSONObject) -> FieldError:
    # searchStrategy is a named string type: its value renders through encoding/json.
    return invalid(
        _SPEC.child("searchStrategy"),
        GoJSON(_str(spec.get("searchStrategy"))),
        f"is incompatible with spec.backend {go_quote(_str(spec.get('backend')))}; "
        "set spec.backend to a specific backend (sglang, trtllm, or vllm)",
    )


# --- semantic comparison -----------------------------------------------------------------


def _drop_empty(value: Any) -> Any:
    """Opaque-typed subtrees (the profiling JobSpec): null fields, empty lists and empty
    objects compare equal to absent ones, as most of those Go fields are non-pointer
    values or slices/maps (nil and empty are equal under apimachinery's semantic equality)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            nv = _drop_empty(v)
            if nv is None or nv == {} or nv == []:
                continue
            out[k] = nv
        return out
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


# Per struct: field -> kind. "s" Go string (absent == null == ""), "p" pointer or opaque JSON
# (absent == null, everything else compared as is), "b" Go bool (absent == null == false),
# a dict: nested pointer-to-struct, "job": the batch/v1 JobSpec subtree.
_Schema = dict[str, Any]
_HARDWARE: Final[_Schema] = {
    "gpuSku": "s",
    "vramMb": "p",
    "totalGpus": "p",
    "numGpusPerNode": "p",
    "interconnect": "s",
    "rdma": "p",
}
_SPEC_SCHEMA: Final[_Schema] = {
    "model": "s",
    "backend": "s",
    "image": "s",
    "runtimeVersionOverride": "s",
    "modelCache": {"pvcName": "s", "pvcModelPath": "s", "pvcMountPath": "s"},
    "hardware": _HARDWARE,
    "workload": {"isl": "p", "osl": "p", "concurrency": "p", "requestRate": "p"},
    "sla": {"ttft": "p", "itl": "p", "e2eLatency": "p", "optimizationType": "p"},
    "overrides": {"profilingJob": "job", "dgd": "p"},
    "features": {"planner": "p", "mocker": {"enabled": "b"}},
    "searchStrategy": "s",
    "autoApply": "p",
}


def _typed(value: Any, schema: _Schema) -> JSONObject:
    out: JSONObject = {}
    if not isinstance(value, dict):
        return out
    for name, kind in schema.items():
        v = value.get(name)
        if v is None:
            continue
        if kind == "s":
            if v != "":
                out[name] = v
        elif kind == "b":
            if v is not False:
                out[name] = v
        elif kind == "job":
            out[name] = _drop_empty(v)
        elif isinstance(kind, dict):
            out[name] = _typed(v, kind)
        else:
            out[name] = v
    return out


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality of decoded JSON values: numbers compare numerically, but unlike
    Python's ``==`` a boolean never equals a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and a == b
    return type(a) is type(b) and a == b


def semantic_spec(spec: JSONObject) -> JSONObject:
    """The DGDR spec as the operator's typed struct sees it, for semantic deep equality.

    Unknown fields are dropped (the typed decode ignores them), string fields compare empty
    to absent, pointer fields compare absent to null only, numbers compare numerically.
    """
    return _typed(spec, _SPEC_SCHEMA)


def _is_deferred_update(new: JSONObject, old: JSONObject, old_phase: str) -> bool:
    """Upstream ``isDGDRDeferredRuntimeVersionUpdate``: choosing the runtime version / activating
    autoApply before deferred DGD creation."""
    old_auto = old.get("autoApply")
    if old_auto is not False or old_phase not in (PHASE_PROFILING, PHASE_READY):
        return False
    new_auto = new.get("autoApply")
    # autoApply may only be activated (true or unset) once the generated snapshot is Ready.
    if (new_auto is None or new_auto is True) and old_phase != PHASE_READY:
        return False
    rest = dict(new)
    for name in ("autoApply", "runtimeVersionOverride"):
        if name in old:
            rest[name] = old[name]
        else:
            rest.pop(name, None)
    return json_equal(rest, old)


# --- rules -------------------------------------------------------------------------------


def create_errors(spec: JSONObject, settings: AdmissionSettings) -> list[FieldError]:
    errs: list[FieldError] = []
    if not settings.gpu_discovery and not _has_manual_hardware(spec):
        errs.append(required(_SPEC.child("hardware"), _HARDWARE_DETAIL))
    if _incompatible_search(spec):
        errs.append(_search_error(spec))
    if _override_required(spec):
        errs.append(required(_SPEC.child("runtimeVersionOverride"), _OVERRIDE_DETAIL))
    return errs


def update_errors(
    new: JSONObject, old: JSONObject, old_phase: str, settings: AdmissionSettings
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not settings.gpu_discovery and not _has_manual_hardware(new) and _has_manual_hardware(old):
        errs.append(required(_SPEC.child("hardware"), _HARDWARE_DETAIL))
    if _incompatible_search(new) and not _incompatible_search(old):
        errs.append(_search_error(new))
    # Legacy image compatibility is re-checked when autoApply is about to create a DGD.
    new_auto = new.get("autoApply")
    auto_apply_activated = old.get("autoApply") is False and new_auto is not False
    if _override_required(new) and (
        _str(new.get("image")) != _str(old.get("image"))
        or _str(new.get("runtimeVersionOverride")) != _str(old.get("runtimeVersionOverride"))
        or auto_apply_activated
    ):
        errs.append(required(_SPEC.child("runtimeVersionOverride"), _OVERRIDE_DETAIL))
    if old_phase in IMMUTABLE_PHASES:
        new_typed, old_typed = semantic_spec(new), semantic_spec(old)
        if not json_equal(new_typed, old_typed) and not _is_deferred_update(new_typed, old_typed, old_phase):
            errs.append(
                forbidden(
                    _SPEC,
                    f"updates are forbidden while the resource is in phase {go_quote(old_phase)}; "
                    "delete and recreate the resource to change its spec",
                )
            )
    return errs


def _hub(obj: JSONObject) -> JSONObject:
    if obj.get("apiVersion", HUB_API_VERSION) == HUB_API_VERSION:
        return obj
    return dgdr_conversion.CONVERTER.convert(obj, HUB_API_VERSION)


def _name(obj: JSONObject) -> str:
    meta = _obj(obj.get("metadata"))
    return _str(meta.get("name")) if meta is not None else ""


def _terminating(obj: JSONObject) -> bool:
    meta = _obj(obj.get("metadata"))
    return meta is not None and bool(meta.get("deletionTimestamp"))


def validate(inp: AdmissionInput, ctx: AdmissionContext, spec_decodes: bool = False) -> Decision:
    """Validate one DGDR CREATE or UPDATE (other operations are allowed without checks)."""
    obj = inp.object
    if inp.operation not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
        return Decision.allow()
    old_obj = inp.old_object
    if inp.operation == "UPDATE":
        if _terminating(obj):
            # Finalizer removal must always go through.
            return Decision.allow()
        if not isinstance(old_obj, dict):
            return Decision.deny("there is no content to decode", code=400, reason="")
    try:
        new = _hub(obj)
        old = _hub(old_obj) if inp.operation == "UPDATE" and isinstance(old_obj, dict) else None
    except ConversionError as exc:
        # An object that cannot be brought to the hub is answered like an undecodable one.
        return Decision.deny(str(exc), code=400, reason="")
    new_spec = _obj(new.get("spec")) or {}
    if old is None:
        errs = create_errors(new_spec, ctx.settings)
    else:
        old_status = _obj(old.get("status")) or {}
        errs = update_errors(
            new_spec, _obj(old.get("spec")) or {}, _str(old_status.get("phase")), ctx.settings
        )
    return to_decision(KIND_DGDR, _name(new), errs)
