"""A component an UPDATE leaves as it was takes the short path of
``shared.component_update_errors``, which must answer exactly as comparing every field does
(``shared.compared_update_errors``), for every combination of the rule switches."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from pathlib import Path as FsPath
from typing import Any

import pytest
import yaml
from hypothesis import given, settings

from gocompat.fielderrors import Path
from kinds import convert
from tests.conversion.strategies import beta_component
from tests.conversion.support import load_vectors
from validation import shared

J = dict[str, Any]
ROOT = FsPath(__file__).resolve().parent.parent.parent
BETA = "nvidia.com/v1beta1"
SWITCHES = list(
    itertools.product(
        [True, False],
        ["DynamoGraphDeployment", "DynamoComponentDeployment"],
        [True, False],
        [True, False],
        [True, False],
    )
)


def _answers(new: J, old: J) -> Iterator[tuple[list[str], list[str]]]:
    for may_scale, owner, gms, ratchet, missing in SWITCHES:
        kwargs: dict[str, Any] = {
            "can_modify_replicas": may_scale,
            "owner_kind": owner,
            "validate_gms_new_state": gms,
            "runtime_version_ratchet": ratchet,
            "allow_missing_override": missing,
        }
        path = Path("spec").child("components").index(0)
        short = shared.component_update_errors(new, old, path, **kwargs)
        full = shared.compared_update_errors(new, old, path, **kwargs)
        yield [repr(e) for e in short], [repr(e) for e in full]


def assert_same(component: J) -> None:
    for short, full in _answers(component, copy.deepcopy(component)):
        assert short == full


def _hub_components(obj: Any) -> Iterator[J]:
    """The components of ``obj`` (a DGD's, a DCD's spec) in the hub version."""
    if not isinstance(obj, dict) or not str(obj.get("apiVersion", "")).startswith("nvidia.com/"):
        return
    if obj.get("kind") not in ("DynamoGraphDeployment", "DynamoComponentDeployment"):
        return
    try:
        hub = convert(obj, BETA)
    except Exception:
        return
    spec = hub.get("spec")
    if not isinstance(spec, dict):
        return
    if hub["kind"] == "DynamoComponentDeployment":
        yield spec
        return
    for c in spec.get("components") or []:
        if isinstance(c, dict):
            yield c


def _walk(x: Any) -> Iterator[Any]:
    if isinstance(x, dict):
        yield x
        for v in x.values():
            yield from _walk(v)
    elif isinstance(x, list):
        for v in x:
            yield from _walk(v)


def _corpus() -> list[J]:
    found: list[J] = []
    for name in ("vectors_dgd.jsonl", "vectors_dcd.jsonl"):
        for obj in _walk(load_vectors(name)):
            found.extend(_hub_components(obj))
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.yaml")):
        try:
            docs = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:
            continue
        for doc in docs:
            found.extend(_hub_components(doc))
    return found


CORPUS = _corpus()


def test_the_corpus_has_components_of_every_shape() -> None:
    assert len(CORPUS) > 100
    assert any((c.get("experimental") or {}).get("gpuMemoryService") for c in CORPUS)
    assert any(c.get("multinode") for c in CORPUS)
    assert any(c.get("providerOverride") for c in CORPUS)


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_corpus_component(index: int) -> None:
    assert_same(CORPUS[index])


@settings(max_examples=150, deadline=None)
@given(beta_component("worker"))
def test_generated_component(component: J) -> None:
    assert_same(component)


GMS_WORKER: J = {
    "name": "worker",
    "type": "worker",
    "experimental": {"gpuMemoryService": {"enabled": True, "mode": "IntraPod"}},
    "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:latest"}]}},
}


def test_an_unchanged_invalid_gpu_memory_service_is_still_reported() -> None:
    # No GPU in the main container: the new-state check refuses it, changed or not.
    answers = list(_answers(GMS_WORKER, copy.deepcopy(GMS_WORKER)))
    assert any(short for short, _ in answers)
    assert all(short == full for short, full in answers)


@pytest.mark.parametrize("old_value", [1.0, True])
@pytest.mark.parametrize(
    "field",
    [
        ("replicas",),
        ("experimental", "grove", "forceScalingGroup"),  # 1 and true: only true forces the group
    ],
)
def test_equal_values_of_other_json_types_are_compared(field: tuple[str, ...], old_value: Any) -> None:
    """``1`` and ``1.0`` / ``true`` are equal to Python but not the same JSON: compared in full."""

    def component(value: Any) -> J:
        c: J = {"name": "worker", "scalingAdapter": {}}
        leaf = c
        for key in field[:-1]:
            leaf = leaf.setdefault(key, {})
        leaf[field[-1]] = value
        return c

    new, old = component(1), component(old_value)
    assert new == old
    answers = list(_answers(new, old))
    assert all(short == full for short, full in answers)
    if field[0] == "experimental" and old_value is True:
        assert all(short for short, _ in answers)  # the toggle is refused
