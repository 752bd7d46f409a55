"""What deploy/'s Deployment gives the service's container, for the end-to-end suite to run the
service as the pod would: its memory limit, and the memory budget the service takes from it."""

from __future__ import annotations

from fractions import Fraction

import yaml

from app.server.budget import default_budget
from gocompat.quantity import parse_quantity
from tests.e2e.testenv import ROOT

DEPLOYMENT = ROOT / "deploy" / "base" / "deployment.yaml"


def memory_limit() -> int:
    """The service container's memory limit in deploy/, in bytes."""
    for doc in yaml.safe_load_all(DEPLOYMENT.read_text()):
        if doc and doc.get("kind") == "Deployment":
            for container in doc["spec"]["template"]["spec"]["containers"]:
                limit = parse_quantity(str(container["resources"]["limits"]["memory"]))
                return int(Fraction(limit.unscaled) * Fraction(10) ** limit.exp10)
    raise AssertionError(f"no Deployment with a memory limit in {DEPLOYMENT}")


def pod_budget_args() -> tuple[str, ...]:
    """The ``serve`` flag giving a process the memory budget it takes in the pod (one worker,
    under the container's limit): the service started here is moved into that limit only later."""
    return ("--memory-budget", str(default_budget(1, memory_limit())))
