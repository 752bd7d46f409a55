"""gocompat.marshal writes what the operator's encoder writes for a Kubernetes-typed value: the
fields without omitempty at their zero values, empty omitempty structs left out, quantities and
durations canonical (figures from the pinned operator's answers)."""

from __future__ import annotations

import orjson
import pytest

from gocompat.errors import GoTypeError
from gocompat.jsonvalue import go_float_tree
from gocompat.marshal import marshal

EPP = "*gie/apix/config/v1alpha1.EndpointPickerConfig"


def test_epp_plugins_carry_their_zero_values() -> None:
    config = {
        "plugins": [
            {"type": "disagg-profile-handler"},
            {"name": "f", "type": "label-filter", "parameters": {"b": 1, "a": 2}},
        ],
        "schedulingProfiles": [
            {"name": "decode", "plugins": [{"pluginRef": "f"}, {"pluginRef": "f", "weight": 1}]}
        ],
    }
    assert marshal(EPP, config) == {
        "plugins": [
            {"name": "", "type": "disagg-profile-handler", "parameters": None},
            {"name": "f", "type": "label-filter", "parameters": {"b": 1, "a": 2}},
        ],
        "schedulingProfiles": [
            {
                "name": "decode",
                "plugins": [{"pluginRef": "f", "weight": None}, {"pluginRef": "f", "weight": 1}],
            }
        ],
    }


def test_an_empty_pod_template_gets_its_spec() -> None:
    assert marshal("*core/v1.PodTemplateSpec", {}) == {"spec": {"containers": None}}


def test_quantities_are_canonical_and_empty_structs_left_out() -> None:
    template = {
        "spec": {
            "containers": [
                {"name": "m", "resources": {"limits": {"memory": 0, "cpu": "1.5", "x": "1.5Gi"}}},
                {"name": "n"},
            ]
        }
    }
    assert marshal("*core/v1.PodTemplateSpec", template) == {
        "spec": {
            "containers": [
                {"name": "m", "resources": {"limits": {"cpu": "1500m", "memory": "0", "x": "1536Mi"}}},
                {"name": "n"},
            ]
        }
    }


def test_a_value_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(GoTypeError):
        marshal(EPP, {"plugins": "x"})


@pytest.mark.parametrize(
    ("number", "written"),
    [
        (2**63, 9223372036854776000),
        (-(2**63), -9.223372036854776e18),  # -9223372036854776000 is past int64: a float
        (2**64 + 1, 1.8446744073709552e19),
        (2**53 + 1, 9007199254740992),
        (2**53, 9007199254740992),
        (12345, 12345),
        (1e20, 1e20),  # past uint64: a float
        (2.5, 2.5),
    ],
)
def test_a_float64_is_written_with_gos_shortest_digits(number: float, written: float) -> None:
    out = go_float_tree({"n": number})["n"]
    assert out == written and type(out) is type(written)
    orjson.dumps(out)  # the encoder writes it


def test_what_it_writes_it_writes_again_unchanged() -> None:
    from gocompat.marshal import marshal_view

    for expr, value in ((EPP, {"plugins": [{"type": "t"}]}), ("*core/v1.PodTemplateSpec", {})):
        once = marshal(expr, value)
        assert marshal(expr, once) == once
        assert marshal_view(expr, once) == once  # nulls it wrote (containers: null) included
