"""What deploy/'s Deployment gives the service's container, for the end-to-end suite to run the
service as the pod would: its CPU and memory limits, and the workers and memory budget the service
takes from them."""

from __future__ import annotations

import math
from fractions import Fraction

import yaml

from app.server.budget import default_budget, workers_that_fit
from gocompat.quantity import parse_quantity
from tests.e2e.testenv import ROOT

DEPLOYMENT = ROOT / "deploy" / "base" / "deployment.yaml"


def _limit(resource: str) -> Fraction:
    """The service container's ``resource`` limit in deploy/."""
    for doc in yaml.safe_load_all(DEPLOYMENT.read_text()):
        if doc and doc.get("kind") == "Deployment":
            for container in doc["spec"]["template"]["spec"]["containers"]:
                limit = parse_quantity(str(container["resources"]["limits"][resource]))
                return Fraction(limit.unscaled) * Fraction(10) ** limit.exp10
    raise AssertionError(f"no Deployment with a {resource} limit in {DEPLOYMENT}")


def memory_limit() -> int:
    """The service container's memory limit in deploy/, in bytes."""
    return int(_limit("memory"))


def cpu_limit() -> int:
    """The service container's CPU limit in deploy/, in whole CPUs rounded up: the CPUs its
    process may use (its cgroup quota)."""
    return math.ceil(_limit("cpu"))


def pod_serve_args() -> tuple[str, ...]:
    """The ``serve`` flags giving the service the workers and the memory budget it takes in the pod
    (the workers of its CPU limit, under the container's memory limit): the service started here
    runs outside that cgroup, and is moved into the memory limit only later."""
    workers = min(cpu_limit(), workers_that_fit(memory_limit()) or 1)
    return ("--workers", str(workers), "--memory-budget", str(default_budget(workers, memory_limit())))
