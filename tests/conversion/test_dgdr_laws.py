"""Hypothesis laws for DGDR conversion on generated objects (:mod:`tests.conversion.dgdr_objects`):
α→β→α and β→α→β identities, inputs never mutated, deterministic output; the stale-payload law is
in :mod:`tests.conversion.test_dgdr_stale_payloads`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

from hypothesis import given

from conversion.v1alpha1 import dgdr
from kinds import convert
from tests.conversion.dgdr_objects import ALPHA, BETA, Obj, alpha_objects, assert_same, beta_objects, n

# ----------------------------------------------------------------------- identities
# Each generated object is checked against every law that needs no mutation: the identity,
# purity (input untouched, output sharing nothing with it), determinism and the dispatcher.


def _check_pure_and_deterministic(fn: Callable[[Obj], Obj], obj: Obj) -> Obj:
    before = copy.deepcopy(obj)
    first = fn(obj)
    assert obj == before
    probe = fn(obj)
    assert json.dumps(first) == json.dumps(probe)
    # the output shares nothing with the input: mutating it leaves the input intact
    probe["metadata"].setdefault("labels", {})["touched"] = "yes"
    for part in ("spec", "status"):
        for value in probe.get(part, {}).values():
            if isinstance(value, dict):
                value["touched"] = True
            elif isinstance(value, list):
                value.append("touched")
    assert obj == before
    return first


@given(alpha_objects)
def test_alpha_beta_alpha_identity(obj: Obj) -> None:
    beta = _check_pure_and_deterministic(dgdr.to_hub, obj)
    back = _check_pure_and_deterministic(dgdr.from_hub, beta)
    assert_same(n(back), n(obj))
    # the dispatcher routes to the same functions
    assert convert(obj, BETA) == beta
    assert convert(beta, ALPHA) == back


@given(beta_objects)
def test_beta_alpha_beta_identity(obj: Obj) -> None:
    alpha = _check_pure_and_deterministic(dgdr.from_hub, obj)
    back = _check_pure_and_deterministic(dgdr.to_hub, alpha)
    assert_same(n(back), n(obj))
    assert convert(obj, ALPHA) == alpha
    assert convert(alpha, BETA) == back
