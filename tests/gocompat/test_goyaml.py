"""Plain YAML scalars as kubectl reads them (go-yaml v2's resolution, then the API server's reading of
the JSON number), and manifests written so that kubectl reads them back as written."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from apiserver.source import Dumper, Loader
from gocompat.goyaml import resolve


@pytest.mark.parametrize(
    ("plain", "value"),
    [
        # booleans: YAML 1.1's, with y/Y/n/N (PyYAML reads those as strings)
        ("y", True),
        ("Y", True),
        ("yes", True),
        ("On", True),
        ("TRUE", True),
        ("n", False),
        ("N", False),
        ("no", False),
        ("off", False),
        ("False", False),
        ("yellow", "yellow"),
        ("nope", "nope"),
        ("tRUE", "tRUE"),
        # null
        ("", None),
        ("~", None),
        ("null", None),
        ("Null", None),
        ("NULL", None),
        ("nULL", "nULL"),
        # integers: Go's ParseInt with base 0 after removing underscores
        ("0", 0),
        ("-1", -1),
        ("+7", 7),
        ("1_000", 1000),
        ("0x1F", 31),
        ("0o17", 15),
        ("0755", 493),
        ("0b101", 5),
        ("9223372036854775807", 9223372036854775807),
        ("18446744073709551615", 18446744073709551615),
        # floats: no dot needed; read back from JSON as integers when whole
        ("1e3", 1000),
        ("1.0", 1),
        ("-0.0", 0),
        ("1.5", 1.5),
        (".5", 0.5),
        ("08", 8),
        ("1e21", 1e21),
        ("18446744073709551616", 18446744073709551616.0),
        # binary past int64 / uint64 is no number to go-yaml (ParseInt's range error): a string
        ("-0b1" + "0" * 64, "-0b1" + "0" * 64),
        ("0b1" + "0" * 64, "0b1" + "0" * 64),
        ("-0b1" + "0" * 63, -(2**63)),
        # strings PyYAML would read otherwise (sexagesimal numbers, timestamps) or Go would not parse
        ("22:22", "22:22"),
        ("2001-12-14", "2001-12-14"),
        ("1.2.3", "1.2.3"),
        ("+", "+"),
        ("0x", "0x"),
        ("${VAR}", "${VAR}"),
        ("1Gi", "1Gi"),
    ],
)
def test_resolve(plain: str, value: object) -> None:
    got = resolve(plain)
    assert got == value and type(got) is type(value)


def test_special_floats() -> None:
    assert math.isnan(resolve(".nan"))  # type: ignore[arg-type]
    assert resolve("-.Inf") == -math.inf


def test_a_manifest_reads_as_kubectl_reads_it() -> None:
    doc = yaml.load(
        "env:\n- name: UCX_MEMTYPE_CACHE\n  value: y\n- name: B\n  value: 'y'\nn: 1\n", Loader=Loader
    )
    assert doc == {
        "env": [{"name": "UCX_MEMTYPE_CACHE", "value": True}, {"name": "B", "value": "y"}],
        "false": 1,
    }


@given(
    st.lists(
        st.text(max_size=12) | st.sampled_from(["y", "N", "1e3", "0755", "22:22", "on", "~", "0x1F", "1_0"])
    )
)
def test_strings_written_are_read_back_as_the_same_strings(values: list[str]) -> None:
    text = yaml.dump({"v": values}, Dumper=Dumper)
    assert yaml.load(text, Loader=Loader) == {"v": values}
