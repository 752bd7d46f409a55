"""Go's ``json.Unmarshal`` error texts over the generated type tables (expected values from Go
itself)."""

from __future__ import annotations

from typing import Any

import pytest

from gocompat import nodes, tables_grove
from gocompat.decode import decode_error

J = dict[str, Any]


@pytest.mark.parametrize(
    ("expr", "value", "message"),
    [
        (
            "core/v1.PodSpec",
            {"volumes": [{"name": "v", "csi": {"driver": 5}}]},
            "json: cannot unmarshal number into Go struct field CSIVolumeSource.volumes.VolumeSource.csi.driver"
            " of type string",
        ),
        (
            "core/v1.PodSpec",
            {"containers": [{"name": "m", "livenessProbe": {"httpGet": {"port": 1.5}}}]},
            "json: cannot unmarshal number 1.5 into Go struct field"
            " HTTPGetAction.containers.livenessProbe.ProbeHandler.httpGet.port of type int32",
        ),
        (
            "core/v1.PodSpec",
            {"containers": [{"name": "m", "livenessProbe": {"httpGet": {"port": True}}}]},
            "json: cannot unmarshal bool into Go struct field"
            " HTTPGetAction.containers.livenessProbe.ProbeHandler.httpGet.port of type int32",
        ),
        (
            "core/v1.PodSpec",
            {"containers": [{"name": "m", "ports": [{"containerPort": 2147483648}]}]},
            "json: cannot unmarshal number 2147483648 into Go struct field"
            " ContainerPort.containers.ports.containerPort of type int32",
        ),
        (
            "core/v1.PodSpec",
            {"nodeSelector": {"a": 1}},
            "json: cannot unmarshal number into Go struct field PodSpec.nodeSelector of type string",
        ),
        (
            "core/v1.PodSpec",
            {"containers": "x", "hostNetwork": "y"},
            "json: cannot unmarshal string into Go struct field PodSpec.containers of type []v1.Container",
        ),
        # a failing quantity stops decoding and wins over an earlier type mismatch
        (
            "core/v1.PodSpec",
            {"hostNetwork": "y", "overhead": {"cpu": "bogus"}},
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            "core/v1.PodSpec",
            {"terminationGracePeriodSeconds": -1.0},
            "json: cannot unmarshal number -1.0 into Go struct field PodSpec.terminationGracePeriodSeconds"
            " of type int64",
        ),
        (
            "core/v1.PodTemplateSpec",
            {"metadata": {"creationTimestamp": 5}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp"
            " of type string",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"replicas": "x", "template": {"topologyConstraint": {}}}},
            "json: cannot unmarshal string into Go struct field PodCliqueSetSpec.spec.replicas of type int32",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"template": {"terminationDelay": "1000ms", "topologyConstraint": {"packDomain": 5}}}},
            "json: cannot unmarshal number into Go struct field"
            " TopologyConstraint.spec.template.topologyConstraint.packDomain of type v1alpha1.TopologyDomain",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"template": {"terminationDelay": "x"}}},
            'time: invalid duration "x"',
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {
                "SPEC": {
                    "template": {
                        "cliques": [None, {"name": "c", "spec": {"podSpec": {"containers": [{"image": 5}]}}}]
                    }
                }
            },
            "json: cannot unmarshal number into Go struct field"
            " Container.spec.template.cliques.spec.podSpec.containers.image of type string",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"template": {"cliques": "x"}, "replicas": 2**40}},
            "json: cannot unmarshal string into Go struct field PodCliqueSetTemplateSpec.spec.template.cliques"
            " of type []*v1alpha1.PodCliqueTemplateSpec",
        ),
    ],
)
def test_decode_error_is_gos_text(expr: str, value: J, message: str) -> None:
    nodes.register(tables_grove)
    assert decode_error(expr, value) == message


def test_decode_error_accepts_what_go_accepts() -> None:
    nodes.register(tables_grove)
    ok = {"spec": {"template": {"terminationDelay": None, "cliques": [None]}}, "unknown": {"x": 1}}
    assert decode_error("grove/core/v1alpha1.PodCliqueSet", ok) is None
