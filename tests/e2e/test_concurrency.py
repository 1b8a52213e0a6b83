"""Concurrent requests against the real server (SQLite and Postgres): invariants hold, no 5xx."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server
from tests.support import SERVICE_KEY, bearer

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest) -> Server:
    fixture = "sqlite_server" if request.param == "sqlite" else "postgres_server"
    found: Server = request.getfixturevalue(fixture)
    return found


async def _fire(server: Server, calls: list[tuple[str, str, dict[str, Any] | None]]) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=len(calls))
    async with httpx.AsyncClient(base_url=server.url, headers=bearer(SERVICE_KEY), timeout=60, limits=limits) as client:
        return await asyncio.gather(*(client.request(method, path, json=body) for method, path, body in calls))


def test_concurrent_membership_changes_keep_one_truth(server: Server) -> None:
    with server.client() as client:
        team_a = client.post("/api/v1/teams", json={"name": "A"}).json()["id"]
        team_b = client.post("/api/v1/teams", json={"name": "B"}).json()["id"]
        agent_ids = [client.post("/api/v1/agents", json={"name": f"agent-{i}"}).json()["id"] for i in range(6)]
    chooser = random.Random(7)
    calls: list[tuple[str, str, dict[str, Any] | None]] = []
    for index in range(60):
        agent = chooser.choice(agent_ids)
        kind = index % 4
        if kind == 0:
            calls.append(("POST", f"/api/v1/teams/{team_a}/agents/{agent}", None))
        elif kind == 1:
            calls.append(("POST", f"/api/v1/teams/{team_b}/agents/{agent}", None))
        elif kind == 2:
            members = chooser.sample(agent_ids, 3)
            team = chooser.choice([team_a, team_b])
            calls.append(("PATCH", f"/api/v1/teams/{team}", {"configuration": {"member_ids": members}}))
        else:
            calls.append(("DELETE", f"/api/v1/teams/{chooser.choice([team_a, team_b])}/agents/{agent}", None))
    responses = asyncio.run(_fire(server, calls))
    statuses = [response.status_code for response in responses]
    assert all(status < 500 for status in statuses), [r.text for r in responses if r.status_code >= 500]
    assert statuses.count(200) >= len(calls) * 0.9, statuses
    with server.client() as client:
        agents = {a["id"]: a["team_id"] for a in client.get("/api/v1/agents").json()["items"]}
        teams = {t["id"]: t for t in client.get("/api/v1/teams").json()["items"]}
    for team_id, team in teams.items():
        assert sorted(team["configuration"]["member_ids"]) == sorted(a for a, t in agents.items() if t == team_id)
        assert [agent["id"] for agent in team["agents"]] == team["configuration"]["member_ids"]
    in_a = set(teams[team_a]["configuration"]["member_ids"])
    assert not in_a & set(teams[team_b]["configuration"]["member_ids"])


def test_concurrent_creates_with_one_name_give_one_201(server: Server) -> None:
    calls: list[tuple[str, str, dict[str, Any] | None]] = [("POST", "/api/v1/agents", {"name": "unique"})] * 25
    calls += [("POST", "/api/v1/teams", {"name": "unique-team"})] * 25
    responses = asyncio.run(_fire(server, calls))
    agents = [r.status_code for r in responses[:25]]
    teams = [r.status_code for r in responses[25:]]
    assert sorted(agents) == [201] + [409] * 24, agents
    assert sorted(teams) == [201] + [409] * 24, teams
    assert all(r.json()["error"]["code"] == "CONFLICT" for r in responses if r.status_code == 409)
    with server.client() as client:
        assert client.get("/api/v1/agents").json()["total"] == 1
        assert client.get("/api/v1/teams").json()["total"] == 1


def test_concurrent_first_heartbeats_register_once(server: Server) -> None:
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("POST", "/api/v1/workers/heartbeat", {"worker_id": "w", "environment_name": "e", "tasks_processed": i})
        for i in range(30)
    ]
    responses = asyncio.run(_fire(server, calls))
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses if r.status_code != 200]
    assert [r.json()["registered"] for r in responses].count(True) == 1, "exactly one heartbeat registered it"
    with server.client() as client:
        assert client.get("/api/v1/workers").json()["total"] == 1


def test_concurrent_appends_to_one_execution_lose_nothing(server: Server) -> None:
    """Batches racing on one execution (each a compare-and-set on its last sequence number, retried under the
    row's lock when it loses) all land, each contiguous, numbered without gaps; a completion racing with them
    ends the stream after every batch that got in before it and refuses the ones after it."""
    with server.client() as client:
        agent = client.post("/api/v1/agents", json={"name": "racer"}).json()["id"]
        environment = client.post("/api/v1/environments", json={"name": "race"}).json()["id"]
        queue = client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": "q"}).json()["id"]
        execution = client.post(f"/api/v1/agents/{agent}/execute",
                                json={"prompt": "p", "worker_queue_id": queue}).json()["id"]  # fmt: skip
        leased = client.post(f"/api/v1/worker-queues/{queue}/lease", json={"worker_id": "w", "wait_seconds": 0})
        attempt = leased.json()["attempt"]
    path = f"/api/v1/executions/{execution}"

    def batch(index: int) -> dict[str, Any]:
        events = [{"type": "log", "data": {"batch": index, "part": part}} for part in range(3)]
        return {"worker_id": "w", "attempt": attempt, "events": events}

    calls: list[tuple[str, str, dict[str, Any] | None]] = [("POST", f"{path}/events", batch(i)) for i in range(24)]
    calls.insert(16, ("POST", f"{path}/complete", {"worker_id": "w", "attempt": attempt, "status": "completed"}))
    responses = asyncio.run(_fire(server, calls))
    statuses = [response.status_code for response in responses]
    assert set(statuses) <= {200, 409}, [r.text for r in responses if r.status_code not in (200, 409)]
    assert responses[16].status_code == 200
    with server.client() as client:
        logged = client.get(f"{path}/events", params={"limit": 200}).json()["items"]
    assert [event["seq"] for event in logged] == list(range(1, len(logged) + 1))
    batches = [event["data"]["batch"] for event in logged if event["type"] == "log"]
    landed = [index for index in range(24) if responses[index if index < 16 else index + 1].status_code == 200]
    assert sorted(set(batches)) == landed
    for index in landed:  # each batch in one piece, in its order
        at = batches.index(index)
        assert batches[at : at + 3] == [index] * 3
        assert [e["data"]["part"] for e in logged if e["type"] == "log" and e["data"]["batch"] == index] == [0, 1, 2]
    assert [event["type"] for event in logged][-2:] == ["status", "done"]
