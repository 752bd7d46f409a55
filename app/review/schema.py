"""Structural type check of Dynamo objects against the CRD schemas (compact skeletons in
``app/review/schemas/``, derived from the operator's CRDs and Go types by ``scripts/gen_schemas.py``).

The operator decodes every object into typed structs, so a value of the wrong JSON type is a
400 error naming the field. :mod:`app.review.dispatch` checks, in this order: the ``object`` of a
CREATE or UPDATE (not of a subresource; on a per-kind path only when the request's kind is the
one the path expects) before any rule runs, so a wrongly typed value is refused with 400 and no
rule sees it; the stored ``oldObject`` only when a handler then failed on the request (it already
passed the API server's schema validation); and every object of a ConversionReview before it is
converted (one wrongly typed object fails the whole review). A clean object costs one walk and no string work: paths are
only built on the way back from a problem.

A number must also fit the Go type it decodes into (``int32``, ``int64``, ``int``,
``float32`` … — the skeleton's ``f``): one that does not is refused with the operator's own
decoder message, ``json: cannot unmarshal number 1180591620717411303424 into Go struct field
DynamoComponentDeploymentSharedSpec.spec.components.replicas of type int32`` (``g`` holds the
struct and field path Go prints). An int-or-string field takes an int32. The number is printed
as it was parsed: an integer literal beyond 64 bits reaches this service as the nearest double
(as the apiserver would re-send it), and is printed as that double's integer value.

The walk of an admission request's object (:func:`check_object`) also parses every value Go
parses itself (the skeleton's ``k``: quantities, times, durations, base64 bytes) with the
operator's own leaf decoder (:mod:`gocompat.leaves`). One that does not parse is a problem, told
in that decoder's words, as Go's ``UnmarshalJSON`` returns them and controller-runtime answers
them (400): ``quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'``,
``parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"``, ``time: invalid
duration "x"``. Two differences from Go remain, both in which 400 is told: Go stops at such a
value and reports it even after a type mismatch earlier in the document, where this walk reports
the mismatch it met first; and a ``null`` where Go wants a non-pointer duration (which Go refuses
with ``time: invalid duration ""``) passes, as the skeletons do not tell pointers apart. A
ConversionReview's objects are not parsed here: their conversion decodes them and fails with the
conversion's own message.

The same walk also tells whether an object's ``spec`` **decodes as it is**: every member it
holds is one its schema names (exactly, as written), no number is a float where Go wants an
integer, and no list element or map value of an object type is null (every self-parsed value
parses, or the object has a problem), so the conversion's decode of that spec cannot fail
(``tests/app/review/test_schema_decodes.py`` proves it, leaf by leaf and on generated specs). The
v1alpha1 compatibility pass of a v1beta1 request relies on it (:mod:`validation.alpha`).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from app.review.bignumbers import OutOfRange
from gocompat.errors import Abort, Mismatch, unmarshal_text
from gocompat.jsonvalue import json_type
from gocompat.leaves import PARSED_NODES

Skeleton = dict[str, Any]
# The least and greatest value of a Go number type: exact integers for the integer types (a float
# bound would round 2**63 - 1 up and let 2**63 pass), floats for float32.
_Bounds = tuple[int | float, int | float]


class _Node:
    """A compiled skeleton node: the exact Python types a value may have (None: anything), and
    the child nodes of its members or items. ``leaf`` nodes have no children to visit.
    ``bounds``: the range of the Go number type the value decodes into (None: unchecked)."""

    __slots__ = (
        "accepted",
        "bounds",
        "expected",
        "extra",
        "go",
        "integral",
        "items",
        "leaf",
        "parsed",
        "props",
    )

    def __init__(self, skel: Skeleton) -> None:
        expected = skel.get("t")
        self.expected: str = expected or ""
        self.accepted: frozenset[type] | None = (
            None if "x" in skel or not expected else _ACCEPTED.get(expected)
        )
        self.integral = expected == "integer"  # a float with an integral value also decodes into an int
        self.bounds: _Bounds | None = _BOUNDS.get(skel.get("f", ""))
        self.go = (skel.get("g", ""), skel.get("f", ""))
        self.props: dict[str, _Node] | None = (
            {k: _Node(v) for k, v in skel["p"].items()} if "p" in skel and "x" not in skel else None
        )
        self.extra: _Node | None = _Node(skel["a"]) if "a" in skel and "x" not in skel else None
        self.items: _Node | None = _Node(skel["i"]) if "i" in skel and "x" not in skel else None
        self.leaf = self.props is None and self.extra is None and self.items is None
        # The Go leaf that parses this value itself (``k``), or None.
        self.parsed: Any = PARSED_NODES[skel["k"]] if "k" in skel else None


# Exact types: orjson and the YAML loader produce plain dict/list/str/int/float/bool values.
_ACCEPTED: dict[str, frozenset[type]] = {
    "object": frozenset({dict}),
    "array": frozenset({list}),
    "string": frozenset({str}),
    "boolean": frozenset({bool}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "int-or-string": frozenset({int, str}),
}


# A problem: its text, and whether that text is complete (Go's decoder message, which names the
# field itself) rather than to be prefixed with the path.
_Problem = tuple[str, bool]


class _Decodes:
    """Whether the values walked so far decode as they are (see the module's notes)."""

    __slots__ = ("ok",)

    def __init__(self) -> None:
        self.ok = True


def _null_decodes(node: _Node) -> bool:
    """Whether ``null`` at ``node`` decodes as it is (a self-parsed leaf may refuse it)."""
    parsed = node.parsed
    if parsed is None:
        return True
    try:
        parsed.null_view()
    except (Abort, Mismatch):
        return False
    return True


#: Values seen to parse, with their leaf and JSON type: a leaf's parse depends on nothing else, and
#: an object's quantities and times are the same few strings from one review of it to the next.
_PARSE: set[tuple[Any, type, Any]] = set()
_PARSE_SIZE = 4096


def _leaf_problem(node: _Node, value: Any, dec: _Decodes) -> _Problem | None:
    """Go's decoder message for a value (not null, of an accepted type) that the Go leaf at
    ``node`` parses itself and that does not parse; ``dec`` is told of a float where Go wants an
    integer, and of a value whose JSON type the leaf's own decoder refuses."""
    parsed = node.parsed
    if parsed is not None:
        key = (parsed, type(value), value)
        if key in _PARSE:
            return None
        try:
            parsed.view(value)
        except Abort as exc:
            return str(exc), True
        except Mismatch:
            dec.ok = False
            return None
        if len(_PARSE) >= _PARSE_SIZE:
            _PARSE.clear()
        _PARSE.add(key)
        return None
    if type(value) is float and node.accepted is not None and float not in node.accepted:
        dec.ok = False
    return None


_FLOAT32_MAX = 3.4028234663852886e38
# The range of each Go number type a skeleton names (Go's int is 64 bits wide).
_BOUNDS: dict[str, _Bounds] = {
    **{f"int{b}": (-(2 ** (b - 1)), 2 ** (b - 1) - 1) for b in (8, 16, 32, 64)},
    **{f"uint{b}": (0, 2**b - 1) for b in (8, 16, 32, 64)},
    "int": (-(2**63), 2**63 - 1),
    "uint": (0, 2**64 - 1),
    "float32": (-_FLOAT32_MAX, _FLOAT32_MAX),
}


def _out_of_range(node: _Node, value: Any) -> _Problem | None:
    bounds = node.bounds
    if bounds is None or type(value) not in (int, float) or bounds[0] <= value <= bounds[1]:
        return None
    if node.integral and type(value) is float and value.is_integer() and abs(value) >= 2**63:
        text = str(int(value))
    else:
        text = repr(value) if type(value) is float else str(value)
    where, go_type = node.go
    return unmarshal_text(f"number {text}", go_type, where), True


@functools.cache
def skeleton_for(api_version: str, kind: str) -> Skeleton | None:
    group, _, version = api_version.rpartition("/")
    name = f"{group}_{version}_{kind}.json"
    try:
        text = resources.files("app.review.schemas").joinpath(name).read_text()
    except (FileNotFoundError, OSError):
        return None
    result: Skeleton = json.loads(text)
    return result


@functools.cache
def _compiled(api_version: str, kind: str) -> _Node | None:
    skel = skeleton_for(api_version, kind)
    return None if skel is None else _Node(skel)


def _wrong(node: _Node, value: Any) -> bool:
    accepted = node.accepted
    if accepted is None or type(value) in accepted:
        return False
    return not (node.integral and type(value) is float and value.is_integer())


def _problem(node: _Node, value: Any) -> _Problem | None:
    if type(value) is OutOfRange and node.expected in _NUMBERS:
        where, go_type = node.go
        return unmarshal_text(f"number {value.literal}", go_type or "float64", where or None), True
    if _wrong(node, value):
        return f"expected {node.expected}, got {json_type(value)}", False
    return _out_of_range(node, value) if node.bounds is not None else None


#: The schema types a number may take (a number past a double's range is refused in Go's words there).
_NUMBERS = frozenset({"number", "integer", "int-or-string"})


def _check(value: Any, node: _Node, dec: _Decodes | None = None) -> tuple[list[str | int], _Problem] | None:
    """None when ``value`` fits ``node``; else (reversed path segments, problem). Paths are only
    built on the way back from a failure, so a clean object costs no string work; a value of an
    accepted type costs no call either when it has no bounds or is an integer within them
    (``_problem`` is only asked about the others). With ``dec``, every self-parsed value is
    parsed too, one that does not parse being a problem, and ``dec`` is told when a value walked
    would not decode as it is (a member the schema does not name, a float for an integer, a null
    the leaf refuses, a null list element or map value of an object type)."""
    accepted, bounds, kind = node.accepted, node.bounds, type(value)
    if (accepted is not None and kind not in accepted) or (
        bounds is not None and (kind is float or (kind is int and not bounds[0] <= value <= bounds[1]))
    ):
        problem = _problem(node, value)
        if problem is not None:
            return [], problem
    if kind is dict:
        props, extra = node.props, node.extra
        if props is None and extra is None:
            return None
        # Typed names for the container (here and below) let the compiled build iterate it directly.
        members: dict[str, Any] = value
        for key, child in members.items():
            sub = props.get(key) if props is not None else None
            if sub is None:
                sub = extra
                if sub is None:
                    if dec is not None:
                        dec.ok = False
                    continue
            if child is None:
                # A null member is an absent one; a null map value of an object type, as a null
                # list element below, is not vouched for.
                if dec is not None and ((sub is extra and not sub.leaf) or not _null_decodes(sub)):
                    dec.ok = False
                continue
            if sub.leaf:
                accepted, bounds, child_type = sub.accepted, sub.bounds, type(child)
                if (accepted is not None and child_type not in accepted) or (
                    bounds is not None
                    and (child_type is float or (child_type is int and not bounds[0] <= child <= bounds[1]))
                ):
                    problem = _problem(sub, child)
                    if problem is not None:
                        return [key], problem
                if dec is not None and (sub.parsed is not None or child_type is float):
                    problem = _leaf_problem(sub, child, dec)
                    if problem is not None:
                        return [key], problem
                continue
            found = _check(child, sub, dec)
            if found is not None:
                found[0].append(key)
                return found
    elif kind is list:
        items = node.items
        if items is None:
            return None
        accepted, bounds = items.accepted, items.bounds
        elements: list[Any] = value
        for index, child in enumerate(elements):
            if child is None:
                if dec is not None and (not items.leaf or not _null_decodes(items)):
                    dec.ok = False
                continue
            if items.leaf:
                child_type = type(child)
                if (accepted is not None and child_type not in accepted) or (
                    bounds is not None
                    and (child_type is float or (child_type is int and not bounds[0] <= child <= bounds[1]))
                ):
                    problem = _problem(items, child)
                    if problem is not None:
                        return [index], problem
                if dec is not None and (items.parsed is not None or child_type is float):
                    problem = _leaf_problem(items, child, dec)
                    if problem is not None:
                        return [index], problem
                continue
            found = _check(child, items, dec)
            if found is not None:
                found[0].append(index)
                return found
    return None


def _text(found: tuple[list[str | int], _Problem], root: str) -> str:
    segments, (problem, complete) = found
    if complete:
        return problem
    path = root
    for segment in reversed(segments):
        if isinstance(segment, int):
            path += f"[{segment}]"
        else:
            path = f"{path}.{segment}" if path else segment
    return f"{path or '(root)'}: {problem}"


def first_type_error(obj: Any, api_version: str, kind: str, root: str = "") -> str | None:
    """``<path>: expected <type>, got <type>`` for the first value (in document order) of the
    wrong JSON type, Go's decoder message for the first number that does not fit its Go type,
    or None (also when the kind/version has no known schema). ``null`` is accepted anywhere, as
    the operator's decoder does."""
    node = _compiled(api_version, kind)
    if node is None or obj is None:
        return None
    found = _check(obj, node)
    return None if found is None else _text(found, root)


def check_object(obj: Any, api_version: str, kind: str, root: str = "") -> tuple[str | None, bool]:
    """(the first problem of an admission request's object, whether its ``spec`` decodes as it
    is). A problem is what :func:`first_type_error` finds, or a value Go parses itself that does
    not parse, answered with that parser's message (see the module's notes). The second answer is
    False when there is a problem, no schema or no ``spec`` object."""
    node = _compiled(api_version, kind)
    if node is None or not isinstance(obj, dict):
        return first_type_error(obj, api_version, kind, root), False
    # Root member by member, so that only the spec tells ``dec``.
    dec, elsewhere = _Decodes(), _Decodes()
    members: dict[str, Any] = obj
    spec_seen = False
    for key, child in members.items():
        spec = key == "spec"
        spec_seen = spec_seen or (spec and isinstance(child, dict))
        found = _check({key: child}, node, dec if spec else elsewhere)
        if found is not None:
            return _text(found, root), False
    return None, spec_seen and dec.ok
