from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.admission import GVK, gvk_mismatch_message
from gocompat.fielderrors import (
    GoJSON,
    Path,
    aggregate_message,
    duplicate,
    forbidden,
    invalid,
    invalid_decision,
    not_supported,
    render_value,
    required,
    to_decision,
)


def test_path_rendering() -> None:
    p = Path("spec", "components").index(0).child("podTemplate", "metadata").child("annotations")
    assert str(p.key("dynamo.nvidia.com/gpu-power-limit")) == (
        "spec.components[0].podTemplate.metadata.annotations[dynamo.nvidia.com/gpu-power-limit]"
    )
    assert str(Path("spec").child("services").key("worker")) == "spec.services[worker]"
    assert str(Path("metadata", "annotations").key("a")) == "metadata.annotations[a]"
    assert str(Path().child("a")) == "a"
    assert Path("a").child("b") == Path("a", "b")
    assert len({Path("a", "b"), Path("a").child("b")}) == 1
    # A child's text is joined on first use, and its parent's with it; the order of use does not matter.
    root = Path()
    deep = root.index(2).child("x", "y").key("k")
    assert repr(deep) == "Path('[2].x.y[k]')" and str(root.index(2)) == "[2]"
    parent = Path("a").child("b")
    leaf = parent.child("c")
    assert str(leaf) == "a.b.c" and str(parent) == "a.b" and hash(leaf) == hash(Path("a", "b", "c"))


@pytest.mark.parametrize(
    ("err", "text"),
    [
        (
            required("spec.components", "must have at least one component"),
            "spec.components: Required value: must have at least one component",
        ),
        (required("spec.x"), "spec.x: Required value"),
        (forbidden("spec.y", "nope"), "spec.y: Forbidden: nope"),
        (invalid("a", "v1", "must be valid semver"), 'a: Invalid value: "v1": must be valid semver'),
        (invalid("a", 2, "x"), "a: Invalid value: 2: x"),
        (invalid("a", -1, "x"), "a: Invalid value: -1: x"),
        (invalid("a", 1.2, "x"), "a: Invalid value: 1.2: x"),
        (invalid("a", True, "x"), "a: Invalid value: true: x"),
        (invalid("a", None, "x"), "a: Invalid value: null: x"),
        (invalid("a", {"nodeCount": 2}, "x"), 'a: Invalid value: {"nodeCount":2}: x'),
        (
            invalid("a", ["frontend", "worker", "worker"], "must be unique"),
            'a: Invalid value: ["frontend","worker","worker"]: must be unique',
        ),
        (invalid("a", GoJSON("InterPod"), "x"), 'a: Invalid value: "InterPod": x'),
        (invalid("a", 'q"t', ""), 'a: Invalid value: "q\\"t"'),
        (
            not_supported("m", "x", ["RollingRecreate", "OnDelete"]),
            'm: Unsupported value: "x": supported values: "RollingRecreate", "OnDelete"',
        ),
        (duplicate("d", "main"), 'd: Duplicate value: "main"'),
    ],
)
def test_error_rendering(err: object, text: str) -> None:
    assert str(err) == text


def test_causes_and_invalid_decision() -> None:
    e1 = required("spec.components", "must have at least one component")
    e2 = forbidden("spec.priorityClassName", "x")
    d = invalid_decision("DynamoGraphDeployment", "g", [e1, e2, e1], ["w"])
    assert not d.allowed
    assert d.warnings == ["w"]
    assert d.status["code"] == 422
    assert d.status["reason"] == "Invalid"
    assert d.status["status"] == "Failure"
    assert d.message == (
        'DynamoGraphDeployment.nvidia.com "g" is invalid: '
        "[spec.components: Required value: must have at least one component, spec.priorityClassName: Forbidden: x]"
    )
    details = d.status["details"]
    assert details["group"] == "nvidia.com" and details["kind"] == "DynamoGraphDeployment"
    assert details["name"] == "g"
    assert len(details["causes"]) == 3
    assert details["causes"][0] == {
        "reason": "FieldValueRequired",
        "message": "Required value: must have at least one component",
        "field": "spec.components",
    }
    single = invalid_decision("DynamoComponentDeployment", "c", [e1, e1])
    assert single.message == (
        'DynamoComponentDeployment.nvidia.com "c" is invalid: '
        "spec.components: Required value: must have at least one component"
    )
    assert to_decision("X", "n", [], ["w"]).allowed
    assert to_decision("X", "n", [], ["w"]).warnings == ["w"]


def test_gvk_message() -> None:
    exp = GVK("nvidia.com", "v1beta1", "DynamoGraphDeployment")
    got = GVK("nvidia.com", "v1alpha1", "DynamoGraphDeployment")
    assert gvk_mismatch_message(exp, got) == (
        "admission requires nvidia.com/v1beta1, Kind=DynamoGraphDeployment, got nvidia.com/v1alpha1, "
        "Kind=DynamoGraphDeployment; check webhook and CRD conversion configuration"
    )


@pytest.mark.parametrize(
    ("v", "r"),
    [
        (1e21, "1e+21"),
        (1e20, "1e+20"),  # %v is fmt's shortest %g: exponent form from 1e+06 (tests/fixtures/gotext)
        (1e6, "1e+06"),
        (999999.0, "999999"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (123.456, "123.456"),
        (-2.5, "-2.5"),
        (0.0, "0"),
    ],
)
def test_go_float(v: float, r: str) -> None:
    assert render_value(v) == r


@given(st.lists(st.text(min_size=1, max_size=3), min_size=1, max_size=6))
def test_aggregate_dedup(msgs: list[str]) -> None:
    out = aggregate_message(msgs)
    distinct = list(dict.fromkeys(msgs))
    if len(distinct) == 1:
        assert out == distinct[0]
    else:
        assert out == "[" + ", ".join(distinct) + "]"
