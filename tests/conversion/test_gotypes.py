"""Go ``encoding/json`` over the generated type tables (expected values from Go itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conversion import dgdr_gotypes, gotypes, gotypes_core
from validation import gotypes_grove

ROOT = Path(__file__).resolve().parents[2]
J = dict[str, Any]


@pytest.mark.parametrize("table", [gotypes_core, gotypes_grove], ids=["core", "grove"])
def test_every_type_a_table_names_is_defined(table: Any) -> None:
    gotypes.register(gotypes_grove)
    for key in [*table.STRUCTS, *table.NAMED, *table.SPECIAL]:
        # compiling a type compiles every type it refers to (KeyError for an unknown one)
        assert gotypes.node(key).display.endswith("." + key.rpartition(".")[2])
        assert key.rpartition(".")[0] in {**gotypes_core.PACKAGES, **gotypes_grove.PACKAGES}


def test_the_grove_table_does_not_repeat_the_core_table() -> None:
    assert not set(gotypes_grove.STRUCTS) & set(gotypes_core.STRUCTS)
    assert not set(gotypes_grove.NAMED) & set(gotypes_core.NAMED)


def _pinned_modules_cached() -> bool:
    if shutil.which("go") is None:
        return False
    cache = (
        os.environ.get("GOMODCACHE")
        or subprocess.run(
            ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=False
        ).stdout.strip()
    )
    return all(
        (Path(cache) / m).is_dir()
        for m in (
            "k8s.io/api@v0.36.2",
            "k8s.io/apimachinery@v0.36.2",
            "github.com/ai-dynamo/grove/operator/api@v0.1.0-alpha.12-rc1",
            "sigs.k8s.io/gateway-api-inference-extension@v1.2.0",
        )
    )


@pytest.mark.skipif(not _pinned_modules_cached(), reason="the pinned Go modules are not in the module cache")
def test_the_checked_in_tables_are_what_the_generator_writes() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_gotypes.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr


# --- the typed view (what Go keeps after a decode and an encode) -----------------------------------


def test_view_drops_omitempty_zero_values_and_unknown_keys() -> None:
    c = {
        "name": "main",
        "Image": "x",
        "unknown": 1,
        "stdin": False,
        "volumeMounts": [{"name": "m", "mountPath": "/m", "readOnly": False}],
        "resources": {"claims": []},
        "ports": [{"containerPort": 0, "hostPort": 0}],
        "env": [{"name": "A", "value": ""}],
    }
    # Go: {"name":"main","image":"x","ports":[{"containerPort":0}],"env":[{"name":"A"}],
    #      "resources":{},"volumeMounts":[{"name":"m","mountPath":"/m"}]}
    assert gotypes.view("core/v1.Container", c) == {
        "name": "main",
        "image": "x",
        "volumeMounts": [{"name": "m", "mountPath": "/m"}],
        "ports": [{"containerPort": 0}],
        "env": [{"name": "A"}],
    }


def test_view_keeps_pointers_to_zero_values_and_every_map_entry() -> None:
    spec = {
        "affinity": {},
        "nodeSelector": {"a": ""},
        "hostNetwork": False,
        "containers": [],
        "tolerations": [{"key": "k", "tolerationSeconds": 0}],
        "securityContext": {"runAsUser": 0},
    }
    assert gotypes.view("core/v1.PodSpec", spec) == {
        "affinity": {},
        "nodeSelector": {"a": ""},
        "containers": [],
        "tolerations": [{"key": "k", "tolerationSeconds": 0}],
        "securityContext": {"runAsUser": 0},
    }


def test_view_writes_quantities_times_and_durations_as_go_does() -> None:
    c = {
        "name": "m",
        "resources": {"limits": {"cpu": "1000m", "memory": None}},
        "livenessProbe": {
            "httpGet": {"port": "http"},
            "terminationGracePeriodSeconds": 0,
            "periodSeconds": 0,
        },
    }
    assert gotypes.view("core/v1.Container", c) == {
        "name": "m",
        "resources": {"limits": {"cpu": "1", "memory": "0"}},
        "livenessProbe": {"httpGet": {"port": "http"}, "terminationGracePeriodSeconds": 0},
    }
    meta = gotypes.view("meta/v1.ObjectMeta", {"creationTimestamp": "2026-01-01T01:00:00.5+01:00"})
    assert meta == {"creationTimestamp": "2026-01-01T00:00:00Z"}
    assert gotypes.view("meta/v1.ObjectMeta", {"creationTimestamp": None, "labels": {"a": None}}) == {
        "labels": {"a": ""}
    }
    assert gotypes.view("*meta/v1.Duration", "1000ms") == "1s"
    assert gotypes.view("*meta/v1.Duration", "90m") == "1h30m0s"
    assert gotypes.view("*meta/v1.Duration", "1.5us") == "1.5µs"


# --- Go's decode errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "value", "message"),
    [
        (
            "core/v1.PodSpec",
            {"volumes": [{"name": "v", "csi": {"driver": 5}}]},
            "json: cannot unmarshal number into Go struct field CSIVolumeSource.volumes.VolumeSource.csi.driver"
            " of type string",
        ),
        (
            "core/v1.PodSpec",
            {"containers": [{"name": "m", "livenessProbe": {"httpGet": {"port": 1.5}}}]},
            "json: cannot unmarshal number 1.5 into Go struct field"
            " HTTPGetAction.containers.livenessProbe.ProbeHandler.httpGet.port of type int32",
        ),
        (
            "core/v1.PodSpec",
            {"containers": [{"name": "m", "livenessProbe": {"httpGet": {"port": True}}}]},
            "json: cannot unmarshal bool into Go struct field"
            " HTTPGetAction.containers.livenessProbe.ProbeHandler.httpGet.port of type int32",
        ),
        (
            "core/v1.PodSpec",
            {"containers": [{"name": "m", "ports": [{"containerPort": 2147483648}]}]},
            "json: cannot unmarshal number 2147483648 into Go struct field"
            " ContainerPort.containers.ports.containerPort of type int32",
        ),
        (
            "core/v1.PodSpec",
            {"nodeSelector": {"a": 1}},
            "json: cannot unmarshal number into Go struct field PodSpec.nodeSelector of type string",
        ),
        (
            "core/v1.PodSpec",
            {"containers": "x", "hostNetwork": "y"},
            "json: cannot unmarshal string into Go struct field PodSpec.containers of type []v1.Container",
        ),
        # a failing quantity stops decoding and wins over an earlier type mismatch
        (
            "core/v1.PodSpec",
            {"hostNetwork": "y", "overhead": {"cpu": "bogus"}},
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            "core/v1.PodSpec",
            {"terminationGracePeriodSeconds": -1.0},
            "json: cannot unmarshal number -1.0 into Go struct field PodSpec.terminationGracePeriodSeconds"
            " of type int64",
        ),
        (
            "core/v1.PodTemplateSpec",
            {"metadata": {"creationTimestamp": 5}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp"
            " of type string",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"replicas": "x", "template": {"topologyConstraint": {}}}},
            "json: cannot unmarshal string into Go struct field PodCliqueSetSpec.spec.replicas of type int32",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"template": {"terminationDelay": "1000ms", "topologyConstraint": {"packDomain": 5}}}},
            "json: cannot unmarshal number into Go struct field"
            " TopologyConstraint.spec.template.topologyConstraint.packDomain of type v1alpha1.TopologyDomain",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"template": {"terminationDelay": "x"}}},
            'time: invalid duration "x"',
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {
                "SPEC": {
                    "template": {
                        "cliques": [None, {"name": "c", "spec": {"podSpec": {"containers": [{"image": 5}]}}}]
                    }
                }
            },
            "json: cannot unmarshal number into Go struct field"
            " Container.spec.template.cliques.spec.podSpec.containers.image of type string",
        ),
        (
            "grove/core/v1alpha1.PodCliqueSet",
            {"spec": {"template": {"cliques": "x"}, "replicas": 2**40}},
            "json: cannot unmarshal string into Go struct field PodCliqueSetTemplateSpec.spec.template.cliques"
            " of type []*v1alpha1.PodCliqueTemplateSpec",
        ),
    ],
)
def test_decode_error_is_gos_text(expr: str, value: J, message: str) -> None:
    gotypes.register(gotypes_grove)
    assert gotypes.decode_error(expr, value) == message


def test_decode_error_accepts_what_go_accepts() -> None:
    gotypes.register(gotypes_grove)
    ok = {"spec": {"template": {"terminationDelay": None, "cliques": [None]}}, "unknown": {"x": 1}}
    assert gotypes.decode_error("grove/core/v1alpha1.PodCliqueSet", ok) is None


# --- Semantic.DeepEqual and mergo ----------------------------------------------------------------


def test_semantic_equality_follows_go_types() -> None:
    r = "core/v1.ResourceRequirements"
    assert gotypes.equal(r, {"limits": {"cpu": "1"}}, {"limits": {"cpu": "1000m"}})
    assert gotypes.equal(r, {"limits": {}, "claims": []}, None)
    assert not gotypes.equal(r, {"limits": {"cpu": "0"}}, None)
    assert gotypes.is_zero("core/v1.PodSpec", {"containers": [], "nodeSelector": {}})
    assert not gotypes.is_zero("core/v1.PodSpec", {"affinity": {}})
    assert not gotypes.is_zero("core/v1.PodSpec", {"nodeSelector": {"a": ""}})
    assert not gotypes.equal("*core/v1.Probe", {}, None)
    assert gotypes.is_zero("core/v1.Container", {"name": "x", "image": ""}, skip="name")


def test_merge_takes_a_nil_pointer_whatever_it_points_at() -> None:
    dst: J = {"name": "main", "readinessProbe": {"periodSeconds": 3}}
    gotypes.merge_override(
        "core/v1.Container", dst, {"readinessProbe": {"terminationGracePeriodSeconds": 0}, "stdin": False}
    )
    # *int64 pointing at 0 fills the nil destination pointer; a false bool never wins
    assert dst == {"name": "main", "readinessProbe": {"periodSeconds": 3, "terminationGracePeriodSeconds": 0}}
    dst = {"name": "main"}
    gotypes.merge_override("core/v1.Container", dst, {"readinessProbe": {"terminationGracePeriodSeconds": 0}})
    assert dst == {"name": "main", "readinessProbe": {"terminationGracePeriodSeconds": 0}}


@pytest.mark.parametrize(
    ("dst", "src", "merged"),
    [("http", 8080, "http"), (80, "http", "http"), (80, 8080, 8080), (80, 0, 80), (80, "", "")],
)
def test_merge_of_int_or_string_is_field_by_field(dst: Any, src: Any, merged: Any) -> None:
    d: J = {"name": "m", "livenessProbe": {"httpGet": {"port": dst}}}
    gotypes.merge_override("core/v1.Container", d, {"livenessProbe": {"httpGet": {"port": src}}})
    assert d["livenessProbe"]["httpGet"]["port"] == merged


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z"),
        ("2024-01-01t00:00:00z", "2024-01-01T00:00:00Z"),
        ("2024-01-01T00:00:00.5+05:00", "2023-12-31T19:00:00Z"),
        # time.Parse(time.RFC3339, …) refuses each of these.
        ("2024-02-30T00:00:00Z", None),
        ("2024-01-01T24:00:00Z", None),
        ("2024-01-01T00:00:60Z", None),
        ("2024-01-01T00:00:00+0500", None),
        ("2024-01-01T00:00:00+05", None),
        ("2024-01-01T00:00:00.Z", None),
        ("2024-01-01T00:00:00,5Z", None),
        ("2024-01-01T00:00:00", None),
    ],
)
def test_one_go_time_parser_for_kubernetes_and_dgdr_types(text: str, printed: str | None) -> None:
    """The Kubernetes tables and the DGDR types parse times with the same function, as Go does."""
    if printed is None:
        with pytest.raises(ValueError):
            gotypes.go_time(text)
        with pytest.raises(dgdr_gotypes.Mismatch):
            dgdr_gotypes.go_time(text)
    else:
        assert gotypes.go_time(text) == printed
        assert dgdr_gotypes.go_time(text) == printed
