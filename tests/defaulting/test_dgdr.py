"""DynamoGraphDeploymentRequest defaulting: the profiler image on CREATE."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from defaulting import dgdr
from domain.admission import AdmissionSettings, Operation

REPO = "nvcr.io/nvidia/ai-dynamo/dynamo-planner"


@pytest.mark.parametrize(
    ("version", "canonical"),
    [
        ("1.1.0", "1.1.0"),
        ("1.2", "1.2.0"),
        ("1", "1.0.0"),
        ("v1.2.3", "1.2.3"),
        ("01.02.03", "1.2.3"),
        ("1.2.3-rc.1", "1.2.3-rc.1"),
        ("1.2.3-rc.01", None),
        ("1.2.3-0a", "1.2.3-0a"),
        ("1.2.3+build.7", "1.2.3+build.7"),
        ("1.2-beta", "1.2.0-beta"),
        ("1.2.3-", None),
        ("V1.2.3", None),
        ("1.2.3.4", None),
        ("", None),
        ("latest", None),
        (" 1.2.3", None),
        ("18446744073709551615", "18446744073709551615.0.0"),
        ("18446744073709551616", None),
    ],
)
def test_canonical_version(version: str, canonical: str | None) -> None:
    assert dgdr.canonical_version(version) == canonical


@given(st.integers(0, 10**9), st.integers(0, 10**9), st.integers(0, 10**9), st.booleans())
def test_canonical_version_of_full_versions(major: int, minor: int, patch: int, prefix: bool) -> None:
    text = f"{major}.{minor}.{patch}"
    assert dgdr.canonical_version(("v" if prefix else "") + text) == text
    assert dgdr.canonical_version(f"{major}.{minor}") == f"{major}.{minor}.0"


@pytest.mark.parametrize(
    ("settings", "image"),
    [
        (AdmissionSettings(operator_version="1.1.0"), f"{REPO}:1.1.0"),
        (AdmissionSettings(operator_version="v1.2"), f"{REPO}:1.2.0"),
        (AdmissionSettings(operator_version="not-a-version"), ""),
        (AdmissionSettings(operator_version="not-a-version", dgdr_default_image="x/p:rc1"), "x/p:rc1"),
        (AdmissionSettings(operator_version="1.1.0", dgdr_default_image="x/p:rc1"), "x/p:rc1"),
    ],
)
def test_default_image(settings: AdmissionSettings, image: str) -> None:
    assert dgdr.default_image(settings) == image


def request(spec: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "default"},
    }
    if spec is not None:
        out["spec"] = spec
    return out


V110 = AdmissionSettings(operator_version="1.1.0")


@pytest.mark.parametrize(
    ("spec", "operation", "settings", "image"),
    [
        ({"model": "m"}, "CREATE", V110, f"{REPO}:1.1.0"),
        ({"model": "m", "image": ""}, "CREATE", V110, f"{REPO}:1.1.0"),
        ({"model": "m", "image": None}, "CREATE", V110, f"{REPO}:1.1.0"),
        (None, "CREATE", V110, f"{REPO}:1.1.0"),
        ({"model": "m", "image": "mine:1.0.0"}, "CREATE", V110, None),
        ({"model": "m"}, "UPDATE", V110, None),
        ({"model": "m"}, "CREATE", AdmissionSettings(operator_version="dev"), None),
    ],
)
def test_image_defaulting(
    spec: dict[str, Any] | None, operation: Operation, settings: AdmissionSettings, image: str | None
) -> None:
    obj = request(spec)
    before = copy.deepcopy(obj)
    out = dgdr.default_hub(obj, operation, settings)
    assert obj == before
    if image is None:
        assert out is obj
        return
    # written as the operator writes it: model has no omitempty
    assert out["spec"] == {**(spec or {"model": ""}), "image": image}
    assert out["metadata"] is obj["metadata"]
    assert dgdr.default_hub(out, operation, settings) is out
