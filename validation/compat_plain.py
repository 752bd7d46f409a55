"""Whether a v1beta1 DGD's or DCD's v1alpha1 view (:mod:`validation.compat_view`) builds and takes
nothing from the object's save annotation, told without building it.

The compatibility pass of a v1beta1 request (:mod:`validation.alpha`) reads the view only to find
its compatibility fields (``pvcs``, null services, and per service the fields :data:`LIGHT_SAVED`
restores from the save and a few hub fields convert into), and answers nothing when there is
none. Most objects clusters hold were migrated from v1alpha1 and carry a save that restores no
such field (``envFromSecret``, ``resources``, ``extraPodSpec``). For those, these predicates read
what the view would be built from instead of building it:

* the conversion cannot fail: the object is of its kind and hub version with an object for its
  metadata, :func:`validation.compat_status.status_converts` vouches for its status, the spec
  decodes as it is (the structural type check found that out on its way and the review passes
  it on: the ``spec_decodes`` argument of ``kinds.validate``, which the caller checks) and a DGD's components are objects
  with distinct names;
* the save restores nothing a compatibility field reads: only its text is read (no word such a
  member name, ``pvcs`` or a null service needs is in it), or else its JSON (a payload that does
  not decode is ignored by the conversion, which restores nothing either), member names folded as
  Go's decoder folds them; a name that is not ASCII is not vouched for.

Then the view's services are those of the same object without a save, and
:func:`validation.alpha.dgd_may_carry_alpha_fields` decides from the components alone
(``tests/validation/test_compat_plain.py`` proves the outcome equal to the full view's on
generated saves, statuses and components, and on every vector and example). Anything not
vouched for is answered by building the view, as before.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from domain.constants import ANN_DCD_SPEC, ANN_DCD_STATUS, ANN_DGD_SPEC, ANN_DGD_STATUS, KIND_DCD, KIND_DGD
from validation.compat_status import status_converts
from validation.compat_view import LIGHT_SAVED, hub_metadata
from validation.objects import JSON, lst, sub

#: The members of a saved service a compatibility field is restored from, in lower case (Go's
#: decoder matches member names case-insensitively): the light ones and the flat mounts.
_COMPAT_SAVED: Final = frozenset(k.lower() for k in (*LIGHT_SAVED, "volumeMounts"))


def _saved_specs(raw: str | None) -> list[Any]:
    """The values :func:`conversion.payloads.read_spec_payload` would decode as the saved spec:
    the envelope's ``spec`` members (names folded), the legacy bare spec, or none (no annotation,
    not JSON, not an object; ``null`` is an empty payload)."""
    if not raw:
        return []
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(doc, dict):
        return []
    if "spec" not in doc:
        return [doc]
    return [v for k, v in doc.items() if k.casefold() == "spec"]


def _entry_restores_nothing(entry: Any) -> bool:
    """A saved service (or DCD spec) none of whose members restores a compatibility field; a
    value that is not an object, or a member name that is not ASCII, is not vouched for."""
    if entry is None:
        return True
    if not isinstance(entry, dict):
        return False
    return all(key.isascii() and key.lower() not in _COMPAT_SAVED for key in entry)


#: Words a save restoring a compatibility field holds in its text (lower case): a member name
#: restoring one, ``pvcs``, or the ``null`` of a null service.
_WORDS: Final = (*sorted(_COMPAT_SAVED), "pvcs", "null")


def _text_restores_nothing(raw: str) -> bool:
    """A save whose text holds none of :data:`_WORDS` in any case, and is ASCII without escapes
    (so each member name is written out as it is): no member can restore a compatibility field,
    and there is no null service. Read without parsing the JSON; when a word is there (in a
    value, say), the JSON is read."""
    if not raw.isascii() or "\\" in raw:
        return False
    low = raw.lower()
    return not any(word in low for word in _WORDS)


def _graph_save_restores_nothing(raw: str | None) -> bool:
    """Whether a DGD save (``nvidia.com/dgd-spec``) restores no compatibility field: no
    ``pvcs``, no null service, no service entry restoring one. Its text is read first
    (:func:`_text_restores_nothing`), else its JSON, not its decoded payload: a payload that does
    not decode restores nothing either."""
    if not raw or _text_restores_nothing(raw):
        return True
    for spec in _saved_specs(raw):
        if spec is None:
            continue
        if not isinstance(spec, dict):
            return False
        for key, value in spec.items():
            if not key.isascii():
                return False
            low = key.lower()
            if low == "pvcs" and value is not None:
                return False
            if low == "services" and value is not None:
                if not isinstance(value, dict):
                    return False
                if not all(entry is not None and _entry_restores_nothing(entry) for entry in value.values()):
                    return False
    return True


def _converts_without_spec(hub: JSON, kind: str, status_key: str) -> dict[str, Any] | None:
    """The annotations of a hub object whose conversion cannot fail outside its spec (the
    object's kind and version, its metadata an object, its status vouched for by
    :func:`status_converts`), else None."""
    meta = hub_metadata(hub, kind)
    if meta is None:
        return None
    anns = meta.get("annotations")
    anns = anns if isinstance(anns, dict) else {}
    saved_status = anns.get(status_key)
    if not status_converts(kind, hub.get("status"), saved_status):
        return None
    return anns


def graph_builds_plain(hub: JSON) -> bool:
    """Whether the view of a DGD whose spec decodes as it is builds (the conversion cannot fail:
    :func:`_converts_without_spec`, components that are objects with distinct names) and takes
    nothing from its save (:func:`_graph_save_restores_nothing`): its services are then those
    of the same object without a save, which :func:`validation.alpha.dgd_errors` reads from the
    components alone (``tests/validation/test_compat_plain.py``)."""
    anns = _converts_without_spec(hub, KIND_DGD, ANN_DGD_STATUS)
    if anns is None:
        return False
    components = lst(sub(hub, "spec"), "components")
    names = {c.get("name", "") if isinstance(c, dict) else None for c in components}
    if None in names or len(names) != len(components):
        return False
    return _graph_save_restores_nothing(anns.get(ANN_DGD_SPEC))


def component_builds_plain(hub: JSON) -> bool:
    """:func:`graph_builds_plain` for a DCD (its save is the service itself)."""
    anns = _converts_without_spec(hub, KIND_DCD, ANN_DCD_STATUS)
    if anns is None:
        return False
    raw = anns.get(ANN_DCD_SPEC)
    if not raw or _text_restores_nothing(raw):
        return True
    return all(_entry_restores_nothing(spec) for spec in _saved_specs(raw))
