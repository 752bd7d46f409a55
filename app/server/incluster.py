"""Whether this process runs in a Kubernetes pod, as client-go decides it: the service host is
set and the service-account token is mounted. The settings' defaults and the cluster services
depend on it."""

from __future__ import annotations

import os
from pathlib import Path

SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")


def in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and SERVICE_ACCOUNT_TOKEN.exists()
