"""Hypothesis strategies for structurally valid DGD/DCD objects (shaped by the CRD schemas)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conversion.podtemplate import container_is_empty

J = dict[str, Any]

ALPHA = "nvidia.com/v1alpha1"
BETA = "nvidia.com/v1beta1"

NAMES = st.sampled_from(["Frontend", "decode", "prefill", "planner", "worker", "epp", "aa-router", "Zeta"])
SMALL = st.text(alphabet="abcxyz019-", min_size=1, max_size=6)
CANON_QTY = st.sampled_from(["1", "2", "500m", "1Gi", "16Gi", "100Mi", "8", "0", "250m", "1k"])
ANY_QTY = st.one_of(
    CANON_QTY, st.sampled_from(["1000m", "1024Mi", "0.5", "1.5Gi", "1e3", "2000", "+1", "bogus"])
)
# Map values include "": Go keeps every entry of a map[string]string, a marker included.
MAP_VALUE = st.one_of(st.just(""), SMALL)
LABELS = st.dictionaries(st.sampled_from(["app", "team", "tier"]), MAP_VALUE, max_size=2)
LABELS1 = st.dictionaries(st.sampled_from(["app", "team", "tier"]), MAP_VALUE, min_size=1, max_size=2)


def _opt(d: J, key: str, strat: st.SearchStrategy[Any], draw: Any) -> None:
    if draw(st.booleans()):
        d[key] = draw(strat)


ENV = st.fixed_dictionaries(
    {"name": st.sampled_from(["A", "B", "NCCL_DEBUG", "HF_HOME"])}, optional={"value": SMALL}
)
ENVS = st.lists(ENV, max_size=3, unique_by=lambda e: e["name"])
ENVS1 = st.lists(ENV, min_size=1, max_size=3, unique_by=lambda e: e["name"])
PROBE = st.fixed_dictionaries(
    {
        "httpGet": st.fixed_dictionaries(
            {"path": st.sampled_from(["/health", "/live"]), "port": st.integers(1, 9000)}
        )
    },
    optional={"periodSeconds": st.integers(1, 60)},
)
ENV_FROM = st.lists(
    st.fixed_dictionaries({"secretRef": st.fixed_dictionaries({"name": st.sampled_from(["hf", "token"])})}),
    min_size=1,
    max_size=1,
)
_LIMITS = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "rdma/ib"]), CANON_QTY, min_size=1
)
_REQUESTS = st.dictionaries(st.sampled_from(["cpu", "memory"]), CANON_QTY, min_size=1)
NATIVE_RESOURCES = st.one_of(
    st.fixed_dictionaries({"limits": _LIMITS}),
    st.fixed_dictionaries({"requests": _REQUESTS}),
    st.fixed_dictionaries({"limits": _LIMITS, "requests": _REQUESTS}),
)
NATIVE_MOUNT = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["cache", "models", "shm"]),
        "mountPath": st.sampled_from(["/cache", "/models", "/dev/shm"]),
    },
    # readOnly: false is a Go zero value that the Go types drop (omitempty)
    optional={"readOnly": st.booleans()},
)


@st.composite
def container(draw: Any, name: st.SearchStrategy[str]) -> J:
    c: J = {"name": draw(name)}
    _opt(c, "image", st.sampled_from(["img:1", "img:2"]), draw)
    _opt(c, "args", st.lists(SMALL, min_size=1, max_size=2), draw)
    _opt(c, "env", ENVS1, draw)
    _opt(c, "envFrom", ENV_FROM, draw)
    _opt(c, "resources", NATIVE_RESOURCES, draw)
    _opt(
        c,
        "volumeMounts",
        st.lists(NATIVE_MOUNT, min_size=1, max_size=2, unique_by=lambda m: (m["name"], m["mountPath"])),
        draw,
    )
    _opt(c, "readinessProbe", PROBE, draw)
    _opt(c, "securityContext", st.fixed_dictionaries({"runAsUser": st.integers(0, 2)}), draw)
    # Go zero values: dropped (omitempty) or kept (a pointer to a zero value)
    _opt(c, "stdin", st.booleans(), draw)
    _opt(c, "ports", st.just([{"containerPort": 8000, "hostPort": 0}]), draw)
    _opt(c, "lifecycle", st.just({}), draw)
    return c


SIDECAR_NAMES = st.sampled_from(["sidecar", "logger", "sidecar-frontend"])


# --- v1alpha1 ----------------------------------------------------------------------------------

ALPHA_ITEM = st.fixed_dictionaries(
    {},
    optional={
        "cpu": ANY_QTY,
        "memory": ANY_QTY,
        "gpu": CANON_QTY,
        "gpuType": st.sampled_from(["nvidia.com/mig-1g.10gb"]),
        "custom": st.dictionaries(
            st.sampled_from(["rdma/ib", "example.com/fpga"]), CANON_QTY, min_size=1, max_size=1
        ),
    },
)
ALPHA_MOUNT = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["cache", "models", "extra"]),
        "mountPoint": st.sampled_from(["/cache", "/models", "/x"]),
    },
    optional={"useAsCompilationCache": st.just(True)},
)


@st.composite
def alpha_component(draw: Any, name: str | None = None) -> J:
    s: J = {}
    ctype = draw(st.sampled_from(["frontend", "worker", "planner", "epp", "", "custom"]))
    if ctype:
        s["componentType"] = ctype
    sub = draw(st.sampled_from(["", "prefill", "decode", "other"]))
    if sub:
        s["subComponentType"] = sub
    if name is not None and draw(st.booleans()):
        s["serviceName"] = name + "-svc"
    _opt(s, "replicas", st.integers(0, 4), draw)
    _opt(s, "envs", st.one_of(ENVS1, st.just([])), draw)
    _opt(s, "envFromSecret", st.sampled_from(["", "hf", "token"]), draw)
    _opt(
        s,
        "resources",
        st.fixed_dictionaries(
            {}, optional={"requests": ALPHA_ITEM, "limits": ALPHA_ITEM, "claims": st.just([])}
        ),
        draw,
    )
    _opt(
        s,
        "volumeMounts",
        st.lists(ALPHA_MOUNT, min_size=1, max_size=3, unique_by=lambda m: (m["name"], m["mountPoint"])),
        draw,
    )
    _opt(
        s,
        "sharedMemory",
        st.fixed_dictionaries(
            {}, optional={"disabled": st.just(True), "size": st.sampled_from(["0", "1Gi", "16Gi"])}
        ),
        draw,
    )
    _opt(
        s,
        "extraPodMetadata",
        st.fixed_dictionaries({}, optional={"annotations": LABELS1, "labels": LABELS1}),
        draw,
    )
    if draw(st.booleans()):
        eps: J = {}
        _opt(eps, "nodeSelector", LABELS1, draw)
        _opt(eps, "affinity", st.just({}), draw)
        _opt(eps, "hostNetwork", st.booleans(), draw)
        _opt(
            eps,
            "containers",
            st.lists(container(SIDECAR_NAMES), min_size=1, max_size=2, unique_by=lambda c: c["name"]),
            draw,
        )
        if draw(st.booleans()):
            mc = draw(container(st.sampled_from(["", "main", "custom-main"])))
            if not mc["name"]:
                del mc["name"]
            flat = {(m["name"], m["mountPoint"]) for m in s.get("volumeMounts") or ()}
            if mc.get("volumeMounts"):
                # A mount declared both ways is merged into one upstream (not representable).
                mc["volumeMounts"] = [
                    m for m in mc["volumeMounts"] if (m["name"], m["mountPath"]) not in flat
                ]
                if not mc["volumeMounts"]:
                    del mc["volumeMounts"]
            secret = s.get("envFromSecret")
            if secret and mc.get("envFrom") == [{"secretRef": {"name": secret}}]:
                # Upstream drops a mainContainer envFrom that repeats envFromSecret.
                mc["envFrom"] = [{"secretRef": {"name": secret + "-other"}}]
            if container_is_empty(mc):
                # An empty mainContainer (Go zero values only) is dropped upstream (not
                # representable).
                mc["image"] = "img:main"
            eps["mainContainer"] = mc
        s["extraPodSpec"] = eps
    _opt(s, "livenessProbe", PROBE, draw)
    _opt(s, "readinessProbe", PROBE, draw)
    _opt(s, "dynamoNamespace", SMALL, draw)
    _opt(s, "annotations", LABELS1, draw)
    _opt(s, "labels", LABELS1, draw)
    _opt(
        s,
        "autoscaling",
        st.fixed_dictionaries({"minReplicas": st.integers(1, 3)}, optional={"enabled": st.just(True)}),
        draw,
    )
    _opt(s, "ingress", st.fixed_dictionaries({"host": SMALL}, optional={"enabled": st.just(True)}), draw)
    _opt(s, "scalingAdapter", st.sampled_from([{}, {"enabled": True}]), draw)
    _opt(s, "multinode", st.fixed_dictionaries({"nodeCount": st.integers(1, 4)}), draw)
    _opt(s, "modelRef", st.fixed_dictionaries({"name": SMALL}, optional={"revision": SMALL}), draw)
    _opt(
        s,
        "gpuMemoryService",
        st.fixed_dictionaries(
            {"enabled": st.booleans()}, optional={"mode": st.sampled_from(["intraPod", "interPod"])}
        ),
        draw,
    )
    _opt(
        s,
        "failover",
        st.fixed_dictionaries({"enabled": st.booleans()}, optional={"numShadows": st.integers(1, 2)}),
        draw,
    )
    _opt(
        s,
        "checkpoint",
        st.fixed_dictionaries(
            {}, optional={"enabled": st.just(True), "mode": st.sampled_from(["Auto", "Manual"])}
        ),
        draw,
    )
    _opt(
        s,
        "frontendSidecar",
        st.fixed_dictionaries(
            {"image": st.sampled_from(["fe:1", "fe:2"])},
            optional={
                "args": st.lists(SMALL, min_size=1, max_size=2),
                "envs": ENVS1,
                "envFromSecret": st.sampled_from(["", "hf"]),
            },
        ),
        draw,
    )
    _opt(s, "globalDynamoNamespace", st.just(True), draw)
    if s.get("volumeMounts"):
        # Upstream quirk: a single compilation-cache mount comes back first when the origin
        # split is not saved (it is projected before the main-container mounts) and last
        # when an extraPodSpec.mainContainer makes the origin split restore the plain mounts
        # first. Generate it where it comes back.
        has_main = isinstance((s.get("extraPodSpec") or {}).get("mainContainer"), dict)
        s["volumeMounts"].sort(key=lambda m: bool(m.get("useAsCompilationCache")) == has_main)
    eps_containers = (s.get("extraPodSpec") or {}).get("containers")
    if "frontendSidecar" in s and eps_containers:
        # A user container named like the generated sidecar loses the sidecar's fields
        # upstream; keep the two apart.
        kept = [c for c in eps_containers if c["name"] != "sidecar-frontend"]
        if kept:
            s["extraPodSpec"]["containers"] = kept
        else:
            del s["extraPodSpec"]["containers"]
    return s


@st.composite
def alpha_dgd(draw: Any) -> J:
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    services = {n: draw(alpha_component(n)) for n in names}
    spec: J = {"services": services}
    _opt(spec, "backendFramework", st.sampled_from(["vllm", "sglang", "trtllm"]), draw)
    _opt(spec, "envs", ENVS1, draw)
    _opt(
        spec,
        "pvcs",
        st.lists(
            st.fixed_dictionaries(
                {"name": SMALL}, optional={"create": st.booleans(), "size": st.sampled_from(["10Gi", "1Ti"])}
            ),
            min_size=1,
            max_size=2,
        ),
        draw,
    )
    _opt(
        spec,
        "topologyConstraint",
        st.fixed_dictionaries(
            {"topologyProfile": SMALL}, optional={"packDomain": st.sampled_from(["rack", "host"])}
        ),
        draw,
    )
    obj: J = {
        "apiVersion": ALPHA,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": spec,
    }
    if draw(st.booleans()):
        obj["metadata"]["annotations"] = {"keep": "me", "flag": ""}
    if draw(st.booleans()):
        obj["status"] = {
            "state": draw(st.sampled_from(["pending", "successful"])),
            "services": {
                n: draw(
                    st.fixed_dictionaries(
                        {
                            "componentKind": st.just("Deployment"),
                            "replicas": st.integers(0, 3),
                            "updatedReplicas": st.integers(0, 3),
                        },
                        optional={
                            "componentName": st.sampled_from(["a", "b"]),
                            "componentNames": st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2),
                        },
                    )
                )
                for n in names[:2]
            },
        }
    return obj


@st.composite
def alpha_dcd(draw: Any) -> J:
    spec = draw(alpha_component(None))
    if draw(st.booleans()):
        spec["serviceName"] = draw(st.sampled_from(["worker", "other"]))
    _opt(spec, "backendFramework", st.sampled_from(["vllm", "sglang"]), draw)
    obj: J = {
        "apiVersion": ALPHA,
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": draw(st.sampled_from(["worker", "dcd"]))},
        "spec": spec,
    }
    if draw(st.booleans()):
        obj["status"] = {
            "podSelector": draw(LABELS1),
            "service": draw(
                st.fixed_dictionaries(
                    {"componentKind": st.just("Deployment"), "replicas": st.integers(0, 3)},
                    optional={
                        "componentName": st.sampled_from(["a", "b"]),
                        "componentNames": st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2),
                    },
                )
            ),
        }
    return obj


# --- v1beta1 -----------------------------------------------------------------------------------


@st.composite
def beta_component(draw: Any, name: str) -> J:
    c: J = {"name": name}
    _opt(c, "type", st.sampled_from(["frontend", "worker", "prefill", "decode", "planner", "epp"]), draw)
    _opt(c, "replicas", st.integers(0, 4), draw)
    if draw(st.booleans()):
        tpl: J = {}
        if draw(st.booleans()):
            tpl["metadata"] = draw(
                st.fixed_dictionaries({}, optional={"labels": LABELS1, "annotations": LABELS1})
            )
        spec: J = {}
        containers = draw(
            st.lists(
                container(st.sampled_from(["main", "sidecar", "logger", "sidecar-frontend"])),
                max_size=3,
                unique_by=lambda x: x["name"],
            )
        )
        if containers:
            spec["containers"] = containers
        _opt(spec, "nodeSelector", LABELS1, draw)
        _opt(spec, "affinity", st.just({}), draw)
        _opt(spec, "hostNetwork", st.booleans(), draw)
        if spec:
            tpl["spec"] = spec
        c["podTemplate"] = tpl
    _opt(c, "sharedMemorySize", st.sampled_from(["0", "1Gi", "16Gi"]), draw)
    _opt(
        c,
        "compilationCache",
        st.fixed_dictionaries(
            {"pvcName": st.sampled_from(["cache", "models"])},
            optional={"mountPath": st.sampled_from(["/cache", "/models"])},
        ),
        draw,
    )
    _opt(c, "scalingAdapter", st.just({}), draw)
    _opt(c, "frontendSidecar", st.sampled_from(["sidecar-frontend", "sidecar"]), draw)
    if draw(st.booleans()):
        exp: J = {}
        _opt(
            exp,
            "gpuMemoryService",
            st.fixed_dictionaries({}, optional={"mode": st.sampled_from(["IntraPod", "InterPod"])}),
            draw,
        )
        _opt(exp, "failover", st.fixed_dictionaries({}, optional={"numShadows": st.integers(1, 2)}), draw)
        _opt(exp, "grove", st.sampled_from([{}, {"forceScalingGroup": True}]), draw)
        _opt(
            exp,
            "checkpoint",
            st.fixed_dictionaries(
                {"enabled": st.booleans()}, optional={"mode": st.sampled_from(["Auto", "Manual"])}
            ),
            draw,
        )
        c["experimental"] = exp
    _opt(c, "multinode", st.fixed_dictionaries({"nodeCount": st.integers(1, 4)}), draw)
    _opt(c, "modelRef", st.fixed_dictionaries({"name": SMALL}), draw)
    _opt(c, "globalDynamoNamespace", st.just(True), draw)
    return c


@st.composite
def beta_dgd(draw: Any) -> J:
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    spec: J = {"components": [draw(beta_component(n)) for n in names]}
    _opt(spec, "backendFramework", st.sampled_from(["vllm", "sglang"]), draw)
    _opt(spec, "env", ENVS1, draw)
    obj: J = {
        "apiVersion": BETA,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": spec,
    }
    if draw(st.booleans()):
        obj["status"] = {
            "state": "successful",
            "components": {
                n: {
                    "componentKind": "Deployment",
                    "componentNames": draw(st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2)),
                    "replicas": 1,
                    "updatedReplicas": 1,
                }
                for n in names[:2]
            },
        }
    return obj


@st.composite
def beta_dcd(draw: Any) -> J:
    spec = draw(beta_component(draw(st.sampled_from(["worker", "", "other"]))))
    _opt(spec, "backendFramework", st.sampled_from(["vllm", "sglang"]), draw)
    obj: J = {
        "apiVersion": BETA,
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "worker"},
        "spec": spec,
    }
    if draw(st.booleans()):
        obj["status"] = {
            "component": {
                "componentKind": "Deployment",
                "componentNames": ["a"],
                "replicas": 1,
                "updatedReplicas": 0,
            }
        }
    return obj
