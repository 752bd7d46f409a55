"""Seeded random edits of Dynamo manifests aimed at what ``dynamo-webhook lint`` reports: the mistakes a
person makes when writing a manifest by hand, each meeting a different step of the API server's create.

- a key mistyped (``replicsa``): an unknown field, refused by strict decoding;
- a value misspelled (``type: wrker``): an enum, a pattern or a webhook rule;
- a value's JSON type flipped (``replicas: "2"``, a list written as an object): the schema's types, or
  the defaulter's typed decode;
- a required field deleted (``env[].name``, a container's ``name``, a DGDR's ``spec.model``), found by
  its name or by the CRD's schema: a list-map key (an ``env`` entry's ``name``, a port's
  ``containerPort``) or a field the schema requires deep in an embedded core type (a PVC's
  ``claimName``, a probe's ``port``, a ``fieldRef``'s ``fieldPath``);
- a ``null`` put into a list (``args: [..., null]``, ``env: [null]``);
- a pattern broken (``runtimeVersionOverride: ${VAR}``, an upper-case topology domain);
- a number out of range (``replicas: -1``), a ``null`` written for a value;
- a wrong kind or version (``DynamoGraphDeploy``, ``nvidia.com/v1beta2``): kubectl's own refusal;
- an invalid ``metadata.name``, label or annotation, or an unknown ``metadata`` field;
- a rule of the CRDs' CEL validations broken (a component name repeated in another case, ...).

Besides these, :data:`EDITS` takes some of :mod:`tools.opdiff.edits`' (a field deleted, a value swapped
from another manifest, a list entry repeated, a quantity respelled, a status sent). Every edit is a pure
function of a ``random.Random``: a seed gives the same documents on every machine.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from apiserver import crds
from apiserver.crds import Schema
from tools.opdiff import edits
from tools.opdiff.edits import Edit, Obj, Path, parent, slots

#: Keys whose values are (mostly) enums in the Dynamo CRDs or in the Kubernetes types they embed.
ENUM_KEYS = {
    "type",
    "componentType",
    "backendFramework",
    "backend",
    "imagePullPolicy",
    "protocol",
    "restartPolicy",
    "volumeAccessMode",
    "searchStrategy",
    "mode",
    "optimization_target",
    "operator",
    "effect",
    "source",
    "modelType",
    "policy",
    "dnsPolicy",
    "scheme",
    "accessMode",
}
#: Keys a schema requires in the object holding them.
REQUIRED_KEYS = {
    "name",
    "model",
    "image",
    "containerPort",
    "key",
    "mountPath",
    "dgdRef",
    "baseModelName",
    "componentName",
    "backend",
    "value",
    "clusterTopologyName",
    "packDomain",
}
#: (key, bad value) for fields with a pattern or a format.
PATTERN_BREAKS = {
    "runtimeVersionOverride": ("${VAR}", "v1", "latest"),
    "packDomain": ("Rack_1", "-zone", "ZONE"),
    "clusterTopologyName": ("Default_Topology", "a.b..c"),
    "size": ("ten gigs", "10 Gi"),
    "memory": ("4 GB", "lots"),
    "cpu": ("two", "1 core"),
    "image": ("",),
    "name": ("Bad_Name", "-x-", "a" * 70),
}
BAD_NAMES = ("Bad_Name", "-leading", "trailing-", "a.b..c", "x" * 254, "with space", "UPPER", "")
BAD_LABELS = (
    ("Bad Key", "v"),
    ("app", "bad value!"),
    ("example.com/" + "k" * 64, "v"),
    ("app", "v" * 64),
    ("-x", "v"),
    ("a/b/c", "v"),
)
WRONG_KINDS = (
    "DynamoGraphDeploy",
    "DynamoGraphDeployments",
    "dynamographdeployment",
    "DynamoModels",
    "DynamoComponent",
    "DGD",
)
WRONG_VERSIONS = ("nvidia.com/v1beta2", "nvidia.com/v1", "nvidia.com/v2alpha1")


def _editable(path: Path) -> bool:
    return path[:1] not in (("apiVersion",), ("kind",)) and path[:1] != ("metadata",)


def _typo(rng: random.Random, word: str) -> str:
    """``word`` mistyped: two neighbouring letters swapped, a letter dropped or one doubled."""
    if len(word) < 2:
        return word + "x"
    i = rng.randrange(len(word) - 1)
    way = rng.randrange(3)
    if way == 0 and word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if way == 1:
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]


def mistyped_key(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A key written with a typo (``replicas`` as ``replicsa``): an unknown field, unless the object
    keeps unknown fields."""
    paths = [p for p, _ in slots(obj) if _editable(p) and isinstance(p[-1], str) and len(p) > 1]
    if not paths:
        return False
    path = rng.choice(paths)
    holder = parent(obj, path)
    key = str(path[-1])
    new = _typo(rng, key)
    if new in holder:
        return False
    # Kept in place, so that the document reads as the person wrote it.
    items = list(holder.items())
    holder.clear()
    holder.update((new if k == key else k, v) for k, v in items)
    return True


def misspelled_value(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """An enum-like value misspelled (``type: wrker``), or any string value when there is none."""
    strings = [p for p, v in slots(obj) if _editable(p) and isinstance(v, str) and v]
    enums = [p for p in strings if isinstance(p[-1], str) and p[-1] in ENUM_KEYS]
    paths = enums or strings
    if not paths:
        return False
    path = rng.choice(paths)
    holder = parent(obj, path)
    holder[path[-1]] = _typo(rng, holder[path[-1]])
    return True


def _flipped(rng: random.Random, value: Any) -> Any:
    if isinstance(value, bool):
        return rng.choice((str(value).lower(), int(value)))
    if isinstance(value, int | float):
        return rng.choice((str(value), [value], value > 0))
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return rng.choice(([value], {"value": value}, 1, True))
    if isinstance(value, list):
        return rng.choice(({"items": value}, value[0] if value else "", "[]"))
    if isinstance(value, dict):
        return rng.choice(([value], list(value)[:1], "{}"))
    return "null"


def type_flip(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A value of another JSON type (``replicas: "2"``, an object written as a list)."""
    paths = [p for p, v in slots(obj) if _editable(p) and v is not None]
    if not paths:
        return False
    path = rng.choice(paths)
    holder = parent(obj, path)
    holder[path[-1]] = copy.deepcopy(_flipped(rng, holder[path[-1]]))
    return True


def required_deleted(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A field a schema requires deleted (``env[].name``, a container's ``name``, ``spec.model``)."""
    paths = [p for p, _ in slots(obj) if _editable(p) and isinstance(p[-1], str) and p[-1] in REQUIRED_KEYS]
    if not paths:
        return False
    path = rng.choice(paths)
    del parent(obj, path)[path[-1]]
    return True


def _schema_slots(value: Any, s: Schema | None, path: Path = ()) -> list[tuple[Path, Any, Schema]]:
    """Every (path, value, schema) below ``value`` that its schema describes."""
    found: list[tuple[Path, Any, Schema]] = []
    if s is None:
        return found
    if isinstance(value, dict):
        for key, member in value.items():
            sub = s.properties.get(key, s.additional)
            if sub is not None:
                found.append(((*path, key), member, sub))
                found += _schema_slots(member, sub, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if s.items is not None:
                found.append(((*path, i), item, s.items))
                found += _schema_slots(item, s.items, (*path, i))
    return found


def _described(obj: Obj) -> list[tuple[Path, Any, Schema]]:
    version = crds.lookup(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if version is None:
        return []
    return [(p, v, s) for p, v, s in _schema_slots(obj, version.schema) if _editable(p)]


def schema_required_deleted(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A member the CRD's schema requires, or a list-map key, deleted where it is written, at any depth
    (a PVC's ``claimName``, a probe's ``port``, an ``env`` entry's ``name``, a port's ``containerPort``)."""
    paths: list[Path] = []
    for path, value, s in _described(obj):
        if isinstance(value, dict):
            paths += [(*path, k) for k in s.required if k in value]
        if isinstance(value, list) and s.list_type == "map":
            paths += [
                (*path, i, k)
                for i, item in enumerate(value)
                if isinstance(item, dict)
                for k in s.list_map_keys
                if k in item
            ]
    if not paths:
        return False
    path = rng.choice(paths)
    del parent(obj, path)[path[-1]]
    return True


def null_in_list(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A ``null`` put into a list the schema describes (``args: [..., null]``, ``env: [null]``)."""
    lists = [path for path, value, s in _described(obj) if isinstance(value, list) and s.items is not None]
    if not lists:
        return False
    path = rng.choice(lists)
    found = parent(obj, path)[path[-1]]
    found.insert(rng.randrange(len(found) + 1), None)
    return True


def pattern_broken(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A value that breaks its field's pattern or format; ``runtimeVersionOverride`` added when absent."""
    paths = [
        p
        for p, v in slots(obj)
        if _editable(p)
        and isinstance(p[-1], str)
        and p[-1] in PATTERN_BREAKS
        and not isinstance(v, dict | list)
    ]
    if not paths or rng.random() < 0.25:
        spec = obj.get("spec")
        holders = [v for p, v in slots(obj) if p[-2:-1] == ("components",) and isinstance(v, dict)]
        if isinstance(spec, dict) and isinstance(spec.get("services"), dict):
            holders += [v for v in spec["services"].values() if isinstance(v, dict)]
        if not holders:
            return False
        rng.choice(holders)["runtimeVersionOverride"] = rng.choice(PATTERN_BREAKS["runtimeVersionOverride"])
        return True
    path = rng.choice(paths)
    parent(obj, path)[path[-1]] = rng.choice(PATTERN_BREAKS[str(path[-1])])
    return True


def out_of_range(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A negative or huge number where a count is expected."""
    paths = [p for p, v in slots(obj) if _editable(p) and isinstance(v, int) and not isinstance(v, bool)]
    if not paths:
        return False
    path = rng.choice(paths)
    parent(obj, path)[path[-1]] = rng.choice((-1, -100, 0, 2**31, 2**63 - 1))
    return True


def null_value(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """``null`` written for a value (dropped by the API server unless the schema is nullable)."""
    paths = [p for p, _ in slots(obj) if _editable(p) and len(p) > 1]
    if not paths:
        return False
    path = rng.choice(paths)
    parent(obj, path)[path[-1]] = None
    return True


def unknown_field(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A field no schema describes, at the top, in ``spec`` or in ``metadata``."""
    where = rng.choice(("", "spec", "metadata", "deep"))
    name = rng.choice(("replica", "extra", "labelz", "specs", "annotation"))
    if where == "":
        obj[name] = rng.choice(({"a": 1}, "x", 1))
    elif where == "deep":
        targets = [v for p, v in slots(obj) if _editable(p) and isinstance(v, dict)]
        if not targets:
            return False
        rng.choice(targets)[name] = "x"
    else:
        holder = obj.setdefault(where, {})
        if not isinstance(holder, dict):
            return False
        holder[name] = rng.choice(({"a": "b"}, "x", 3))
    return True


def wrong_kind(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A kind or version no CRD serves: kubectl's own refusal before any request."""
    if rng.random() < 0.6:
        obj["kind"] = rng.choice(WRONG_KINDS)
    else:
        obj["apiVersion"] = rng.choice(WRONG_VERSIONS)
    return True


def bad_metadata(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """An invalid ``metadata.name``, label or annotation."""
    meta = obj.setdefault("metadata", {})
    way = rng.randrange(3)
    if way == 0:
        meta["name"] = rng.choice(BAD_NAMES)
    elif way == 1:
        key, value = rng.choice(BAD_LABELS)
        meta.setdefault("labels", {})[key] = value
    else:
        key = rng.choice(("Bad Key", "example.com/ok", "-x/y"))
        meta.setdefault("annotations", {})[key] = rng.choice(("v", 1, True))
    return True


def _components(obj: Obj) -> list[Obj]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return []
    if obj.get("kind") == "DynamoComponentDeployment":
        return [spec]
    found = spec.get("components")
    if isinstance(found, list):
        return [c for c in found if isinstance(c, dict)]
    services = spec.get("services")
    return [c for c in services.values() if isinstance(c, dict)] if isinstance(services, dict) else []


def cel_rule_broken(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A rule of the CRDs' ``x-kubernetes-validations`` broken: a component name repeated in another
    case, a PVC to create without its size, a sidecar container without an image, shared memory
    enabled without a size, a backend annotation that is neither mp nor ray."""
    comps = _components(obj)
    spec = obj.get("spec")
    ways: list[tuple[str, Obj]] = []
    if isinstance(spec, dict) and isinstance(spec.get("components"), list) and comps:
        ways += [("twin", spec)]
    if isinstance(spec, dict) and obj.get("kind") == "DynamoGraphDeployment":
        ways += [("pvc", spec)]
    for comp in comps:
        template = comp.get("podTemplate")
        pod = template.get("spec") if isinstance(template, dict) else None
        if isinstance(template, dict) and isinstance(pod, dict) and isinstance(pod.get("containers"), list):
            ways += [("sidecar", pod), ("backend", template)]
        ways += [("shm", comp)]
    if not ways:
        return False
    way, node = rng.choice(ways)
    if way == "twin":
        twin = copy.deepcopy(rng.choice(comps))
        twin["name"] = str(twin.get("name", "")).swapcase()
        node["components"].append(twin)
    elif way == "pvc":
        node["pvcs"] = [{"name": "model-cache", "create": True}]
    elif way == "sidecar":
        node["containers"].append({"name": "sidecar"})
    elif way == "backend":
        meta = node.setdefault("metadata", {})
        meta.setdefault("annotations", {})["nvidia.com/vllm-distributed-executor-backend"] = "mpi"
    else:
        node["sharedMemory"] = {"disabled": False}
    return True


#: What each edit is about, for the figures.
LINT_EDITS: tuple[Edit, ...] = (
    mistyped_key,
    mistyped_key,
    misspelled_value,
    misspelled_value,
    type_flip,
    type_flip,
    required_deleted,
    required_deleted,
    schema_required_deleted,
    schema_required_deleted,
    null_in_list,
    pattern_broken,
    out_of_range,
    null_value,
    unknown_field,
    wrong_kind,
    bad_metadata,
    cel_rule_broken,
)
EDITS: tuple[Edit, ...] = (
    *LINT_EDITS,
    edits.delete,
    edits.swap,
    edits.duplicate,
    edits.quantity,
    edits.status,
)
#: Edits that write ``metadata.name`` themselves (the document keeps the name they wrote).
NAMING = {"bad_metadata"}


def edited(rng: random.Random, base: Obj, donors: list[Obj], max_edits: int = 2) -> tuple[Obj, list[str]]:
    """A copy of ``base`` with one to ``max_edits`` random edits, and the names of the edits made."""
    return edits.apply_edits(rng, base, donors, max_edits, EDITS)
