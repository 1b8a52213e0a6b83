"""Runners over HTTP, on every store: workers grouped by runner or host, counts, paging, roles, organizations."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.http.test_agents import assert_validation, create_agent
from tests.support import bearer, make_jwt

RUNNER_FIELDS = {
    "name", "organization_id", "worker_count", "status_counts", "worker_ids", "queue_ids", "environment_names",
    "versions", "capacity", "tasks_processed", "first_registered_at", "last_heartbeat_at",
}  # fmt: skip


def beat(client: TestClient[Any], worker_id: str, headers: dict[str, str] | None = None, **fields: Any) -> None:
    body = {"worker_id": worker_id, "environment_name": "prod", **fields}
    response = client.post("/api/v1/workers/heartbeat", json=body, headers=headers)
    assert response.status_code == 200, response.text


def runners(client: TestClient[Any], **params: Any) -> dict[str, Any]:
    response = client.get("/api/v1/runners", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_workers_group_by_runner_then_hostname_then_their_own_id(client: TestClient[Any]) -> None:
    beat(client, "w-1", worker_metadata={"runner": "rack-1", "hostname": "h1", "version": "1.2", "capacity": 4})
    beat(client, "w-2", status="busy", tasks_processed=7, worker_metadata={"hostname": "rack-1", "version": "1.3"})
    beat(client, "w-3", environment_name="dev", worker_metadata={"hostname": "rack-1", "max_concurrency": 2})
    beat(client, "w-4", worker_metadata={"kind": "bare"})
    body = runners(client)
    assert (body["total"], body["limit"], body["offset"]) == (2, 50, 0)
    assert [item["name"] for item in body["items"]] == ["rack-1", "w-4"]
    rack = body["items"][0]
    assert set(rack) == RUNNER_FIELDS
    assert (rack["organization_id"], rack["worker_count"], rack["worker_ids"]) == ("default", 3, ["w-1", "w-2", "w-3"])
    assert rack["status_counts"] == {"active": 2, "idle": 0, "busy": 1, "draining": 0, "offline": 0}
    assert (rack["versions"], rack["capacity"], rack["tasks_processed"]) == ({"1.2": 1, "1.3": 1}, 7, 7)
    assert (rack["environment_names"], rack["queue_ids"]) == (["dev", "prod"], [])
    assert rack["last_heartbeat_at"] >= rack["first_registered_at"]
    assert client.get("/api/v1/runners/rack-1").json() == rack
    assert runners(client)["items"][1]["worker_ids"] == ["w-4"]


def test_offline_workers_count_under_offline_and_add_no_capacity(client: TestClient[Any], clock: Any) -> None:
    beat(client, "old", worker_metadata={"hostname": "h", "capacity": 5})
    clock.advance(91)  # three 30 s intervals and a second: `old` is offline
    beat(client, "new", status="idle", worker_metadata={"hostname": "h", "capacity": 2})
    runner = client.get("/api/v1/runners/h").json()
    assert runner["status_counts"] == {"active": 0, "idle": 1, "busy": 0, "draining": 0, "offline": 1}
    assert (runner["worker_count"], runner["capacity"]) == (2, 2)


def test_a_changed_report_moves_the_worker_at_once(client: TestClient[Any]) -> None:
    beat(client, "w", worker_metadata={"hostname": "before"})
    beat(client, "w", worker_metadata={"hostname": "after"})
    assert [item["name"] for item in runners(client)["items"]] == ["after"]
    assert client.get("/api/v1/runners/before").status_code == 404


def test_queues_served_are_those_the_workers_leased_from(client: TestClient[Any]) -> None:
    environment = client.post("/api/v1/environments", json={"name": "env"}).json()
    queue = client.post(f"/api/v1/environments/{environment['id']}/worker-queues", json={"name": "q"}).json()
    agent = create_agent(client)
    body = {"prompt": "hi", "worker_queue_id": queue["id"]}
    executed = client.post(f"/api/v1/agents/{agent['id']}/execute", json=body)
    assert executed.status_code == 201, executed.text
    beat(client, "w", worker_metadata={"hostname": "h"})
    leased = client.post(f"/api/v1/worker-queues/{queue['id']}/lease", json={"worker_id": "w", "wait_seconds": 0})
    assert leased.status_code == 200, leased.text
    assert client.get("/api/v1/runners/h").json()["queue_ids"] == [queue["id"]]


def test_paged_by_name(client: TestClient[Any]) -> None:
    names = ["b", "B", "a", "10", "9"]
    for index, name in enumerate(names):
        beat(client, f"w{index}", worker_metadata={"runner": name})
    assert [item["name"] for item in runners(client, limit=2)["items"]] == ["10", "9"]
    page = runners(client, limit=2, offset=2)
    assert ([item["name"] for item in page["items"]], page["total"]) == (["B", "a"], 5)
    assert runners(client, offset=9)["items"] == []
    assert_validation(client.get("/api/v1/runners", params={"limit": 0}), ["query", "limit"])
    assert_validation(client.get("/api/v1/runners", params={"offset": -1}), ["query", "offset"])
    assert_validation(client.get("/api/v1/runners", params={"name": "a"}), ["query", "name"])


def test_a_name_is_matched_exactly(client: TestClient[Any]) -> None:
    beat(client, "w", worker_metadata={"runner": "Rack A"})
    assert client.get("/api/v1/runners/Rack%20A").json()["worker_ids"] == ["w"]
    for other in ("rack%20a", "Rack", "w", "nobody", "Rack%00A", "Rack%2FA"):
        missing = client.get(f"/api/v1/runners/{other}")
        assert missing.status_code == 404, other
        assert missing.json()["error"]["code"] == "NOT_FOUND"
    assert client.get("/api/v1/runners").json()["total"] == 1


def test_viewers_read_and_other_organizations_see_nothing(client: TestClient[Any], other_org: dict[str, str]) -> None:
    beat(client, "w", worker_metadata={"runner": "shared-name", "capacity": 3})
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get("/api/v1/runners", headers=viewer).json()["items"][0]["name"] == "shared-name"
    assert client.get("/api/v1/runners/shared-name", headers=viewer).status_code == 200
    nothing = {"items": [], "total": 0, "limit": 50, "offset": 0}
    assert client.get("/api/v1/runners", headers=other_org).json() == nothing
    assert client.get("/api/v1/runners/shared-name", headers=other_org).status_code == 404
    beat(client, "theirs", headers=other_org, worker_metadata={"runner": "shared-name"})
    assert client.get("/api/v1/runners/shared-name", headers=other_org).json()["worker_ids"] == ["theirs"]
    mine = client.get("/api/v1/runners/shared-name").json()
    assert (mine["worker_ids"], mine["capacity"], mine["organization_id"]) == (["w"], 3, "default")
