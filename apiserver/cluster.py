"""The operator's rules that read the cluster, which an offline check cannot run: whether the
InferencePool API group is served (for a DynamoGraphDeployment with an ``epp`` component) and the
ClusterTopologyBinding a topology constraint names. :func:`cluster_rules` says which of them a
manifest would meet, so that they are reported as not checked rather than passed in silence."""

from __future__ import annotations

from typing import Any


def _components(spec: dict[str, Any]) -> list[dict[str, Any]]:
    found = spec.get("components")
    if isinstance(found, list):
        return [c for c in found if isinstance(c, dict)]
    services = spec.get("services")
    if isinstance(services, dict):
        return [c for c in services.values() if isinstance(c, dict)]
    return []


def _topology_names(spec: dict[str, Any]) -> list[str]:
    names = []
    for holder in (spec, *_components(spec)):
        constraint = holder.get("topologyConstraint")
        if isinstance(constraint, dict) and constraint.get("clusterTopologyName"):
            names.append(str(constraint["clusterTopologyName"]))
    return names


def cluster_rules(obj: Any) -> list[str]:
    """The cluster look-ups a create of ``obj`` would need, as sentences."""
    if not isinstance(obj, dict) or obj.get("kind") not in (
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
    ):
        return []
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    found = []
    holders = _components(spec) if obj["kind"] == "DynamoGraphDeployment" else [spec]
    if any(c.get("componentType") == "epp" or c.get("type") == "epp" for c in holders):
        found.append(
            "InferencePool API availability (an epp component needs inference.networking.k8s.io "
            "served in the cluster): not checked offline"
        )
    for name in dict.fromkeys(_topology_names(spec)):
        found.append(
            f"ClusterTopologyBinding {name!r} (its domains are read from the cluster): not checked offline"
        )
    return found
