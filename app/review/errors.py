"""Why a review cannot be answered as asked, and with which code.

Every problem is a :class:`ReviewError` carrying its message and its code. What the code is
depends on how far the review was read:

- :class:`BadRequest`: the body is not a review at all (no uid to answer to). The HTTP layer
  answers with ``code`` as the HTTP status and a JSON error body; ``review`` exits with a usage
  error.
- :class:`ReviewFailure`: a review whose uid is known but which cannot be answered as asked. It is
  answered inside the review (HTTP 200): an AdmissionReview denial with ``status.code`` = ``code``,
  or a ConversionReview ``Failure``.

:mod:`app.review.dispatch` maps failures onto review answers, :mod:`app.server.routes` bad requests onto HTTP
answers.
"""

from __future__ import annotations


class ReviewError(Exception):
    """A problem with a review and the code it is answered with."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class BadRequest(ReviewError):
    """The body is not a review: answered with the HTTP status ``code`` and a JSON error body."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message, code)


class Abandoned(Exception):
    """A review given up half-way because its caller no longer waits for the answer (the
    ``stop`` function a long review is given said so)."""


class ReviewFailure(ReviewError):
    """A readable review that cannot be answered as asked: a denial (or conversion Failure)
    inside the review."""


class InvalidRequest(ReviewFailure):
    """The review's request is malformed, or its object does not decode into the operator's
    types: code 400."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 400)


class InternalError(ReviewFailure):
    """A handler failed on a well-formed request: code 500."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 500)


class ConversionFailure(ReviewFailure):
    """An object of a ConversionReview could not be converted (the whole review fails): code 500."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 500)
