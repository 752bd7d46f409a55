"""Quantity parsing/canonicalisation against apimachinery's documented outputs."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gocompat.decoding import decode
from gocompat.errors import GoTypeError
from gocompat.quantity import canonical, parse_quantity
from gocompat.view import view

# (input, canonical output) pairs from apimachinery's quantity_test.go
# (TestQuantityString alternates, TestQuantityParseEmit, TestJSONWhitespace) and the spec.
PARSE_EMIT = [
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
    ("307200Ki", "300Mi"),
    ("1025024Mi", "1001Gi"),
    ("1024Gi", "1Ti"),
    ("5000m", "5"),
    ("0.5", "500m"),
    ("1000M", "1G"),
    ("0.001T", "1G"),
    ("1000u", "1m"),
    ("1.08", "1080m"),
    ("1080000000n", "1080m"),
    # Past E no SI suffix exists: apimachinery writes the number without one (tests/fixtures/quantity).
    ("1000E", "1"),
    ("5000E", "5"),
    ("1000000E", "1"),
    (".001e12", "1e9"),
    ("0.001e0", "1e-3"),
    ("1000e-12", "1e-9"),
    ("00", "0"),
    # spec §7.2 examples
    ("1000m", "1"),
    ("1.5Gi", "1536Mi"),
    ("1e3", "1e3"),
    ("1000", "1k"),
]

# Strings the fast path keeps verbatim (canonical already, or "looks" canonical to it).
VERBATIM = [
    "1Gi",
    "300Mi",
    "6Ki",
    "1001Gi",
    "1Ti",
    "5",
    "500m",
    "1G",
    "1m",
    "80m",
    "1080m",
    "300M",
    "1T",
    "1E",
    "1234567M",
    "1234567m",
    "3k",
    "1025",
    "0",
    "1e9",
    "1e-3",
    "1e-9",
    "80e-3",
    "300e6",
    "1e12",
    "3e3",
    "1n",
    "80n",
    "1080n",
    "1u",
    "80u",
    "1080u",
    # quirks of the cached-string fast path
    "+1",
    "05",
    "1.500k",
    "5.",
    "1E3",
    "12e6",
]

# Exact values from TestQuantityParse: input -> (value as Decimal, format)
PARSE_VALUES = [
    ("0n", "0", "DecimalSI"),
    ("0Ki", "0", "BinarySI"),
    ("1Ki", "1024", "BinarySI"),
    ("8Ki", "8192", "BinarySI"),
    ("7Mi", str(7 * 1024**2), "BinarySI"),
    ("6Gi", str(6 * 1024**3), "BinarySI"),
    ("5Ti", str(5 * 1024**4), "BinarySI"),
    ("4Pi", str(4 * 1024**5), "BinarySI"),
    ("3Ei", str(3 * 1024**6), "BinarySI"),
    ("5n", "5e-9", "DecimalSI"),
    ("4u", "4e-6", "DecimalSI"),
    ("3m", "3e-3", "DecimalSI"),
    ("8k", "8e3", "DecimalSI"),
    ("7M", "7e6", "DecimalSI"),
    ("6G", "6e9", "DecimalSI"),
    ("5T", "5e12", "DecimalSI"),
    ("2P", "2e15", "DecimalSI"),
    ("1E", "1e18", "DecimalSI"),
    ("1E-3", "1e-3", "DecimalExponent"),
    ("1E6", "1e6", "DecimalExponent"),
    ("1e9", "1e9", "DecimalExponent"),
    ("1E18", "1e18", "DecimalExponent"),
    ("100.035k", "100035", "DecimalSI"),
    ("0.0005k", "0.5", "DecimalSI"),
    ("0.5e-2", "5e-3", "DecimalExponent"),
    ("1.3E+6", "13e5", "DecimalExponent"),
    ("1.7E18", "17e17", "DecimalExponent"),
    ("6.987654321G", "6987654321", "DecimalSI"),
    ("1.01E", "101e16", "DecimalSI"),
    ("3.001n", "4e-9", "DecimalSI"),
    ("1.1E-9", "2e-9", "DecimalExponent"),
    ("0.0000000005", "1e-9", "DecimalSI"),
    ("0.5e-9", "1e-9", "DecimalExponent"),
    ("0.9n", "1e-9", "DecimalSI"),
    ("0.00000012345", "124e-9", "DecimalSI"),
    ("9Ei", str((1 << 63) - 1), "BinarySI"),
    ("9223372036854775807Ki", str((1 << 63) - 1), "BinarySI"),
    ("12E", "12e18", "DecimalSI"),
    ("100.035Ki", "102435.84", "BinarySI"),
    ("0.5Mi", str(512 * 1024), "BinarySI"),
    ("0.000000000001Ki", "2e-9", "DecimalSI"),
    (".001", "1e-3", "DecimalSI"),
    (".0001k", "0.1", "DecimalSI"),
    ("1.", "1", "DecimalSI"),
    ("1.G", "1e9", "DecimalSI"),
    (".", "0", "DecimalSI"),
    ("-.", "0", "DecimalSI"),
]

INVALID = [
    "",
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    " 1",
    "1 ",
    "1e",
]


@pytest.mark.parametrize(("text", "expected"), PARSE_EMIT)
def test_parse_emit(text: str, expected: str) -> None:
    assert canonical(text) == expected


@pytest.mark.parametrize(("text", "expected"), [(t, e) for t, e in PARSE_EMIT if e != "0"])
def test_negative_parse_emit(text: str, expected: str) -> None:
    assert canonical("-" + text) == "-" + expected


@pytest.mark.parametrize("text", VERBATIM)
def test_canonical_strings_kept_verbatim(text: str) -> None:
    assert canonical(text) == text


@pytest.mark.parametrize(("text", "value", "fmt"), PARSE_VALUES)
def test_parse_values(text: str, value: str, fmt: str) -> None:
    q = parse_quantity(text)
    assert Decimal(q.unscaled).scaleb(q.exp10) == Decimal(value)
    assert q.format == fmt


@pytest.mark.parametrize("text", INVALID)
def test_invalid(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("raw", "expected"), [(" 1", "1"), ("1 ", "1"), (1, "1"), (10, "10"), (-1, "-1"), (0.5, "500m")]
)
def test_json_values_trimmed(raw: str | int | float, expected: str) -> None:
    assert canonical(raw) == expected


def test_rejects_non_quantities() -> None:
    with pytest.raises(ValueError):
        canonical(True)
    with pytest.raises(ValueError):
        canonical(float("nan"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.1Ki", "1126400m"),  # BinarySI fraction falls back to DecimalSI
        ("1023Ki", "1023Ki"),
        ("1536Mi", "1536Mi"),
        ("1025", "1025"),
        ("2.5e3", "2500"),
        ("1e-10", "1e-9"),
        ("-0", "0"),
        ("1.0", "1"),
        ("0.1m", "100u"),
        ("8Ei", "9223372036854775807"),
        ("1200m", "1200m"),
        ("10Gi", "10Gi"),
        ("Gi", "0"),  # an empty numerator scans as zero upstream
    ],
)
def test_edge_forms(text: str, expected: str) -> None:
    assert canonical(text) == expected


def _value(text: str) -> Decimal:
    q = parse_quantity(text)
    return Decimal(q.unscaled).scaleb(q.exp10)


SUFFIX = st.sampled_from(
    ["n", "u", "m", "", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "e3", "e-2", "E6"]
)


@given(
    st.integers(min_value=0, max_value=10**12),
    st.integers(min_value=0, max_value=4),
    SUFFIX,
    st.booleans(),
)
def test_canonical_is_idempotent_and_value_preserving(mant: int, frac: int, suffix: str, neg: bool) -> None:
    digits = str(mant)
    text = (digits[:-frac] or "0") + "." + digits[-frac:] if 0 < frac < len(digits) else digits
    text = ("-" if neg else "") + text + suffix
    out = canonical(text)
    assert canonical(out) == out
    value = _value(text)
    if _value(out) != value:  # past E apimachinery drops the suffix it has not got (1000E -> 1)
        exponent = (value / _value(out)).adjusted()
        assert parse_quantity(text).format == "DecimalSI" and exponent >= 21 and exponent % 3 == 0
        assert value == _value(out).scaleb(exponent)


# --- every value of tests/fixtures/quantity/quantity.jsonl, as apimachinery v0.34.3 decodes it --------

QUANTITY_CORPUS = [
    json.loads(line)
    for line in (Path(__file__).resolve().parent.parent / "fixtures" / "quantity" / "quantity.jsonl")
    .read_text()
    .splitlines()
    if line
]


def _seen(raw: str) -> bool:
    """Whether this service sees the value's JSON text: Go decodes a quantity from its raw text,
    this service from the decoded value, so a number written with an exponent or trailing zeros
    (``1E3``, ``1.50``) or a string with escapes is not read as Go reads it."""
    return orjson.dumps(orjson.loads(raw)).decode() == raw


@pytest.mark.parametrize("how", ["view", "decode"])
def test_every_value_as_apimachinery_decodes_it(how: str) -> None:
    wrong = []
    for case in QUANTITY_CORPUS:
        if not _seen(case["raw"]):
            continue
        value = orjson.loads(case["raw"])
        try:
            if how == "view":
                got = view("core/v1.ResourceRequirements", {"limits": {"cpu": value}})["limits"]["cpu"]
            else:
                got = decode(value, "quantity")
        except GoTypeError as exc:
            got = "error: " + str(exc)
        if got != case["quantity"]:
            wrong.append((case["raw"], case["quantity"], got))
    assert wrong == []


def test_the_values_whose_text_is_not_seen_are_numbers_and_escaped_strings() -> None:
    unseen = [c["raw"] for c in QUANTITY_CORPUS if not _seen(c["raw"])]
    assert 0 < len(unseen) < 20
    assert all(raw[0] != '"' or "\\" in raw for raw in unseen)
    assert (
        sum(
            1 for c in QUANTITY_CORPUS if c["quantity"].startswith("error: unable to parse quantity's suffix")
        )
        > 50
    )
