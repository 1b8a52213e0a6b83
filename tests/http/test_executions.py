"""Environments, worker queues, executions and the worker protocol over HTTP, on every store."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_domain.executions import execute as executing
from controlplane_domain.executions.entity import TargetType
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_teams import create_team
from tests.support import BEFORE_THE_STORE, DEFAULT_ORG, SERVICE_KEY


def setup_queue(client: TestClient[Any], name: str = "default") -> tuple[str, str]:
    environment = client.post("/api/v1/environments", json={"name": f"env-{name}"})
    assert environment.status_code == 201, environment.text
    queue = client.post(f"/api/v1/environments/{environment.json()['id']}/worker-queues", json={"name": name})
    assert queue.status_code == 201, queue.text
    return environment.json()["id"], queue.json()["id"]


def execute(client: TestClient[Any], agent_id: str, queue_id: str, prompt: str = "hello") -> dict[str, Any]:
    response = client.post(f"/api/v1/agents/{agent_id}/execute", json={"prompt": prompt, "worker_queue_id": queue_id})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def lease(client: TestClient[Any], queue_id: str, worker: str = "w1") -> dict[str, Any] | None:
    response = client.post(f"/api/v1/worker-queues/{queue_id}/lease", json={"worker_id": worker, "wait_seconds": 0})
    if response.status_code == 204:
        return None
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_environment_and_queue_crud(client: TestClient[Any]) -> None:
    environment_id, queue_id = setup_queue(client)
    queue = client.get(f"/api/v1/worker-queues/{queue_id}").json()
    assert uuid.UUID(queue["id"])
    assert (queue["environment_id"], queue["status"], queue["heartbeat_interval_seconds"]) == (
        environment_id,
        "active",
        30,
    )
    assert (queue["active_workers"], queue["queued_executions"], queue["max_workers"]) == (0, 0, None)
    patched = client.patch(f"/api/v1/worker-queues/{queue_id}", json={"max_workers": 4, "status": "paused"}).json()
    assert (patched["max_workers"], patched["status"]) == (4, "paused")
    assert client.get("/api/v1/worker-queues").json()["total"] == 1
    assert client.get(f"/api/v1/environments/{environment_id}/worker-queues").json()["items"][0]["id"] == queue_id
    assert client.delete(f"/api/v1/environments/{environment_id}").status_code == 409
    assert client.delete(f"/api/v1/worker-queues/{queue_id}").status_code == 204
    assert client.get(f"/api/v1/worker-queues/{queue_id}").status_code == 404
    renamed = client.patch(f"/api/v1/environments/{environment_id}", json={"description": "prod"}).json()
    assert renamed["description"] == "prod"
    assert client.delete(f"/api/v1/environments/{environment_id}").status_code == 204
    assert_validation(client.post("/api/v1/environments", json={"name": ""}), ["body", "name"])


def test_execute_queues_the_work(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    assert (execution["status"], execution["target_type"], execution["agent_id"]) == ("queued", "agent", agent["id"])
    assert (execution["attempt"], execution["prompt"], execution["worker_queue_id"]) == (0, "hello", queue_id)
    assert execution["queued_at"] is not None
    assert execution["started_at"] is None
    assert client.get(f"/api/v1/worker-queues/{queue_id}").json()["queued_executions"] == 1
    assert client.get(f"/api/v1/executions/{execution['id']}").json() == execution


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"prompt": "x", "worker_queue_id": "not-a-uuid"}, ["body", "worker_queue_id"]),
        ({"prompt": "x", "worker_queue_id": str(uuid.uuid4())}, ["body", "worker_queue_id"]),
        ({"prompt": " ", "worker_queue_id": "{queue}"}, ["body", "prompt"]),
        ({"worker_queue_id": "{queue}"}, ["body", "prompt"]),
        ({"prompt": "x"}, ["body", "worker_queue_id"]),
        ({"prompt": "x", "worker_queue_id": "{queue}", "priority": 1}, ["body", "priority"]),
    ],
)
@BEFORE_THE_STORE
def test_execute_validation(client: TestClient[Any], body: dict[str, Any], loc: list[str]) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    payload = {k: v.format(queue=queue_id) if isinstance(v, str) else v for k, v in body.items()}
    assert_validation(client.post(f"/api/v1/agents/{agent['id']}/execute", json=payload), loc)
    assert client.get("/api/v1/executions").json()["total"] == 0


def test_another_organizations_queue_is_422(client: TestClient[Any], other_org: dict[str, str]) -> None:
    agent = create_agent(client)
    environment = client.post("/api/v1/environments", json={"name": "theirs"}, headers=other_org).json()
    theirs = client.post(
        f"/api/v1/environments/{environment['id']}/worker-queues", json={"name": "q"}, headers=other_org
    ).json()
    response = client.post(
        f"/api/v1/agents/{agent['id']}/execute", json={"prompt": "x", "worker_queue_id": theirs["id"]}
    )
    assert_validation(response, ["body", "worker_queue_id"])


def test_the_worker_protocol_end_to_end(client: TestClient[Any]) -> None:
    agent = create_agent(client, system_prompt="be brief")
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    leased = lease(client, queue_id)
    assert leased is not None
    assert leased["attempt"] == 1
    assert leased["execution"]["status"] == "running"
    assert leased["agent"]["system_prompt"] == "be brief"
    assert lease(client, queue_id, "w2") is None, "one execution is leased once"
    path = f"/api/v1/executions/{execution['id']}"
    chunks = [{"type": "message_chunk", "data": {"text": t}} for t in ("Hel", "lo")]
    appended = client.post(f"{path}/events", json={"worker_id": "w1", "attempt": 1, "events": chunks}).json()
    assert appended == {"last_seq": 4, "cancel_requested": False}
    done = {"worker_id": "w1", "attempt": 1, "status": "completed", "response": "Hello", "usage": {"total_tokens": 7}}
    finished = client.post(f"{path}/complete", json=done)
    assert finished.status_code == 200, finished.text
    assert finished.json()["status"] == "completed"
    assert client.post(f"{path}/complete", json=done).json() == finished.json(), "completing twice is harmless"
    stored = client.get(path).json()
    assert (stored["response"], stored["usage"], stored["attempt"]) == ("Hello", {"total_tokens": 7}, 1)
    assert stored["started_at"] is not None
    assert stored["finished_at"] is not None
    events = client.get(f"{path}/events").json()
    assert [e["type"] for e in events["items"]] == [
        "status",
        "status",
        "message_chunk",
        "message_chunk",
        "status",
        "done",
    ]
    assert [e["seq"] for e in events["items"]] == [1, 2, 3, 4, 5, 6]
    assert events["total"] == 6
    assert client.get(f"{path}/events", params={"offset": 4, "limit": 1}).json()["items"][0]["seq"] == 5
    stale = client.post(f"{path}/events", json={"worker_id": "w1", "attempt": 1, "events": chunks})
    assert stale.status_code == 409
    assert stale.json()["error"]["code"] == "STALE_ATTEMPT"


def test_stale_attempts_and_server_events_are_refused(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    lease(client, queue_id)
    path = f"/api/v1/executions/{execution['id']}"
    log = [{"type": "log", "data": {}}]
    assert client.post(f"{path}/events", json={"worker_id": "w2", "attempt": 1, "events": log}).status_code == 409
    assert client.post(f"{path}/events", json={"worker_id": "w1", "attempt": 2, "events": log}).status_code == 409
    forged = [{"type": "done", "data": {}}]
    assert_validation(
        client.post(f"{path}/events", json={"worker_id": "w1", "attempt": 1, "events": forged}),
        ["body", "events", 0, "type"],
    )
    wrong = {"worker_id": "w9", "attempt": 1, "status": "completed"}
    assert client.post(f"{path}/complete", json=wrong).status_code == 409
    assert client.get(path).json()["status"] == "running"


def test_cancel_a_queued_and_a_running_execution(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    queued = execute(client, agent["id"], queue_id)
    cancelled = client.post(f"/api/v1/executions/{queued['id']}/cancel").json()
    assert cancelled["status"] == "cancelled"
    assert client.post(f"/api/v1/executions/{queued['id']}/cancel").status_code == 409
    assert lease(client, queue_id) is None
    running = execute(client, agent["id"], queue_id)
    lease(client, queue_id)
    asked = client.post(f"/api/v1/executions/{running['id']}/cancel").json()
    assert (asked["status"], asked["cancel_requested"]) == ("running", True)
    beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "w1", "environment_name": "e"}).json()
    assert beat["commands"] == [{"type": "cancel", "execution_id": running["id"]}]
    stop = {"worker_id": "w1", "attempt": 1, "status": "cancelled"}
    assert client.post(f"/api/v1/executions/{running['id']}/complete", json=stop).json()["status"] == "cancelled"


def test_an_expired_lease_is_requeued_then_failed(client: TestClient[Any], clock: Any) -> None:
    from controlplane_domain.executions.lease_ends import reap_expired_leases

    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    ports = client.app.state["ports"]
    for attempt in (1, 2, 3):
        leased = lease(client, queue_id, f"w{attempt}")
        assert leased is not None
        assert leased["attempt"] == attempt
        clock.advance(61)
        client.blocking_portal.call(reap_expired_leases, ports)  # what the background reaper does
    final = client.get(f"/api/v1/executions/{execution['id']}").json()
    assert final["status"] == "failed"
    assert "lease expired" in final["error"]
    assert lease(client, queue_id) is None
    late = {"worker_id": "w3", "attempt": 3, "status": "failed", "error": "the worker's own error"}
    refused = client.post(f"/api/v1/executions/{execution['id']}/complete", json=late)
    assert refused.status_code == 409, "not a repeat of the reaper's failure: the lease had expired"
    assert refused.json()["error"]["code"] == "STALE_ATTEMPT"


def test_heartbeats_keep_a_lease_alive(client: TestClient[Any], clock: Any) -> None:
    from controlplane_domain.executions.lease_ends import reap_expired_leases

    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    lease(client, queue_id)
    for _ in range(3):
        clock.advance(40)
        beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "w1", "environment_name": "e"})
        assert beat.json()["leases_extended"] == 1
        client.blocking_portal.call(reap_expired_leases, client.app.state["ports"])
    assert client.get(f"/api/v1/executions/{execution['id']}").json()["status"] == "running"


def test_a_paused_queue_hands_out_no_work(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execute(client, agent["id"], queue_id)
    client.patch(f"/api/v1/worker-queues/{queue_id}", json={"status": "paused"})
    assert lease(client, queue_id) is None
    client.patch(f"/api/v1/worker-queues/{queue_id}", json={"status": "active"})
    assert lease(client, queue_id) is not None
    assert client.get(f"/api/v1/worker-queues/{queue_id}").json()["active_workers"] == 0
    client.post("/api/v1/workers/heartbeat", json={"worker_id": "w1", "environment_name": "e"})
    assert client.get(f"/api/v1/worker-queues/{queue_id}").json()["active_workers"] == 1


def test_team_execution_leases_with_its_members(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    team = create_team(client, configuration={"member_ids": [agent["id"]]})
    _, queue_id = setup_queue(client)
    response = client.post(f"/api/v1/teams/{team['id']}/execute", json={"prompt": "go", "worker_queue_id": queue_id})
    assert response.status_code == 201
    assert response.json()["team_id"] == team["id"]
    leased = lease(client, queue_id)
    assert leased is not None
    assert leased["team"]["configuration"]["member_ids"] == [agent["id"]]
    assert leased["agent"] is None


def test_list_filters(client: TestClient[Any], clock: Any) -> None:
    first, second = create_agent(client, "first"), create_agent(client, "second")
    _, queue_id = setup_queue(client)
    a = execute(client, first["id"], queue_id)
    clock.advance(1)
    execute(client, second["id"], queue_id)
    client.post(f"/api/v1/executions/{a['id']}/cancel")
    assert client.get("/api/v1/executions").json()["total"] == 2
    assert [e["id"] for e in client.get("/api/v1/executions", params={"status": "cancelled"}).json()["items"]] == [
        a["id"]
    ]
    assert client.get("/api/v1/executions", params={"agent_id": second["id"]}).json()["total"] == 1
    assert client.get("/api/v1/executions", params={"worker_queue_id": queue_id}).json()["total"] == 2
    assert_validation(client.get("/api/v1/executions", params={"status": "sleeping"}), ["query", "status"])


def test_list_by_creation_time(client: TestClient[Any], clock: Any) -> None:
    """`from` inclusive, `to` exclusive, by `created_at`; a time without an offset is UTC; a bad one is 422."""
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    early = execute(client, agent["id"], queue_id)
    clock.advance(60)
    late = execute(client, agent["id"], queue_id)

    def ids(**params: str) -> list[str]:
        return [e["id"] for e in client.get("/api/v1/executions", params=params).json()["items"]]

    assert ids(**{"from": late["created_at"]}) == [late["id"]]
    assert ids(to=late["created_at"]) == [early["id"]]
    assert ids(**{"from": early["created_at"], "to": late["created_at"]}) == [early["id"]]
    naive = late["created_at"].replace("Z", "").replace("+00:00", "")
    assert ids(**{"from": naive}) == [late["id"]]
    assert ids(to=early["created_at"]) == []
    assert_validation(client.get("/api/v1/executions", params={"from": "yesterday"}), ["query", "from"])
    assert_validation(client.get("/api/v1/executions", params={"to": "9999-12-31T23:59:59-05:00"}), ["query", "to"])
    assert_validation(client.get("/api/v1/executions", params={"to": "0001-01-01T00:00:00"}), ["query", "to"])


def test_stream_of_a_finished_execution_and_resume(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    client.post(f"/api/v1/executions/{execution['id']}/cancel")
    with client.stream("GET", f"/api/v1/executions/{execution['id']}/stream") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    assert "id: 1\nevent: status\n" in text
    assert text.rstrip().split("\n\n")[-1].startswith("id: 3\nevent: done")
    with client.stream(
        "GET", f"/api/v1/executions/{execution['id']}/stream", headers={"Last-Event-ID": "2"}
    ) as response:
        resumed = "".join(response.iter_text())
    assert "id: 1\n" not in resumed
    assert "id: 3\nevent: done" in resumed
    assert client.get(f"/api/v1/executions/{uuid.uuid4()}/stream").status_code == 404


def test_a_node_whose_last_write_is_stale_still_answers_from_what_is_stored(tmp_path: Any) -> None:
    """Two nodes on one database: node A leased attempt 1 and remembers it (`ports.recent`); the lease expires,
    node B hands out attempt 2. Node A must take attempt 2's events and completion (its guess says attempt 1:
    decided on the guess they would be 409) and still refuse attempt 1's."""
    from dataclasses import replace

    from controlplane_adapters.clock import ManualClock
    from controlplane_domain.executions.lease_ends import reap_expired_leases
    from controlplane_http.bootstrap import build_app
    from tests.conftest import app_settings
    from tests.support import SERVICE_KEY, bearer

    clock = ManualClock()
    url = f"sqlite+aiosqlite:///{tmp_path / 'nodes.db'}"
    with (
        TestClient(build_app(app_settings(url), clock=clock)) as a,
        TestClient(build_app(replace(app_settings(url)), clock=clock)) as b,
    ):
        for client in (a, b):
            client.headers.update(bearer(SERVICE_KEY))
        agent = create_agent(a)
        _, queue_id = setup_queue(a)
        execution = execute(a, agent["id"], queue_id)
        assert (lease(a, queue_id, "w1") or {})["attempt"] == 1
        assert a.app.state["ports"].recent.get(execution["organization_id"], execution["id"]).attempt == 1
        clock.advance(61)
        b.blocking_portal.call(reap_expired_leases, b.app.state["ports"])
        assert (lease(b, queue_id, "w2") or {})["attempt"] == 2
        path = f"/api/v1/executions/{execution['id']}"
        log = [{"type": "log", "data": {"n": 1}}]
        current = a.post(f"{path}/events", json={"worker_id": "w2", "attempt": 2, "events": log})
        assert current.status_code == 200, current.text
        stale = a.post(f"{path}/events", json={"worker_id": "w1", "attempt": 1, "events": log})
        assert stale.status_code == 409
        done = a.post(f"{path}/complete", json={"worker_id": "w2", "attempt": 2, "status": "completed"})
        assert done.status_code == 200, done.text
        events = b.get(f"{path}/events").json()["items"]
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert [e["type"] for e in events][-3:] == ["log", "status", "done"]


def test_numbers_beyond_what_the_stores_keep_are_422(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    environment_id, queue_id = setup_queue(client)
    too_many = {"name": "big", "max_workers": 2**31}
    assert_validation(client.post(f"/api/v1/environments/{environment_id}/worker-queues", json=too_many),
                      ["body", "max_workers"])  # fmt: skip
    assert_validation(client.patch(f"/api/v1/worker-queues/{queue_id}", json={"max_workers": 2**31}),
                      ["body", "max_workers"])  # fmt: skip
    execution = execute(client, agent["id"], queue_id)
    lease(client, queue_id)
    path = f"/api/v1/executions/{execution['id']}"
    log = [{"type": "log", "data": {}}]
    assert_validation(client.post(f"{path}/events", json={"worker_id": "w1", "attempt": 2**31, "events": log}),
                      ["body", "attempt"])  # fmt: skip
    done = {"worker_id": "w1", "attempt": 2**63, "status": "completed"}
    assert_validation(client.post(f"{path}/complete", json=done), ["body", "attempt"])
    for worker_id in ("new", "w1"):  # a registration and a known worker's report
        beat = {"worker_id": worker_id, "environment_name": "e", "tasks_processed": 2**63}
        assert_validation(client.post("/api/v1/workers/heartbeat", json=beat), ["body", "tasks_processed"])
    top = {"worker_id": "w1", "environment_name": "e", "tasks_processed": 2**63 - 1}
    assert client.post("/api/v1/workers/heartbeat", json=top).status_code == 200
    assert client.get("/api/v1/workers/w1").json()["tasks_processed"] == 2**63 - 1


def test_an_events_page_past_the_end_is_empty(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    client.post(f"/api/v1/executions/{execution['id']}/cancel")
    for offset in (3, 2**31, 2**62):  # past what any store's sequence numbers reach, too
        page = client.get(f"/api/v1/executions/{execution['id']}/events?offset={offset}")
        assert page.status_code == 200, page.text
        assert (page.json()["items"], page.json()["total"]) == ([], 3)


def test_a_worker_that_hangs_up_as_work_arrives_leaves_it_in_the_queue(client: TestClient[Any]) -> None:
    """The worker's long poll is woken by an execute, and the worker hangs up in the same moment: the poll answers
    a 204 nobody reads, and the execution waits in the queue for the next worker at once."""
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    ports = client.app.state["ports"]
    body = json.dumps({"worker_id": "w1", "wait_seconds": 30}).encode()
    path = f"/api/v1/worker-queues/{queue_id}/lease"
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8001),
        "headers": [
            (b"authorization", f"Bearer {SERVICE_KEY}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }  # fmt: skip

    async def hang_up_as_work_arrives() -> list[dict[str, Any]]:
        polling, hung_up = asyncio.Event(), asyncio.Event()
        reads = 0

        async def receive() -> dict[str, Any]:
            nonlocal reads
            reads += 1
            if reads == 1:
                return {"type": "http.request", "body": body, "more_body": False}
            polling.set()  # the body is read: the server watches for the hang-up while it waits for work
            await hung_up.wait()
            return {"type": "http.disconnect"}

        sent: list[dict[str, Any]] = []

        async def send(message: Any) -> None:
            sent.append(message)

        call = asyncio.ensure_future(client.app(scope, receive, send))  # type: ignore[arg-type]
        await polling.wait()
        command = executing.ExecuteCommand(prompt="hello", worker_queue_id=queue_id)
        await executing.execute(ports, DEFAULT_ORG, TargetType.AGENT, agent["id"], command)  # wakes the poll
        hung_up.set()
        await call
        return sent

    sent = client.blocking_portal.call(hang_up_as_work_arrives)
    assert sent[0]["status"] == 204
    leased = lease(client, queue_id, "w2")
    assert leased is not None
    assert leased["execution"]["worker_id"] == "w2"
    # never leased (attempt 1), or leased and handed back at once (attempt 2), not left running until it expired
    assert leased["attempt"] in {1, 2}
