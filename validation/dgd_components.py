"""The DynamoGraphDeployment rules about one component, and what decides them: whether the
Grove pathway renders the graph (upstream ``grovePathwayForDynamoGraphDeployment``), the names
Grove derives from the graph and its components with their length limit (upstream
``dgdComponentResourceNameLength``), the GPU power-limit annotation (upstream
``validateDGDComponentPowerAnnotation``) and elastic expert parallelism's command (upstream
``validateElasticEPRequiresCommand``, also a DynamoComponentDeployment rule).

:mod:`validation.dgd` runs them in upstream order, with the graph's metadata, spec and update rules.
"""

from __future__ import annotations

import re
from typing import Any, Final

from domain.constants import (
    ANN_ENABLE_GROVE,
    ANN_GPU_POWER_LIMIT,
    ANN_WORKLOAD_PROVIDER,
    GMS_INTER_POD,
    MAIN_CONTAINER,
    PROVIDER_COMPONENT,
    PROVIDER_GROVE,
)
from gocompat.fielderrors import FieldError, Path, forbidden, invalid, required
from gocompat.gotext import go_quote
from validation.objects import JSON, containers, gms_of, lst, node_count, string, sub, uses_pcsg

MAX_COMBINED_NAME_LENGTH: Final = 45
_MIN_PCS_NAME_LENGTH: Final = 8
_DECIMAL_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_ELASTIC_EP_MSG: Final = (
    "elastic expert parallelism (--enable-elastic-ep with --data-parallel-backend ray) requires an explicit "
    "container command; the operator starts the single-pod Ray head by wrapping that command and cannot "
    "start it from the image ENTRYPOINT"
)


# --- Grove pathway (upstream grovePathwayForDynamoGraphDeployment) ------------------------------------------


def grove_pathway(annotations: dict[str, Any], grove_enabled: bool) -> tuple[bool, str]:
    """(pathway, requirement text used in Forbidden errors)."""
    if ANN_WORKLOAD_PROVIDER in annotations:
        provider = str_or_empty(annotations[ANN_WORKLOAD_PROVIDER])
        if provider == PROVIDER_GROVE:
            return True, ""
        if provider == PROVIDER_COMPONENT:
            return (
                False,
                f"requires the Grove pathway, but workload provider {go_quote(provider)} is selected",
            )
        return False, (
            f"requires the Grove pathway, but annotation {go_quote(ANN_WORKLOAD_PROVIDER)} "
            f"has unsupported value {go_quote(provider)}"
        )
    if not grove_enabled:
        return False, "requires the Grove pathway, but Grove is disabled in the operator configuration"
    raw = str_or_empty(annotations.get(ANN_ENABLE_GROVE))
    if raw.lower() == "false":
        return False, (
            f"requires the Grove pathway; remove or unset annotation {go_quote(ANN_ENABLE_GROVE)} "
            f"(currently {go_quote(raw)})"
        )
    return True, ""


def str_or_empty(v: Any) -> str:
    return v if isinstance(v, str) else ""


# --- Grove resource names (upstream dgdComponentResourceNameLength) -----------------------------------------


def _fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def _role_names(name: str, component: JSON) -> list[str]:
    """``expandRolesForComponent`` names (only used for components rendered as scaling groups)."""
    nodes = node_count(component)
    inter_pod_gms = string(gms_of(component), "mode") == GMS_INTER_POD
    if nodes > 1 and inter_pod_gms:
        names: list[str] = []
        for rank in range(nodes):
            names.append(f"{name}-gms-{rank}")
            names.append(f"{name}-ldr" if rank == 0 else f"{name}-wkr-{rank}")
        return names
    if nodes > 1:
        return [f"{name}-ldr", f"{name}-wkr"]
    if inter_pod_gms:
        return [f"{name}-gms-0", name]
    return [name]


def longest_pod_clique_name(name: str, component: JSON) -> str:
    longest = name.lower()
    if not uses_pcsg(component):
        return longest
    for role in _role_names(name, component):
        r = role.lower()
        if len(r) > len(longest):
            longest = r
    return longest


def pcs_name(dgd_name: str, components: list[JSON]) -> str:
    max_budget = 0
    for c in components:
        lower = string(c, "name").lower()
        budget = (
            len(lower) + len(longest_pod_clique_name(string(c, "name"), c)) if uses_pcsg(c) else len(lower)
        )
        max_budget = max(max_budget, budget)
    budget = max(MAX_COMBINED_NAME_LENGTH - max_budget, _MIN_PCS_NAME_LENGTH)
    raw = dgd_name.encode()
    if len(raw) <= budget:
        return dgd_name
    suffix = f"{_fnv32a(raw) & 0xFFFF:04x}"
    return raw[: budget - 5].decode(errors="replace") + "-" + suffix


def name_length_error(
    dgd_name: str, components: list[JSON], component: JSON, path: Path
) -> FieldError | None:
    name = string(component, "name")
    combined = len(pcs_name(dgd_name, components).encode()) + len(name.lower().encode())
    detail = "PCS name + component name"
    if uses_pcsg(component):
        longest = longest_pod_clique_name(name, component)
        combined += len(longest.encode())
        detail = f"PCS name + PCSG name + longest PodClique name {go_quote(longest)}"
    if combined <= MAX_COMBINED_NAME_LENGTH:
        return None
    return invalid(
        path.child("name"),
        name,
        f"combined resource name length {combined} exceeds the {MAX_COMBINED_NAME_LENGTH}-character pod-name "
        f"limit ({detail}); shorten DynamoGraphDeployment name {go_quote(dgd_name)} or component name {go_quote(name)}",
    )


# --- per-component DGD-only rules ----------------------------------------------------------------------


def power_limit(component: JSON) -> tuple[str, bool]:
    pt = sub(component, "podTemplate")
    if pt is None:
        return "", False
    ann = sub(sub(pt, "metadata"), "annotations")
    if ann is None or ANN_GPU_POWER_LIMIT not in ann:
        return "", False
    return str_or_empty(ann[ANN_GPU_POWER_LIMIT]), True


def power_path(path: Path) -> Path:
    return path.child("podTemplate", "metadata", "annotations").key(ANN_GPU_POWER_LIMIT)


def _dra_path(component: JSON, path: Path) -> Path | None:
    if gms_of(component) is not None:
        return path.child("experimental", "gpuMemoryService")
    pt = sub(component, "podTemplate")
    if pt is None:
        return None
    pod_spec = sub(pt, "spec")
    for key in ("containers", "initContainers"):
        for i, c in enumerate(lst(pod_spec, key)):
            if lst(sub(c if isinstance(c, dict) else None, "resources"), "claims"):
                return path.child("podTemplate", "spec", key).index(i).child("resources", "claims")
    return None


def power_errors(component: JSON, path: Path) -> list[FieldError]:
    """Upstream ``validateDGDComponentPowerAnnotation``: the power-limit value, and no DRA claims
    beside it."""
    value, has = power_limit(component)
    if not has:
        return []
    out: list[FieldError] = []
    pp = power_path(path)
    if _DECIMAL_RE.fullmatch(value) is None or not _INT64_MIN <= int(value) <= _INT64_MAX:
        out.append(invalid(pp, value, "must be a decimal integer"))
    elif int(value) <= 0:
        out.append(invalid(pp, value, "must be greater than zero"))
    dra = _dra_path(component, path)
    if dra is not None:
        out.append(
            forbidden(
                dra,
                f"cannot be combined with annotation {go_quote(ANN_GPU_POWER_LIMIT)}: "
                "power-aware planning does not support DRA-backed device allocation",
            )
        )
    return out


def _has_arg(args: list[str], flag: str, value: str) -> bool:
    joined, equals = f"{flag} {value}", f"{flag}={value}"
    for i, a in enumerate(args):
        # Quirk: substring match, so "--data-parallel-backend=rayx" also counts.
        if joined in a or equals in a:
            return True
        if a == flag and i + 1 < len(args) and args[i + 1] == value:
            return True
    return False


def elastic_ep_errors(backend: str, component: JSON, path: Path) -> list[FieldError]:
    """Upstream ``validateElasticEPRequiresCommand`` (shared_helpers.go; also used for a DCD with its own
    backendFramework)."""
    if backend != "vllm" or sub(component, "podTemplate") is None:
        return []
    conts = containers(sub(component, "podTemplate"))
    for i, c in enumerate(conts):
        if string(c, "name") != MAIN_CONTAINER:
            continue
        if lst(c, "command"):
            return []
        expanded = [tok for a in lst(c, "args") if isinstance(a, str) for tok in a.split()]
        if "--enable-elastic-ep" in expanded and (
            _has_arg(expanded, "--data-parallel-backend", "ray") or _has_arg(expanded, "-dpb", "ray")
        ):
            return [
                required(
                    path.child("podTemplate", "spec", "containers").index(i).child("command"), _ELASTIC_EP_MSG
                )
            ]
        return []
    return []
