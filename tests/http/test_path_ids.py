"""An id the server made (a UUID, an API key's hex id) names its object in a path whatever its letters' case
(RFC 4122: UUIDs compare case-insensitively); worker and organization ids are the clients' own and stay exact."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.testing import TestClient

from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, setup_queue
from tests.http.test_teams import create_team
from tests.http.test_workers_models import create_model
from tests.support import DEFAULT_ORG, bearer, make_jwt

VIEWER = bearer(make_jwt(DEFAULT_ORG, sub="viewer", roles=["viewer"]))


def mixed(value: str) -> str:
    """Every other letter in capitals."""
    return "".join(c.upper() if i % 2 else c for i, c in enumerate(value))


def test_every_route_with_a_server_made_id_reads_it_in_any_case(client: TestClient[Any]) -> None:
    agent = create_agent(client)["id"]
    team = create_team(client)["id"]
    model = create_model(client)["id"]
    environment, queue = setup_queue(client)
    key = client.post("/api/v1/api-keys", json={"name": "k"}).json()["id"]
    execution = execute(client, agent, queue)["id"]
    ids = {"agent": agent, "team": team, "model": model, "environment": environment, "queue": queue, "key": key,
           "execution": execution}  # fmt: skip
    reads = [
        "/api/v1/agents/{agent}",
        "/api/v1/teams/{team}",
        "/api/v1/models/{model}",
        "/api/v1/environments/{environment}",
        "/api/v1/environments/{environment}/worker-queues",
        "/api/v1/worker-queues/{queue}",
        "/api/v1/api-keys/{key}",
        "/api/v1/executions/{execution}",
        "/api/v1/executions/{execution}/events",
    ]
    for path in reads:
        lower = client.get(path.format(**ids))
        assert lower.status_code == 200, (path, lower.text)
        for spelling in (str.upper, mixed):
            again = client.get(path.format(**{name: spelling(value) for name, value in ids.items()}))
            assert (again.status_code, again.json()) == (200, lower.json()), (path, spelling)

    def shout(name: str) -> str:
        return ids[name].upper()

    # Writes: the object named in capitals is the one changed, and the answer names it as the server wrote it.
    for family, name in (("agents", "agent"), ("teams", "team"), ("environments", "environment")):
        patched = client.patch(f"/api/v1/{family}/{shout(name)}", json={"description": "shouted"})
        assert (patched.status_code, patched.json()["id"]) == (200, ids[name]), patched.text
        assert client.get(f"/api/v1/{family}/{ids[name]}").json()["description"] == "shouted"
    assert client.patch(f"/api/v1/models/{shout('model')}", json={"label": "L"}).json()["label"] == "L"
    assert client.patch(f"/api/v1/worker-queues/{mixed(queue)}", json={"max_workers": 3}).json()["max_workers"] == 3
    # The role check looks the object up by the same id: a viewer learns 403 (it exists), not 404.
    assert client.patch(f"/api/v1/agents/{shout('agent')}", json={}, headers=VIEWER).status_code == 403

    joined = client.post(f"/api/v1/teams/{shout('team')}/agents/{shout('agent')}")
    assert joined.status_code == 200, joined.text
    assert joined.json()["configuration"]["member_ids"] == [agent]
    left = client.delete(f"/api/v1/teams/{mixed(team)}/agents/{mixed(agent)}")
    assert (left.status_code, left.json()["configuration"]["member_ids"]) == (200, [])

    # Executions and the worker protocol (the fast lane serves some of these: same rule).
    body = {"prompt": "p", "worker_queue_id": queue}
    by_agent = client.post(f"/api/v1/agents/{shout('agent')}/execute", json=body)
    assert (by_agent.status_code, by_agent.json()["agent_id"]) == (201, agent), by_agent.text
    by_team = client.post(f"/api/v1/teams/{shout('team')}/execute", json=body)
    assert (by_team.status_code, by_team.json()["team_id"]) == (201, team), by_team.text
    cancelled = client.post(f"/api/v1/executions/{shout('execution')}/cancel")
    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled"), cancelled.text
    leased = client.post(f"/api/v1/worker-queues/{shout('queue')}/lease", json={"worker_id": "w", "wait_seconds": 0})
    assert leased.status_code == 200, leased.text
    running = leased.json()["execution"]["id"]
    report = {"worker_id": "w", "attempt": leased.json()["attempt"]}
    events = {**report, "events": [{"type": "message", "data": {"text": "hi"}}]}
    appended = client.post(f"/api/v1/executions/{running.upper()}/events", json=events)
    assert appended.status_code == 200, appended.text
    done = client.post(f"/api/v1/executions/{mixed(running)}/complete", json={**report, "status": "completed"})
    assert (done.status_code, done.json()["id"], done.json()["status"]) == (200, running, "completed"), done.text
    with client.stream("GET", f"/api/v1/executions/{running.upper()}/stream") as stream:
        assert stream.status_code == 200
        assert "event: done" in stream.read().decode()

    # Deletes, and revoking a key.
    assert client.delete(f"/api/v1/api-keys/{shout('key')}").status_code == 204
    assert client.get(f"/api/v1/api-keys/{key}").json()["revoked_at"] is not None
    for family, name in (("agents", "agent"), ("teams", "team"), ("models", "model")):
        assert client.delete(f"/api/v1/{family}/{shout(name)}").status_code == 204
        assert client.get(f"/api/v1/{family}/{ids[name]}").status_code == 404


def test_a_path_id_is_read_in_any_case_but_not_in_another_spelling(client: TestClient[Any]) -> None:
    """Only the letters' case: hex without hyphens, braces or a URN name no object (404)."""
    agent = create_agent(client)["id"]
    for spelling in (agent.replace("-", ""), "{" + agent + "}", "urn:uuid:" + agent, agent.upper() + "0"):
        response = client.get(f"/api/v1/agents/{spelling}")
        assert response.status_code == 404, spelling
        assert response.json()["error"]["code"] == "NOT_FOUND"


def test_another_organizations_object_is_404_in_any_case(client: TestClient[Any], other_org: dict[str, str]) -> None:
    agent = create_agent(client)["id"]
    assert client.get(f"/api/v1/agents/{agent.upper()}", headers=other_org).status_code == 404
    assert client.patch(f"/api/v1/agents/{agent.upper()}", json={}, headers=other_org).status_code == 404


def test_worker_ids_are_read_exactly(client: TestClient[Any]) -> None:
    """A worker id is the worker's own string, not an id the server made: its case is part of it."""
    for worker in ("Worker-A", str(uuid.uuid4()).upper()):
        sent = client.post("/api/v1/workers/heartbeat", json={"worker_id": worker, "environment_name": "prod"})
        assert sent.status_code == 200, sent.text
        assert client.get(f"/api/v1/workers/{worker}").json()["worker_id"] == worker
        assert client.get(f"/api/v1/workers/{worker.lower()}").status_code == 404
