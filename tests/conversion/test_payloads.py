"""Payload annotations: envelope/legacy decoding, type mismatches, scrubbing."""

from __future__ import annotations

import base64

import orjson
import pytest

from conversion.errors import ConversionError
from conversion.payloads import (
    delete_annotation,
    read_spec_payload,
    read_status_payload,
    scrub,
    write_spec_payload,
)
from gocompat.decoding import decode
from gocompat.typed import Field, ListOf, MapOf, Ptr, Struct

ITEM = Struct((Field("name", "string"), Field("size", "quantity"), Field("create", Ptr("bool"))))
SPEC = Struct(
    (
        Field("pvcs", ListOf(ITEM)),
        Field("services", MapOf(Ptr(Struct((Field("serviceName", "string"),))))),
        Field("replicas", Ptr("int")),
    )
)


def test_envelope_round_trip() -> None:
    raw = write_spec_payload({"pvcs": [{"name": "m", "size": "10Gi"}]})
    assert orjson.loads(raw) == {"version": 1, "spec": {"pvcs": [{"name": "m", "size": "10Gi"}]}}
    assert read_spec_payload(raw, SPEC) == ({"pvcs": [{"name": "m", "size": "10Gi"}]}, [])


def test_records_written_only_when_present() -> None:
    raw = write_spec_payload({}, [{"path": "serviceName", "nil": True}])
    assert orjson.loads(raw) == {"version": 1, "spec": {}, "rawJSON": [{"path": "serviceName", "nil": True}]}
    assert read_spec_payload(raw, SPEC) == ({}, [{"path": "serviceName", "nil": True}])


def test_raw_record_is_base64() -> None:
    raw = orjson.dumps(
        {"version": 1, "spec": {}, "rawJSON": [{"path": "p", "raw": base64.b64encode(b"{x").decode()}]}
    ).decode()
    assert read_spec_payload(raw, SPEC) == ({}, [{"path": "p", "raw": b"{x"}])


def test_legacy_form_is_the_spec() -> None:
    assert read_spec_payload('{"replicas":3}', SPEC) == ({"replicas": 3}, [])


@pytest.mark.parametrize("raw", [None, "", "not json", "[1]", '"s"', "3"])
def test_absent_payloads(raw: str | None) -> None:
    assert read_spec_payload(raw, SPEC) is None


def test_null_is_present_and_empty() -> None:
    assert read_spec_payload("null", SPEC) == ({}, [])


@pytest.mark.parametrize(
    "raw",
    [
        '{"version":1,"spec":{"replicas":"3"}}',
        '{"version":1,"spec":{"pvcs":{}}}',
        '{"version":1,"spec":{"pvcs":[{"size":"abc"}]}}',
        '{"version":1,"spec":[]}',
        '{"version":"1","spec":{}}',
        '{"replicas":1.5}',
    ],
)
def test_any_type_mismatch_makes_payload_absent(raw: str) -> None:
    assert read_spec_payload(raw, SPEC) is None


def test_keys_match_case_insensitively_and_unknown_keys_are_ignored() -> None:
    got = read_spec_payload('{"version":1,"spec":{"Replicas":2,"bogus":{"x":1}}}', SPEC)
    assert got == ({"replicas": 2}, [])


def test_null_fields_and_null_map_entries() -> None:
    got = read_spec_payload('{"version":1,"spec":{"replicas":null,"services":{"a":null}}}', SPEC)
    assert got == ({"services": {"a": None}}, [])


def test_decode_drops_omitempty_zero_values_and_canonicalises() -> None:
    assert decode({"name": "", "size": "1000m", "create": False}, ITEM) == {"size": "1", "create": False}
    assert decode({"pvcs": [], "services": {}}, SPEC) == {"pvcs": [], "services": {}}


def test_status_payload_errors_are_hard() -> None:
    meta = {"annotations": {"k": '{"replicas":"x"}'}}
    with pytest.raises(ConversionError, match=r"^unmarshal k annotation: "):
        read_status_payload(meta, "k", SPEC)
    with pytest.raises(ConversionError, match=r"^unmarshal k annotation: "):
        read_status_payload({"annotations": {"k": "{"}}, "k", SPEC)
    assert read_status_payload({"annotations": {"k": ""}}, "k", SPEC) is None
    assert read_status_payload({"annotations": {"k": '{"replicas":2,"x":1}'}}, "k", SPEC) == {"replicas": 2}


def test_scrub_drops_emptied_annotations() -> None:
    meta = {"annotations": {"a": "1", "b": "2"}}
    scrub(meta, ["a"])
    assert meta == {"annotations": {"b": "2"}}
    scrub(meta, ["b", "c"])
    assert meta == {}
    meta2 = {"annotations": {"a": "1"}}
    delete_annotation(meta2, "a")
    assert meta2 == {}


def test_epp_parameter_records_are_applied() -> None:
    from conversion.payloads import apply_epp_records

    cfg = {"plugins": [{"type": "a", "parameters": {"x": 1}}, {"type": "b"}, {"type": "c"}]}
    records = [
        {"path": "eppConfig/config/plugins/0/parameters", "nil": True},
        {"path": "eppConfig/config/plugins/1/parameters", "raw": b'{"y":2}'},
        {"path": "other/plugins/2/parameters", "nil": True},
    ]
    apply_epp_records(cfg, "eppConfig/config", records)
    assert cfg == {
        "plugins": [{"type": "a", "parameters": None}, {"type": "b", "parameters": {"y": 2}}, {"type": "c"}]
    }
