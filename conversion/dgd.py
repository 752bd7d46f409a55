"""The DynamoGraphDeployment converter: hub v1beta1, spoke v1alpha1."""

from __future__ import annotations

from conversion.hub import KindConverter, Spoke
from conversion.v1alpha1 import dgd as v1alpha1
from domain.constants import KIND_DGD

CONVERTER = KindConverter(
    kind=KIND_DGD,
    group="nvidia.com",
    hub="v1beta1",
    spokes={
        "v1alpha1": Spoke(to_hub=v1alpha1.to_hub, from_hub=v1alpha1.from_hub, reusing_to_hub=v1alpha1.to_hub)
    },
)
