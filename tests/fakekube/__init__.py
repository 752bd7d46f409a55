"""An in-process fake Kubernetes API server for tests (see ``server.FakeKube``)."""

from tests.fakekube.server import Call, FakeKube, Faults

__all__ = ["Call", "FakeKube", "Faults"]
