"""Embedded resources (a DGDR's ``spec.overrides.dgd``) through the offline create: the answers are the
ones a real API server gave for the same documents (kube-apiserver v1.36, dry run, strict field
validation), kept here verbatim."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver import pipeline
from tests.examples import manifest

PREFIX = (
    'DynamoGraphDeploymentRequest in version "v1beta1" cannot be handled as a DynamoGraphDeploymentRequest: '
)
INVALID = 'DynamoGraphDeploymentRequest.nvidia.com "p" is invalid: '
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)

CASES: list[tuple[str, Any, int, str]] = [
    (
        "no-kind",
        {"apiVersion": "nvidia.com/v1beta1"},
        422,
        INVALID + "spec.overrides.dgd.kind: Required value",
    ),
    (
        "empty",
        {},
        422,
        INVALID + "[spec.overrides.dgd.apiVersion: Required value, spec.overrides.dgd.kind: Required value]",
    ),
    (
        "kind-int",
        {"apiVersion": "v1", "kind": 5},
        400,
        PREFIX + "spec.overrides.dgd.kind: Invalid value: 5: must be a string",
    ),
    (
        "bad-kind",
        {"apiVersion": "v1", "kind": "Foo_Bar"},
        422,
        INVALID
        + 'spec.overrides.dgd.kind: Invalid value: "Foo_Bar": may have mixed case, but should otherwise '
        "match: " + DNS1035,
    ),
    (
        "kind-long",
        {"apiVersion": "v1", "kind": "A" * 70},
        422,
        INVALID
        + f'spec.overrides.dgd.kind: Invalid value: "{"A" * 70}": may have mixed case, but should otherwise '
        "match: must be no more than 63 characters",
    ),
    (
        "bad-apiversion",
        {"apiVersion": "a/b/c", "kind": "Foo"},
        422,
        INVALID
        + 'spec.overrides.dgd.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    ),
    (
        "kind-empty",
        {"apiVersion": "", "kind": ""},
        422,
        INVALID
        + '[spec.overrides.dgd.apiVersion: Invalid value: "": must not be empty, spec.overrides.dgd.kind: '
        'Invalid value: "": must not be empty]',
    ),
    (
        "meta-unknown",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "x", "bogus": 1}},
        400,
        PREFIX + 'strict decoding error: unknown field "spec.overrides.dgd.metadata.bogus"',
    ),
    (
        "meta-badname",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "X_Y", "labels": {"a": "b c"}}},
        422,
        INVALID
        + 'spec.overrides.dgd.metadata.labels: Invalid value: "b c": a valid label must be an empty string '
        "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ),
    (
        "name-slash",
        {
            "apiVersion": "v1",
            "kind": "Foo",
            "metadata": {"name": "a/b", "generateName": "..", "namespace": "ok"},
        },
        422,
        INVALID + "spec.overrides.dgd.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ),
    (
        "meta-ns",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "x", "namespace": "Bad_NS"}},
        422,
        INVALID
        + 'spec.overrides.dgd.metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must '
        "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    (
        "meta-generation",
        {
            "apiVersion": "v1",
            "kind": "Foo",
            "metadata": {"name": "x", "creationTimestamp": None, "generation": -1},
        },
        422,
        INVALID
        + "spec.overrides.dgd.metadata.generation: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "meta-int-name",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": 5}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"name":5}: json: cannot unmarshal number into Go '
        "struct field ObjectMeta.name of type string",
    ),
    (
        "meta-notobj",
        {"apiVersion": "v1", "kind": "Foo", "metadata": "x"},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: "x": json: cannot unmarshal string into Go value of '
        "type v1.ObjectMeta",
    ),
    (
        "lab-num",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"labels": {"a": 5}}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"labels":{"a":5}}: json: cannot unmarshal number into '
        "Go struct field ObjectMeta.labels of type string",
    ),
    (
        "gen-str",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"generation": "x"}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"generation":"x"}: json: cannot unmarshal string into '
        "Go struct field ObjectMeta.generation of type int64",
    ),
    (
        "fin-str",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"finalizers": "x"}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"finalizers":"x"}: json: cannot unmarshal string into '
        "Go struct field ObjectMeta.finalizers of type []string",
    ),
    (
        "lab-list",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"labels": ["x"]}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"labels":["x"]}: json: cannot unmarshal array into '
        "Go struct field ObjectMeta.labels of type map[string]string",
    ),
    (
        "own-obj",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"ownerReferences": {"a": 1}}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"ownerReferences":{"a":1}}: json: cannot unmarshal '
        "object into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference",
    ),
    (
        "name-bool",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"name": True}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"name":true}: json: cannot unmarshal bool into Go '
        "struct field ObjectMeta.name of type string",
    ),
    (
        "ann-arr",
        {"apiVersion": "v1", "kind": "Foo", "metadata": {"annotations": {"a": [1]}}},
        400,
        PREFIX
        + 'spec.overrides.dgd.metadata: Invalid value: {"annotations":{"a":[1]}}: json: cannot unmarshal '
        "array into Go struct field ObjectMeta.annotations of type string",
    ),
]


def _dgdr(dgd: Any) -> dict[str, Any]:
    obj = manifest("dgdr-v1beta1.yaml")
    obj["metadata"] = {"name": "p", "namespace": "default"}
    obj["spec"]["overrides"] = {"dgd": dgd}
    return obj


@pytest.mark.parametrize(("name", "dgd", "code", "message"), CASES, ids=[c[0] for c in CASES])
def test_the_api_servers_answer(service: Any, name: str, dgd: Any, code: int, message: str) -> None:
    status = pipeline.create(_dgdr(dgd), service).status
    assert status is not None
    assert (status["code"], status["message"]) == (code, message)


def test_unknown_fields_are_listed_root_metadata_first_then_pruned_then_embedded(service: Any) -> None:
    obj = _dgdr({"apiVersion": "v1", "kind": "Foo", "metadata": {"zzz": 1, "aaa": 2}})
    obj["spec"]["zzunknown"] = 1
    obj["metadata"]["bogus"] = 1
    status = pipeline.create(obj, service).status
    assert status is not None
    assert status["message"] == PREFIX + (
        'strict decoding error: unknown field "metadata.bogus", unknown field "spec.zzunknown", unknown field '
        '"spec.overrides.dgd.metadata.aaa", unknown field "spec.overrides.dgd.metadata.zzz"'
    )


@pytest.mark.parametrize(
    ("dgd", "stored"),
    [
        (
            {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "x"}},
            {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "x"}},
        ),
        (
            {"apiVersion": "v1", "kind": "Foo", "metadata": None},
            {"apiVersion": "v1", "kind": "Foo", "metadata": {}},
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "Foo",
                "metadata": {"name": "", "labels": {}, "creationTimestamp": None, "annotations": {"a": "b"}},
                "spec": {"x": None},
            },
            {"apiVersion": "v1", "kind": "Foo", "metadata": {"annotations": {"a": "b"}}, "spec": {"x": None}},
        ),
    ],
)
def test_accepted_embedded_metadata_is_stored_as_object_meta_encodes_it(
    service: Any, dgd: Any, stored: Any
) -> None:
    out = pipeline.create(_dgdr(dgd), service)
    assert out.allowed, out.status
    assert out.stored is not None
    assert out.stored["spec"]["overrides"]["dgd"] == stored
