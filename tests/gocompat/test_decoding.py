"""The schema vocabulary's typed-view decoder keeps Go's decoding rules and names the field."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gocompat.decoding import decode, decode_struct
from gocompat.errors import GoTypeError
from gocompat.typed import Field, ListOf, MapOf, Ptr, Struct

J = dict[str, Any]


INNER = Struct((Field("size", "quantity"), Field("flag", "bool", False)))
SCHEMA = Struct(
    (
        Field("name", "string"),
        Field("count", Ptr("int")),
        Field("n", "int"),
        Field("ratio", "float"),
        Field("inner", Ptr(INNER)),
        Field("items", ListOf(INNER)),
        Field("byName", MapOf("string")),
        Field("labels", "stringmap"),
        Field("raw", "any"),
    )
)


def test_compiled_decoder_keeps_go_decoding_rules() -> None:
    got = decode_struct(
        {
            "NAME": "a",
            "name": "b",
            "count": 0,
            "n": 0,
            "ratio": 0.0,
            "inner": {"size": " 1000m ", "flag": False},
            "items": [None, {"Size": 2}],
            "byname": {"x": None, "y": "z"},
            "labels": {"k": None},
            "raw": 0,
            "unknown": 1,
        },
        SCHEMA,
    )
    assert orjson.dumps(got) == orjson.dumps(
        {
            "name": "b",
            "count": 0,
            "inner": {"size": "1", "flag": False},
            "items": [None, {"size": "2"}],
            "byName": {"x": None, "y": "z"},
            "labels": {"k": ""},
        }
    )
    # null removes an earlier case-folded match and the later key goes last.
    assert list(decode_struct({"name": "a", "n": 1, "Name": None, "NAME": "c"}, SCHEMA)) == ["n", "name"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"name": 1}, "json: cannot unmarshal number into Go struct field name of type string"),
        ({"n": True}, "json: cannot unmarshal bool into Go struct field n of type int"),
        ({"ratio": "1"}, "json: cannot unmarshal string into Go struct field ratio of type float64"),
        ({"inner": []}, "json: cannot unmarshal array into Go struct field inner of type struct"),
        # Quantity.UnmarshalJSON's own error, returned without the field's path.
        (
            {"inner": {"size": "x"}},
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ({"inner": {"size": "1K"}}, "unable to parse quantity's suffix"),
        (
            {"inner": {"size": True}},
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ({"items": [{"flag": 1}]}, "json: cannot unmarshal number into Go struct field flag of type bool"),
        ({"byName": {"a": 1}}, "json: cannot unmarshal number into Go struct field byName of type string"),
        (
            {"labels": []},
            "json: cannot unmarshal array into Go struct field labels of type map[string]string",
        ),
    ],
)
def test_compiled_decoder_errors_name_the_field(value: J, message: str) -> None:
    with pytest.raises(GoTypeError) as info:
        decode(value, SCHEMA, "spec")
    assert str(info.value) == message


def test_decode_reports_the_given_path_for_a_top_level_mismatch() -> None:
    with pytest.raises(GoTypeError) as info:
        decode("x", SCHEMA, "spec")
    assert str(info.value) == "json: cannot unmarshal string into Go struct field spec of type struct"
