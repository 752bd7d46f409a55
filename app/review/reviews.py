"""Review envelopes: AdmissionReview (admission.k8s.io v1/v1beta1) and ConversionReview
(apiextensions.k8s.io v1/v1beta1) — bytes in, plain data out, and back.

Rules (apiserver / controller-runtime behaviour):
- A body that is not a review at all (not JSON, invalid UTF-8, nesting deeper than
  :data:`MAX_DEPTH`, wrong apiVersion/kind, no ``request`` or no ``uid``) raises
  :class:`~app.review.errors.BadRequest`; the HTTP layer answers 400.
- Once the uid is known, every problem is answered inside a review (HTTP 200): a denial with
  ``status.code`` >= 400 and a message naming the field, or a conversion ``Failure``. A malformed
  request raises :class:`~app.review.errors.InvalidRequest`, which :mod:`app.review.dispatch` answers so.
- Answers use the apiVersion/kind of the request and echo its uid.
"""

from __future__ import annotations

import binascii
import threading
import zlib
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

import orjson

from app.review.bignumbers import MarkedDict, loads_with_big_numbers
from app.review.errors import BadRequest, InvalidRequest
from domain.admission import GVK, AdmissionInput, Decision, Operation, UserInfo
from gocompat.jsonvalue import json_type

ADMISSION_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
CONVERSION_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
OPERATIONS: tuple[Operation, ...] = ("CREATE", "UPDATE", "DELETE", "CONNECT")

#: Deepest JSON nesting accepted in a review body. Kubernetes objects stay far below this.
MAX_DEPTH = 128
#: Longest warning kept (characters); longer ones are cut with an ellipsis. This is the
#: apiserver's own limit (it truncates longer warnings); 120 is only its recommendation, and the
#: operator's warnings run longer, so clipping at 120 would change the texts users see.
MAX_WARNING_CHARS = 256
#: Total warning budget per response (bytes of text), as the apiserver's.
MAX_WARNINGS_TOTAL = 4096

JSONObject = dict[str, Any]


class StatusDict(TypedDict, total=False):
    status: Literal["Success", "Failure"]
    code: int
    reason: str
    message: str
    details: JSONObject


class AdmissionResponse(TypedDict, total=False):
    uid: str
    allowed: bool
    status: JSONObject
    patch: str
    patchType: Literal["JSONPatch"]
    warnings: list[str]


class ConversionResponse(TypedDict, total=False):
    uid: str
    convertedObjects: list[JSONObject] | None
    result: StatusDict


# --------------------------------------------------------------------------- parsing


def _within(node: Any, budget: int) -> bool:
    """Whether ``node`` (a dict or list) and the containers below it span at most ``budget``
    levels, ``node`` counting as one and an empty container as a level like any other.
    Recursive, but never deeper than ``budget`` calls."""
    if budget <= 0:
        return False
    budget -= 1
    for child in node.values() if type(node) is dict else node:
        kind = type(child)
        if (kind is dict or kind is list) and not _within(child, budget):
            return False
    return True


def _encoder_depth() -> int:
    """The deepest nesting ``orjson.dumps`` encodes (254 levels in orjson 3), found once by trying."""
    low, high = 1, 4096  # encodes ``low`` levels; refuses ``high`` (or encodes everything up to it)
    while high - low > 1:
        middle = (low + high) // 2
        node: Any = 0
        for _ in range(middle):
            node = [node]
        try:
            orjson.dumps(node)
        except orjson.JSONEncodeError:
            high = middle
        else:
            low = middle
    return low


#: Lists laid around a document so that orjson's encoder refuses it exactly when the document
#: is more than MAX_DEPTH levels deep.
_PADDING = _encoder_depth() - MAX_DEPTH
_padding = threading.local()


def _encoder_refuses(doc: Any) -> bool | None:
    """Whether the encoder refuses ``doc`` for its depth; ``None`` when it refuses it for
    something else (a value orjson cannot encode), which only a document not decoded by orjson
    can hold."""
    chain: tuple[list[Any], list[Any]] | None = getattr(_padding, "chain", None)
    if chain is None:
        inner: list[Any] = [None]
        outer = inner
        for _ in range(_PADDING - 1):
            outer = [outer]
        chain = _padding.chain = (outer, inner)  # one per thread: large reviews run on a worker thread
    outer, inner = chain
    inner[0] = doc
    try:
        orjson.dumps(outer)
    except orjson.JSONEncodeError as exc:
        return True if "Recursion limit" in str(exc) else None
    finally:
        inner[0] = None
    return False


def check_depth(doc: Any) -> None:
    """Reject absurdly nested documents before any recursive code sees them.

    orjson's encoder is a depth-limited walk in C, four times as fast as :func:`_within` on a
    review: with :data:`_PADDING` lists around the document it refuses exactly the documents
    :func:`_within` refuses (``tests/app/review/test_bad_input.py`` holds the two to each other)."""
    refused = _encoder_refuses(doc) if _PADDING > 0 else None
    if refused is None:
        refused = not _within(doc, MAX_DEPTH)
    if refused:
        raise BadRequest(f"JSON nesting deeper than {MAX_DEPTH} levels")


#: Bodies up to this size have their brackets counted before their depth is checked. Reviews of
#: Dynamo objects hold about one opening bracket in 30 bytes (a DGD UPDATE with managedFields:
#: 237 in 7 KiB), so a larger body would almost never pass the count, which then only adds to
#: its depth check (4 µs on that UPDATE, beside the check's 8.5 µs).
_COUNTED_BODY = 32 * MAX_DEPTH
#: Every byte but the two that open a container: what :func:`_few_brackets` deletes.
_NOT_OPENING = bytes(b for b in range(256) if b not in b"{[")


def parse_json(body: bytes | bytearray) -> Any:
    if not body:
        raise BadRequest("request body is empty")
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        refused: orjson.JSONDecodeError | None = exc
    else:
        refused = None
    if refused is not None:
        # Outside the handler, so that a refusal raised from here carries no context.
        doc = _valid_json(body, refused)
    if isinstance(doc, (dict, list)) and not _few_brackets(body):
        check_depth(doc)
    return doc


def _valid_json(body: bytes | bytearray, exc: orjson.JSONDecodeError) -> Any:
    """A body orjson refused: decoded when it is JSON with numbers past a double's range
    (:mod:`app.review.bignumbers`), else the 400 that it is not JSON."""
    try:
        doc = loads_with_big_numbers(body, exc)
    except orjson.JSONDecodeError as refusal:
        # Without its traceback: re-raised through frames that hold it, it would keep them (and
        # the body, and its text copy in ``doc``) in a reference cycle until the garbage
        # collector next runs.
        message = str(refusal.with_traceback(None))
        exc.with_traceback(None)
    else:
        return MarkedDict(doc) if type(doc) is dict else doc
    raise BadRequest(f"request body is not valid JSON: {message}")


def _few_brackets(body: bytes | bytearray) -> bool:
    """Whether a small body opens at most MAX_DEPTH containers in all, so it cannot nest deeper
    (each level opens one; a bracket in a string only adds to the count). Counting is cheaper
    than the depth check for a small review; a large one is checked without counting. The count
    is the length of what is left when every other byte is deleted: one pass over the body, half
    the time of two ``count`` calls."""
    if len(body) > _COUNTED_BODY:
        return False
    return len(body.translate(None, _NOT_OPENING)) <= MAX_DEPTH


def with_article(noun: str) -> str:
    """``an AdmissionReview``, ``a ConversionReview``."""
    return ("an " if noun[:1] in ("A", "E", "I", "O", "U", "a", "e", "i", "o", "u") else "a ") + noun


def _envelope(doc: Any, kind: str, versions: tuple[str, ...]) -> tuple[str, JSONObject, str]:
    if not isinstance(doc, dict):
        raise BadRequest(f"expected {with_article(kind)} object, got {json_type(doc)}")
    api_version, got_kind = doc.get("apiVersion"), doc.get("kind")
    if got_kind != kind or api_version not in versions:
        raise BadRequest(
            f"expected {with_article(kind)} ({', '.join(versions)}), got apiVersion={api_version!r} kind={got_kind!r}"
        )
    request = doc.get("request")
    if not isinstance(request, dict):
        raise BadRequest(f"{kind} has no request")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadRequest(f"{kind} request has no uid")
    return api_version, request, uid


#: The GVKs requests named, each built once (GVK is immutable); cleared when it grows past
#: _GVK_CACHE_SIZE, as the values come from requests.
_gvks: dict[tuple[str, str, str], GVK] = {}
_GVK_CACHE_SIZE = 256


def _gvk(value: Any, field: str, required: bool) -> GVK | None:
    if value is None and not required:
        return None
    if type(value) is dict:
        group, version, kind = value.get("group", ""), value.get("version", ""), value.get("kind", "")
        if type(group) is str and type(version) is str and type(kind) is str and version and kind:
            named = (group, version, kind)
            gvk = _gvks.get(named)
            if gvk is None:
                if len(_gvks) >= _GVK_CACHE_SIZE:
                    _gvks.clear()
                gvk = _gvks[named] = GVK(group, version, kind)
            return gvk
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"{field}: expected an object with group, version and kind, got {json_type(value)}"
        )
    parts = []
    for key in ("group", "version", "kind"):
        part = value.get(key, "")
        if not isinstance(part, str):
            raise InvalidRequest(f"{field}.{key}: expected a string, got {json_type(part)}")
        parts.append(part)
    if not parts[1] or not parts[2]:
        raise InvalidRequest(f"{field}: version and kind are required")
    return GVK(parts[0], parts[1], parts[2])


def _str(request: JSONObject, key: str) -> str:
    value = request.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidRequest(f"request.{key}: expected a string, got {json_type(value)}")
    return value


def _user(value: Any) -> UserInfo:
    if value is None:
        return UserInfo()
    if not isinstance(value, dict):
        raise InvalidRequest(f"request.userInfo: expected an object, got {json_type(value)}")
    groups = value.get("groups") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise InvalidRequest("request.userInfo.groups: expected a list of strings")
    username, uid = value.get("username") or "", value.get("uid") or ""
    if not isinstance(username, str) or not isinstance(uid, str):
        raise InvalidRequest("request.userInfo: username and uid must be strings")
    extra_raw = value.get("extra") or {}
    extra: dict[str, tuple[str, ...]] = {}
    if isinstance(extra_raw, dict):
        for k, v in extra_raw.items():
            if isinstance(v, list):
                extra[str(k)] = tuple(str(x) for x in v)
    return UserInfo(username=username, uid=uid, groups=tuple(groups), extra=extra)


def _object(request: JSONObject, key: str) -> JSONObject | None:
    value = request.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidRequest(f"request.{key}: expected a JSON object, got {json_type(value)}")
    for sub in ("metadata", "spec", "status"):
        part = value.get(sub)
        if part is not None and not isinstance(part, dict):
            raise InvalidRequest(f"request.{key}.{sub}: expected a JSON object, got {json_type(part)}")
    meta = value.get("metadata")
    if isinstance(meta, dict):
        for sub in ("annotations", "labels"):
            part = meta.get(sub)
            if part is None:
                continue
            if not isinstance(part, dict) or not all(isinstance(v, str) for v in part.values()):
                raise InvalidRequest(f"request.{key}.metadata.{sub}: expected a map of strings")
        for sub in ("name", "namespace"):
            part = meta.get(sub)
            if part is not None and not isinstance(part, str):
                raise InvalidRequest(
                    f"request.{key}.metadata.{sub}: expected a string, got {json_type(part)}"
                )
    return value


@dataclass(slots=True, init=False)
class Envelope:
    """A readable review: its apiVersion (the answer's), its uid and its request. Its
    ``__init__`` is written out so that the compiled build compiles it (see
    :mod:`domain.admission`)."""

    api_version: str
    uid: str
    request: JSONObject

    def __init__(self, api_version: str, uid: str, request: JSONObject) -> None:
        self.api_version = api_version
        self.uid = uid
        self.request = request


def read_admission_review(doc: Any) -> Envelope:
    """Validate the envelope; raises :class:`BadRequest` when this is not an AdmissionReview."""
    api_version, request, uid = _envelope(doc, "AdmissionReview", ADMISSION_VERSIONS)
    return Envelope(api_version, uid, request)


def admission_input(env: Envelope, expected_gvk: GVK | None = None) -> AdmissionInput:
    """Map a readable review onto :class:`AdmissionInput`; raises :class:`InvalidRequest`."""
    request = env.request
    kind = _gvk(request.get("kind"), "request.kind", required=True)
    assert kind is not None
    operation = request.get("operation")
    if operation not in OPERATIONS:
        raise InvalidRequest(
            f"request.operation: Unsupported value: {orjson.dumps(operation).decode()}: "
            'supported values: "CREATE", "UPDATE", "DELETE", "CONNECT"'
        )
    obj = _object(request, "object")
    old = _object(request, "oldObject")
    if operation in ("CREATE", "UPDATE") and obj is None:
        raise InvalidRequest(f"request.object: Required value: an object is required for {operation}")
    if operation == "UPDATE" and old is None:
        raise InvalidRequest("request.oldObject: Required value: the previous object is required for UPDATE")
    resource = request.get("resource")
    dry_run = request.get("dryRun")
    return AdmissionInput(
        uid=env.uid,
        kind=kind,
        operation=operation,
        name=_str(request, "name"),
        namespace=_str(request, "namespace"),
        request_kind=_gvk(request.get("requestKind"), "request.requestKind", required=False),
        resource=str(resource.get("resource", "")) if isinstance(resource, dict) else "",
        sub_resource=_str(request, "subResource"),
        user=_user(request.get("userInfo")),
        object=obj,
        old_object=old,
        dry_run=dry_run if isinstance(dry_run, bool) else False,
        expected_gvk=expected_gvk,
    )


# --------------------------------------------------------------------------- answers


def clip_warnings(warnings: list[str]) -> list[str]:
    """Keep warnings within the apiserver's budget (per warning and in total)."""
    out: list[str] = []
    total = 0
    for warning in warnings:
        text = str(warning)
        if not text.isprintable():  # warnings travel in an HTTP header: no control characters
            text = "".join(c if c.isprintable() else " " for c in text)
        if len(text) > MAX_WARNING_CHARS:
            text = text[: MAX_WARNING_CHARS - 1] + "…"
        if total + len(text) > MAX_WARNINGS_TOTAL:
            break
        total += len(text)
        out.append(text)
    return out


def _pointer(parts: list[str]) -> str:
    if not parts:
        return ""  # the whole document
    return "/" + "/".join([_escaped(part) for part in parts])


def _escaped(part: str) -> str:
    """A member name as a JSON pointer token (RFC 6901: ``~`` is ``~0``, ``/`` is ``~1``)."""
    if "~" in part:
        part = part.replace("~", "~0")
    if "/" in part:
        part = part.replace("/", "~1")
    return part


def _same(a: Any, b: Any) -> bool:
    """Two values that are not both objects nor both lists (:func:`_diff` walks those) are equal
    as JSON: ``true`` is not ``1`` and ``1`` is not ``1.0`` (Python's ``==`` says they are)."""
    return a is b or (type(a) is type(b) and a == b)


def _diff(original: Any, patched: Any, parts: list[str], ops: list[JSONObject]) -> None:
    """Append to ``ops`` what turns ``original`` into ``patched`` (``parts``: where they are).
    Two objects or two lists are walked member by member without comparing them whole first:
    on the path to a change they differ anyway, and elsewhere their members are mostly the
    same objects, passed over without a call."""
    if isinstance(original, dict) and isinstance(patched, dict):
        for key, value in patched.items():
            if key not in original:
                parts.append(key)
                ops.append({"op": "add", "path": _pointer(parts), "value": value})
                parts.pop()
                continue
            before = original[key]
            if before is not value:
                parts.append(key)
                _diff(before, value, parts, ops)
                parts.pop()
        return  # keys only in the original would be removals: never sent
    if isinstance(original, list) and isinstance(patched, list):
        common = len(original)
        for index, value in enumerate(patched):
            if index < common and original[index] is value:
                continue
            parts.append(str(index))
            if index < common:
                _diff(original[index], value, parts, ops)
            else:
                ops.append({"op": "add", "path": _pointer(parts), "value": value})
            parts.pop()
        return  # a shorter list would need removals: never sent
    if not _same(original, patched):
        ops.append({"op": "replace", "path": _pointer(parts), "value": patched})


def json_patch(original: JSONObject, patched: JSONObject) -> list[JSONObject]:
    """RFC 6902 patch from ``original`` to ``patched`` with ``add`` and ``replace`` operations
    only: ``remove`` operations are never produced (controller-runtime drops them for custom
    defaulters, so fields a defaulter does not know are never deleted). Lists are compared index
    by index with additions appended, as the Go webhook's patch generator does."""
    ops: list[JSONObject] = []
    if original is not patched:
        _diff(original, patched, [], ops)
    return ops


def admission_response(
    uid: str, decision: Decision, mutating: bool, original: JSONObject | None
) -> AdmissionResponse:
    resp: AdmissionResponse = {"uid": uid, "allowed": decision.allowed, "status": decision.status}
    if decision.warnings:
        resp["warnings"] = clip_warnings(decision.warnings)
    if mutating and decision.allowed and decision.patched is not None and original is not None:
        ops = json_patch(original, decision.patched)
        if ops:
            resp["patchType"] = "JSONPatch"
            # standard base64 without a newline (base64.b64encode's, minus its Python frame)
            resp["patch"] = binascii.b2a_base64(orjson.dumps(ops), newline=False).decode("ascii")
    return resp


def denial(uid: str, message: str, code: int) -> AdmissionResponse:
    """A refusal with ``code`` and ``message``, as controller-runtime writes one: a denial (403)
    with the reason ``Forbidden`` (``admission.Denied``), an error (400, 500) with none
    (``admission.Errored``)."""
    status: JSONObject = {"code": code, "message": message}
    if code == 403:
        status["reason"] = "Forbidden"
    return {"uid": uid, "allowed": False, "status": status}


def admission_review(api_version: str, response: AdmissionResponse) -> bytes:
    return orjson.dumps({"apiVersion": api_version, "kind": "AdmissionReview", "response": response})


def read_conversion_review(doc: Any) -> Envelope:
    """Validate the envelope; raises :class:`BadRequest` when this is not a ConversionReview."""
    api_version, request, uid = _envelope(doc, "ConversionReview", CONVERSION_VERSIONS)
    return Envelope(api_version, uid, request)


def conversion_input(env: Envelope) -> tuple[str, list[Any]]:
    """The desired apiVersion and the objects of a readable review; raises :class:`InvalidRequest`."""
    desired = env.request.get("desiredAPIVersion")
    if not isinstance(desired, str) or not desired:
        raise InvalidRequest("request.desiredAPIVersion: Required value")
    objects = env.request.get("objects")
    if objects is None:
        objects = []
    if not isinstance(objects, list):
        raise InvalidRequest(f"request.objects: expected an array, got {json_type(objects)}")
    return desired, objects


def conversion_review(
    api_version: str, uid: str, converted: list[JSONObject] | None, failure: str | None = None
) -> bytes:
    response: ConversionResponse
    if failure is not None:
        response = {"uid": uid, "convertedObjects": None, "result": {"status": "Failure", "message": failure}}
    else:
        response = {"uid": uid, "convertedObjects": converted or [], "result": {"status": "Success"}}
    return orjson.dumps({"apiVersion": api_version, "kind": "ConversionReview", "response": response})


_NO_OBJECTS = b'"convertedObjects":[]'


class Packed:
    """A part of an answer held compressed (zlib, its fastest level) until it is sent: encoded
    Kubernetes objects of one list shrink about tenfold, and take a few milliseconds per MiB to
    pack and unpack. ``size``: its length unpacked."""

    __slots__ = ("data", "size")

    def __init__(self, raw: bytes) -> None:
        self.data = zlib.compress(raw, 1)
        self.size = len(raw)

    def unpack(self) -> bytes:
        return zlib.decompress(self.data)


Part = bytes | Packed


def part_size(part: Part) -> int:
    return part.size if isinstance(part, Packed) else len(part)


def unpacked(part: Part) -> bytes:
    return part.unpack() if isinstance(part, Packed) else part


def conversion_review_parts(api_version: str, uid: str, pieces: list[Part]) -> list[Part]:
    """The successful ConversionReview of objects already encoded, in parts: ``pieces`` each
    hold encoded objects joined by commas. The join of the parts is the same bytes as
    :func:`conversion_review` of the decoded objects (orjson writes a list as its items joined by
    commas; the marker cannot occur inside the uid or apiVersion, whose quotes are escaped)."""
    empty = conversion_review(api_version, uid, [])
    cut = empty.index(_NO_OBJECTS) + len(_NO_OBJECTS) - 1
    parts: list[Part] = [empty[:cut]]
    for index, piece in enumerate(pieces):
        if index:
            parts.append(b",")
        parts.append(piece)
    parts.append(empty[cut:])
    return parts


def conversion_review_encoded(api_version: str, uid: str, converted: list[bytes]) -> bytes:
    """The successful ConversionReview of objects already encoded one by one, in one piece."""
    pieces: list[Part] = [b",".join(converted)] if converted else []
    return b"".join(map(unpacked, conversion_review_parts(api_version, uid, pieces)))
