"""The schema's rules inside the core types the CRDs embed (a pod template's containers, volumes,
probes, affinity, ...) through the offline create: a list-map key or a nested required field left
out, a ``null`` in a list of strings or of objects. The answers are the ones a real API server gave
for the same documents (kube-apiserver v1.36, dry run, strict field validation), kept here verbatim;
tests/e2e/test_schema.py sends the same documents to one.

The API server walks an object's properties in Go's map order, so when one answer holds errors in
sibling fields it lists them in an order that changes from one request to the next; the messages
below are lint's order (the schema's), the causes are the API server's as a set.

A DynamoComponentDeployment's pod template reaches the validation as written (its defaulter leaves
the template alone). A v1beta1 DynamoGraphDeployment's does not: its defaulter answers with the whole
object as Go encodes it, which writes ``name: ""`` into an ``env`` entry without one, ``claimName:
""`` and ``""`` for a ``null`` in ``args``, so the same mistakes are accepted there, by the API server
as by lint.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver import pipeline
from app.cli.offline import OfflineService
from tests.examples import manifest

Obj = dict[str, Any]
Step = tuple[tuple[str | int, ...], Any]

DCD = 'DynamoComponentDeployment.nvidia.com "decode-worker" is invalid: '
DGD = 'DynamoGraphDeployment.nvidia.com "llama-agg" is invalid: '
BLOCKED = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)
POD = ("spec", "podTemplate", "spec")
MAIN = (*POD, "containers", 0)
BETA_POD = ("spec", "components", 1, "podTemplate", "spec")
ALPHA_MAIN = ("spec", "services", "Worker", "extraPodSpec", "mainContainer")


def _refused(head: str, *causes: str) -> str:
    return f"{head}[{', '.join((*causes, BLOCKED))}]"


def _null(path: str, kind: str) -> str:
    return f'{path}: Invalid value: "null": {path} in body must be of type {kind}: "null"'


def _dcd(*steps: Step) -> tuple[str, tuple[Step, ...]]:
    return "dcd-v1beta1.yaml", steps


M = "spec.podTemplate.spec.containers[0]"
V = "spec.podTemplate.spec.volumes[0]"
A = "spec.podTemplate.spec.affinity"

#: (id, manifest, the values set (path, value), the API server's message or None when it accepts).
CASES: list[tuple[str, str, tuple[Step, ...], str | None]] = [
    (
        "env-without-name",
        *_dcd(((*MAIN, "env"), [{"name": "A", "value": "1"}, {"value": "x"}])),
        _refused(DCD, f"{M}.env[1].name: Required value"),
    ),
    (
        "volume-mount-without-name",
        *_dcd(((*MAIN, "volumeMounts"), [{"mountPath": "/x"}])),
        _refused(DCD, f"{M}.volumeMounts[0].name: Required value"),
    ),
    (
        "volume-mount-without-either",
        *_dcd(((*MAIN, "volumeMounts"), [{"readOnly": True}])),
        _refused(
            DCD, f"{M}.volumeMounts[0].mountPath: Required value", f"{M}.volumeMounts[0].name: Required value"
        ),
    ),
    (
        "pvc-without-claim-name",
        *_dcd(((*POD, "volumes"), [{"name": "v", "persistentVolumeClaim": {"readOnly": True}}])),
        _refused(DCD, f"{V}.persistentVolumeClaim.claimName: Required value"),
    ),
    ("null-in-args", *_dcd(((*MAIN, "args"), ["a", None])), _refused(DCD, _null(f"{M}.args[1]", "string"))),
    (
        "null-in-command",
        *_dcd(((*MAIN, "command"), [None, "b"])),
        _refused(DCD, _null(f"{M}.command[0]", "string")),
    ),
    (
        "the-three-at-once",
        *_dcd(
            ((*MAIN, "args"), ["a", None]),
            ((*MAIN, "env"), [{"value": "x"}]),
            ((*POD, "volumes"), [{"name": "v", "persistentVolumeClaim": {}}]),
        ),
        _refused(
            DCD,
            _null(f"{M}.args[1]", "string"),
            f"{M}.env[0].name: Required value",
            f"{V}.persistentVolumeClaim.claimName: Required value",
        ),
    ),
    (
        "two-env-without-name",
        *_dcd(((*MAIN, "env"), [{"value": "x"}, {"value": "y"}])),
        _refused(
            DCD,
            f"{M}.env[0].name: Required value",
            f"{M}.env[1].name: Required value",
            f"{M}.env[1]: Duplicate value: {{}}",
        ),
    ),
    (
        "null-env-name",
        *_dcd(((*MAIN, "env"), [{"name": None, "value": "x"}])),
        _refused(DCD, f"{M}.env[0].name: Required value"),
    ),
    ("null-env-entry", *_dcd(((*MAIN, "env"), [None])), _refused(DCD, _null(f"{M}.env[0]", "object"))),
    (
        "null-env-from-entry",
        *_dcd(((*MAIN, "envFrom"), [None])),
        _refused(DCD, _null(f"{M}.envFrom[0]", "object")),
    ),
    (
        "null-toleration",
        *_dcd(((*POD, "tolerations"), [None])),
        _refused(DCD, _null("spec.podTemplate.spec.tolerations[0]", "object")),
    ),
    (
        "null-nameserver",
        *_dcd(((*POD, "dnsConfig"), {"nameservers": [None]})),
        _refused(DCD, _null("spec.podTemplate.spec.dnsConfig.nameservers[0]", "string")),
    ),
    (
        "null-projected-source",
        *_dcd(((*POD, "volumes"), [{"name": "v", "projected": {"sources": [None]}}])),
        _refused(DCD, _null(f"{V}.projected.sources[0]", "object")),
    ),
    (
        "null-in-exec-command",
        *_dcd(((*MAIN, "livenessProbe"), {"exec": {"command": ["a", None]}})),
        _refused(DCD, _null(f"{M}.livenessProbe.exec.command[1]", "string")),
    ),
    (
        "container-without-name",
        *_dcd(((*POD, "containers", 1), {"image": "x"})),
        _refused(DCD, "spec.podTemplate.spec.containers[1].name: Required value"),
    ),
    (
        "init-container-without-name",
        *_dcd(((*POD, "initContainers"), [{"image": "x"}])),
        _refused(DCD, "spec.podTemplate.spec.initContainers[0].name: Required value"),
    ),
    (
        "port-without-container-port",
        *_dcd(((*MAIN, "ports"), [{"name": "http"}])),
        _refused(DCD, f"{M}.ports[0].containerPort: Required value"),
    ),
    (
        "volume-without-name",
        *_dcd(((*POD, "volumes"), [{"emptyDir": {}}])),
        _refused(DCD, f"{V}.name: Required value"),
    ),
    (
        "http-probe-without-port",
        *_dcd(((*MAIN, "livenessProbe"), {"httpGet": {"path": "/"}})),
        _refused(DCD, f"{M}.livenessProbe.httpGet.port: Required value"),
    ),
    (
        "tcp-probe-without-port",
        *_dcd(((*MAIN, "readinessProbe"), {"tcpSocket": {}})),
        _refused(DCD, f"{M}.readinessProbe.tcpSocket.port: Required value"),
    ),
    (
        "grpc-probe-without-port",
        *_dcd(((*MAIN, "startupProbe"), {"grpc": {}})),
        _refused(DCD, f"{M}.startupProbe.grpc.port: Required value"),
    ),
    (
        "pre-stop-without-port",
        *_dcd(((*MAIN, "lifecycle"), {"preStop": {"httpGet": {}}})),
        _refused(DCD, f"{M}.lifecycle.preStop.httpGet.port: Required value"),
    ),
    (
        "secret-key-ref-without-key",
        *_dcd(((*MAIN, "env"), [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s"}}}])),
        _refused(DCD, f"{M}.env[0].valueFrom.secretKeyRef.key: Required value"),
    ),
    (
        "field-ref-without-path",
        *_dcd(((*MAIN, "env"), [{"name": "A", "valueFrom": {"fieldRef": {}}}])),
        _refused(DCD, f"{M}.env[0].valueFrom.fieldRef.fieldPath: Required value"),
    ),
    (
        "resource-claim-without-name",
        *_dcd(((*MAIN, "resources", "claims"), [{"request": "x"}])),
        _refused(DCD, f"{M}.resources.claims[0].name: Required value"),
    ),
    (
        "resize-policy-empty",
        *_dcd(((*MAIN, "resizePolicy"), [{}])),
        _refused(
            DCD,
            f"{M}.resizePolicy[0].resourceName: Required value",
            f"{M}.resizePolicy[0].restartPolicy: Required value",
        ),
    ),
    (
        "match-expression-without-key",
        *_dcd(
            (
                (*POD, "affinity"),
                {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [{"values": ["a"]}]}]
                        }
                    }
                },
            )
        ),
        _refused(
            DCD,
            f"{A}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].key: Required value",
            f"{A}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].operator: Required value",
        ),
    ),
    (
        "node-affinity-without-terms",
        *_dcd(((*POD, "affinity"), {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}})),
        _refused(
            DCD,
            f"{A}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
            "Required value",
        ),
    ),
    (
        "weighted-pod-affinity-term-empty",
        *_dcd(
            (
                (*POD, "affinity"),
                {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [{"podAffinityTerm": {}}]
                    }
                },
            )
        ),
        _refused(
            DCD,
            f"{A}.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm"
            ".topologyKey: Required value",
            f"{A}.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Required value",
        ),
    ),
    (
        "topology-spread-without-key",
        *_dcd(((*POD, "topologySpreadConstraints"), [{"maxSkew": 1}])),
        _refused(
            DCD,
            "spec.podTemplate.spec.topologySpreadConstraints[0].topologyKey: Required value",
            "spec.podTemplate.spec.topologySpreadConstraints[0].whenUnsatisfiable: Required value",
        ),
    ),
    (
        "host-alias-without-ip",
        *_dcd(((*POD, "hostAliases"), [{"hostnames": ["a"]}])),
        _refused(DCD, "spec.podTemplate.spec.hostAliases[0].ip: Required value"),
    ),
    (
        "config-map-item-without-key",
        *_dcd(((*POD, "volumes"), [{"name": "v", "configMap": {"items": [{"path": "p"}]}}])),
        _refused(DCD, f"{V}.configMap.items[0].key: Required value"),
    ),
    (
        "secret-item-without-path",
        *_dcd(((*POD, "volumes"), [{"name": "v", "secret": {"items": [{"key": "k"}]}}])),
        _refused(DCD, f"{V}.secret.items[0].path: Required value"),
    ),
    (
        "host-path-without-path",
        *_dcd(((*POD, "volumes"), [{"name": "v", "hostPath": {}}])),
        _refused(DCD, f"{V}.hostPath.path: Required value"),
    ),
    (
        "claim-template-without-spec",
        *_dcd(((*POD, "volumes"), [{"name": "v", "ephemeral": {"volumeClaimTemplate": {}}}])),
        _refused(DCD, f"{V}.ephemeral.volumeClaimTemplate.spec: Required value"),
    ),
    (
        "readiness-gate-empty",
        *_dcd(((*POD, "readinessGates"), [{}])),
        _refused(DCD, "spec.podTemplate.spec.readinessGates[0].conditionType: Required value"),
    ),
    (
        "sysctl-empty",
        *_dcd(((*POD, "securityContext"), {"sysctls": [{}]})),
        _refused(
            DCD,
            "spec.podTemplate.spec.securityContext.sysctls[0].name: Required value",
            "spec.podTemplate.spec.securityContext.sysctls[0].value: Required value",
        ),
    ),
    # No required member, no list-map key: accepted.
    ("image-pull-secret-empty", *_dcd(((*POD, "imagePullSecrets"), [{}])), None),
    # A v1alpha1 DGD's main container: its env entries keep the names they have (or lack).
    (
        "alpha-env-without-name",
        "dgd-agg-v1alpha1.yaml",
        (((*ALPHA_MAIN, "env"), [{"value": "x"}]),),
        _refused(DGD, "spec.services.Worker.extraPodSpec.mainContainer.env[0].name: Required value"),
    ),
    # A v1beta1 DGD's pod template as its defaulter writes it back (Go's zero values): accepted.
    (
        "beta-env-without-name",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "containers", 0, "env"), [{"name": "A", "value": "b"}, {"value": "c"}]),),
        None,
    ),
    (
        "beta-volume-mount-without-name",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "containers", 0, "volumeMounts"), [{"mountPath": "/x"}]),),
        None,
    ),
    (
        "beta-pvc-without-claim-name",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "volumes"), [{"name": "v", "persistentVolumeClaim": {"readOnly": True}}]),),
        None,
    ),
    (
        "beta-null-in-args",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "containers", 0, "args"), ["--model", "x", None]),),
        None,
    ),
    ("beta-null-env-entry", "dgd-agg-v1beta1.yaml", (((*BETA_POD, "containers", 0, "env"), [None]),), None),
    ("beta-null-toleration", "dgd-agg-v1beta1.yaml", (((*BETA_POD, "tolerations"), [None]),), None),
    (
        "beta-port-without-container-port",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "containers", 0, "ports"), [{"name": "http"}]),),
        None,
    ),
    (
        "beta-http-probe-without-port",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "containers", 0, "livenessProbe"), {"httpGet": {"path": "/"}}),),
        None,
    ),
    (
        "beta-topology-spread-without-key",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "topologySpreadConstraints"), [{"maxSkew": 1}]),),
        None,
    ),
    # Two ports without containerPort are both written back as 0: a duplicate key of the list map.
    (
        "beta-two-ports-without-container-port",
        "dgd-agg-v1beta1.yaml",
        (((*BETA_POD, "containers", 0, "ports"), [{"name": "a"}, {"name": "b"}]),),
        DGD + "spec.components[1].podTemplate.spec.containers[0]"
        '.ports[1]: Duplicate value: {"containerPort":0,"protocol":"TCP"}',
    ),
]


def document(name: str, steps: tuple[Step, ...]) -> Obj:
    """The manifest ``name`` with each value set at its path (an index one past a list's end appends)."""
    doc = copy.deepcopy(manifest(name))
    for path, value in steps:
        node: Any = doc
        for part in path[:-1]:
            node = node[part]
        last = path[-1]
        if isinstance(node, list) and last == len(node):
            node.append(copy.deepcopy(value))
        else:
            node[last] = copy.deepcopy(value)
    return doc


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_core_type_rules_are_answered_as_the_api_server_answers(
    service: OfflineService, case: tuple[str, str, tuple[Step, ...], str | None]
) -> None:
    _, name, steps, expected = case
    out = pipeline.create(document(name, steps), service, "f.yaml")
    if expected is None:
        assert out.allowed, out.status
        return
    assert not out.allowed and out.status is not None
    assert (out.status["code"], out.status["reason"]) == (422, "Invalid")
    assert out.status["message"] == expected


def test_a_beta_pod_template_is_written_back_with_gos_zero_values(service: OfflineService) -> None:
    """Why the v1beta1 DGD's cases are accepted: the defaulter's patch writes the members Go always
    encodes, so the validation never meets the gap."""
    steps = next(c[2] for c in CASES if c[0] == "beta-env-without-name")
    out = pipeline.create(document("dgd-agg-v1beta1.yaml", steps), service, "f.yaml")
    assert out.allowed and out.stored is not None
    env = out.stored["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "A", "value": "b"}, {"name": "", "value": "c"}]
