"""Round-trip laws for DGD and DCD (hypothesis), modelled on upstream's round-trip fuzzers."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from app.review.compare import diff_paths, normalize
from conversion.v1alpha1 import dcd, dgd
from gocompat.decoding import decode
from gocompat.encoding import encode
from kinds import convert
from tests.conversion.strategies import ALPHA, BETA, alpha_dcd, alpha_dgd, beta_dcd, beta_dgd

J = dict[str, Any]
PAYLOADS = ("nvidia.com/dgd-spec", "nvidia.com/dgd-status", "nvidia.com/dcd-spec", "nvidia.com/dcd-status")
SPECS = {
    ("DynamoGraphDeployment", ALPHA): dgd.ALPHA_SPEC,
    ("DynamoGraphDeployment", BETA): dgd.BETA_SPEC,
    ("DynamoComponentDeployment", ALPHA): dcd.ALPHA_SPEC,
    ("DynamoComponentDeployment", BETA): dcd.BETA_SPEC,
}


def _typed(obj: J) -> J:
    """The object as the Go types hold it: its spec decoded and encoded again, so that Go zero
    values the generators add (``readOnly: false``, ``envs: []``, ``claims: []``) compare as
    Go writes them; pointers to empty structs (``affinity: {}``) stay."""
    schema = SPECS[(obj["kind"], obj["apiVersion"])]
    out = copy.deepcopy(obj)
    if isinstance(out.get("spec"), dict):
        out["spec"] = encode(decode(out["spec"], schema), schema)
    return out


def _cache_mount_first(obj: J) -> J:
    # Upstream quirk: the position of the compilation-cache mount among the β main
    # container's volumeMounts is not kept (β→α projects it first; α→β only restores
    # hub-only mount fields, not their order). Compare with that mount moved first.
    if obj.get("apiVersion") != BETA:
        return obj
    out = copy.deepcopy(obj)
    spec = out.get("spec") or {}
    comps = spec.get("components") if out["kind"] == "DynamoGraphDeployment" else [spec]
    for c in comps or ():
        cc = c.get("compilationCache")
        containers = ((c.get("podTemplate") or {}).get("spec") or {}).get("containers") or []
        main = next((x for x in containers if x.get("name") == "main"), None)
        if cc is None or main is None or not main.get("volumeMounts"):
            continue
        key = (cc.get("pvcName", ""), cc.get("mountPath", ""))
        main["volumeMounts"].sort(key=lambda m: (m.get("name", ""), m.get("mountPath", "")) != key)
    return out


def _same(a: J, b: J) -> list[str]:
    return diff_paths(normalize(_cache_mount_first(a)), normalize(_cache_mount_first(_typed(b))))


def _without_payloads(obj: J) -> J:
    out = copy.deepcopy(obj)
    anns = (out.get("metadata") or {}).get("annotations")
    if isinstance(anns, dict):
        for k in PAYLOADS:
            anns.pop(k, None)
        if not anns:
            del out["metadata"]["annotations"]
    return out


# Each example is a whole multi-component object built from ~100 draws (≈50-90 ms to
# generate, several conversions per example), so these properties run a third of the
# profile's example count: 100 in CI, ~1660 with --hypothesis-profile=deep.
LAW = settings(max_examples=max(20, settings.default.max_examples // 3))

ALPHAS = st.one_of(alpha_dgd(), alpha_dcd())
BETAS = st.one_of(beta_dgd(), beta_dcd())


@LAW
@given(ALPHAS)
def test_alpha_beta_alpha_is_identity(obj: J) -> None:
    beta = convert(obj, BETA)
    back = convert(beta, ALPHA)
    # Private payloads are bookkeeping: a β→α conversion may add a hub-origin marker.
    assert _same(_without_payloads(back), obj) == []


@LAW
@given(BETAS)
def test_beta_alpha_beta_is_identity(obj: J) -> None:
    alpha = convert(obj, ALPHA)
    back = convert(alpha, BETA)
    assert _same(_without_payloads(back), obj) == []


@LAW
@given(st.one_of(ALPHAS, BETAS))
def test_source_is_never_mutated_and_output_is_deterministic(obj: J) -> None:
    before = orjson.dumps(obj)
    target = BETA if obj["apiVersion"] == ALPHA else ALPHA
    first = convert(obj, target)
    assert orjson.dumps(obj) == before
    second = convert(obj, target)
    assert orjson.dumps(first, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        second, option=orjson.OPT_SORT_KEYS
    )
    # The result shares no mutable state with the source.
    first.setdefault("metadata", {})["name"] = "changed"
    assert orjson.dumps(obj) == before


def _mutate_beta(obj: J, data: st.DataObject) -> J:
    out = copy.deepcopy(obj)
    spec = out["spec"]
    if out["kind"] == "DynamoGraphDeployment":
        comps = spec["components"]
        choice = data.draw(st.sampled_from(["replicas", "rename", "drop", "add", "env", "image", "type"]))
        i = data.draw(st.integers(0, len(comps) - 1))
        target = comps[i]
    else:
        choice = data.draw(st.sampled_from(["replicas", "env", "image", "type"]))
        target = spec
    if choice == "replicas":
        target["replicas"] = data.draw(st.integers(5, 9))
    elif choice == "rename":
        target["name"] = target["name"] + "-renamed"
    elif choice == "drop":
        del comps[i]
        if not comps:
            del spec["components"]
    elif choice == "add":
        comps.append(
            {
                "name": "zz-new",
                "type": "worker",
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "new:1"}]}},
            }
        )
    elif choice in ("env", "image"):
        tpl = target.setdefault("podTemplate", {})
        containers = tpl.setdefault("spec", {}).setdefault("containers", [])
        main = next((c for c in containers if c.get("name") == "main"), None)
        if main is None:
            main = {"name": "main"}
            containers.insert(0, main)
        if choice == "env":
            main["env"] = [{"name": "MUTATED", "value": "1"}]
        else:
            main["image"] = "mutated:9"
    else:
        target["type"] = data.draw(st.sampled_from(["frontend", "planner", "epp"]))
    return out


@LAW
@given(ALPHAS, st.data())
def test_stale_payload_never_overrides_a_live_beta_edit(obj: J, data: st.DataObject) -> None:
    beta = convert(obj, BETA)
    edited = _mutate_beta(beta, data)
    alpha = convert(edited, ALPHA)
    again = convert(alpha, BETA)
    assert _same(_without_payloads(again), _without_payloads(edited)) == []


def _mutate_alpha(obj: J, data: st.DataObject) -> J:
    out = copy.deepcopy(obj)
    spec = out.setdefault("spec", {})
    if out["kind"] == "DynamoGraphDeployment":
        services = spec.setdefault("services", {})
        names = sorted(services)
        choice = data.draw(st.sampled_from(["replicas", "rename", "drop", "add", "envs", "image"]))
        if not names:
            choice = "add"
        name = data.draw(st.sampled_from(names)) if names else ""
        target = services.get(name) if name else None
        if target is None and choice not in ("add", "drop", "rename"):
            choice = "add"
    else:
        choice = data.draw(st.sampled_from(["replicas", "envs", "image"]))
        target = spec
    if choice == "replicas":
        assert target is not None
        target["replicas"] = 7
    elif choice == "rename":
        services[name + "-renamed"] = services.pop(name)
    elif choice == "drop":
        del services[name]
        if not services:
            del spec["services"]
    elif choice == "add":
        services["zz-new"] = {"componentType": "worker", "envs": [{"name": "NEW", "value": "1"}]}
    elif choice == "envs":
        assert target is not None
        target["envs"] = [{"name": "MUTATED", "value": "1"}]
        eps = target.get("extraPodSpec") or {}
        mc = eps.get("mainContainer")
        if isinstance(mc, dict):
            mc.pop("env", None)
    else:
        assert target is not None
        eps = target.setdefault("extraPodSpec", {})
        mc = eps.get("mainContainer")
        if not isinstance(mc, dict):
            mc = {}
            eps["mainContainer"] = mc
        mc["image"] = "mutated:9"
    return out


@LAW
@given(BETAS, st.data())
def test_stale_payload_never_overrides_a_live_alpha_edit(obj: J, data: st.DataObject) -> None:
    alpha = convert(obj, ALPHA)
    edited = _mutate_alpha(alpha, data)
    beta = convert(edited, BETA)
    again = convert(beta, ALPHA)
    assert _same(_without_payloads(again), _without_payloads(edited)) == []
