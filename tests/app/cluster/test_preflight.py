"""The 1.5 preflight rules on made-up objects, and ``audit --upgrade-to`` on an in-memory API."""

from __future__ import annotations

import argparse
import copy
import io
from collections.abc import Iterator
from pathlib import Path as FsPath
from typing import Any

import orjson
import pytest
import yaml

from app.cluster import preflight
from app.cluster import preflight_rules as rules
from app.cluster.audit_command import cmd_audit
from app.cluster.inventory import KINDS, CrdInfo
from certs.kube import ApiError
from domain.admission import AdmissionContext, Operation
from kinds import validate
from tests.admission_helpers import make_input
from tests.app.cluster.dynamo_api import FakeApi

Obj = dict[str, Any]
ALPHA, BETA = "nvidia.com/v1alpha1", "nvidia.com/v1beta1"
STANDBY = {"name": rules.STANDBY_ENV, "value": "1"}


def crd(name: str, stored: tuple[str, ...]) -> CrdInfo:
    return CrdInfo(name, "u", 1, "1", "v1beta1", ("v1alpha1", "v1beta1"), stored, True)


def obj(api_version: str, name: str, spec: Obj, namespace: str = "team") -> Obj:
    return {"apiVersion": api_version, "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def beta_dgd(name: str, *components: Obj) -> Obj:
    return obj(BETA, name, {"components": list(components)})


def alpha_dgd(name: str, **services: Obj) -> Obj:
    return obj(ALPHA, name, {"services": services})


def names(found: list[rules.Finding]) -> list[tuple[str, str, str]]:
    return [(f.kind, f.namespace, f.name) for f in found]


# --------------------------------------------------------------------------- CRDs


def test_a_crd_still_storing_v1alpha1_is_reported_once_with_its_fix_and_source() -> None:
    found = preflight.findings_1_5(
        [
            crd("dynamographdeployments.nvidia.com", ("v1alpha1", "v1beta1")),
            crd("dynamocomponentdeployments.nvidia.com", ("v1beta1",)),
        ]
    )
    assert [f.name for f in found] == ["dynamographdeployments.nvidia.com"]
    assert found[0].fix == "dynamo-webhook storage-migrate"
    assert found[0].source == rules.NOTES_1_5
    assert preflight.exit_code(found) == 1


def test_a_migrated_cluster_is_clean() -> None:
    found = preflight.findings_1_5([crd("dynamographdeployments.nvidia.com", ("v1beta1",))])
    assert found == [] and preflight.exit_code(found) == 0


# --------------------------------------------------------------------------- checkpoints


def test_every_dynamo_checkpoint_is_reported() -> None:
    found = rules.dynamo_object(rules.CHECKPOINT, obj(ALPHA, "ckpt", {}))
    assert names(found) == [(rules.CHECKPOINT, "team", "ckpt")]
    assert found[0].source == rules.SNAPSHOT_PR


@pytest.mark.parametrize(
    "dgd",
    [
        beta_dgd(
            "d", {"name": "w", "type": "worker", "experimental": {"checkpoint": {"checkpointRef": "ckpt"}}}
        ),
        alpha_dgd(
            "d", w={"componentType": "worker", "checkpoint": {"enabled": True, "checkpointRef": "ckpt"}}
        ),
    ],
    ids=["v1beta1", "v1alpha1"],
)
def test_a_dgd_restoring_from_a_checkpoint_ref_is_reported_in_either_shape(dgd: Obj) -> None:
    found = rules.dynamo_object(rules.DGD, dgd)
    assert names(found) == [(rules.DGD, "team", "d")]
    assert "checkpointRef ckpt" in found[0].breaks and "PodSnapshot" in found[0].breaks


@pytest.mark.parametrize(
    "dcd",
    [
        obj(BETA, "c", {"name": "w", "type": "worker", "experimental": {"checkpoint": {"enabled": True}}}),
        obj(ALPHA, "c", {"serviceName": "w", "componentType": "worker", "checkpoint": {"enabled": True}}),
    ],
    ids=["v1beta1", "v1alpha1"],
)
def test_a_dcd_with_a_dgd_managed_checkpoint_is_reported_in_either_shape(dcd: Obj) -> None:
    found = rules.dynamo_object(rules.DCD, dcd)
    assert names(found) == [(rules.DCD, "team", "c")]
    assert "component w" in found[0].breaks


def test_checkpointing_disabled_is_not_reported() -> None:
    dgd = beta_dgd("d", {"name": "w", "type": "worker", "experimental": {"checkpoint": {"enabled": False}}})
    assert rules.dynamo_object(rules.DGD, dgd) == []


# --------------------------------------------------------------------------- eppConfig, multinode, env


@pytest.mark.parametrize(
    "dgd",
    [
        beta_dgd("d", {"name": "epp", "type": "epp", "eppConfig": {"config": {}}}),
        alpha_dgd("d", epp={"componentType": "epp", "eppConfig": {"config": {}}}),
    ],
    ids=["v1beta1", "v1alpha1"],
)
def test_a_dgd_using_epp_config_is_reported(dgd: Obj) -> None:
    found = rules.dynamo_object(rules.DGD, dgd)
    assert names(found) == [(rules.DGD, "team", "d")] and "eppConfig" in found[0].breaks


@pytest.mark.parametrize(
    "kind,component",
    [
        (rules.DGD, beta_dgd("d", {"name": "f", "type": "frontend", "multinode": {"nodeCount": 2}})),
        (rules.DGD, alpha_dgd("d", f={"componentType": "planner", "multinode": {"nodeCount": 2}})),
        (rules.DCD, obj(BETA, "d", {"name": "f", "type": "frontend", "multinode": {"nodeCount": 2}})),
    ],
    ids=["dgd-v1beta1", "dgd-v1alpha1", "dcd-v1beta1"],
)
def test_multinode_on_a_component_that_is_not_a_worker_is_reported(kind: str, component: Obj) -> None:
    found = rules.dynamo_object(kind, component)
    assert names(found) == [(kind, "team", "d")] and "multinode" in found[0].breaks


@pytest.mark.parametrize("component_type", rules.MULTINODE_TYPES)
def test_multinode_on_workers_prefill_and_decode_is_not_reported(component_type: str) -> None:
    dgd = beta_dgd("d", {"name": "w", "type": component_type, "multinode": {"nodeCount": 2}})
    assert rules.dynamo_object(rules.DGD, dgd) == []


def test_the_removed_standby_variable_is_reported_once_per_object_naming_each_place() -> None:
    pod = obj(
        "v1",
        "p",
        {
            "initContainers": [{"name": "i", "env": [STANDBY]}],
            "containers": [{"name": "main", "env": [{"name": "OTHER"}, STANDBY]}],
        },
    )
    found = rules.pod(pod)
    assert names(found) == [("Pod", "team", "p")]
    assert "spec.containers[main].env" in found[0].breaks and "spec.initContainers[i].env" in found[0].breaks
    dgd = alpha_dgd("d", w={"componentType": "worker", "envs": [STANDBY]})
    assert "spec.services.w.envs" in rules.dynamo_object(rules.DGD, dgd)[0].breaks


# --------------------------------------------------------------------------- runtime version


def main(image: str = "", **fields: Any) -> Obj:
    return {"name": "main", **({"image": image} if image else {}), **fields}


def beta_component(name: str, container: Obj, **fields: Any) -> Obj:
    return {"name": name, "type": "worker", "podTemplate": {"spec": {"containers": [container]}}, **fields}


def alpha_service(container: Obj, **fields: Any) -> Obj:
    return {"componentType": "worker", "extraPodSpec": {"mainContainer": container}, **fields}


CUSTOM = "registry.example/runtime:custom"
VERSIONLESS_BETA = beta_dgd("d", beta_component("w", main(CUSTOM)))
VERSIONLESS_ALPHA = alpha_dgd("d", w=alpha_service(main(CUSTOM)))


@pytest.mark.parametrize(
    "dgd,field",
    [
        (VERSIONLESS_BETA, "spec.components[0].runtimeVersionOverride"),
        (VERSIONLESS_ALPHA, "spec.services[w].runtimeVersionOverride"),
    ],
    ids=["v1beta1", "v1alpha1"],
)
def test_a_dgd_image_without_a_version_tag_or_override_is_reported_with_the_field_to_set(
    dgd: Obj, field: str
) -> None:
    found = rules.dynamo_object(rules.DGD, dgd)
    assert names(found) == [(rules.DGD, "team", "d")]
    assert found[0].breaks.startswith(f"component w: image {CUSTOM} has no semantic-version tag")
    assert found[0].fix.startswith(f"set {field} ")
    assert found[0].source == rules.RUNTIME_VERSION_PR


def test_each_dgd_component_without_a_version_is_reported_and_only_those() -> None:
    dgd = beta_dgd(
        "d",
        beta_component("a", main("runtime:latest")),
        beta_component("b", main("runtime:1.4.0")),
        beta_component("c", main("runtime@sha256:" + "0" * 64)),
    )
    found = rules.runtime_version_override(rules.DGD, dgd)
    assert [f.breaks.split(":")[0] for f in found] == ["component a", "component c"]


@pytest.mark.parametrize(
    "kind,o",
    [
        (rules.DGD, beta_dgd("d", beta_component("w", main("runtime:v1.2.3-cuda12")))),
        (rules.DGD, alpha_dgd("d", w=alpha_service(main("runtime:1.0.0@sha256:" + "0" * 64)))),
        (rules.DGD, beta_dgd("d", beta_component("w", main(CUSTOM), runtimeVersionOverride="1.5.0"))),
        (rules.DGD, alpha_dgd("d", w=alpha_service(main(CUSTOM), runtimeVersionOverride="1.5.0"))),
        (rules.DGD, beta_dgd("d", beta_component("w", {"name": "sidecar", "image": CUSTOM}))),
        (rules.DGD, alpha_dgd("d", w=alpha_service(main()))),
        (rules.DCD, obj(BETA, "c", beta_component("w", main(CUSTOM)))),
        (rules.DCD, obj(ALPHA, "c", {"serviceName": "w", **alpha_service(main(CUSTOM))})),
    ],
    ids=[
        "semver-tag",
        "semver-tag-with-digest-v1alpha1",
        "override-set",
        "override-set-v1alpha1",
        "no-main-container",
        "no-image-v1alpha1",
        "standalone-dcd",
        "standalone-dcd-v1alpha1",
    ],
)
def test_a_version_tag_an_override_no_main_image_or_a_standalone_dcd_is_not_reported(
    kind: str, o: Obj
) -> None:
    assert rules.dynamo_object(kind, o) == []


# --------------------------------------------------------------------------- Elastic EP


ELASTIC = ["--enable-elastic-ep", "--data-parallel-backend", "ray"]


def backend(o: Obj, name: str = "vllm") -> Obj:
    o["spec"]["backendFramework"] = name
    return o


ELASTIC_DGD = backend(beta_dgd("d", beta_component("w", main("r:1.0.0", args=ELASTIC))))
ELASTIC_DCD_ALPHA = backend(
    obj(ALPHA, "d", {"serviceName": "w", **alpha_service(main(CUSTOM, args=ELASTIC))})
)


@pytest.mark.parametrize(
    "kind,o,field",
    [
        (rules.DGD, ELASTIC_DGD, "podTemplate.spec.containers[main].command"),
        (
            rules.DGD,
            backend(alpha_dgd("d", w=alpha_service(main("r:1.0.0", args=["--enable-elastic-ep -dpb=ray"])))),
            "extraPodSpec.mainContainer.command",
        ),
        (
            rules.DCD,
            backend(
                obj(
                    BETA,
                    "d",
                    beta_component("w", main("r:1.0.0", args=["--enable-elastic-ep", "-dpb", "ray"])),
                )
            ),
            "podTemplate.spec.containers[main].command",
        ),
        (rules.DCD, ELASTIC_DCD_ALPHA, "extraPodSpec.mainContainer.command"),
    ],
    ids=["dgd-v1beta1", "dgd-v1alpha1", "dcd-v1beta1", "dcd-v1alpha1"],
)
def test_an_elastic_ep_component_without_a_command_is_reported(kind: str, o: Obj, field: str) -> None:
    found = rules.dynamo_object(kind, o)
    assert names(found) == [(kind, "team", "d")]
    assert found[0].breaks.startswith("component w: vLLM Elastic EP with Ray")
    assert found[0].fix.startswith(f"set {field} ")
    assert found[0].source == rules.ELASTIC_EP_PR


@pytest.mark.parametrize(
    "kind,o",
    [
        (
            rules.DGD,
            backend(beta_dgd("d", beta_component("w", main("r:1.0.0", args=ELASTIC, command=["python3"])))),
        ),
        (rules.DGD, backend(alpha_dgd("d", w=alpha_service(main("r:1.0.0", args=ELASTIC, command=["sh"]))))),
        (rules.DGD, beta_dgd("d", beta_component("w", main("r:1.0.0", args=ELASTIC)))),
        (rules.DGD, backend(beta_dgd("d", beta_component("w", main("r:1.0.0", args=ELASTIC))), "sglang")),
        (
            rules.DGD,
            backend(beta_dgd("d", beta_component("w", main("r:1.0.0", args=["--enable-elastic-ep"])))),
        ),
        (rules.DGD, backend(beta_dgd("d", beta_component("w", main("r:1.0.0", args=["-dpb", "ray"]))))),
        (rules.DGD, backend(beta_dgd("d", beta_component("w", {"name": "side", "args": ELASTIC})))),
        (rules.DCD, obj(BETA, "c", beta_component("w", main("r:1.0.0", args=ELASTIC)))),
    ],
    ids=[
        "command-set",
        "command-set-v1alpha1",
        "no-backend",
        "sglang",
        "no-ray-backend",
        "no-elastic-ep",
        "not-the-main-container",
        "dcd-without-its-own-backend",
    ],
)
def test_elastic_ep_with_a_command_another_backend_or_no_elastic_ep_is_not_reported(
    kind: str, o: Obj
) -> None:
    assert rules.dynamo_object(kind, o) == []


@pytest.mark.parametrize(
    "kind,o,refusal",
    [
        (rules.DGD, VERSIONLESS_BETA, "spec.components[0].runtimeVersionOverride: Required value"),
        (rules.DGD, VERSIONLESS_ALPHA, "spec.services[w].runtimeVersionOverride: Required value"),
        (rules.DGD, ELASTIC_DGD, "spec.components[0].podTemplate.spec.containers[0].command: Required value"),
        (rules.DCD, ELASTIC_DCD_ALPHA, "spec.podTemplate.spec.containers[0].command: Required value"),
    ],
    ids=["runtime-version", "runtime-version-v1alpha1", "elastic-ep", "elastic-ep-dcd-v1alpha1"],
)
def test_what_the_preflight_reports_the_service_s_admission_refuses(kind: str, o: Obj, refusal: str) -> None:
    assert rules.dynamo_object(kind, o)
    request = make_input(o["apiVersion"], kind, "CREATE", {**o, "kind": kind})
    decision = validate(request, AdmissionContext())
    assert not decision.allowed and refusal in decision.message


def admitted(kind: str, operation: Operation, new: Obj, old: Obj | None = None) -> bool:
    request = make_input(
        new["apiVersion"], kind, operation, {**new, "kind": kind}, old and {**old, "kind": kind}
    )
    return validate(request, AdmissionContext()).allowed


def test_what_breaks_is_what_admission_does_to_the_stored_object_on_update() -> None:
    """The runtime-version rule ratchets (an unchanged object still updates; a changed image or a
    re-creation is refused); the Elastic-EP rule does not (even an unchanged update is refused)."""
    relabelled = copy.deepcopy(VERSIONLESS_BETA)
    relabelled["metadata"]["labels"] = {"touched": "yes"}
    assert admitted(rules.DGD, "UPDATE", relabelled, VERSIONLESS_BETA)
    retagged = copy.deepcopy(VERSIONLESS_BETA)
    retagged["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["image"] = CUSTOM + "-2"
    assert not admitted(rules.DGD, "UPDATE", retagged, VERSIONLESS_BETA)
    assert not admitted(rules.DGD, "CREATE", VERSIONLESS_BETA)
    touched = copy.deepcopy(ELASTIC_DGD)
    touched["metadata"]["labels"] = {"touched": "yes"}
    assert not admitted(rules.DGD, "UPDATE", touched, ELASTIC_DGD)


def test_an_object_that_cannot_be_converted_is_left_to_plain_audit() -> None:
    broken = backend(alpha_dgd("d", w=alpha_service(main("r:1.0.0", args=ELASTIC))))
    broken["apiVersion"] = "nvidia.com/v1alpha1"
    broken["spec"]["services"]["w"]["replicas"] = "two"
    assert rules.elastic_ep_command(rules.DGD, broken) == []


# --------------------------------------------------------------------------- webhook configurations


def config(client: Obj) -> Obj:
    return {
        "metadata": {"name": "old-operator"},
        "webhooks": [{"name": "v.example.com", "clientConfig": client}],
    }


def test_a_webhook_calling_a_removed_v1alpha1_path_is_reported_with_its_v1beta1_replacement() -> None:
    path = "/validate-nvidia-com-v1alpha1-dynamocomponentdeployment"
    found = rules.webhook_configuration(
        "ValidatingWebhookConfiguration", config({"service": {"namespace": "x", "name": "y", "path": path}})
    )
    assert names(found) == [("ValidatingWebhookConfiguration", "", "old-operator")]
    assert found[0].fix == "point it at /validate/nvidia.com/v1beta1/dynamocomponentdeployments"


def test_a_webhook_url_on_a_removed_path_is_reported_and_other_paths_are_not() -> None:
    removed = config(
        {"url": "https://hooks.example.com/validate-nvidia-com-v1alpha1-dynamocomponentdeployment"}
    )
    kept = config({"service": {"name": "y", "path": "/validate/nvidia.com/v1beta1/dynamographdeployments"}})
    others = [
        config({"service": {"name": "y", "path": f"/validate-nvidia-com-v1alpha1-{kind}"}})
        for kind in ("dynamomodel", "dynamocheckpoint")
    ]
    assert rules.webhook_configuration("ValidatingWebhookConfiguration", removed)[0].source == rules.NOTES_1_5
    assert rules.webhook_configuration("ValidatingWebhookConfiguration", kept) == []
    assert [rules.webhook_configuration("ValidatingWebhookConfiguration", o) for o in others] == [[], []]


# --------------------------------------------------------------------------- a clean set


CLEAN: list[tuple[str, Obj]] = [
    (
        rules.DGD,
        beta_dgd(
            "d",
            {
                "name": "w",
                "type": "worker",
                "multinode": {"nodeCount": 2},
                "podTemplate": {"spec": {"containers": [{"name": "main", "env": [{"name": "A"}]}]}},
            },
            {"name": "f", "type": "frontend"},
        ),
    ),
    (rules.DGD, alpha_dgd("a", w={"componentType": "decode", "multinode": {"nodeCount": 2}, "envs": []})),
    (rules.DCD, obj(BETA, "c", {"name": "w", "type": "prefill"})),
    ("DynamoModel", obj(ALPHA, "m", {"modelName": "x"})),
]


def test_a_clean_set_reports_nothing() -> None:
    assert [f for kind, o in CLEAN for f in rules.dynamo_object(kind, o)] == []
    assert (
        rules.pod(obj("v1", "p", {"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}))
        == []
    )


# --------------------------------------------------------------------------- the command


def fake_cluster() -> FakeApi:
    api = FakeApi()
    for plural in ("dynamographdeployments", "dynamocomponentdeployments"):
        api.add_crd(
            plural, stored=("v1alpha1", "v1beta1") if plural == "dynamographdeployments" else ("v1beta1",)
        )
    # A single-version kind stores v1alpha1 and nothing else: no storage migration to report.
    api.add_crd("dynamocheckpoints", storage="v1alpha1", served=("v1alpha1",), stored=("v1alpha1",))
    api.add("dynamographdeployments", beta_dgd("epp", {"name": "e", "type": "epp", "eppConfig": {}}))
    api.add(
        "dynamographdeployments",
        obj(BETA, "clean", {"components": [{"name": "w", "type": "worker"}]}, "other"),
    )
    api.add("dynamocheckpoints", obj(ALPHA, "ckpt", {}))
    api.others["pods"] = [obj("v1", "p", {"containers": [{"name": "main", "env": [STANDBY]}]})]
    path = "/validate-nvidia-com-v1alpha1-dynamocomponentdeployment"
    api.others["validatingwebhookconfigurations"] = [config({"service": {"name": "y", "path": path}})]
    api.others["mutatingwebhookconfigurations"] = []
    return api


def test_run_lists_every_collection_the_rules_need_and_reports_each_object_once() -> None:
    api = fake_cluster()
    found = preflight.run(api, KINDS, None, page_size=1)
    assert sorted(names(found)) == sorted(
        [
            ("CustomResourceDefinition", "", "dynamographdeployments.nvidia.com"),
            (rules.CHECKPOINT, "team", "ckpt"),
            (rules.DGD, "team", "epp"),
            ("Pod", "team", "p"),
            ("ValidatingWebhookConfiguration", "", "old-operator"),
        ]
    )
    assert api.writes() == []
    assert preflight.run(api, KINDS, "other") == [f for f in found if not f.namespace]


def args(**kw: Any) -> argparse.Namespace:
    base: Obj = dict(
        kinds=None,
        kubeconfig=None,
        context=None,
        request_timeout=5.0,
        namespace=None,
        all_namespaces=True,
        output="table",
        show_all=False,
        page_size=500,
        upgrade_to="1.5",
    )
    return argparse.Namespace(**{**base, **kw})


def connect_to(monkeypatch: pytest.MonkeyPatch, api: FakeApi) -> None:
    monkeypatch.setattr(
        "app.cluster.audit_command.connect",
        lambda a: argparse.Namespace(kube=api, default_namespace="default"),
    )
    monkeypatch.setattr("app.cluster.audit_command.settings_from_args", lambda a: None)


def test_the_command_prints_json_github_and_table_and_exits_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    api = fake_cluster()
    connect_to(monkeypatch, api)
    assert cmd_audit(args(output="json")) == 1
    doc = orjson.loads(capsys.readouterr().out)
    assert {f["kind"] for f in doc["findings"]} >= {"Pod", rules.DGD, rules.CHECKPOINT}
    assert all(set(f) == {"kind", "namespace", "name", "breaks", "fix", "source"} for f in doc["findings"])
    assert cmd_audit(args(output="github")) == 1
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("::warning title=Pod team/p::") for line in lines) == 1
    assert cmd_audit(args()) == 1
    assert "Pod team/p: DYN_SNAPSHOT_RESTORE_STANDBY is set" in capsys.readouterr().out


def test_a_list_the_cluster_refuses_exits_two_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    api = fake_cluster()

    def forbid(call: Any) -> None:
        if "validatingwebhookconfigurations" in call.path:
            raise ApiError(403, "Forbidden", "validatingwebhookconfigurations is forbidden")

    api.before = forbid
    connect_to(monkeypatch, api)
    assert cmd_audit(args(output="json")) == 2
    assert capsys.readouterr().err == (
        "dynamo-webhook audit: cannot read the cluster: the server refused the request "
        "(403 Forbidden): validatingwebhookconfigurations is forbidden\n"
    )


def test_github_output_without_upgrade_to_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cmd_audit(args(output="github", upgrade_to=None)) == 2
    assert capsys.readouterr().err == "dynamo-webhook audit: -o github is for --upgrade-to\n"


def test_a_clean_cluster_says_so_and_exits_zero() -> None:
    out = io.StringIO()
    preflight.render([], "table", out)
    assert "nothing found that breaks" in out.getvalue() and preflight.exit_code([]) == 0


# --------------------------------------------------------------------------- the docs


ROOT = FsPath(__file__).resolve().parents[3]


def test_the_docs_name_every_source_the_rules_cite() -> None:
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text[text.index("## Upgrading the operator to 1.5") : text.index("## Metrics, logs and alerts")]
    for source in (rules.NOTES_1_5, rules.SNAPSHOT_PR, rules.RUNTIME_VERSION_PR, rules.ELASTIC_EP_PR):
        assert f"<{source}>" in section
    for pull in (rules.SNAPSHOT_PR, rules.RUNTIME_VERSION_PR, rules.ELASTIC_EP_PR):
        assert f"| pull {pull.rsplit('/', 1)[1]} |" in section


def _property_names(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        yield from (schema.get("properties") or {})
        for value in schema.values():
            yield from _property_names(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _property_names(item)


@pytest.mark.parametrize("plural", ["dynamographdeployments", "dynamocomponentdeployments"])
def test_the_pinned_crds_have_no_roles_field_for_1_6_rules_to_check(plural: str) -> None:
    crd = yaml.safe_load((ROOT / "tests" / "fixtures" / "crds" / f"nvidia.com_{plural}.yaml").read_text())
    for version in crd["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert "roles" not in set(_property_names(spec))
        assert "multinode" in set(_property_names(spec))  # the walk reaches the component fields
