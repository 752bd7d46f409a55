"""Names the operator gives meaning to: the API group and versions, the kinds, annotation and
label keys, container names, workload providers and provider-override targets.

Each is written once, here; the rule, defaulting and conversion modules import them. Values are
the upstream operator's (``api/v1alpha1``, ``api/v1beta1``, ``internal/consts``).
"""

from __future__ import annotations

from typing import Final

# --- API group, versions, kinds ------------------------------------------------------------------

GROUP: Final = "nvidia.com"
V1ALPHA1: Final = "v1alpha1"
V1BETA1: Final = "v1beta1"
HUB_VERSION: Final = V1BETA1
ALPHA_API_VERSION: Final = f"{GROUP}/{V1ALPHA1}"
HUB_API_VERSION: Final = f"{GROUP}/{HUB_VERSION}"

KIND_DGD: Final = "DynamoGraphDeployment"
KIND_DCD: Final = "DynamoComponentDeployment"
KIND_DGDR: Final = "DynamoGraphDeploymentRequest"
KIND_DGDSA: Final = "DynamoGraphDeploymentScalingAdapter"
KIND_MODEL: Final = "DynamoModel"
KIND_CHECKPOINT: Final = "DynamoCheckpoint"

# --- annotations and labels on Dynamo objects --------------------------------------------------------

ANN_WORKLOAD_PROVIDER: Final = "nvidia.com/workload-provider"
ANN_ENABLE_GROVE: Final = "nvidia.com/enable-grove"
ANN_ORIGIN_VERSION: Final = "nvidia.com/dynamo-operator-origin-version"
ANN_VLLM_BACKEND: Final = "nvidia.com/vllm-distributed-executor-backend"
ANN_GROVE_UPDATE_STRATEGY: Final = "nvidia.com/grove-update-strategy"
ANN_DISCOVERY_MODE: Final = "nvidia.com/dynamo-kube-discovery-mode"
ANN_GPU_POWER_LIMIT: Final = "dynamo.nvidia.com/gpu-power-limit"

# Checkpoint restore (pods).
LABEL_CHECKPOINT_ID: Final = "nvidia.com/snapshot-checkpoint-id"
LABEL_CHECKPOINT_SOURCE: Final = "nvidia.com/snapshot-is-checkpoint-source"
ANN_RESTORE_CANDIDATE: Final = "nvidia.com/dynamo-checkpoint-restore-candidate"
ANN_CHECKPOINT_NAME: Final = "nvidia.com/dynamo-checkpoint-name"
LABEL_DYNAMO_COMPONENT: Final = "nvidia.com/dynamo-component"
LABEL_DYNAMO_NAMESPACE: Final = "nvidia.com/dynamo-namespace"
LABEL_DYNAMO_SELECTOR: Final = "nvidia.com/selector"


def payload_annotation(short: str, part: str) -> str:
    """The private annotation conversion keeps unrepresentable fields in: ``nvidia.com/dgd-spec``."""
    return f"{GROUP}/{short}-{part}"


ANN_DGD_SPEC: Final = payload_annotation("dgd", "spec")
ANN_DGD_STATUS: Final = payload_annotation("dgd", "status")
ANN_DCD_SPEC: Final = payload_annotation("dcd", "spec")
ANN_DCD_STATUS: Final = payload_annotation("dcd", "status")
ANN_DGDR_SPEC: Final = payload_annotation("dgdr", "spec")
ANN_DGDR_STATUS: Final = payload_annotation("dgdr", "status")


# --- containers, resources ---------------------------------------------------------------------------

MAIN_CONTAINER: Final = "main"
FRONTEND_SIDECAR_CONTAINER: Final = "sidecar-frontend"
GPU_NVIDIA: Final = "nvidia.com/gpu"

# --- workload providers and provider overrides -----------------------------------------------------

PROVIDER_GROVE: Final = "grove"
PROVIDER_COMPONENT: Final = "component"

GROVE_API_VERSION: Final = "grove.io/v1alpha1"
TARGET_PCS: Final = "PodCliqueSet"
TARGET_PCLQ_TEMPLATE: Final = "PodCliqueTemplateSpec"
TARGET_PCSG_CONFIG: Final = "PodCliqueScalingGroupConfig"

SCOPE_ROOT: Final = "root"
SCOPE_COMPONENT: Final = "component"
SCOPE_LEADER: Final = "multinode.leader"
SCOPE_WORKER: Final = "multinode.worker"

# --- GPU Memory Service modes (v1beta1 spelling; v1alpha1 writes them lower camel case) -------------

GMS_INTER_POD: Final = "InterPod"
GMS_INTRA_POD: Final = "IntraPod"
