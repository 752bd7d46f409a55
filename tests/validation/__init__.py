"""Tests of the validating rules."""

import pytest

# The view checks hold assertions: rewritten like the tests' own, so a failure shows the values.
pytest.register_assert_rewrite("tests.validation.view_checks")
