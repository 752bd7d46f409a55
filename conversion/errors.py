"""Errors raised by conversion functions."""


class ConversionError(Exception):
    """A single object could not be converted; the message is the review's failure text."""
