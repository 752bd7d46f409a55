"""Go ``encoding/json`` model of the DynamoGraphDeploymentRequest types (both versions).

The upstream converter decodes every object into typed Go structs, converts, and marshals the
result again. The observable effects of that round trip are reproduced here with small schema
objects instead of per-field code:

* decoding drops unknown keys, treats JSON ``null`` as "not set", and keeps a value-typed
  scalar only when it is not its Go zero value (pointer fields keep zero values: ``*bool`` false
  is still "set");
* payload annotations are decoded like ``encoding/json`` does (``fold=True``: field names
  match case-insensitively; ``strict=True``: any type mismatch anywhere rejects the payload),
  root objects like the apiserver serializer does (exact names; a mismatched field is dropped);
* encoding follows Go ``omitempty`` (omits ``""``/``0``/``false``/empty list or map/nil
  pointer; never omits a value-typed struct) and writes the zero value of non-``omitempty``
  fields (``"model":""``, ``"profilerImage":""``, ``"state":""``, ``"containers":null`` …);
* ``strip=True`` additionally applies the v1beta1 root normaliser: an encoded ``{}`` is
  removed where the Go field is a non-pointer struct (``template.metadata``,
  ``containers[].resources``), cascading upwards.

Kubernetes types (``batchv1.JobSpec``, ``corev1.PodSpec``, ``corev1.Container``…) are modelled
here only as far as conversion looks into them; every other field of theirs takes the Go type
of the generated table (:mod:`conversion.gotypes`): unknown keys dropped, ``omitempty`` zero
values (``readOnly: false``, ``hostNetwork: false``…) left out, pointers to empty structs kept.
Quantities are re-serialised canonically and ``metav1.Time`` values as RFC 3339 UTC seconds, as
Go marshals them.

Decoded values are fresh dicts and lists: nothing returned here aliases the input.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any

from conversion import gotypes
from conversion.gotypes import json_kind
from conversion.quantity import canonical

__all__ = [
    "ALPHA_SPEC",
    "ALPHA_STATUS",
    "BETA_SPEC",
    "BETA_STATUS",
    "CONTAINER",
    "JOB_SPEC",
    "RESOURCES",
    "Mismatch",
    "Struct",
    "go_float",
    "go_float_tree",
    "go_time",
    "is_zero",
    "jcopy",
    "load_go_json",
    "read_spec_envelope",
    "read_status_payload",
]


class Mismatch(Exception):
    """A JSON value does not fit the Go type it is decoded into."""


def jcopy(v: Any) -> Any:
    """Copy a JSON value (dicts and lists recursively; scalars are immutable)."""
    if isinstance(v, dict):
        return {k: jcopy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jcopy(x) for x in v]
    return v


def go_float(v: float) -> int | float:
    """A float64 as Go prints it: integral values below 1e21 have no fractional part."""
    if v.is_integer() and abs(v) < 1e21:
        return int(v)
    return v


def go_float_tree(v: Any) -> Any:
    """Copy a JSON value as ``map[string]any`` round trips it: every number becomes a float64,
    and every object's keys come out sorted, as Go marshals a map (by bytes: code point order).

    Raises :class:`Mismatch` for a number no float64 can hold (Go's decoder rejects it).
    """
    if isinstance(v, dict):
        return {k: go_float_tree(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [go_float_tree(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float):
        try:
            f = float(v)
        except OverflowError as e:
            raise Mismatch(f"cannot unmarshal number {v} into Go value of type float64") from e
        if not math.isfinite(f):
            raise Mismatch(f"cannot unmarshal number {v} into Go value of type float64")
        return go_float(f)
    return v


def go_time(s: str) -> str:
    """Parse like ``time.Parse(time.RFC3339, s)`` and print like ``metav1.Time.MarshalJSON``
    (:func:`conversion.gotypes.go_time`); a time Go cannot parse is a decode mismatch."""
    try:
        return gotypes.go_time(s)
    except ValueError as e:
        raise Mismatch(f"parsing time {s!r} as RFC3339") from e


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character {name!r} looking for beginning of value")


def load_go_json(raw: str) -> Any:
    """``json.loads`` restricted to what Go accepts (no NaN/Infinity); ValueError otherwise."""
    return json.loads(raw, parse_constant=_reject_constant)


# --------------------------------------------------------------------------- type model


class GoType:
    """A Go type: how a JSON value decodes into it, encodes from it, and what its zero is."""

    __slots__ = ()
    #: encoded form of the zero value of a non-omitempty, value-typed field
    zero_json: Any = None

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        raise NotImplementedError

    def encode(self, v: Any, strip: bool) -> Any:
        return v

    def zero(self, v: Any) -> bool:
        """``apiequality.Semantic.DeepEqual(v, zero)`` (nil and empty lists/maps are equal)."""
        raise NotImplementedError


class _Str(GoType):
    __slots__ = ()
    zero_json = ""

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if not isinstance(v, str):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type string")
        return v

    def zero(self, v: Any) -> bool:
        return bool(v == "")


class _Bool(GoType):
    __slots__ = ()
    zero_json = False

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if not isinstance(v, bool):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type bool")
        return v

    def zero(self, v: Any) -> bool:
        return v is False


class _Int(GoType):
    __slots__ = ("bits",)
    zero_json = 0

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        # A JSON number with a fraction or an exponent never decodes into a Go integer.
        lim = 1 << (self.bits - 1)
        if isinstance(v, bool) or not isinstance(v, int) or not -lim <= v < lim:
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type int{self.bits}")
        return v

    def zero(self, v: Any) -> bool:
        return bool(v == 0)


class _Float(GoType):
    __slots__ = ()
    zero_json = 0

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type float64")
        try:
            f = float(v)
        except OverflowError as e:
            raise Mismatch("cannot unmarshal number into Go value of type float64") from e
        if not math.isfinite(f):
            raise Mismatch("cannot unmarshal number into Go value of type float64")
        return f

    def encode(self, v: Any, strip: bool) -> Any:
        return go_float(v)

    def zero(self, v: Any) -> bool:
        return bool(v == 0)


class _Quantity(GoType):
    __slots__ = ()
    zero_json = "0"

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type resource.Quantity")
        try:
            return canonical(v)
        except ValueError as e:
            raise Mismatch(str(e)) from e

    def zero(self, v: Any) -> bool:
        return bool(v == "0")


class _Time(GoType):
    __slots__ = ()
    zero_json = None

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if not isinstance(v, str):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type metav1.Time")
        return go_time(v)

    def zero(self, v: Any) -> bool:
        return v is None


class _Bytes(GoType):
    """``[]byte``: a base64 (standard encoding) JSON string."""

    __slots__ = ()

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if not isinstance(v, str):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type []uint8")
        try:
            base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError) as e:
            raise Mismatch("illegal base64 data") from e
        return v

    def zero(self, v: Any) -> bool:
        return bool(v == "")


class _Raw(GoType):
    """Opaque JSON (``apiextensionsv1.JSON``, ``runtime.RawExtension``): kept verbatim."""

    __slots__ = ()

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        return jcopy(v)

    def encode(self, v: Any, strip: bool) -> Any:
        return jcopy(v)

    def zero(self, v: Any) -> bool:
        return v is None


class _K8s(GoType):
    """A Kubernetes type of the generated table (``conversion.gotypes``): its typed view."""

    __slots__ = ("expr",)

    def __init__(self, expr: str) -> None:
        self.expr = expr

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        try:
            return gotypes.view(self.expr, v)
        except gotypes.GoTypeError as e:
            raise Mismatch(str(e)) from e

    def encode(self, v: Any, strip: bool) -> Any:
        return gotypes.view(self.expr, v)

    def zero(self, v: Any) -> bool:
        return gotypes.is_zero(self.expr, v)


class Map(GoType):
    __slots__ = ("elem",)

    def __init__(self, elem: GoType) -> None:
        self.elem = elem

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if not isinstance(v, dict):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type map")
        elem = self.elem
        out: dict[str, Any] = {}
        for k, x in v.items():
            if x is None:
                out[k] = elem.zero_json
                continue
            try:
                out[k] = elem.decode(x, fold, strict)
            except Mismatch:
                if strict:
                    raise
        return out

    def encode(self, v: Any, strip: bool) -> Any:
        # Go writes a map with its keys sorted (by bytes: code point order)
        elem = self.elem
        return {k: elem.encode(v[k], strip) for k in sorted(v)}

    def zero(self, v: Any) -> bool:
        return not v


class List(GoType):
    __slots__ = ("elem",)

    def __init__(self, elem: GoType) -> None:
        self.elem = elem

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if not isinstance(v, list):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go value of type slice")
        elem = self.elem
        out: list[Any] = []
        for x in v:
            if x is None:
                out.append({} if isinstance(elem, Struct) else elem.zero_json)
                continue
            try:
                out.append(elem.decode(x, fold, strict))
            except Mismatch:
                if strict:
                    raise
                out.append({} if isinstance(elem, Struct) else elem.zero_json)
        return out

    def encode(self, v: Any, strip: bool) -> Any:
        elem = self.elem
        return [elem.encode(x, strip) for x in v]

    def zero(self, v: Any) -> bool:
        return not v


class F:
    """A struct field: JSON name, type, ``omitempty`` tag and whether the Go field is a pointer.

    The derived flags are precomputed for the decode/encode loops:
    ``keep`` — a decoded value is stored even when zero (pointers, structs, maps, lists, raw);
    ``nullable`` — JSON ``null`` clears the field (pointers, maps, lists, raw);
    ``omit_zero`` — ``omitempty`` applies (not to value-typed structs);
    ``plain`` — the encoded form is the decoded value itself.
    """

    __slots__ = ("keep", "name", "nullable", "omit_zero", "omitempty", "plain", "ptr", "type", "value_struct")

    def __init__(self, name: str, type_: GoType, omitempty: bool = True, ptr: bool = False) -> None:
        self.name = name
        self.type = type_
        self.omitempty = omitempty
        self.ptr = ptr
        self.value_struct = isinstance(type_, Struct) and not ptr
        container = isinstance(type_, Map | List | _Raw) or (
            isinstance(type_, _K8s) and type_.expr.startswith(("*", "[]", "map["))
        )
        self.nullable = ptr or container
        self.keep = ptr or container or isinstance(type_, Struct)
        self.omit_zero = omitempty and not self.value_struct and not ptr
        self.plain = isinstance(type_, _Str | _Bool | _Int | _Quantity | _Time | _Bytes)


_MISSING = object()


class Struct(GoType):
    """A Go struct. ``go`` names the Kubernetes type (``conversion.gotypes``) whose other
    fields an object may hold besides the modelled ones."""

    __slots__ = ("always", "fields", "folded", "go", "rank")

    def __init__(self, fields: list[F], go: str | None = None) -> None:
        self.fields = {f.name: f for f in fields}
        self.folded = {f.name.lower(): f for f in fields}
        #: fields Go writes even when unset: non-omitempty ones and value-typed structs
        self.always = [f for f in fields if not f.omitempty or f.value_struct]
        self.go = go
        #: the place of each field in Go's encoding: declaration order (of the whole Kubernetes
        #: type when ``go`` names one; the modelled fields are declared in it)
        self.rank = gotypes.field_order(go) if go is not None else {f.name: i for i, f in enumerate(fields)}

    def _member(self, k: str, x: Any, strict: bool) -> tuple[str, Any] | None:
        if self.go is None:
            return None
        try:
            return gotypes.member_view(self.go, k, x)
        except gotypes.GoTypeError as e:
            if strict:
                raise Mismatch(str(e)) from e
            return None

    def decode(self, v: Any, fold: bool, strict: bool) -> Any:
        if not isinstance(v, dict):
            raise Mismatch(f"cannot unmarshal {json_kind(v)} into Go struct")
        out: dict[str, Any] = {}
        fields = self.fields
        for k, x in v.items():
            f = fields.get(k)
            if f is None and fold:
                f = self.folded.get(k.lower())
            if f is None:
                member = self._member(k, x, strict)
                if member is not None:
                    out[member[0]] = member[1]
                continue
            name = f.name
            if x is None:
                # null leaves a value-typed field untouched and clears pointers, maps and lists
                if f.nullable:
                    out.pop(name, None)
                continue
            try:
                d = f.type.decode(x, fold, strict)
            except Mismatch:
                if strict:
                    raise
                continue
            if f.keep or not f.type.zero(d):
                out[name] = d
            else:
                out.pop(name, None)
        return out

    def encode(self, v: Any, strip: bool) -> Any:
        out: dict[str, Any] = {}
        fields = self.fields
        for k, x in v.items():
            f = fields.get(k)
            if f is None:
                member = self._member(k, x, False)
                if member is not None:
                    out[member[0]] = member[1]
                continue
            if f.omit_zero and f.type.zero(x):
                continue
            if f.plain:
                out[k] = x
                continue
            enc = f.type.encode(x, strip)
            if strip and f.value_struct and enc == {}:
                continue
            out[k] = enc
        for f in self.always:
            if f.name not in v:
                if f.value_struct:
                    enc = f.type.encode({}, strip)
                    if strip and enc == {}:
                        continue
                else:
                    enc = None if f.ptr else f.type.zero_json
                out[f.name] = enc
        if len(out) < 2:
            return out
        # Go writes the fields in declaration order, whatever the order of the input.
        rank, last = self.rank.get, len(self.rank)
        return {k: out[k] for k in sorted(out, key=lambda k: rank(k, last))}

    def zero(self, v: Any) -> bool:
        fields = self.fields
        for k, x in v.items():
            f = fields.get(k)
            if f is None:
                if self.go is not None and not gotypes.member_is_zero(self.go, k, x):
                    return False
            elif f.ptr or not f.type.zero(x):
                return False
        return True


STR = _Str()
BOOL = _Bool()
INT32 = _Int(32)
INT64 = _Int(64)
F64 = _Float()
QTY = _Quantity()
TIME = _Time()
BYTES = _Bytes()
RAW = _Raw()

# ----------------------------------------------------------------- Kubernetes subset

RESOURCES = Struct(
    [F("limits", Map(QTY)), F("requests", Map(QTY)), F("claims", _K8s("[]core/v1.ResourceClaim"))],
    go="core/v1.ResourceRequirements",
)
TOLERATION = Struct(
    [
        F("key", STR),
        F("operator", STR),
        F("value", STR),
        F("effect", STR),
        F("tolerationSeconds", INT64, ptr=True),
    ]
)
CONTAINER = Struct([F("name", STR, omitempty=False), F("resources", RESOURCES)], go="core/v1.Container")
_POD_SPEC = Struct(
    [
        F("initContainers", List(CONTAINER)),
        F("containers", List(CONTAINER), omitempty=False),
        F(
            "ephemeralContainers",
            List(Struct([F("name", STR, omitempty=False), F("resources", RESOURCES)], go="core/v1.EphemeralContainer")),
        ),
        F("nodeSelector", Map(STR)),
        F("tolerations", List(TOLERATION)),
        F("overhead", Map(QTY)),
        F("resources", RESOURCES, ptr=True),
    ],
    go="core/v1.PodSpec",
)
_OBJECT_META = Struct([], go="meta/v1.ObjectMeta")
_POD_TEMPLATE = Struct([F("metadata", _OBJECT_META), F("spec", _POD_SPEC)])
JOB_SPEC = Struct([F("template", _POD_TEMPLATE, omitempty=False)], go="batch/v1.JobSpec")
_CONDITION = Struct(
    [
        F("type", STR, omitempty=False),
        F("status", STR, omitempty=False),
        F("observedGeneration", INT64),
        F("lastTransitionTime", TIME, omitempty=False),
        F("reason", STR, omitempty=False),
        F("message", STR, omitempty=False),
    ]
)

# ---------------------------------------------------------------------- v1beta1 DGDR

BETA_SPEC = Struct(
    [
        F("model", STR, omitempty=False),
        F("backend", STR),
        F("image", STR),
        F("runtimeVersionOverride", STR),
        F(
            "modelCache",
            Struct([F("pvcName", STR), F("pvcModelPath", STR), F("pvcMountPath", STR)]),
            ptr=True,
        ),
        F(
            "hardware",
            Struct(
                [
                    F("gpuSku", STR),
                    F("vramMb", F64, ptr=True),
                    F("totalGpus", INT32, ptr=True),
                    F("numGpusPerNode", INT32, ptr=True),
                    F("interconnect", STR),
                    F("rdma", BOOL, ptr=True),
                ]
            ),
            ptr=True,
        ),
        F(
            "workload",
            Struct(
                [
                    F("isl", INT32, ptr=True),
                    F("osl", INT32, ptr=True),
                    F("concurrency", F64, ptr=True),
                    F("requestRate", F64, ptr=True),
                ]
            ),
            ptr=True,
        ),
        F(
            "sla",
            Struct(
                [
                    F("ttft", F64, ptr=True),
                    F("itl", F64, ptr=True),
                    F("e2eLatency", F64, ptr=True),
                    F("optimizationType", STR, ptr=True),
                ]
            ),
            ptr=True,
        ),
        F("overrides", Struct([F("profilingJob", JOB_SPEC, ptr=True), F("dgd", RAW, ptr=True)]), ptr=True),
        F(
            "features",
            Struct([F("planner", RAW, ptr=True), F("mocker", Struct([F("enabled", BOOL)]), ptr=True)]),
            ptr=True,
        ),
        F("searchStrategy", STR),
        F("autoApply", BOOL, ptr=True),
    ]
)

BETA_STATUS = Struct(
    [
        F("phase", STR),
        F("profilingPhase", STR),
        F("dgdName", STR),
        F("profilingJobName", STR),
        F("conditions", List(_CONDITION)),
        F(
            "profilingResults",
            Struct(
                [
                    F("pareto", List(Struct([F("config", RAW, omitempty=False)]))),
                    F("selectedConfig", RAW, ptr=True),
                ]
            ),
            ptr=True,
        ),
        F(
            "deploymentInfo",
            Struct([F("replicas", INT32, ptr=True), F("availableReplicas", INT32, ptr=True)]),
            ptr=True,
        ),
        F("observedGeneration", INT64),
    ]
)

# --------------------------------------------------------------------- v1alpha1 DGDR

ALPHA_SPEC = Struct(
    [
        F("model", STR, omitempty=False),
        F("backend", STR, omitempty=False),
        F("useMocker", BOOL),
        F(
            "profilingConfig",
            Struct(
                [
                    F("config", RAW, ptr=True),
                    F(
                        "configMapRef",
                        Struct([F("name", STR, omitempty=False), F("key", STR)]),
                        ptr=True,
                    ),
                    F("profilerImage", STR, omitempty=False),
                    F("outputPVC", STR),
                    F("resources", RESOURCES, ptr=True),
                    F("tolerations", List(TOLERATION)),
                    F("nodeSelector", Map(STR)),
                ]
            ),
            omitempty=False,
        ),
        F("runtimeVersionOverride", STR),
        F("enableGpuDiscovery", BOOL, ptr=True),
        F("autoApply", BOOL),
        F(
            "deploymentOverrides",
            Struct(
                [
                    F("name", STR),
                    F("namespace", STR),
                    F("labels", Map(STR)),
                    F("annotations", Map(STR)),
                    F("workersImage", STR),
                ]
            ),
            ptr=True,
        ),
    ]
)

ALPHA_STATUS = Struct(
    [
        F("state", STR, omitempty=False),
        F("backend", STR),
        F("observedGeneration", INT64),
        F("conditions", List(_CONDITION)),
        F("profilingResults", STR),
        F("generatedDeployment", RAW, ptr=True),
        F(
            "deployment",
            Struct(
                [
                    F("name", STR),
                    F("namespace", STR),
                    F("state", STR, omitempty=False),
                    F("created", BOOL),
                ]
            ),
            ptr=True,
        ),
    ]
)


def is_zero(t: GoType, v: Any) -> bool:
    """Semantic zero test of a decoded value (``None`` = nil)."""
    return v is None or t.zero(v)


# ------------------------------------------------------------------------ payloads


def _envelope(spec_type: Struct) -> Struct:
    record = Struct([F("path", STR, omitempty=False), F("raw", BYTES), F("nil", BOOL)])
    return Struct(
        [
            F("version", INT64, omitempty=False),
            F("spec", spec_type, omitempty=False),
            F("rawJSON", List(record)),
        ]
    )


_ENVELOPES: dict[int, Struct] = {}


def read_spec_envelope(raw: str, spec_type: Struct) -> dict[str, Any] | None:
    """Decode a spec payload (``{"version":1,"spec":…}`` or the legacy bare spec).

    Invalid JSON, a JSON value that is not an object (``null`` aside) and any type mismatch make
    the payload absent (``None``). The literal ``null`` is an empty, present payload.
    """
    try:
        doc = load_go_json(raw)
    except ValueError:
        return None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        return None
    try:
        if "spec" not in doc:  # the presence test is an exact map-key lookup
            decoded: dict[str, Any] = spec_type.decode(doc, True, True)
            return decoded
        env = _ENVELOPES.get(id(spec_type))
        if env is None:
            env = _ENVELOPES[id(spec_type)] = _envelope(spec_type)
        decoded_env: dict[str, Any] = env.decode(doc, True, True)
    except Mismatch:
        return None
    spec: dict[str, Any] = decoded_env.get("spec", {})
    return spec


def read_status_payload(raw: str, status_type: Struct) -> dict[str, Any] | None:
    """Decode a plain status payload; anything undecodable is absent (``None``)."""
    try:
        doc = load_go_json(raw)
    except ValueError:
        return None
    if doc is None:
        return {}
    try:
        decoded: dict[str, Any] = status_type.decode(doc, True, True)
    except Mismatch:
        return None
    return decoded
