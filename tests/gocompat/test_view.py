"""Typed views and ``Semantic.DeepEqual`` over the generated type tables (expected values from
Go itself)."""

from __future__ import annotations

from typing import Any

from gocompat import view

J = dict[str, Any]


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
    assert view.view("core/v1.Container", c) == {
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
    assert view.view("core/v1.PodSpec", spec) == {
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
    assert view.view("core/v1.Container", c) == {
        "name": "m",
        "resources": {"limits": {"cpu": "1", "memory": "0"}},
        "livenessProbe": {"httpGet": {"port": "http"}, "terminationGracePeriodSeconds": 0},
    }
    meta = view.view("meta/v1.ObjectMeta", {"creationTimestamp": "2026-01-01T01:00:00.5+01:00"})
    assert meta == {"creationTimestamp": "2026-01-01T00:00:00Z"}
    assert view.view("meta/v1.ObjectMeta", {"creationTimestamp": None, "labels": {"a": None}}) == {
        "labels": {"a": ""}
    }
    assert view.view("*meta/v1.Duration", "1000ms") == "1s"
    assert view.view("*meta/v1.Duration", "90m") == "1h30m0s"
    assert view.view("*meta/v1.Duration", "1.5us") == "1.5µs"


def test_semantic_equality_follows_go_types() -> None:
    r = "core/v1.ResourceRequirements"
    assert view.equal(r, {"limits": {"cpu": "1"}}, {"limits": {"cpu": "1000m"}})
    assert view.equal(r, {"limits": {}, "claims": []}, None)
    assert not view.equal(r, {"limits": {"cpu": "0"}}, None)
    assert view.is_zero("core/v1.PodSpec", {"containers": [], "nodeSelector": {}})
    assert not view.is_zero("core/v1.PodSpec", {"affinity": {}})
    assert not view.is_zero("core/v1.PodSpec", {"nodeSelector": {"a": ""}})
    assert not view.equal("*core/v1.Probe", {}, None)
    assert view.is_zero("core/v1.Container", {"name": "x", "image": ""}, skip="name")
