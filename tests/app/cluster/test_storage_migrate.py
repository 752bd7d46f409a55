"""``dynamo-webhook storage-migrate`` without a cluster: the rewrite protocol (status PUT with the listed
resourceVersion, conflicts, deletions, failures), when storedVersions is set, resuming from the state
file, the reports and exit codes (against an in-memory API; tests/e2e runs it against a real one)."""

from __future__ import annotations

import copy
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.cluster import storage_migrate
from app.cluster.inventory import KINDS, Connection
from app.cluster.storage_migrate import Migrator, State, render
from certs.kube import ApiError
from tests.app.cluster.dynamo_api import Call, FakeApi

DGD, DCD = KINDS[0], KINDS[1]
DGDS = "/apis/nvidia.com/v1beta1/namespaces/apps/dynamographdeployments"
CRD_STATUS = (
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dynamographdeployments.nvidia.com/status"
)


def dgd(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": "apps"},
        "spec": {"components": []},
        "status": {"state": "ok"},
    }


def api_with(count: int, stored: tuple[str, ...] = ("v1beta1", "v1alpha1")) -> FakeApi:
    api = FakeApi()
    api.add_crd("dynamographdeployments", stored=stored)
    api.add_crd("dynamocomponentdeployments")
    for i in range(count):
        api.add("dynamographdeployments", dgd(f"d{i}"))
    return api


def puts(api: FakeApi) -> list[Call]:
    return [c for c in api.calls if c.method == "PUT"]


def migrate(api: FakeApi, tmp_path: Path, **kwargs: Any) -> Any:
    state = State(tmp_path / "state.json")
    with state.opened():
        return Migrator(api, state, page_size=2, **kwargs).migrate(DGD)  # type: ignore[arg-type]


def test_every_object_is_put_back_unchanged_to_its_status_then_stored_versions_is_set(tmp_path: Path) -> None:
    api = api_with(3)
    listed = {o["metadata"]["name"]: copy.deepcopy(o) for o in api.objects.values()}
    result = migrate(api, tmp_path)
    assert [(c.path, c.query) for c in puts(api)] == [
        (f"{DGDS}/d{i}/status", [("fieldManager", "dynamo-webhook-storage-migrate")]) for i in range(3)
    ]
    # The body is the object exactly as listed, resourceVersion included (optimistic concurrency).
    assert [c.body for c in puts(api)] == [listed[f"d{i}"] for i in range(3)]
    (patch,) = [c for c in api.calls if c.method == "PATCH"]
    assert patch.path == CRD_STATUS
    assert patch.body == {"metadata": {"resourceVersion": "1"}, "status": {"storedVersions": ["v1beta1"]}}
    assert (result.objects, result.rewritten, result.stored_after, result.stored_versions_set) == (
        3,
        3,
        ("v1beta1",),
        True,
    )
    assert result.complete
    assert result.note == (
        "storedVersions set to [v1beta1] (was [v1beta1, v1alpha1]): every object is stored as "
        "nvidia.com/v1beta1"
    )
    assert json.loads((tmp_path / "state.json").read_text()) == {"crds": {}}


def test_conflicts_are_retried_with_the_fresh_object_and_deleted_objects_skipped(tmp_path: Path) -> None:
    api = api_with(4)
    bumped: list[str] = []

    def concurrently(call: Call) -> None:
        if call.method == "PUT" and call.path.endswith("/d1/status") and not bumped:
            api.bump("dynamographdeployments", "apps", "d1")  # updated by someone else since the LIST
            bumped.append(
                api.objects[("dynamographdeployments", "apps", "d1")]["metadata"]["resourceVersion"]
            )
        if call.method == "PUT" and call.path.endswith("/d2/status"):
            api.objects.pop(("dynamographdeployments", "apps", "d2"), None)  # deleted since the LIST

    api.before = concurrently
    result = migrate(api, tmp_path)
    d1 = [c for c in api.calls if "/d1" in c.path]
    assert [(c.method, c.path.rsplit("/", 1)[-1]) for c in d1] == [
        ("PUT", "status"),
        ("GET", "d1"),
        ("PUT", "status"),
    ]
    assert d1[2].body["metadata"]["resourceVersion"] == bumped[0] != d1[0].body["metadata"]["resourceVersion"]
    assert (result.rewritten, result.conflicts, result.deleted, result.failed) == (3, 1, 1, [])
    assert result.stored_versions_set


def test_several_workers_rewrite_each_object_once(tmp_path: Path) -> None:
    api = api_with(23)
    api.before = lambda call: (
        api.bump("dynamographdeployments", "apps", "d7")
        if call.path.endswith("/d7/status") and call.body["metadata"]["resourceVersion"] == "108"
        else None
    )
    result = migrate(api, tmp_path, workers=4)
    names = sorted(c.path.split("/")[-2] for c in puts(api))
    assert names == sorted([f"d{i}" for i in range(23)] + ["d7"])
    assert (result.rewritten, result.conflicts, result.failed, result.stored_versions_set) == (
        23,
        1,
        [],
        True,
    )


def test_objects_that_cannot_be_rewritten_keep_stored_versions(tmp_path: Path) -> None:
    api = api_with(3)

    def invalid(call: Call) -> None:
        if call.method == "PUT" and "/d1/" in call.path:
            raise ApiError(422, "Invalid", "status.state: Invalid value")

    api.before = invalid
    result = migrate(api, tmp_path)
    assert result.failed == ["apps/d1: 422 Invalid: status.state: Invalid value"]
    assert not [c for c in api.calls if c.method == "PATCH"]
    assert result.stored_after == ("v1beta1", "v1alpha1") and not result.complete
    assert "could not be rewritten" in result.note
    out = io.StringIO()
    render([result], out, dry_run=False)
    assert "  failed: apps/d1: 422 Invalid: status.state: Invalid value\n" in out.getvalue()
    # The two that were rewritten are remembered; the failed one is tried again next time.
    state = json.loads((tmp_path / "state.json").read_text())
    assert sorted(state["crds"]["uid-dynamographdeployments"]["done"]) == ["uid-apps-d0", "uid-apps-d2"]


def test_a_rerun_does_only_what_is_left(tmp_path: Path) -> None:
    api = api_with(5)

    def stop_after_two(call: Call) -> None:
        if call.method == "PUT" and call.path.split("/")[-2] not in ("d0", "d1"):
            raise KeyboardInterrupt

    api.before = stop_after_two
    with pytest.raises(KeyboardInterrupt):
        migrate(api, tmp_path)
    assert (
        len(json.loads((tmp_path / "state.json").read_text())["crds"]["uid-dynamographdeployments"]["done"])
        == 2
    )
    api.before = None
    api.calls.clear()
    result = migrate(api, tmp_path)
    assert [c.path.split("/")[-2] for c in puts(api)] == ["d2", "d3", "d4"]
    assert (result.earlier, result.rewritten, result.stored_versions_set) == (2, 3, True)


def test_progress_from_another_generation_of_the_crd_is_not_trusted(tmp_path: Path) -> None:
    api = api_with(2)
    (tmp_path / "state.json").write_text(
        json.dumps(
            {
                "crds": {
                    "uid-dynamographdeployments": {
                        "crd": "dynamographdeployments.nvidia.com",
                        "generation": 0,
                        "storageVersion": "v1beta1",
                        "done": ["uid-apps-d0", "uid-apps-d1"],
                    }
                }
            }
        )
    )
    result = migrate(api, tmp_path)
    assert (result.earlier, result.rewritten) == (0, 2)


def test_stored_versions_are_left_alone_when_the_crd_changed_during_the_run(tmp_path: Path) -> None:
    api = api_with(1)

    def upgrade(call: Call) -> None:
        if call.method == "PUT":
            api.crds["dynamographdeployments"]["metadata"]["generation"] = 2

    api.before = upgrade
    result = migrate(api, tmp_path)
    assert not [c for c in api.calls if c.method == "PATCH"]
    assert (
        result.note
        == "the CRD changed during the run (generation 1 -> 2): storedVersions left as is; run again"
    )


def test_a_crd_status_conflict_is_retried(tmp_path: Path) -> None:
    api = api_with(1)
    first = {"done": False}

    def conflict(call: Call) -> None:
        if call.method == "PATCH" and not first["done"]:
            first["done"] = True
            api.crds["dynamographdeployments"]["metadata"]["resourceVersion"] = "7"  # a caBundle rotation
            raise ApiError(409, "Conflict")

    api.before = conflict
    result = migrate(api, tmp_path)
    patches = [c for c in api.calls if c.method == "PATCH"]
    assert [p.body["metadata"]["resourceVersion"] for p in patches] == ["1", "7"]
    assert result.stored_versions_set


def test_nothing_is_done_for_a_migrated_or_missing_crd(tmp_path: Path) -> None:
    api = api_with(2, stored=("v1beta1",))
    result = migrate(api, tmp_path)
    assert [c.method for c in api.calls] == ["GET"]
    assert result.note == "nothing to do: storedVersions is already [v1beta1]" and result.complete
    api = FakeApi()
    result = migrate(api, tmp_path)
    assert result.note == "CRD not installed" and result.complete


def test_no_status_subresource_means_no_unchanged_rewrite(tmp_path: Path) -> None:
    api = FakeApi()
    api.add_crd("dynamographdeployments", stored=("v1beta1", "v1alpha1"), status_subresource=False)
    result = migrate(api, tmp_path)
    assert "no status subresource" in result.note and not result.complete
    assert api.writes() == []


def test_dry_run_reports_and_writes_nothing(tmp_path: Path) -> None:
    api = api_with(3)
    state = State(None)
    with state.opened():
        result = Migrator(api, state, dry_run=True).migrate(DGD)  # type: ignore[arg-type]
    assert api.writes() == []
    assert (
        result.note
        == "would rewrite 3 of 3 object(s) (0 rewritten by an earlier run), then set storedVersions "
        "to [v1beta1]"
    )


def test_one_run_at_a_time_per_state_file(tmp_path: Path) -> None:
    with (
        State(tmp_path / "s.json").opened(),
        pytest.raises(storage_migrate.Busy),
        State(tmp_path / "s.json").opened(),
    ):
        pass


# --------------------------------------------------------------------------- command line


@pytest.fixture
def connected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeApi:
    api = api_with(2)
    seen: dict[str, float] = {}

    def connect(args: Any, qps: float = 0.0) -> Connection:
        seen["qps"] = qps
        return Connection(api, None, "default")  # type: ignore[arg-type]

    monkeypatch.setattr(storage_migrate, "connect", connect)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    api.seen = seen  # type: ignore[attr-defined]
    return api


def test_cli_text_report_and_exit_0(
    connected: FakeApi, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["storage-migrate", "--qps", "20"]) == 0
    assert connected.seen == {"qps": 20.0}  # type: ignore[attr-defined]
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0]
        == "dynamographdeployments.nvidia.com: storage version v1beta1, storedVersions [v1beta1, v1alpha1]"
    )
    assert out[1].startswith("  2 of 2 object(s) rewritten in ")
    assert out[1].endswith(" s (0 by an earlier run, 0 deleted meanwhile, 0 conflict(s) retried)")
    assert (
        out[2] == "  storedVersions set to [v1beta1] (was [v1beta1, v1alpha1]): every object is stored as "
        "nvidia.com/v1beta1"
    )
    assert out[3:5] == [
        "dynamocomponentdeployments.nvidia.com: storage version v1beta1, storedVersions [v1beta1]",
        "  nothing to do: storedVersions is already [v1beta1]",
    ]
    assert out[5] == "dynamographdeploymentrequests.nvidia.com: CRD not installed"
    assert (tmp_path / "state" / "dynamo-webhook" / "storage-migrate.json").exists()


def test_cli_json_dry_run(connected: FakeApi, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["storage-migrate", "--dry-run", "-o", "json", "--kinds", "dgd"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["dryRun"] is True
    (crd,) = doc["crds"]
    assert (
        crd["objects"] == 2
        and crd["rewritten"] == 0
        and crd["storedVersionsAfter"] == ["v1beta1", "v1alpha1"]
    )
    assert connected.writes() == []


def test_cli_exit_1_when_objects_could_not_be_rewritten(
    connected: FakeApi, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def invalid(call: Call) -> None:
        if call.method == "PUT":
            raise ApiError(422, "Invalid", "nope")

    connected.before = invalid
    assert main(["storage-migrate", "--state-file", str(tmp_path / "s.json")]) == 1


def test_cli_exit_2_when_forbidden_or_misused(
    connected: FakeApi, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def forbidden(call: Call) -> None:
        if call.method == "PUT":
            raise ApiError(403, "Forbidden", "cannot update resource dynamographdeployments/status")

    connected.before = forbidden
    assert main(["storage-migrate", "--no-state"]) == 2
    captured = capsys.readouterr()
    assert (
        "dynamo-webhook storage-migrate: stopped: the server refused the request (403 Forbidden): cannot update "
        "resource dynamographdeployments/status\n"
    ) in captured.err
    assert main(["storage-migrate", "--kinds", "dm"]) == 2
    assert "DynamoModel has a single version: nothing to migrate" in capsys.readouterr().err
    assert main(["storage-migrate", "--qps", "-1"]) == 2
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_a_crd_serving_no_version_is_left_alone(tmp_path: Path) -> None:
    api = FakeApi()
    api.add_crd("dynamographdeployments", stored=("v1beta1", "v1alpha1"), served=())
    result = migrate(api, tmp_path)
    assert (
        result.note == "no version of the CRD is served: its objects cannot be read" and not result.complete
    )
    assert [c.method for c in api.calls] == ["GET"]
