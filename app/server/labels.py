"""The values the review metrics' labels take: a fixed set, whatever a request says.

A review's kind and operation are read from the request, so counting them as they came would
make each made-up value a series of its own: 5,000 admission reviews of invented kinds turned
``/metrics`` from 32 KiB into 2.4 MiB, and every scrape after them took longer. Each label value
here is one of a set fixed when the module is loaded, and anything else is :data:`OTHER`:

* ``kind``: a kind of the registry (:data:`kinds.REGISTRY`);
* ``operation``: CREATE, UPDATE, DELETE, CONNECT, and CONVERT (conversions);
* a conversion's ``direction``: ``source->target`` for two versions its kind serves;
* ``code``: the HTTP status codes the service answers with, and the codes of its denials
  (:data:`CODES`, as text). They come from the code, not from a request, but a label is
  bounded by what it accepts rather than by what its callers happen to send.

:class:`app.server.tally.PathTally` counts a review under these values, so it keeps no more keys than
the set holds either. The tables map each known value to one shared key, so a review's cost is
a dict lookup on the key it builds anyway; an unknown value takes the slower way once per review
(:func:`admission_key`, :func:`conversion_key`). The review log line still carries the value the
request sent, cut to a bounded length (:func:`app.server.observability.log_value`).
"""

from __future__ import annotations

from itertools import product

from kinds import REGISTRY

#: The value of a label for anything outside its set.
OTHER = "other"

#: Every registered kind.
KINDS: tuple[str, ...] = tuple(k.kind for k in REGISTRY)
#: An admission request's operations, and the one a conversion is logged with.
OPERATIONS: tuple[str, ...] = ("CREATE", "UPDATE", "DELETE", "CONNECT", "CONVERT")
#: The status codes the service answers or denies with: 200; a request refused before a review
#: is read (400, 408, 413, 415; 499 when the client went away); a denial (400, 403, 422, 500);
#: and the server's other answers (404 and 405 for an unknown path or method, 503 from /readyz).
#: Any other code (none is answered today) is counted as :data:`OTHER`.
CODES: tuple[int, ...] = (200, 400, 403, 404, 405, 408, 413, 415, 422, 499, 500, 503)

_KIND = {kind: kind for kind in KINDS}
_OPERATION = {operation: operation for operation in OPERATIONS}
_CODE = {code: str(code) for code in CODES}

#: (kind, operation, allowed) as the request gave them -> the same as label values.
ADMISSION_KEYS: dict[tuple[str, str, bool], tuple[str, str, bool]] = {
    key: key for key in product(KINDS, OPERATIONS, (True, False))
}


def _directions(served: tuple[str, ...]) -> list[str]:
    return [f"{source}->{target}" for source, target in product(served, served)]


#: (kind, "v1alpha1->v1beta1") of a converted object -> the same as label values: every pair of
#: versions a convertible kind serves (the same version twice too: an object already in the
#: desired version is passed through and counted).
CONVERSION_KEYS: dict[tuple[str, str], tuple[str, str]] = {
    (k.kind, direction): (k.kind, direction)
    for k in REGISTRY
    if k.convertible
    for direction in _directions(k.served)
}


def kind_label(kind: str) -> str:
    return _KIND.get(kind, OTHER)


def operation_label(operation: str) -> str:
    return _OPERATION.get(operation, OTHER)


def code_label(code: int) -> str:
    return _CODE.get(code, OTHER)


def admission_key(key: tuple[str, str, bool]) -> tuple[str, str, bool]:
    """``key`` (kind, operation, allowed) with label values (:data:`ADMISSION_KEYS` when known)."""
    known = ADMISSION_KEYS.get(key)
    if known is not None:
        return known
    kind, operation, allowed = key
    return (_KIND.get(kind, OTHER), _OPERATION.get(operation, OTHER), allowed)


def conversion_key(key: tuple[str, str]) -> tuple[str, str]:
    """``key`` (kind, direction) with label values (:data:`CONVERSION_KEYS` when known)."""
    known = CONVERSION_KEYS.get(key)
    if known is not None:
        return known
    return (_KIND.get(key[0], OTHER), OTHER)
