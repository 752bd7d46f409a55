"""When the status half of a DGD's or DCD's hub -> v1alpha1 conversion cannot fail.

The lazy v1alpha1 view (:mod:`validation.compat_view`) must fail exactly when the whole
conversion of the object fails. The status half of that conversion (the status and its
``nvidia.com/dgd-status`` / ``nvidia.com/dcd-status`` payload; the spec does not enter it) was
checked by converting the object without its spec, which costs as much as a tenth of a
migrated DGD's validation. :func:`status_converts` answers the same question for the status
values clusters hold by reading them once: True when the conversion certainly succeeds, False
when it may fail (the caller then converts, which decides). It is stricter than the
conversion, never looser; ``tests/validation/test_compat_status.py`` proves the implication
with generated statuses of every shape.

What the conversion of a hub status reads (``conversion/v1alpha1/dgd.py``, ``dcd.py``), and so
what must hold for it to succeed:

* the status payload is decoded when it is a non-empty annotation (here with the conversion's
  own decoder); what is restored from it then works on typed values;
* ``conditions`` is viewed as Go's ``[]metav1.Condition`` (every member of the right type, the
  ``observedGeneration`` an int64, the ``lastTransitionTime`` an RFC 3339 time);
* ``rollingUpdate.startTime`` / ``endTime`` are viewed as ``*metav1.Time``;
* the members the conversion looks into are objects (``placement``, ``restart``,
  ``rollingUpdate``, each entry of ``components`` and ``checkpoints``, a DCD's ``component``)
  and the lists it copies are lists (``componentNames``, ``updatedComponents``);
* every other member is copied as it is, whatever its type.
"""

from __future__ import annotations

from typing import Any, Final

from conversion import ConversionError
from conversion.payloads import read_status_payload
from conversion.v1alpha1 import dcd as dcd_spoke
from conversion.v1alpha1 import dgd as dgd_spoke
from domain.constants import ANN_DCD_STATUS, ANN_DGD_STATUS, KIND_DCD, KIND_DGD
from gocompat.gotime import go_time
from gocompat.typed import Struct

_INT64: Final = (-(1 << 63), (1 << 63) - 1)
_CONDITION_TEXT: Final = frozenset(("type", "status", "reason", "message"))


def _time(value: Any) -> bool:
    """A ``metav1.Time`` Go decodes: absent, or an RFC 3339 text naming a real instant."""
    if value is None:
        return True
    if type(value) is not str:
        return False
    try:
        go_time(value)
    except ValueError:
        return False
    return True


def _condition(c: Any) -> bool:
    if type(c) is not dict:
        return False
    for key, value in c.items():
        if value is None:
            continue  # null leaves a Go field as it was
        if key in _CONDITION_TEXT:
            if type(value) is not str:
                return False
        elif key == "observedGeneration":
            if type(value) is not int or not _INT64[0] <= value <= _INT64[1]:
                return False
        elif key == "lastTransitionTime":
            if not _time(value):
                return False
        else:
            return False  # an unknown or differently cased member: the conversion decides
    return True


def _conditions(conditions: Any) -> bool:
    if not conditions:
        return True
    return type(conditions) is list and all(_condition(c) for c in conditions)


def _object_or_none(value: Any) -> bool:
    return value is None or type(value) is dict


def _list_or_falsy(value: Any) -> bool:
    return not value or type(value) is list


def _replica(value: Any) -> bool:
    """One replica status (``components.<name>``, a DCD's ``component``)."""
    return value is None or (type(value) is dict and _list_or_falsy(value.get("componentNames")))


def _entries(value: Any, entry_ok: Any) -> bool:
    """A map the conversion iterates when it is not empty, each entry passing ``entry_ok``."""
    if not value:
        return True
    return type(value) is dict and all(entry_ok(v) for v in value.values())


def _rolling(value: Any) -> bool:
    if value is None:
        return True
    if type(value) is not dict:
        return False
    return all(not value.get(k) or _time(value[k]) for k in ("startTime", "endTime")) and _list_or_falsy(
        value.get("updatedComponents")
    )


def _dgd(status: dict[str, Any]) -> bool:
    return (
        _object_or_none(status.get("placement"))
        and _conditions(status.get("conditions"))
        and _object_or_none(status.get("restart"))
        and _entries(status.get("checkpoints"), _object_or_none)
        and _entries(status.get("components"), _replica)
        and _rolling(status.get("rollingUpdate"))
    )


def _dcd(status: dict[str, Any]) -> bool:
    return _conditions(status.get("conditions")) and _replica(status.get("component"))


def _payload(saved: Any, key: str, schema: Struct) -> bool:
    """The status payload annotation ``key`` (None: absent) decodes."""
    if saved is None:
        return True
    try:
        read_status_payload({"annotations": {key: saved}}, key, schema)
    except ConversionError:
        return False
    return True


def status_converts(kind: str, status: Any, saved: Any) -> bool:
    """True when converting a hub ``kind`` object whose status is ``status`` and whose status
    payload annotation is ``saved`` (None: absent) to v1alpha1 cannot fail in its status half;
    False when it may."""
    if status is not None and type(status) is not dict:
        return False
    if kind == KIND_DGD:
        return (status is None or _dgd(status)) and _payload(saved, ANN_DGD_STATUS, dgd_spoke.ALPHA_STATUS)
    if kind == KIND_DCD:
        return (status is None or _dcd(status)) and _payload(saved, ANN_DCD_STATUS, dcd_spoke.ALPHA_STATUS)
    return False
