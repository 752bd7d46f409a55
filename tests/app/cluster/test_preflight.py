"""The 1.5 preflight rules on made-up CRDs."""

from __future__ import annotations

import io

import orjson

from app.cluster import preflight
from app.cluster.inventory import CrdInfo


def crd(name: str, stored: tuple[str, ...]) -> CrdInfo:
    return CrdInfo(name, "u", 1, "1", "v1beta1", ("v1alpha1", "v1beta1"), stored, True)


def test_a_crd_still_storing_v1alpha1_is_reported_once_with_its_fix_and_source() -> None:
    found = preflight.findings_1_5([crd("dynamographdeployments.nvidia.com", ("v1alpha1", "v1beta1")),
                                    crd("dynamocomponentdeployments.nvidia.com", ("v1beta1",))])
    assert [f.name for f in found] == ["dynamographdeployments.nvidia.com"]
    assert found[0].fix == "dynamo-webhook storage-migrate"
    assert found[0].source == preflight.NOTES_1_5
    assert preflight.exit_code(found) == 1


def test_a_migrated_cluster_is_clean() -> None:
    found = preflight.findings_1_5([crd("dynamographdeployments.nvidia.com", ("v1beta1",))])
    assert found == [] and preflight.exit_code(found) == 0


def test_json_lists_each_finding_with_kind_name_fix_and_source() -> None:
    out = io.StringIO()
    preflight.render(preflight.findings_1_5([crd("x.nvidia.com", ("v1alpha1",))]), "json", out)
    doc = orjson.loads(out.getvalue())
    assert doc["findings"][0]["kind"] == "CustomResourceDefinition"
    assert set(doc["findings"][0]) == {"kind", "name", "breaks", "fix", "source"}
