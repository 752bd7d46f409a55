"""Suite-wide test configuration: hypothesis profiles.

``default`` is sized for CI (each law still runs hundreds of examples); ``deep`` is for local
runs: ``pytest --hypothesis-profile=deep``. Tests that need a specific example count set it
with ``@settings(max_examples=...)`` scaled by :data:`EXAMPLES_SCALE`.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "deep",
    parent=settings.get_profile("default"),
    max_examples=5000,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: Multiplier for explicit ``max_examples`` values; 10x under the deep profile.
EXAMPLES_SCALE = 10 if os.environ.get("HYPOTHESIS_PROFILE") == "deep" else 1
