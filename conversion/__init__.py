"""Conversion between the served versions of each Dynamo kind (hub = v1beta1), on plain dicts.

Each kind has one converter (:class:`conversion.hub.KindConverter`: its hub and spokes), in
``conversion/<kind>.py`` as ``CONVERTER``; the per-version code is under ``conversion/v1alpha1/``.
The kind registry (:mod:`kinds`) holds the converters and :func:`kinds.convert` picks one by kind.
Failures raise :class:`ConversionError` with the review failure message.
"""

from __future__ import annotations

from conversion.errors import ConversionError

__all__ = ["ConversionError"]
