"""``app.review.schema.check_object``'s second answer, "the spec decodes as it is", against the decoders
it vouches for: whenever it says so, the spec and each component decode as the v1alpha1 view
decodes them, and the whole conversion of the object to v1alpha1 succeeds (for a DGD whose
components have distinct names: the conversion refuses repeated ones, which no decode sees).

Proved leaf by leaf (every value of the v1beta1 DGD and DCD schemas under ``spec``, each given
values of every JSON type and of every self-parsed form, good and bad, and every object given a
member its schema does not name, exactly or in another case) and on generated specs that combine
them. The tests also show it is not vacuous: good values are vouched for, bad ones are not.

The same placements prove the other answer a self-parsed value gets: when the check finds one that
does not parse (a 400, in its decoder's words), the conversion's decode of that object fails too,
with that text. Then its use: answers of whole reviews, mutating and validating.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.review.schema import check_object, skeleton_for
from conversion import ConversionError
from conversion.dcd import CONVERTER as DCD_CONVERTER
from conversion.dgd import CONVERTER as DGD_CONVERTER
from conversion.payloads import decode_root
from conversion.v1alpha1 import dcd as dcd_spoke
from conversion.v1alpha1 import dgd as dgd_spoke
from conversion.v1alpha1.component.schemas import canon_beta_shared
from gocompat.errors import GoTypeError

B1 = "nvidia.com/v1beta1"
ALPHA = "nvidia.com/v1alpha1"
KINDS = {"DynamoGraphDeployment": DGD_CONVERTER, "DynamoComponentDeployment": DCD_CONVERTER}

Step = tuple[str, str]  # ("p", member) | ("i", "") | ("a", "")

# Values of every JSON type, and the forms the self-parsed leaves read (good and bad).
VALUES: tuple[Any, ...] = (
    None,
    "",
    "x",
    "1",
    "2Gi",
    "500m",
    "1.5",
    "1e3",
    "1K",
    "Ei",
    "2026-01-12T09:30:00Z",
    "2026-01-12T09:30:00.123456Z",
    "2026-01-12t09:30:00z",
    "1h30m",
    "1x",
    "aGVsbG8=",
    "not base64!",
    0,
    1,
    -1,
    2**31,
    2**63,
    1.5,
    2.0,
    True,
    False,
    {},
    [],
    {"a": 1},
    ["a"],
)


def _paths(
    node: dict[str, Any], path: tuple[Step, ...] = ()
) -> Iterator[tuple[tuple[Step, ...], dict[str, Any]]]:
    """Every node of a skeleton with its path (lists and maps entered through one element)."""
    yield path, node
    if "x" in node:
        return
    for key, child in (node.get("p") or {}).items():
        yield from _paths(child, (*path, ("p", key)))
    if "i" in node:
        yield from _paths(node["i"], (*path, ("i", "")))
    if "a" in node:
        yield from _paths(node["a"], (*path, ("a", "")))


def _place(path: tuple[Step, ...], value: Any) -> Any:
    for step, key in reversed(path):
        value = [value] if step == "i" else {("k" if step == "a" else key): value}
    return value


def _spec_nodes(kind: str) -> list[tuple[tuple[Step, ...], dict[str, Any]]]:
    skel = skeleton_for(B1, kind)
    assert skel is not None
    return list(_paths(skel["p"]["spec"]))


def _object(kind: str, spec: Any) -> dict[str, Any]:
    return {"apiVersion": B1, "kind": kind, "metadata": {"name": "g", "namespace": "ns"}, "spec": spec}


def _vouched(obj: dict[str, Any]) -> bool:
    """check_object's "spec decodes"; when it says so, the conversion of the object succeeds.
    When it finds a value Go parses itself that does not parse, the conversion's decode fails
    too, with the same text."""
    problem, decodes = check_object(obj, B1, obj["kind"])
    if decodes:
        assert problem is None
        try:
            _decode(obj)
        except ConversionError as exc:
            pytest.fail(f"vouched for, yet the conversion fails: {exc}: {obj}")
    elif problem is not None and _is_parse_problem(problem) and _distinct_names(obj):
        with pytest.raises((ConversionError, GoTypeError)) as refused:
            _decode(obj)
        assert problem in str(refused.value), (problem, obj)
    return decodes


def _is_parse_problem(problem: str) -> bool:
    """A leaf decoder's message, not a type problem (``…: expected string, got number``) nor a
    number out of its Go type's range (``json: cannot unmarshal number …``)."""
    return ": expected " not in problem and not problem.startswith("json: ")


def _distinct_names(obj: dict[str, Any]) -> bool:
    components = obj["spec"].get("components") if isinstance(obj.get("spec"), dict) else None
    if not isinstance(components, list):
        return True
    names = [c.get("name") for c in components if isinstance(c, dict)]
    return len(set(map(str, names))) == len(names)


def _decode(obj: dict[str, Any]) -> None:
    """The view's decodes, then the whole conversion (raise ConversionError)."""
    if obj["kind"] == "DynamoComponentDeployment":
        dcd_spoke.decode_hub_spec(obj["spec"])
    else:
        components = decode_root(obj["spec"], dgd_spoke.BETA_SPEC_LIVE, "spec").get("components") or []
        names = [canon_beta_shared(c).get("name", "") for c in components]
        if len(set(names)) < len(names):
            return
    KINDS[obj["kind"]].convert(obj, ALPHA)


def _variants(node: dict[str, Any]) -> Iterator[Any]:
    yield from VALUES
    props = node.get("p")
    if props:
        name = sorted(props)[0]
        yield {"notInTheSchema": 1}
        yield {name.upper(): "x"}
        yield {name.upper(): 1}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_value_of_the_spec_schema(kind: str) -> None:
    vouched = refused = 0
    for path, node in _spec_nodes(kind):
        for value in _variants(node):
            if _vouched(_object(kind, _place(path, value))):
                vouched += 1
            else:
                refused += 1
    assert vouched > 1000 and refused > 1000, (vouched, refused)


def _leaves(kind: str, parsed: str) -> list[tuple[Step, ...]]:
    return [p for p, n in _spec_nodes(kind) if n.get("k") == parsed]


@pytest.mark.parametrize(
    ("parsed", "good", "bad"),
    [
        ("quantity", ["1", "2Gi", "500m", 3, None], ["x", "1K", "Ei", True, [], {}]),
        ("duration", ["1h30m", "0s"], ["1x", "", None]),
    ],
)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_self_parsed_values_are_vouched_for_only_when_they_parse(
    kind: str, parsed: str, good: list[Any], bad: list[Any]
) -> None:
    paths = _leaves(kind, parsed)
    assert paths
    for path in paths:
        for value in good:
            assert _vouched(_object(kind, _place(path, value))), (path, value)
        for value in bad:
            assert not _vouched(_object(kind, _place(path, value))), (path, value)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_times_are_vouched_for_only_when_they_parse(kind: str) -> None:
    paths = _leaves(kind, "time")
    assert paths
    for path in paths:
        assert _vouched(_object(kind, _place(path, "2026-01-12T09:30:00Z")))
        assert not _vouched(_object(kind, _place(path, "2026-01-12t09:30:00z")))


def test_what_is_not_vouched_for() -> None:
    dgd = "DynamoGraphDeployment"

    def vouched(spec: Any) -> bool:
        return _vouched(_object(dgd, spec))

    assert vouched({"components": [{"name": "w", "replicas": 2}]})
    assert not vouched({"components": [{"name": "w", "Replicas": 2}]})  # not named as written
    assert not vouched({"components": [{"name": "w", "replicas": 2.0}]})  # a float for an int32
    assert not vouched({"components": [{"name": "w", "replicas": "2"}]})  # a type problem
    assert not vouched(None) and not vouched([])  # no spec object
    assert not _vouched({"apiVersion": B1, "kind": dgd, "metadata": {}})
    problem, decodes = check_object(
        {"apiVersion": B1, "kind": dgd, "metadata": {}, "spec": {}, "x": "y"}, B1, dgd
    )
    assert problem is None and decodes  # only the spec is told of
    assert check_object(_object(dgd, {}), B1, "Unknown") == (None, False)


# --- generated specs ---------------------------------------------------------------------------------


@st.composite
def _value(draw: st.DrawFn, node: dict[str, Any], depth: int) -> Any:
    """A value for ``node``: mostly of its kind, sometimes anything from :data:`VALUES`."""
    if "x" in node or depth > 14 or draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(VALUES))
    props, items, extra = node.get("p"), node.get("i"), node.get("a")
    if props:
        names = draw(st.lists(st.sampled_from(sorted(props)), max_size=3, unique=True))
        out = {name: draw(_value(props[name], depth + 1)) for name in names}
        if draw(st.integers(0, 19)) == 0:
            out[draw(st.sampled_from(["Name", "unknownMember", "REPLICAS"]))] = draw(st.sampled_from(VALUES))
        return out
    if items is not None:
        return draw(st.lists(_value(items, depth + 1), max_size=2))
    if extra is not None:
        return draw(st.dictionaries(st.sampled_from(["a", "b"]), _value(extra, depth + 1), max_size=2))
    return draw(st.sampled_from(VALUES))


@st.composite
def _specs(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(KINDS)))
    skel = skeleton_for(B1, kind)
    assert skel is not None
    return _object(kind, draw(_value(skel["p"]["spec"], 0)))


@given(_specs())
@example(
    {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"sharedMemorySize": "", "compilationCache": None, "backendFramework": 0},
    }
)
def test_generated_specs(obj: dict[str, Any]) -> None:
    _vouched(obj)


# --- its use ----------------------------------------------------------------------------------------------


def _views_built(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    from validation import compat_view

    built: list[Any] = []
    real = compat_view.lazy_graph

    def spy(hub: Any, *args: Any) -> Any:
        built.append(hub)
        return real(hub, *args)

    monkeypatch.setattr(compat_view, "lazy_graph", spy)
    return built


def test_a_migrated_update_whose_spec_decodes_is_validated_without_a_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.review.dispatch import review_admission
    from bench import payloads
    from domain.admission import AdmissionContext

    built = _views_built(monkeypatch)
    review = payloads.dgd_migrated_update()
    outcome = review_admission(review, "validate", AdmissionContext())
    assert outcome.allowed and built == []
    # A quantity that does not parse: Go's decode of the object refuses it (400, its decoder's
    # words) before any rule or view.
    containers = review["request"]["object"]["spec"]["components"][1]["podTemplate"]["spec"]["containers"]
    containers[0]["resources"]["limits"]["nvidia.com/gpu"] = "abc"
    outcome = review_admission(review, "validate", AdmissionContext())
    assert built == []
    assert outcome.code == 400 and outcome.message == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_the_rules_called_without_the_verdict_decode_the_spec_themselves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The type check's verdict is passed to the rules, never left in the request: called without
    # it, the rules take the documented default (unknown: they build the view) and answer the same.
    import kinds
    from app.review.dispatch import review_admission
    from app.review.reviews import admission_input, read_admission_review
    from bench import payloads
    from domain.admission import AdmissionContext

    built = _views_built(monkeypatch)
    review = payloads.dgd_migrated_update()
    through_review = review_admission(review, "validate", AdmissionContext())
    assert built == []
    inp = admission_input(read_admission_review(review))
    direct = kinds.validate(inp, AdmissionContext())
    assert len(built) == 1
    assert (direct.allowed, direct.warnings) == (
        through_review.allowed,
        through_review.response.get("warnings", []),
    )
    assert kinds.validate(inp, AdmissionContext(), spec_decodes=True) == direct
    assert len(built) == 1


# --- values Go parses itself, refused as Go refuses them ------------------------------------------------

QUANTITY_TEXT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _answer(review: dict[str, Any], review_type: str) -> Any:
    from app.review.dispatch import review_admission
    from domain.admission import AdmissionContext

    return review_admission(review, review_type, AdmissionContext())  # type: ignore[arg-type]


def _epp(review: dict[str, Any], threshold: Any) -> None:
    component = review["request"]["object"]["spec"]["components"][0]
    component["eppConfig"] = {"config": {"saturationDetector": {"metricsStalenessThreshold": threshold}}}


@pytest.mark.parametrize("review_type", ["validate", "mutate"])
def test_a_value_its_go_type_refuses_is_answered_400_in_go_s_words(review_type: str) -> None:
    from bench import payloads

    build = payloads.dgd_native_update if review_type == "validate" else payloads.dgd_migrated_create
    # a quantity (which the CRD's pattern also refuses, after the mutating webhooks)
    review = build()
    containers = review["request"]["object"]["spec"]["components"][1]["podTemplate"]["spec"]["containers"]
    containers[0]["resources"]["limits"]["nvidia.com/gpu"] = "1 GPU"
    outcome = _answer(review, review_type)
    assert (outcome.allowed, outcome.code, outcome.message) == (False, 400, QUANTITY_TEXT)
    assert orjson.loads(outcome.body)["response"]["status"] == {"code": 400, "message": QUANTITY_TEXT}
    # a duration, which the CRD leaves a plain string: only the decode refuses it
    review = build()
    _epp(review, "5 minutes")
    outcome = _answer(review, review_type)
    assert (outcome.code, outcome.message) == (400, 'time: unknown unit " minutes" in duration "5 minutes"')
    review = build()
    _epp(review, "5m")
    assert _answer(review, review_type).allowed
    # a time in the status
    review = build()
    review["request"]["object"]["status"] = {
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "today"}]
    }
    outcome = _answer(review, review_type)
    assert (outcome.code, outcome.message) == (
        400,
        'parsing time "today" as "2006-01-02T15:04:05Z07:00": cannot parse "today" as "2006"',
    )


def test_a_type_problem_met_first_is_the_one_told() -> None:
    # Go would report the quantity (its decoder stops decoding); both answers are a 400.
    from bench import payloads

    review = payloads.dgd_native_update()
    components = review["request"]["object"]["spec"]["components"]
    components[0]["replicas"] = "two"
    components[1]["podTemplate"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "x"
    outcome = _answer(review, "validate")
    assert outcome.code == 400 and outcome.message.endswith(
        "components[0].replicas: expected integer, got string"
    )


def test_a_stored_object_and_a_conversion_review_are_not_parsed_here() -> None:
    # The old object passed the API server's validation; a ConversionReview's objects are
    # decoded by their conversion, which fails with its own message.
    from app.review.dispatch import review_conversion
    from bench import payloads

    review = payloads.dgd_native_update()
    _epp_old = review["request"]["oldObject"]["spec"]["components"][0]
    _epp_old["eppConfig"] = {"config": {"saturationDetector": {"metricsStalenessThreshold": "soon"}}}
    assert _answer(review, "validate").allowed
    obj = payloads.dgd_native_update()["request"]["object"]
    _epp({"request": {"object": obj}}, "soon")
    conversion = review_conversion(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "c", "desiredAPIVersion": ALPHA, "objects": [obj]},
        }
    )
    assert not conversion.allowed and 'time: invalid duration "soon"' in conversion.message


def test_values_seen_to_parse_are_remembered_without_changing_an_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.review import schema

    monkeypatch.setattr(schema, "_PARSE", set())
    monkeypatch.setattr(schema, "_PARSE_SIZE", 2)
    path = _leaves("DynamoComponentDeployment", "quantity")[0]
    for value in ["1", "x", "1", 1, "2Gi", "x", 2.0, "3", "1", "1 GPU"]:
        problem, _ = check_object(
            _object("DynamoComponentDeployment", _place(path, value)), B1, "DynamoComponentDeployment"
        )
        assert (problem == QUANTITY_TEXT) is (value in ("x", "1 GPU")), value
        assert len(schema._PARSE) <= 2
    assert all(key[2] not in ("x", "1 GPU") for key in schema._PARSE)  # only what parsed is kept
