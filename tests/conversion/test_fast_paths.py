"""Cheaper equivalents used on the conversion hot path agree with the reference definitions."""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversion.podtemplate import CONTAINER, RESOURCES, container_is_empty, merge_override
from conversion.v1alpha1.component import schemas, template
from conversion.v1alpha1.component.from_hub import from_hub
from conversion.v1alpha1.component.to_hub import to_hub
from domain.constants import MAIN_CONTAINER as MAIN
from gocompat import view as goview
from gocompat.jsonvalue import deep_copy
from tests.conversion.strategies import alpha_component, beta_component, container

J = dict[str, Any]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "a", "1Gi"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "limits", "requests", "name"]), inner, max_size=3)
    ),
    max_leaves=12,
)
OBJECTS = st.dictionaries(st.sampled_from(["a", "b", "limits", "requests", "name"]), JSON, max_size=4)
LAW = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@LAW
@given(container(st.sampled_from(["main", "", "side"])))
def test_typed_view_is_idempotent_and_semantically_equal(c: J) -> None:
    typed = goview.view(CONTAINER, c)
    assert goview.view(CONTAINER, typed) == typed
    assert goview.equal(CONTAINER, c, typed)
    assert goview.is_zero(CONTAINER, typed, skip="name") == container_is_empty(c)


_LIST = st.sampled_from([{}, {"cpu": "0"}, {"cpu": "1"}])
RESOURCE_FIELDS = st.fixed_dictionaries(
    {}, optional={"limits": _LIST, "requests": _LIST, "claims": st.sampled_from([[], [{"name": "gpu"}]])}
)


@LAW
@given(RESOURCE_FIELDS, st.sampled_from(["limits", "claims", "zz"]))
def test_is_zero_ignores_only_the_skipped_field(d: J, skip: str) -> None:
    rest = {k: v for k, v in d.items() if k != skip}
    assert goview.is_zero(RESOURCES, d, skip=skip) == goview.is_zero(RESOURCES, rest)
    assert goview.is_zero(RESOURCES, d) == all(not v for v in d.values())


@LAW
@given(OBJECTS, OBJECTS)
def test_copy_free_merge_agrees_and_leaves_inputs_alone(dst: J, src: J) -> None:
    reference = deep_copy(dst)
    merge_override(reference, deep_copy(src))
    dst_before, src_before = orjson.dumps(dst), orjson.dumps(src)
    nested_before = {k: orjson.dumps(v) for k, v in dst.items()}
    nested = dict(dst)
    merged = dict(dst)
    merge_override(merged, src, copy=False)
    assert orjson.dumps(merged) == orjson.dumps(reference)
    assert orjson.dumps(src) == src_before
    assert orjson.dumps(dst) == dst_before
    # Nested destination objects are replaced, never edited in place.
    assert {k: orjson.dumps(v) for k, v in nested.items()} == nested_before


def test_copy_free_merge_of_resource_maps_and_probes() -> None:
    probe = {"httpGet": {"path": "/a", "port": 1}}
    limits = {"cpu": "1"}
    dst: J = {"resources": {"limits": limits}, "readinessProbe": probe}
    src: J = {
        "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "0"}},
        "readinessProbe": {"httpGet": {"port": 2}, "periodSeconds": 0},
    }
    merge_override(dst, src, copy=False)
    assert dst == {
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "0"}},
        "readinessProbe": {"httpGet": {"path": "/a", "port": 2}},
    }
    assert limits == {"cpu": "1"}
    assert probe == {"httpGet": {"path": "/a", "port": 1}}


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(alpha_component(), st.one_of(st.none(), container(st.just("ignored"))))
def test_semantic_main_matches_the_projection_on_dedicated_fields(svc: J, main: J | None) -> None:
    if main is not None:
        main.pop("name")
        svc.setdefault("extraPodSpec", {})["mainContainer"] = main
    typed = schemas.canon_alpha_shared(svc)
    before = orjson.dumps(typed)
    tpl = template.build_pod_template(copy.deepcopy(typed), True)
    assert tpl is not None
    full = next(c for c in tpl["spec"]["containers"] if c["name"] == MAIN)
    fast = template.semantic_main(typed)
    for k in template._DEDICATED_MAIN_FIELDS:
        assert fast.get(k) == full.get(k), k
    assert orjson.dumps(typed) == before
    projected = template.build_pod_template(typed, True, copy_values=False)
    assert orjson.dumps(projected) == orjson.dumps(tpl)
    assert orjson.dumps(typed) == before


def test_container_is_empty_follows_semantic_absence() -> None:
    assert container_is_empty({"name": "x", "env": [], "resources": {"limits": {}}, "image": ""})
    assert not container_is_empty({"name": "x", "securityContext": {"privileged": False}})
    assert not container_is_empty({"resources": {"limits": {"cpu": "0"}}})


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    alpha_component(),
    st.one_of(st.none(), container(st.just("ignored"))),
    st.sets(st.sampled_from(template._DEDICATED_MAIN_FIELDS)),
)
def test_semantic_main_of_some_fields_agrees_with_all_fields(svc: J, main: J | None, some: set[str]) -> None:
    if main is not None:
        main.pop("name")
        svc.setdefault("extraPodSpec", {})["mainContainer"] = main
    typed = schemas.canon_alpha_shared(svc)
    keys = tuple(k for k in template._DEDICATED_MAIN_FIELDS if k in some)
    full = template.semantic_main(typed)
    part = template.semantic_main(typed, keys)
    assert set(part) <= {"name", *keys}
    for k in keys:
        assert part.get(k) == full.get(k), k


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(beta_component("w"), st.one_of(st.none(), alpha_component("w")))
def test_component_from_hub_only_reads_its_typed_views(comp: J, saved: J | None) -> None:
    # The decomposition shares values with the typed view of the β component instead of copying
    # its pod template: neither that view nor the spoke save may change.
    src = schemas.canon_beta_shared(comp)
    restored = None if saved is None else schemas.canon_alpha_shared(saved)
    before = orjson.dumps([src, restored])
    from_hub(src, restored, {"name": "w"})
    assert orjson.dumps([src, restored]) == before


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(alpha_component("w"), st.one_of(st.none(), beta_component("w")), st.booleans())
def test_component_to_hub_only_reads_its_typed_views(svc: J, saved: J | None, origin: bool) -> None:
    # Without a hub save to lay over it, the projected pod template shares values with the typed
    # view of the α service instead of copying them: neither view may change.
    src = schemas.canon_alpha_shared(svc)
    restored = None if saved is None else schemas.canon_beta_shared(saved)
    before = orjson.dumps([src, restored])
    to_hub(src, restored, {}, origin, restored is not None and restored.get("podTemplate") is not None)
    assert orjson.dumps([src, restored]) == before
