"""Workers, models, runtimes and health over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.conftest import build_test_app, database_url
from tests.http.test_agents import assert_validation
from tests.support import BEFORE_THE_STORE, SERVICE_KEY, bearer, wait_until


def heartbeat(client: TestClient[Any], worker_id: str = "w-1", **fields: Any) -> Any:
    return client.post("/api/v1/workers/heartbeat", json={"worker_id": worker_id, "environment_name": "prod", **fields})


def test_first_heartbeat_registers_the_worker(client: TestClient[Any]) -> None:
    response = heartbeat(client, worker_metadata={"host": "box-1"}, tasks_processed=3)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["worker_id"] == "w-1"
    assert body["status"] == "active"
    assert body["registered"] is True
    assert body["heartbeat_interval_seconds"] == 30
    assert body["offline_after_seconds"] == 90
    assert "received_at" in body
    worker = client.get("/api/v1/workers/w-1").json()
    assert worker["environment_name"] == "prod"
    assert worker["tasks_processed"] == 3
    assert worker["worker_metadata"] == {"host": "box-1"}
    assert worker["organization_id"] == "default"
    assert heartbeat(client).json()["registered"] is False
    assert client.get("/api/v1/workers").json()["total"] == 1


def test_heartbeat_updates_reported_fields(client: TestClient[Any], clock: Any) -> None:
    registered_at = heartbeat(client).json()["received_at"]
    clock.advance(5)
    heartbeat(client, status="busy", current_task_id="task-9", tasks_processed=7)
    worker = client.get("/api/v1/workers/w-1").json()
    assert (worker["status"], worker["current_task_id"], worker["tasks_processed"]) == ("busy", "task-9", 7)
    assert worker["registered_at"] == registered_at
    assert worker["last_heartbeat_at"] != registered_at


def test_worker_goes_offline_after_three_missed_intervals(client: TestClient[Any], clock: Any) -> None:
    heartbeat(client)
    clock.advance(90)
    assert client.get("/api/v1/workers/w-1").json()["status"] == "active"
    clock.advance(1)
    worker = client.get("/api/v1/workers/w-1").json()
    assert worker["status"] == "offline"
    assert worker["reported_status"] == "active"
    assert client.get("/api/v1/workers").json()["items"][0]["status"] == "offline"
    heartbeat(client)
    assert client.get("/api/v1/workers/w-1").json()["status"] == "active"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_heartbeats_reach_the_database_within_a_second_and_at_shutdown(
    backend: str, tmp_path: Path, clock: ManualClock, request: pytest.FixtureRequest
) -> None:
    """Another process (a second app on the same database) sees a report once the flusher wrote it."""
    url = database_url(backend, tmp_path, request)
    here = TestClient(build_test_app(backend, tmp_path, clock, url))
    slow = TestClient(build_test_app(backend, tmp_path, clock, url, heartbeat_flush_ms=60_000))
    there = TestClient(build_test_app(backend, tmp_path, clock, url))
    for each in (here, slow, there):
        each.headers.update(bearer(SERVICE_KEY))
    with here, there:
        with slow:
            assert heartbeat(here, tasks_processed=1).json()["registered"] is True
            assert there.get("/api/v1/workers/w-1").json()["tasks_processed"] == 1, "registration: written at once"
            clock.advance(0.1)
            heartbeat(here, tasks_processed=2)
            assert here.get("/api/v1/workers/w-1").json()["tasks_processed"] == 2, "seen at once where reported"
            wait_until(lambda: there.get("/api/v1/workers/w-1").json()["tasks_processed"] == 2)
            clock.advance(0.1)
            heartbeat(slow, tasks_processed=3)  # this app flushes once a minute...
            assert slow.get("/api/v1/workers/w-1").json()["tasks_processed"] == 3
            assert there.get("/api/v1/workers/w-1").json()["tasks_processed"] == 2
        assert there.get("/api/v1/workers/w-1").json()["tasks_processed"] == 3, "...and at shutdown"


@pytest.mark.parametrize(
    ("payload", "loc"),
    [
        ({"environment_name": "prod"}, ["body", "worker_id"]),
        ({"worker_id": "w"}, ["body", "environment_name"]),
        ({"worker_id": "", "environment_name": "prod"}, ["body", "worker_id"]),
        ({"worker_id": "w", "environment_name": "prod", "status": "dancing"}, ["body", "status"]),
        ({"worker_id": "w", "environment_name": "prod", "tasks_processed": -1}, ["body", "tasks_processed"]),
        ({"worker_id": "w", "environment_name": "prod", "worker_metadata": []}, ["body", "worker_metadata"]),
        ({"worker_id": "w", "environment_name": "prod", "extra": 1}, ["body", "extra"]),
    ],
)
@BEFORE_THE_STORE
def test_invalid_heartbeats_are_422(client: TestClient[Any], payload: dict[str, Any], loc: list[Any]) -> None:
    assert_validation(client.post("/api/v1/workers/heartbeat", json=payload), loc)
    assert client.get("/api/v1/workers").json()["total"] == 0


def test_workers_are_per_organization(client: TestClient[Any], other_org: dict[str, str]) -> None:
    heartbeat(client, environment_name="mine")
    assert client.get("/api/v1/workers/w-1", headers=other_org).status_code == 404
    assert client.get("/api/v1/workers", headers=other_org).json()["items"] == []
    theirs = client.post(
        "/api/v1/workers/heartbeat", json={"worker_id": "w-1", "environment_name": "theirs"}, headers=other_org
    )
    assert theirs.json()["registered"] is True
    assert client.get("/api/v1/workers/w-1").json()["environment_name"] == "mine"
    assert client.get("/api/v1/workers/w-1", headers=other_org).json()["environment_name"] == "theirs"
    assert client.get("/api/v1/workers/nobody").status_code == 404


def create_model(client: TestClient[Any], value: str = "gpt-4o", **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/models", json={"value": value, "provider": "openai", **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_model_crud(client: TestClient[Any]) -> None:
    model = create_model(client, label="GPT-4o", compatible_runtimes=["default"])
    assert {"id", "organization_id", "value", "label", "provider", "enabled", "compatible_runtimes"} <= set(model)
    assert (model["label"], model["enabled"], model["compatible_runtimes"]) == ("GPT-4o", True, ["default"])
    assert client.get(f"/api/v1/models/{model['id']}").json() == model
    patched = client.patch(f"/api/v1/models/{model['id']}", json={"enabled": False, "label": "Old"}).json()
    assert (patched["enabled"], patched["label"], patched["value"]) == (False, "Old", "gpt-4o")
    assert client.delete(f"/api/v1/models/{model['id']}").status_code == 204
    assert client.get(f"/api/v1/models/{model['id']}").status_code == 404


def test_model_defaults_and_validation(client: TestClient[Any]) -> None:
    model = create_model(client, "claude")
    assert model["label"] == "claude"
    assert model["compatible_runtimes"] == ["default", "sdk_code"]
    assert_validation(
        client.post("/api/v1/models", json={"value": "x", "provider": "p", "compatible_runtimes": ["nope"]}),
        ["body", "compatible_runtimes", 0],
    )
    assert_validation(client.post("/api/v1/models", json={"value": "x"}), ["body", "provider"])
    assert client.post("/api/v1/models", json={"value": "claude", "provider": "other"}).status_code == 409


def test_enabled_only_restricts_the_list(client: TestClient[Any]) -> None:
    on = create_model(client, "on")
    create_model(client, "off", enabled=False)
    everything = client.get("/api/v1/models").json()
    assert everything["total"] == 2
    enabled = client.get("/api/v1/models", params={"enabled_only": "true"}).json()
    assert [item["id"] for item in enabled["items"]] == [on["id"]]
    assert enabled["total"] == 1
    assert client.get("/api/v1/models", params={"enabled_only": "false"}).json()["total"] == 2


def test_models_are_per_organization(client: TestClient[Any], other_org: dict[str, str]) -> None:
    model = create_model(client)
    path = f"/api/v1/models/{model['id']}"
    assert client.get(path, headers=other_org).status_code == 404
    assert client.patch(path, json={"enabled": False}, headers=other_org).status_code == 404
    assert client.delete(path, headers=other_org).status_code == 404
    assert client.get("/api/v1/models", headers=other_org).json()["total"] == 0
    assert client.get(path).json()["enabled"] is True


def test_runtimes_registry(client: TestClient[Any]) -> None:
    body = client.get("/api/v1/runtimes").json()
    assert [item["id"] for item in body["items"]] == ["default", "sdk_code"]
    assert body["total"] == 2
    assert all(item["supports_streaming"] for item in body["items"])


def test_health_reports_version_and_database(client: TestClient[Any]) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "healthy"
    assert body["version"] == "v0.3.0"
    assert body["database"]["status"] == "ok"
