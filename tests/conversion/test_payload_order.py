"""Member order of the payload annotations.

A payload annotation is an opaque string: its bytes are what they are, so its member order must
be the one Go's ``encoding/json`` writes for the upstream types, not the order of the object the
converter was given (kube-apiserver sends every object with its keys sorted; other clients do
not). Go writes a struct's fields in declaration order and a map's keys sorted by their bytes;
a ``json.RawMessage``/``apiextensionsv1.JSON``/``runtime.RawExtension`` value keeps the bytes it
was given, and a ``map[string]any`` is re-marshalled with its keys sorted.
"""

from __future__ import annotations

import json
from random import Random
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from conversion.v1alpha1 import dgd
from gocompat.encoding import encode
from kinds import convert
from tests.conversion.dgdr_objects import alpha_objects as alpha_dgdr
from tests.conversion.dgdr_objects import beta_objects as beta_dgdr
from tests.conversion.strategies import ALPHA, BETA, alpha_dcd, alpha_dgd, beta_dcd, beta_dgd
from tests.conversion.support import load_vectors

Obj = dict[str, Any]

PAYLOADS = tuple(
    f"nvidia.com/{kind}-{part}" for kind in ("dgd", "dcd", "dgdr") for part in ("spec", "status")
)

# Opaque JSON values, keyed by (enclosing key, key) (a list's items are enclosed by the list's
# key): Go keeps their bytes as given, so their inner order is the input's and is not shuffled.
_OPAQUE = {
    ("providerOverride", "value"),  # apiextensionsv1.JSON
    ("plugins", "parameters"),  # json.RawMessage
    ("overrides", "dgd"),  # runtime.RawExtension
    ("features", "planner"),
    ("pareto", "config"),
    ("profilingResults", "selectedConfig"),
    ("status", "generatedDeployment"),
}


def _reorder(v: Any, order: Any, parent: str = "") -> Any:
    """``v`` with every object's keys in the order ``order`` gives (opaque values kept)."""
    if isinstance(v, dict):
        out: Obj = {}
        for k in order(list(v)):
            x = v[k]
            out[k] = x if (parent, k) in _OPAQUE else _reorder(x, order, k)
        return out
    if isinstance(v, list):
        return [_reorder(x, order, parent) for x in v]
    return v


def _payloads(obj: Obj) -> dict[str, str]:
    anns = (obj.get("metadata") or {}).get("annotations") or {}
    return {k: anns[k] for k in PAYLOADS if k in anns}


def _orders(rnd: Random) -> list[Any]:
    def shuffled(keys: list[str]) -> list[str]:
        rnd.shuffle(keys)
        return keys

    return [sorted, lambda keys: sorted(keys, reverse=True), shuffled]


def _assert_order_independent(obj: Obj, to: str, rnd: Random) -> Obj:
    """Convert ``obj`` and reorderings of it; the payloads must be byte-identical. Returns the
    conversion of ``obj``."""
    want = convert(obj, to)
    for order in _orders(rnd):
        assert _payloads(convert(_reorder(obj, order), to)) == _payloads(want)
    return want


def _check(obj: Obj, rnd: Random) -> None:
    other = BETA if obj["apiVersion"] == ALPHA else ALPHA
    converted = _assert_order_independent(obj, other, rnd)
    # and back: the payloads the first conversion wrote are restored from and written again
    _assert_order_independent(converted, obj["apiVersion"], rnd)


_RANDOMS = st.randoms(use_true_random=False)


@given(alpha_dgd(), _RANDOMS)
def test_alpha_dgd_payloads_do_not_depend_on_key_order(obj: Obj, rnd: Random) -> None:
    _check(obj, rnd)


@given(beta_dgd(), _RANDOMS)
def test_beta_dgd_payloads_do_not_depend_on_key_order(obj: Obj, rnd: Random) -> None:
    _check(obj, rnd)


@given(alpha_dcd(), _RANDOMS)
def test_alpha_dcd_payloads_do_not_depend_on_key_order(obj: Obj, rnd: Random) -> None:
    _check(obj, rnd)


@given(beta_dcd(), _RANDOMS)
def test_beta_dcd_payloads_do_not_depend_on_key_order(obj: Obj, rnd: Random) -> None:
    _check(obj, rnd)


@given(alpha_dgdr, _RANDOMS)
def test_alpha_dgdr_payloads_do_not_depend_on_key_order(obj: Obj, rnd: Random) -> None:
    _check(obj, rnd)


@given(beta_dgdr, _RANDOMS)
def test_beta_dgdr_payloads_do_not_depend_on_key_order(obj: Obj, rnd: Random) -> None:
    _check(obj, rnd)


# ------------------------------------------------------------------ Go's order, by example


def _meta(name: str = "g") -> Obj:
    return {"name": name, "namespace": "default"}


def test_dgd_spec_payload_pvcs_and_services_in_go_order() -> None:
    obj = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeployment",
        "metadata": _meta(),
        "spec": {
            "services": {
                "decode": {
                    "extraPodSpec": {"mainContainer": {"image": "i"}},
                    "volumeMounts": [{"mountPoint": "/m", "name": "cache"}],
                    "resources": {"limits": {"gpu": "1"}},
                },
                "Prefill": {
                    "volumeMounts": [{"mountPoint": "/m", "name": "cache"}],
                    "extraPodSpec": {"mainContainer": {"image": "i"}},
                    "resources": {"limits": {"gpu": "1"}},
                },
            },
            "pvcs": [
                {
                    "volumeAccessMode": "ReadWriteMany",
                    "size": "1Gi",
                    "storageClass": "standard",
                    "name": "cache",
                    "create": True,
                }
            ],
        },
    }
    got = convert(obj, BETA)["metadata"]["annotations"]["nvidia.com/dgd-spec"]
    # v1alpha1.DynamoGraphDeploymentSpec: pvcs before services; v1alpha1.PVC: create, name,
    # storageClass, size, volumeAccessMode; services is a map (keys sorted by bytes: "P" < "d");
    # v1alpha1.DynamoComponentDeploymentSharedSpec: resources, volumeMounts, extraPodSpec;
    # v1alpha1.VolumeMount: name, mountPoint.
    assert got == (
        '{"version":1,"spec":{"pvcs":[{"create":true,"name":"cache","storageClass":"standard",'
        '"size":"1Gi","volumeAccessMode":"ReadWriteMany"}],"services":{'
        '"Prefill":{"resources":{"limits":{"gpu":"1"}},"volumeMounts":[{"name":"cache","mountPoint":"/m"}],'
        '"extraPodSpec":{"mainContainer":{}}},'
        '"decode":{"resources":{"limits":{"gpu":"1"}},"volumeMounts":[{"name":"cache","mountPoint":"/m"}],'
        '"extraPodSpec":{"mainContainer":{}}}}}}'
    )


def _alpha_dcd_with_probe(key: str, probe: Obj) -> Obj:
    return {
        "apiVersion": ALPHA,
        "kind": "DynamoComponentDeployment",
        "metadata": _meta(),
        "spec": {key: probe, "extraPodSpec": {"mainContainer": {"image": "i"}}},
    }


def test_dcd_spec_payload_kubernetes_values_in_go_order() -> None:
    probe = {
        "failureThreshold": 3,
        "periodSeconds": 5,
        "timeoutSeconds": 2,
        "httpGet": {"port": 8000, "path": "/h"},
    }
    obj = _alpha_dcd_with_probe("livenessProbe", probe)
    got = convert(obj, BETA)["metadata"]["annotations"]["nvidia.com/dcd-spec"]
    # the envelope: version, spec, rawJSON (a record: path, raw, nil);
    # v1alpha1.DynamoComponentDeploymentSharedSpec: extraPodSpec before livenessProbe;
    # core/v1.Probe: the embedded ProbeHandler's fields (httpGet) first, then timeoutSeconds,
    # periodSeconds, failureThreshold; core/v1.HTTPGetAction: path, port.
    assert got == (
        '{"version":1,"spec":{"extraPodSpec":{"mainContainer":{}},"livenessProbe":{"httpGet":'
        '{"path":"/h","port":8000},"timeoutSeconds":2,"periodSeconds":5,"failureThreshold":3}},'
        '"rawJSON":[{"path":"serviceName","nil":true}]}'
    )


def test_dgd_status_payload_in_go_order() -> None:
    obj = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeployment",
        "metadata": _meta(),
        "spec": {"services": {"b": {}, "A": {}}},
        "status": {
            "services": {
                "b": {"componentNames": ["x", "y"], "componentName": "c", "componentKind": "Deployment"},
                "A": {"componentNames": ["p", "q"], "componentName": "", "componentKind": "Deployment"},
            }
        },
    }
    got = convert(obj, BETA)["metadata"]["annotations"]["nvidia.com/dgd-status"]
    # services is a map (keys sorted); v1alpha1.ServiceReplicaStatus: componentName, componentNames.
    assert got == (
        '{"services":{"A":{"componentName":"","componentNames":["p","q"]},'
        '"b":{"componentName":"c","componentNames":["x","y"]}}}'
    )


def test_dgdr_payloads_in_go_order() -> None:
    obj = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": _meta(),
        "spec": {
            "profilingConfig": {
                "profilerImage": "p",
                "config": {"sweep": {"useAiConfigurator": True, "aicSystem": "h200"}, "hardware": {"x": 1}},
            },
            "backend": "vllm",
            "model": "m",
        },
        "status": {"backend": "vllm", "state": "Pending", "observedGeneration": 2},
    }
    anns = convert(obj, BETA)["metadata"]["annotations"]
    # v1alpha1.DynamoGraphDeploymentRequestSpec: model, backend, profilingConfig; its
    # ProfilingConfigSpec: config, profilerImage; the config remainder is marshalled from a
    # map[string]any (keys sorted).
    assert anns["nvidia.com/dgdr-spec"] == (
        '{"version":1,"spec":{"model":"","backend":"","profilingConfig":{"config":'
        '{"hardware":{"x":1},"sweep":{"aicSystem":"h200","useAiConfigurator":true}},"profilerImage":""}}}'
    )
    # v1alpha1.DynamoGraphDeploymentRequestStatus: state (written: no omitempty), backend.
    assert anns["nvidia.com/dgdr-status"] == '{"state":"","backend":"vllm"}'


# ---------------------------------------------------------------- the upstream bytes themselves

_VECTORS = [
    v
    for name in ("vectors_dgd.jsonl", "vectors_dcd.jsonl", "dgdr_vectors.jsonl", "dgdsa_vectors.jsonl")
    for v in load_vectors(name)
    if v.get("expected") is not None
]


def _cases() -> list[tuple[str, Obj, str, Obj]]:
    out = []
    for v in _VECTORS:
        out.append((v["name"], v["input"], v["desiredAPIVersion"], v["expected"]))
        if v.get("roundtrip"):
            out.append((v["name"] + "-back", v["expected"], v["input"]["apiVersion"], v["input"]))
    return out


_CASES = _cases()


def _is_go_zero(v: Any) -> bool:
    """A value Go writes for a field the typed view does not hold: ``null``, ``""``, ``0``,
    ``false``, ``[]``, or an object of such values (a value-typed struct)."""
    if isinstance(v, dict):
        return all(_is_go_zero(x) for x in v.values())
    if v == "0":  # a resource.Quantity (a struct: omitempty never leaves it out)
        return True
    return v is None or v is False or v == "" or v == [] or (type(v) in (int, float) and v == 0)


def _prune(want: Any, got: Any) -> Any:
    """``want`` (upstream) with the members ``got`` lacks removed; each must be a Go zero."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = {}
        for k, x in want.items():
            if k in got:
                out[k] = _prune(x, got[k])
            else:
                assert _is_go_zero(x), k
        return out
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [_prune(a, b) for a, b in zip(want, got, strict=True)]
    return want


_OWN = {
    "DynamoGraphDeployment": "dgd",
    "DynamoComponentDeployment": "dcd",
    "DynamoGraphDeploymentRequest": "dgdr",
}


def _payload_pairs() -> list[tuple[str, str, str]]:
    pairs = []
    for name, obj, to, expected in _CASES:
        got = _payloads(convert(obj, to))
        want = _payloads(expected)
        own = _OWN.get(obj["kind"])
        for key in sorted(got.keys() & want.keys()):
            if key.startswith(f"nvidia.com/{own}-"):  # (not a user annotation that looks like one)
                pairs.append((f"{name}:{key}", got[key], want[key]))
    return pairs


def test_vector_payloads_are_upstream_bytes() -> None:
    """Every payload the vectors hold is the upstream string byte for byte, or — where Go also
    wrote zero values for fields the typed view does not hold — the upstream string with those
    members taken out (member order, numbers and escapes untouched)."""
    pairs = _payload_pairs()
    exact = 0
    for where, got, want in pairs:
        if got == want:
            exact += 1
            continue
        pruned = _prune(json.loads(want), json.loads(got))
        assert orjson.dumps(pruned).decode() == got, where
    assert len(pairs) >= 150
    assert exact >= 90


def test_dgd_spec_fields_in_go_declaration_order() -> None:
    # v1alpha1.DynamoGraphDeploymentSpec and v1beta1.DynamoGraphDeploymentSpec
    assert [f.name for f in dgd.ALPHA_SPEC.fields] == [
        "providerOverride",
        "annotations",
        "labels",
        "priorityClassName",
        "pvcs",
        "services",
        "envs",
        "backendFramework",
        "restart",
        "topologyConstraint",
        "experimental",
    ]
    assert [f.name for f in dgd.BETA_SPEC.fields] == [
        "providerOverride",
        "annotations",
        "labels",
        "priorityClassName",
        "components",
        "env",
        "backendFramework",
        "restart",
        "topologyConstraint",
        "experimental",
    ]
    spec = {"experimental": {"kvTransferPolicy": {}}, "restart": {"id": "r"}, "pvcs": [{"size": "1Gi"}]}
    assert list(encode(spec, dgd.ALPHA_SPEC)) == ["pvcs", "restart", "experimental"]


def test_payloads_escape_html_as_go_marshal_does() -> None:
    probe = {"exec": {"command": ["sh", "-c", "a && b <x> \u2028\u2029"]}}
    obj = _alpha_dcd_with_probe("readinessProbe", probe)
    got = convert(obj, BETA)["metadata"]["annotations"]["nvidia.com/dcd-spec"]
    # json.Marshal escapes <, >, & and U+2028/U+2029 inside strings
    assert (
        '"readinessProbe":{"exec":{"command":["sh","-c","a \\u0026\\u0026 b \\u003cx\\u003e \\u2028\\u2029"]}}'
        in got
    )
    back = convert(convert(obj, BETA), ALPHA)
    assert back["spec"]["readinessProbe"] == probe
