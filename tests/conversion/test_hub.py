"""The generic hub-and-spoke conversion of one kind (``conversion.hub``)."""

from __future__ import annotations

from typing import Any

import pytest

import kinds
from conversion import dcd, dgd, dgdr, dgdsa
from conversion.errors import ConversionError
from conversion.hub import INTERNAL_ERROR, KindConverter, Spoke, convert

Obj = dict[str, Any]


def _spoke(name: str) -> Spoke:
    """A spoke that records its path through the hub in ``spec.path``."""

    def to_hub(obj: Obj) -> Obj:
        assert obj["apiVersion"] == f"example.com/{name}"
        return {**obj, "apiVersion": "wrong", "spec": {"path": [*obj["spec"]["path"], f"{name}->hub"]}}

    def from_hub(obj: Obj) -> Obj:
        assert obj["apiVersion"] == "example.com/hub"
        assert obj["kind"] == "Thing"
        return {**obj, "spec": {"path": [*obj["spec"]["path"], f"hub->{name}"]}}

    return Spoke(to_hub=to_hub, from_hub=from_hub)


THING = KindConverter(
    kind="Thing", group="example.com", hub="hub", spokes={"a": _spoke("a"), "b": _spoke("b")}
)


def _thing(version: str) -> Obj:
    return {"apiVersion": f"example.com/{version}", "kind": "Thing", "spec": {"path": []}}


@pytest.mark.parametrize(
    ("source", "desired", "path"),
    [
        ("a", "hub", ["a->hub"]),
        ("hub", "b", ["hub->b"]),
        ("a", "b", ["a->hub", "hub->b"]),
        ("b", "a", ["b->hub", "hub->a"]),
    ],
)
def test_spokes_convert_through_the_hub(source: str, desired: str, path: list[str]) -> None:
    src = _thing(source)
    out = convert(THING, src, f"example.com/{desired}")
    assert out == {"apiVersion": f"example.com/{desired}", "kind": "Thing", "spec": {"path": path}}
    assert src == _thing(source)


def test_the_converter_method_is_the_generic_conversion() -> None:
    assert THING.convert(_thing("a"), "example.com/b") == convert(THING, _thing("a"), "example.com/b")


def test_same_version_is_a_deep_copy() -> None:
    src = _thing("b")
    out = convert(THING, src, "example.com/b")
    assert out == src and out is not src and out["spec"] is not src["spec"]


def test_versions_are_the_spokes_then_the_hub() -> None:
    assert THING.api_versions == ("example.com/a", "example.com/b", "example.com/hub")
    with pytest.raises(ConversionError) as info:
        convert(THING, _thing("a"), "example.com/c")
    assert str(info.value) == (
        "unsupported desired apiVersion 'example.com/c' for kind 'Thing'"
        " (supported: example.com/a, example.com/b, example.com/hub)"
    )
    with pytest.raises(ConversionError) as info:
        convert(THING, {**_thing("a"), "kind": "Other"}, "example.com/b")
    assert str(info.value) == "unsupported kind 'Other' for conversion to example.com/b"
    with pytest.raises(ConversionError) as info:
        convert(THING, _thing("c"), "example.com/b")
    assert str(info.value) == (
        "unsupported apiVersion 'example.com/c' for kind Thing"
        " (supported: example.com/a, example.com/b, example.com/hub)"
    )


def test_a_conversion_error_passes_and_anything_else_is_an_internal_error() -> None:
    def refuse(obj: Obj) -> Obj:
        raise ConversionError("no")

    def crash(obj: Obj) -> Obj:
        raise KeyError("x")

    refusing = KindConverter(
        kind="Thing", group="example.com", hub="hub", spokes={"a": Spoke(refuse, refuse)}
    )
    with pytest.raises(ConversionError, match=r"^no$"):
        convert(refusing, _thing("a"), "example.com/hub")
    crashing = KindConverter(kind="Thing", group="example.com", hub="hub", spokes={"a": Spoke(crash, crash)})
    with pytest.raises(ConversionError) as info:
        convert(crashing, _thing("hub"), "example.com/a")
    assert str(info.value) == INTERNAL_ERROR
    assert isinstance(info.value.__context__, KeyError)


def test_every_dynamo_kind_has_a_converter_with_hub_v1beta1() -> None:
    converters = {k.kind: k.converter for k in kinds.REGISTRY if k.converter is not None}
    assert converters == {
        "DynamoGraphDeployment": dgd.CONVERTER,
        "DynamoComponentDeployment": dcd.CONVERTER,
        "DynamoGraphDeploymentRequest": dgdr.CONVERTER,
        "DynamoGraphDeploymentScalingAdapter": dgdsa.CONVERTER,
    }
    for converter in converters.values():
        assert converter.api_versions == ("nvidia.com/v1alpha1", "nvidia.com/v1beta1")


def test_without_managed_fields_leaves_the_rest_and_the_input_alone() -> None:
    from conversion.hub import without_managed_fields

    obj: dict[str, Any] = {
        "kind": "K",
        "metadata": {"name": "a", "managedFields": [{"manager": "m"}], "labels": {"l": "v"}},
        "spec": {"x": 1},
    }
    out = without_managed_fields(obj)
    assert out == {"kind": "K", "metadata": {"name": "a", "labels": {"l": "v"}}, "spec": {"x": 1}}
    assert obj["metadata"]["managedFields"] == [{"manager": "m"}]
    for same in ({"kind": "K"}, {"metadata": None}, {"metadata": {"name": "a"}}):
        assert without_managed_fields(same) is same
