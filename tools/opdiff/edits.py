"""Seeded random edits of Dynamo manifests: the inputs of the differential test.

Each edit is the kind of change a person or a tool makes to a real manifest: a field deleted, a
value's type flipped, a value taken from another manifest at a field of the same name, a subtree
grafted from another manifest, a quantity written as an integer or in a non-canonical spelling, an
EPP plugin without its optional members, an empty pod template, a number past int64 in opaque
JSON, a status sent with the object. Edits are pure functions of a ``random.Random``, so a seed
gives the same inputs on every machine.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from typing import Any

Obj = dict[str, Any]
Path = tuple[str | int, ...]

QUANTITIES = (
    0,
    -1,
    1,
    2,
    "0",
    "1.5Gi",
    "1500Mi",
    "1000m",
    "0.5",
    "1e3",
    "2Gi",
    "100M",
    "1k",
    ".5",
    "+1",
    "1_0",
)
SCALARS = (None, "", "x", 0, 1, -1, 2.5, True, False, [], {}, "true", "10", "${VAR}", "a/b", "UPPER")
QUANTITY_KEYS = {
    "cpu",
    "memory",
    "gpu",
    "size",
    "ephemeral-storage",
    "nvidia.com/gpu",
    "sharedMemorySize",
    "custom",
}


def slots(node: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every (path, value) below ``node`` (the root excluded)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*path, key), value
            yield from slots(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield (*path, i), value
            yield from slots(value, (*path, i))


def parent(obj: Any, path: Path) -> Any:
    """The value holding the last part of ``path``."""
    for part in path[:-1]:
        obj = obj[part]
    return obj


def _set(obj: Obj, path: Path, value: Any) -> None:
    parent(obj, path)[path[-1]] = value


def _editable(path: Path) -> bool:
    return path[:1] != ("apiVersion",) and path[:1] != ("kind",) and path[:2] != ("metadata", "name")


def delete(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    paths = [p for p, _ in slots(obj) if _editable(p) and len(p) > 1]
    if not paths:
        return False
    path = rng.choice(paths)
    holder = parent(obj, path)
    if isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder.pop(path[-1])
    return True


def flip(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    paths = [p for p, v in slots(obj) if _editable(p) and not isinstance(v, (dict, list))]
    if not paths:
        return False
    _set(obj, rng.choice(paths), copy.deepcopy(rng.choice(SCALARS)))
    return True


def swap(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A value from another manifest at a field of the same name."""
    donor = rng.choice(donors)
    by_key: dict[str, list[Any]] = {}
    for p, v in slots(donor):
        if isinstance(p[-1], str):
            by_key.setdefault(p[-1], []).append(v)
    paths = [p for p, _ in slots(obj) if _editable(p) and isinstance(p[-1], str) and p[-1] in by_key]
    if not paths:
        return False
    path = rng.choice(paths)
    _set(obj, path, copy.deepcopy(rng.choice(by_key[str(path[-1])])))
    return True


def graft(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A subtree of another manifest added under an object of this one."""
    donor = rng.choice(donors)
    pieces = [(p[-1], v) for p, v in slots(donor) if isinstance(p[-1], str) and isinstance(v, (dict, list))]
    targets = [p for p, v in slots(obj) if isinstance(v, dict) and _editable(p)]
    if not pieces or not targets:
        return False
    key, value = rng.choice(pieces)
    target = obj
    for part in rng.choice(targets):
        target = target[part]
    target[key] = copy.deepcopy(value)
    return True


def duplicate(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """A list entry repeated (duplicate names, duplicate components)."""
    lists = [p for p, v in slots(obj) if isinstance(v, list) and v and _editable(p)]
    if not lists:
        return False
    path = rng.choice(lists)
    items = parent(obj, path)[path[-1]]
    items.append(copy.deepcopy(rng.choice(items)))
    return True


def quantity(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    paths = [
        p
        for p, v in slots(obj)
        if isinstance(p[-1], str) and p[-1] in QUANTITY_KEYS and not isinstance(v, (dict, list))
    ]
    if not paths:
        return False
    _set(obj, rng.choice(paths), rng.choice(QUANTITIES))
    return True


def epp(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    """EPP plugins and scheduling-profile references without their optional members."""
    changed = False
    for p, v in list(slots(obj)):
        if p[-1] == "plugins" and isinstance(v, list):
            for item in v:
                if isinstance(item, dict) and rng.random() < 0.5:
                    item.pop(rng.choice(("name", "parameters", "weight", "type")), None)
                    changed = True
    return changed


def empty_template(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    paths = [
        p for p, v in slots(obj) if p[-1] in ("podTemplate", "template", "extraPodSpec", "mainContainer")
    ]
    if not paths:
        return False
    _set(obj, rng.choice(paths), {})
    return True


def big_number(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    paths = [p for p, v in slots(obj) if p[-1] in ("config", "planner", "value") and isinstance(v, dict)]
    if not paths:
        return False
    target = obj
    for part in rng.choice(paths):
        target = target[part]
    target[rng.choice(("n", "maxBatch", "x"))] = rng.choice(
        (2**63, 2**64 + 1, -(2**63) - 1, 10**30, 1.5, 2**53 + 1)
    )
    return True


def status(rng: random.Random, obj: Obj, donors: list[Obj]) -> bool:
    with_status = [
        d["status"] for d in donors if isinstance(d.get("status"), dict) and d.get("kind") == obj.get("kind")
    ]
    obj["status"] = (
        copy.deepcopy(rng.choice(with_status)) if with_status else {"state": rng.choice(("", "pending"))}
    )
    return True


Edit = Callable[[random.Random, Obj, list[Obj]], bool]

EDITS: tuple[Edit, ...] = (
    delete,
    delete,
    flip,
    flip,
    swap,
    swap,
    graft,
    duplicate,
    quantity,
    quantity,
    epp,
    empty_template,
    big_number,
    status,
)


def apply_edits(
    rng: random.Random, base: Obj, donors: list[Obj], max_edits: int, choices: tuple[Edit, ...]
) -> tuple[Obj, list[str]]:
    """A copy of ``base`` with one to ``max_edits`` edits drawn from ``choices`` (five tries each for
    one that applies), and the names of the edits made."""
    obj = copy.deepcopy(base)
    made: list[str] = []
    for _ in range(rng.randint(1, max_edits)):
        for _attempt in range(5):
            edit = rng.choice(choices)
            if edit(rng, obj, donors):
                made.append(edit.__name__)
                break
    return obj, made


def edited(rng: random.Random, base: Obj, donors: list[Obj], max_edits: int = 3) -> Obj:
    """A copy of ``base`` with one to ``max_edits`` random edits (its name and kind kept)."""
    return apply_edits(rng, base, donors, max_edits, EDITS)[0]
