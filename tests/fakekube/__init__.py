"""An in-process fake Kubernetes API server for tests (see ``server.FakeKube``)."""

from tests.fakekube.api import Call, Faults
from tests.fakekube.server import FakeKube

__all__ = ["Call", "FakeKube", "Faults"]
