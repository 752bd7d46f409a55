"""Suite-wide test configuration: hypothesis profiles.

``default`` (CI) runs 300 examples per property; ``deep`` runs 5000:
``pytest --hypothesis-profile=deep``. Properties rely on the profile's ``max_examples``
rather than fixing their own count, so the deep profile reaches every law.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("deep", parent=settings.get_profile("default"), max_examples=5000)
settings.load_profile("default")
