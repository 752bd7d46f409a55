"""Which verified vectors' expected answers changed between two recordings, grouped the way the
work is done: admission vectors by webhook (validating or mutating, per kind) and by rule message
(a field error, warning or patch member no longer given or newly given, an answer that flips),
conversion vectors by conversion path (kind, from version, to version) and by the fields whose
converted value changed. List indices in paths are written ``[*]``, so one rule is one group.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

Obj = dict[str, Any]
#: group title -> item (a message or a field) -> names of the vectors
Groups = dict[str, dict[str, list[str]]]
_INDEX = re.compile(r"\[\d+\]")


def _general(text: str) -> str:
    return _INDEX.sub("[*]", text)


def parse(text: str) -> dict[str, Obj]:
    """A vector file's cases by name."""
    return {case["name"]: case for case in (json.loads(line) for line in text.splitlines() if line.strip())}


def _admission_items(old: Obj, new: Obj) -> list[str]:
    items = []
    if old.get("allowed") != new.get("allowed"):
        items.append(f"allowed: {json.dumps(old.get('allowed'))} -> {json.dumps(new.get('allowed'))}")
    for key, word in (("messageContains", "message"), ("warningsContain", "warning")):
        before, after = old.get(key) or [], new.get(key) or []
        items += [f'{word} no longer given: "{_general(m)}"' for m in before if m not in after]
        items += [f'{word} now given: "{_general(m)}"' for m in after if m not in before]
    before_patch = old.get("patchedObjectContains") or {}
    after_patch = new.get("patchedObjectContains") or {}
    for where in sorted(set(before_patch) | set(after_patch)):
        if before_patch.get(where, "<absent>") != after_patch.get(where, "<absent>"):
            items.append(
                f"patch member {_general(where)}: "
                f"{json.dumps(before_patch.get(where, '<absent>'))} -> "
                f"{json.dumps(after_patch.get(where, '<absent>'))}"
            )
    if bool(old.get("noPatch")) != bool(new.get("noPatch")):
        items.append("patch now empty" if new.get("noPatch") else "patch no longer empty")
    return items


def admission_changes(old: dict[str, Obj], new: dict[str, Obj]) -> Groups:
    groups: Groups = defaultdict(lambda: defaultdict(list))
    for name, case in new.items():
        before = old.get(name)
        if before is None or before["expect"] == case["expect"]:
            continue
        title = f"{case['webhook']} webhook, {case['kind']}"
        for item in _admission_items(before["expect"], case["expect"]) or ["expect changed"]:
            groups[title][item].append(name)
    return groups


def _paths(a: Any, b: Any, path: str = "") -> list[str]:
    """The innermost paths where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                out.append(sub)
            elif a[key] != b[key]:
                out += _paths(a[key], b[key], sub)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            p
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            if x != y
            for p in _paths(x, y, f"{path}[{i}]")
        ]
    return [path or "<root>"]


def conversion_changes(old: dict[str, Obj], new: dict[str, Obj]) -> Groups:
    groups: Groups = defaultdict(lambda: defaultdict(list))
    for name, case in new.items():
        before = old.get(name)
        if before is None:
            continue
        src = case["input"]
        title = f"conversion {src['kind']} {src['apiVersion']} -> {case['desiredAPIVersion']}"
        items: list[str] = []
        if before.get("expected") != case.get("expected"):
            if case.get("expected") is None:
                items.append(f"now fails: {case.get('expectedErrorPrefix', '')}")
            elif before.get("expected") is None:
                items.append("no longer fails")
            else:
                for p in dict.fromkeys(_general(p) for p in _paths(before["expected"], case["expected"])):
                    items.append(f"field {p}")
        if bool(before.get("roundtrip")) != bool(case.get("roundtrip")):
            items.append(
                "round trip "
                + ("now gives the input back" if case.get("roundtrip") else "no longer gives the input back")
            )
        for item in items:
            groups[title][item].append(name)
    return groups


def render(groups: Groups) -> list[str]:
    """Markdown lines: a heading per group, a bullet per item naming its vectors."""
    lines: list[str] = []
    for title in sorted(groups):
        lines += ["", f"### {title}", ""]
        for item, names in groups[title].items():
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            lines.append(f"- {item} ({len(names)}: {shown})")
    return lines
