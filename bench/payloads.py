"""Review bodies for the benchmark and the soak tests, built from the upstream manifests in
``tests/fixtures/admission/manifests`` and given the metadata a cluster adds (namespace, uid,
resourceVersion, generation, creationTimestamp, managedFields, a status).

Objects come in the three forms a cluster holds:

* **migrated** v1beta1: a v1alpha1 manifest converted with :func:`kinds.convert`, so it carries
  the payload annotation (``nvidia.com/dgd-spec``) as every object written through v1alpha1 does;
* **native** v1beta1: a v1beta1 manifest, no annotation;
* **v1alpha1**: the v1alpha1 manifest itself.

Every builder returns a review the service allows (``tests/bench/test_payloads.py``), so the
benchmark never measures refusals, but for the bodies of numbers past a double's range
(:data:`OUT_OF_RANGE_OBJECTS`), which are refusals by design: what they cost is the measure.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml

import kinds
from conversion.v1alpha1.component.schemas import EPP_CONFIG
from gocompat.marshal import marshal

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "tests" / "fixtures" / "admission" / "manifests"
EXAMPLES = ROOT / "examples"

GROUP = "nvidia.com"
ALPHA = f"{GROUP}/v1alpha1"
BETA = f"{GROUP}/v1beta1"
NAMESPACE = "inference"
CREATED = "2026-01-12T09:30:00Z"
UPDATED = "2026-02-03T14:05:11Z"
PLURALS = {
    "DynamoGraphDeployment": "dynamographdeployments",
    "DynamoComponentDeployment": "dynamocomponentdeployments",
    "DynamoGraphDeploymentRequest": "dynamographdeploymentrequests",
    "DynamoGraphDeploymentScalingAdapter": "dynamographdeploymentscalingadapters",
}
USER = {
    "username": "alice@example.com",
    "uid": "8d0bd5e4-3c9a-4f43-9d43-0c3b1d1a4f6e",
    "groups": ["ml-platform", "system:authenticated"],
}

Doc = dict[str, Any]

# The manifests the scenarios start from (paths below tests/fixtures/admission/manifests).
DGD_ALPHA_AGG = "v1alpha1/DynamoGraphDeployment/vllm-agg__utils-tests-fixtures-v1alpha1-agg.yaml"
DGD_ALPHA_DISAGG = "v1alpha1/DynamoGraphDeployment/trtllm-disagg-planner.yaml"
DGD_BETA_AGG = "v1beta1/DynamoGraphDeployment/vllm-agg__vllm-agg.yaml"
DCD_BETA = "v1beta1/DynamoComponentDeployment/deployment-manifest.yaml"
DGDR_ALPHA = "v1alpha1/DynamoGraphDeploymentRequest/sla-online__profiler-profile_sla_dgdr.yaml"
DGDR_BETA = "v1beta1/DynamoGraphDeploymentRequest/qwen-planner.yaml"
DGDSA_BETA = EXAMPLES / "manifests" / "dgdsa-v1beta1.yaml"

#: Components of the large graph (a frontend, a planner and 11 prefill + 11 decode workers).
LARGE_COMPONENTS = 24


def manifest(rel: str) -> Doc:
    doc: Doc = yaml.safe_load((MANIFESTS / rel).read_text())
    return doc


def manifests(api_version: str, kind: str) -> list[Doc]:
    """Every fixture manifest of one version and kind, in file-name order."""
    folder = MANIFESTS / api_version.rsplit("/", 1)[1] / kind
    return [yaml.safe_load(p.read_text()) for p in sorted(folder.glob("*.yaml"))]


# --------------------------------------------------------------------------- cluster metadata


def _fields(value: Any) -> Doc:
    """A managedFields ``fieldsV1`` tree for ``value`` (maps by key, lists of named items by
    name, other lists atomic)."""
    if isinstance(value, dict):
        out: Doc = {".": {}}
        for key, item in value.items():
            out[f"f:{key}"] = _fields(item)
        return out
    if isinstance(value, list) and value and all(isinstance(i, dict) and "name" in i for i in value):
        return {f"k:{json.dumps({'name': i['name']}, separators=(',', ':'))}": _fields(i) for i in value}
    return {}


def managed_fields(obj: Doc, manager: str = "kubectl-client-side-apply") -> list[Doc]:
    """managedFields as the apiserver records them: the client's spec/metadata, the operator's status."""
    meta = obj.get("metadata") or {}
    owned: Doc = {"f:spec": _fields(obj.get("spec") or {})}
    meta_fields = {f"f:{k}": _fields(meta[k]) for k in ("annotations", "labels") if meta.get(k)}
    if meta_fields:
        owned["f:metadata"] = meta_fields
    entries = [
        {
            "manager": manager,
            "operation": "Update",
            "apiVersion": obj["apiVersion"],
            "time": CREATED,
            "fieldsType": "FieldsV1",
            "fieldsV1": owned,
        }
    ]
    if obj.get("status"):
        entries.append(
            {
                "manager": "manager",
                "operation": "Update",
                "apiVersion": obj["apiVersion"],
                "time": UPDATED,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": _fields(obj["status"])},
                "subresource": "status",
            }
        )
    return entries


def stored(obj: Doc, *, serial: int = 0, generation: int = 3, status: Doc | None = None) -> Doc:
    """``obj`` as the apiserver stores it: namespace, uid, resourceVersion, generation,
    creationTimestamp, a status (when given) and managedFields."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    name = meta.get("name", "obj")
    if serial:
        meta["name"] = name = f"{name}-{serial}"
    meta["namespace"] = NAMESPACE
    meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{out['kind']}/{NAMESPACE}/{name}"))
    meta["resourceVersion"] = str(48_213_907 + serial * 17)
    meta["generation"] = generation
    meta["creationTimestamp"] = CREATED
    if status is not None:
        out["status"] = status
    meta["managedFields"] = managed_fields(out)
    return out


def creating(obj: Doc) -> Doc:
    """``obj`` as admission sees it on CREATE: namespace and managedFields, no uid or generation yet."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta["namespace"] = NAMESPACE
    meta["managedFields"] = managed_fields(out)
    return out


def dgd_status_alpha(dgd: Doc, generation: int) -> Doc:
    """A settled v1alpha1 DGD status: Ready, every service at its replicas."""
    name = dgd["metadata"]["name"]
    services = {}
    for svc, spec in (dgd["spec"].get("services") or {}).items():
        replicas = int(spec.get("replicas") or 1)
        services[svc] = {
            "componentKind": "PodClique",
            "componentName": f"{name}-0-{svc.lower()}",
            "componentNames": [f"{name}-0-{svc.lower()}"],
            "replicas": replicas,
            "readyReplicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": replicas,
        }
    return {
        "state": "successful",
        "observedGeneration": generation,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "all_resources_are_ready",
                "message": "All resources are ready",
                "lastTransitionTime": UPDATED,
            }
        ],
        "services": services,
    }


def dgd_status_beta(dgd: Doc, generation: int) -> Doc:
    """The v1beta1 form of :func:`dgd_status_alpha` (components keyed by name)."""
    services = {c["name"]: {"replicas": c.get("replicas", 1)} for c in dgd["spec"].get("components") or []}
    alpha = dgd_status_alpha({"metadata": dgd["metadata"], "spec": {"services": services}}, generation)
    components = alpha.pop("services")
    for entry in components.values():
        del entry["componentName"]
    alpha["components"] = components
    return alpha


def alpha_dgd(doc: Doc, *, serial: int = 0, generation: int = 3) -> Doc:
    """A v1alpha1 DGD manifest as stored, with a settled status."""
    doc = epp_as_written(doc)
    return stored(doc, serial=serial, generation=generation, status=dgd_status_alpha(doc, generation))


def epp_as_written(doc: Doc) -> Doc:
    """A copy of a v1alpha1 DGD with its EPP configs as the operator writes them (what a cluster
    holds once it has converted the object): plugins with their ``name`` and ``parameters``,
    scheduling-profile plugins with their ``weight``, at Go's zero values when unset."""
    out = copy.deepcopy(doc)
    for service in (out.get("spec", {}).get("services") or {}).values():
        epp = (service or {}).get("eppConfig")
        if isinstance(epp, dict) and isinstance(epp.get("config"), dict):
            epp["config"] = marshal(EPP_CONFIG, epp["config"])
    return out


def migrated(alpha: Doc) -> Doc:
    """A stored v1alpha1 object as v1beta1 (with its payload annotation)."""
    return kinds.convert(alpha, BETA)


# --------------------------------------------------------------------------- reviews


def admission(
    obj: Doc | None, old: Doc | None, operation: str, uid: str = "9a1c0f6e-2b7d-4d8e-8f3a-5c6b7d8e9f01"
) -> Doc:
    """An AdmissionReview as the apiserver sends it for ``obj`` (and ``old`` on UPDATE)."""
    ref = obj if obj is not None else old
    assert ref is not None
    group, version = ref["apiVersion"].split("/")
    kind = ref["kind"]
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": PLURALS[kind]}
    meta = ref.get("metadata") or {}
    options_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions"}.get(operation, "DeleteOptions")
    request: Doc = {
        "uid": uid,
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", NAMESPACE),
        "operation": operation,
        "userInfo": USER,
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {
            "kind": options_kind,
            "apiVersion": "meta.k8s.io/v1",
            "fieldManager": "kubectl-client-side-apply",
            "fieldValidation": "Strict",
        },
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def update(old: Doc, change: Callable[[Doc], None]) -> Doc:
    """An UPDATE review: ``old`` as stored, the new object ``change``d with its generation bumped."""
    new = copy.deepcopy(old)
    change(new)
    new["metadata"]["generation"] = int(old["metadata"].get("generation") or 1) + 1
    return admission(new, old, "UPDATE")


def _scale_last_component(obj: Doc) -> None:
    spec = obj["spec"]
    if "components" in spec:
        target = spec["components"][-1]
    elif "services" in spec:
        target = spec["services"][list(spec["services"])[-1]]
    else:
        target = spec
    target["replicas"] = int(target.get("replicas") or 1) + 1


def migrated_dgd() -> Doc:
    """The v1alpha1 aggregated vLLM DGD, stored, as v1beta1 (annotated)."""
    return migrated(alpha_dgd(manifest(DGD_ALPHA_AGG)))


def dgd_migrated_update() -> Doc:
    """UPDATE of a migrated v1beta1 DGD: one component's replicas changed."""
    return update(migrated_dgd(), _scale_last_component)


def dgd_native_update() -> Doc:
    """UPDATE of a native v1beta1 DGD (no payload annotation): one component's replicas changed."""
    doc = manifest(DGD_BETA_AGG)
    return update(stored(doc, status=dgd_status_beta(doc, 3)), _scale_last_component)


def dgd_v1alpha1_update() -> Doc:
    """UPDATE of a v1alpha1 DGD (kind and requestKind v1alpha1): one service's replicas changed."""
    return update(alpha_dgd(manifest(DGD_ALPHA_AGG)), _scale_last_component)


def dgd_migrated_create() -> Doc:
    """CREATE of the migrated DGD (what a v1alpha1 client's create looks like at the v1beta1 hooks)."""
    obj = kinds.convert(creating(manifest(DGD_ALPHA_AGG)), BETA)
    return admission(obj, None, "CREATE")


def dcd_update() -> Doc:
    """UPDATE of the v1beta1 DCD example: replicas changed."""
    status = {
        "observedGeneration": 3,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "DeploymentReady",
                "lastTransitionTime": UPDATED,
            }
        ],
    }
    return update(stored(manifest(DCD_BETA), status=status), _scale_last_component)


def dgdr_create() -> Doc:
    """CREATE of the v1beta1 DGDR example."""
    return admission(creating(manifest(DGDR_BETA)), None, "CREATE")


def large_alpha_dgd(components: int = LARGE_COMPONENTS) -> Doc:
    """The disaggregated TensorRT-LLM DGD (v1alpha1) grown to ``components`` services: its frontend
    and planner, then its prefill and decode workers copied under new names."""
    doc = manifest(DGD_ALPHA_DISAGG)
    services = doc["spec"]["services"]
    workers = {name: services.pop(name) for name in ("prefill", "decode")}
    grown = dict(services)
    i = 0
    while len(grown) < components:
        role = ("prefill", "decode")[i % 2]
        grown[f"{role}-{i // 2}"] = copy.deepcopy(workers[role])
        i += 1
    doc["spec"]["services"] = grown
    doc["metadata"]["name"] = "trtllm-disagg-large"
    return doc


def large_dgd_update() -> Doc:
    """UPDATE of a migrated v1beta1 DGD of :data:`LARGE_COMPONENTS` components."""
    return update(migrated(alpha_dgd(large_alpha_dgd())), _scale_last_component)


# --------------------------------------------------------------------------- stored objects per kind


def alpha_dgds() -> list[Doc]:
    """The v1alpha1 DGD fixtures as stored."""
    return [alpha_dgd(doc) for doc in manifests(ALPHA, "DynamoGraphDeployment")]


def _services(dgd: Doc) -> list[tuple[str, Doc]]:
    return list((dgd["spec"].get("services") or {}).items())


def alpha_dcds() -> list[Doc]:
    """The v1alpha1 DCDs the operator makes for the services of the v1alpha1 DGD fixtures, as stored."""
    out = []
    for dgd in manifests(ALPHA, "DynamoGraphDeployment"):
        name = dgd["metadata"]["name"]
        for svc, spec in _services(epp_as_written(dgd)):
            dcd = {
                "apiVersion": ALPHA,
                "kind": "DynamoComponentDeployment",
                "metadata": {
                    "name": f"{name}-{svc.lower()}",
                    "labels": {
                        "nvidia.com/dynamo-graph-deployment-name": name,
                        "nvidia.com/dynamo-component": svc,
                    },
                },
                "spec": {
                    **copy.deepcopy(spec),
                    "serviceName": svc,
                    "backendFramework": dgd["spec"].get("backendFramework", "vllm"),
                    "dynamoNamespace": f"{NAMESPACE}-{name}",
                },
            }
            status = {
                "observedGeneration": 3,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "DeploymentReady",
                        "lastTransitionTime": UPDATED,
                    }
                ],
            }
            out.append(stored(dcd, status=status))
    return out


def alpha_dgdsas() -> list[Doc]:
    """The v1alpha1 scaling adapters of the services of the v1alpha1 DGD fixtures, as stored."""
    out = []
    for dgd in manifests(ALPHA, "DynamoGraphDeployment"):
        name = dgd["metadata"]["name"]
        for svc, spec in _services(dgd):
            replicas = int(spec.get("replicas") or 1)
            adapter = {
                "apiVersion": ALPHA,
                "kind": "DynamoGraphDeploymentScalingAdapter",
                "metadata": {"name": f"{name}-{svc.lower()}"},
                "spec": {"replicas": replicas, "dgdRef": {"name": name, "serviceName": svc}},
            }
            status = {
                "replicas": replicas,
                "selector": f"nvidia.com/dynamo-graph-deployment-name={name},nvidia.com/dynamo-component={svc}",
                "lastScaleTime": UPDATED,
            }
            out.append(stored(adapter, status=status))
    return out


def alpha_dgdrs() -> list[Doc]:
    """The v1alpha1 DGDR fixtures as stored (profiling under way)."""
    status = {"state": "Profiling", "observedGeneration": 1}
    return [
        stored(doc, generation=1, status=status) for doc in manifests(ALPHA, "DynamoGraphDeploymentRequest")
    ]


#: The stored v1alpha1 objects of each convertible kind (their migrated forms go the other way).
STORED_ALPHA: dict[str, Callable[[], list[Doc]]] = {
    "DynamoGraphDeployment": alpha_dgds,
    "DynamoComponentDeployment": alpha_dcds,
    "DynamoGraphDeploymentRequest": alpha_dgdrs,
    "DynamoGraphDeploymentScalingAdapter": alpha_dgdsas,
}


# --------------------------------------------------------------------------- conversion reviews


def conversion_review(objects: int = 500, desired: str = BETA) -> Doc:
    """A ConversionReview of ``objects`` stored DGDs (as for a large list call): v1alpha1 DGDs
    to v1beta1, or (``desired`` v1alpha1) migrated v1beta1 DGDs back to v1alpha1. The objects
    cycle through the v1alpha1 DGD fixtures, each with its own name, uid and resourceVersion."""
    sources = manifests(ALPHA, "DynamoGraphDeployment")
    out = []
    for i in range(objects):
        obj = alpha_dgd(sources[i % len(sources)], serial=i + 1)
        out.append(migrated(obj) if desired == ALPHA else obj)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c0a1b2c3-0500-4000-8000-000000000500",
            "desiredAPIVersion": desired,
            "objects": out,
        },
    }


#: The v1alpha1 DGD fixtures a large LIST cycles through (the three smallest, so that 33,000 of
#: them come to about 61 MiB, near ``max_conversion_bytes``).
LIST_SOURCES = ("my-llm", "qwen3-0-6b-agg", "vllm-agg")


def list_review(objects: int, desired: str = BETA) -> Doc:
    """The ConversionReview of an unpaginated LIST of ``objects`` stored v1alpha1 DGDs (without
    managedFields, about 1.9 KiB each), to v1beta1; or (``desired`` v1alpha1) of their migrated
    forms back."""
    sources = [m for m in manifests(ALPHA, "DynamoGraphDeployment") if m["metadata"]["name"] in LIST_SOURCES]
    out = []
    for i in range(objects):
        obj = alpha_dgd(sources[i % len(sources)], serial=i + 1)
        del obj["metadata"]["managedFields"]
        out.append(migrated(obj) if desired == ALPHA else obj)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": f"c0a1b2c3-0000-4000-8000-{objects:012d}",
            "desiredAPIVersion": desired,
            "objects": out,
        },
    }


def huge_admission(target_bytes: int) -> Doc:
    """A DGD UPDATE padded with annotations to about ``target_bytes`` (still an allowed review)."""
    review = dgd_migrated_update()
    meta = review["request"]["object"].setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    base = len(orjson.dumps(review))
    chunk = "x" * 4000
    i = 0
    while base + i * (len(chunk) + 40) < target_bytes:
        annotations[f"bench.example.com/pad-{i}"] = chunk
        i += 1
    return review


# --------------------------------------------------------------------------- numbers past a double's range


#: Objects holding numbers past a double's range (valid JSON that orjson refuses), written as bytes
#: since orjson writes no such number: the shapes :mod:`bench.bench_numbers` times, each beside
#: realistic objects of the same size. A review of any of them is refused (code 400, in the review).
OUT_OF_RANGE_OBJECTS: dict[str, bytes] = {
    # 199 bytes: 32 numbers in as few bytes as they take.
    "32 × 1e400": b'{"a":[' + b",".join([b"1e400"] * 32) + b"]}",
    "32 × 1e99999999999999999999": b'{"a":[' + b",".join([b"1e99999999999999999999"] * 32) + b"]}",
    "one number of 100,000 digits": b'{"a":' + b"9" * 100_000 + b"}",
    "one 1e400, 2,000 × 1e300": b'{"a":[1e400,' + b",".join([b"1e300"] * 2000) + b"]}",
    "one 1e400, 20,000 × 0": b'{"a":[1e400,' + b",".join([b"0"] * 20_000) + b"]}",
    "one 1e400, 20,000 escapes": b'{"a":[1e400,"' + b"\\u00e9" * 20_000 + b'"]}',
    "one key 32 times, each 1e400": b"{" + b",".join([b'"a":1e400'] * 32) + b"}",
}


def encoded_conversion_review(objects: list[bytes], desired: str = BETA) -> bytes:
    """A ConversionReview of ``objects``, each given as its JSON text."""
    head = orjson.dumps(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "c0a1b2c3-1e40-4000-8000-000000000400",
                "desiredAPIVersion": desired,
                "objects": [],
            },
        }
    )
    return head[: -len(b"]}}")] + b",".join(objects) + b"]}}"


def dump(doc: Any, path: Path) -> Path:
    path.write_bytes(orjson.dumps(doc))
    return path
