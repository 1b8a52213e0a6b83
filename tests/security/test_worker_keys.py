"""Workers hold their own keys: a lease (and the secret values it carries) goes only to a worker key or the service
key, a worker key calls the worker protocol and nothing else, and a bound worker key works on its queues only. On
every store, and on both paths a hot route has (the fast lane and Litestar's)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, setup_queue
from tests.http.test_fast_lane import answer, handed_on
from tests.http.test_secrets import create_secret
from tests.support import DEFAULT_ORG, SERVICE_KEY, bearer, make_jwt

SECRET = "sk-worker-keys-0123456789-for-workers-only"
ENVIRONMENT = {"env_vars": {"LLM_KEY": "{{secret:LLM_KEY}}"}}
OTHER = bearer(make_jwt("org-other", sub="intruder"))
JWTS = {
    "member JWT": bearer(make_jwt(DEFAULT_ORG, sub="member")),
    "admin JWT": bearer(make_jwt(DEFAULT_ORG, sub="admin", roles=["admin"])),
    "viewer JWT": bearer(make_jwt(DEFAULT_ORG, sub="viewer", roles=["viewer"])),
    "JWT claiming worker": bearer(make_jwt(DEFAULT_ORG, sub="pretender", roles=["worker"])),  # no such claim
}


def issue(client: TestClient[Any], role: str, headers: dict[str, str] | None = None, **fields: Any) -> Any:
    """POST /api/v1/api-keys (by the service key unless `headers` say otherwise): the response."""
    return client.post("/api/v1/api-keys", json={"name": f"{role}-key", "role": role, **fields}, headers=headers)


def key_of(client: TestClient[Any], role: str, **fields: Any) -> dict[str, str]:
    """A new key of this role, as request headers."""
    created = issue(client, role, **fields)
    assert created.status_code == 201, created.text
    return bearer(created.json()["key"])


def lease_with(client: TestClient[Any], queue_id: str, headers: dict[str, str], worker: str = "w1") -> Any:
    body = {"worker_id": worker, "wait_seconds": 0}
    return client.post(f"/api/v1/worker-queues/{queue_id}/lease", json=body, headers=headers)


def forbidden(response: Any) -> bool:
    return bool(response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN")


def with_secret(client: TestClient[Any]) -> tuple[str, str]:
    """A queue and an agent whose execution environment refers to a secret: (queue id, agent id)."""
    create_secret(client, "LLM_KEY", SECRET)
    _, queue_id = setup_queue(client)
    return queue_id, create_agent(client, execution_environment=ENVIRONMENT)["id"]


def test_admins_issue_worker_keys_bound_or_not(client: TestClient[Any]) -> None:
    environment_id, queue_id = setup_queue(client)
    unbound = issue(client, "worker")
    assert unbound.status_code == 201, unbound.text
    assert (unbound.json()["role"], unbound.json()["environment_ids"], unbound.json()["queue_ids"]) == (
        "worker",
        [],
        [],
    )
    bound = issue(client, "worker", environment_ids=[environment_id.upper()], queue_ids=[queue_id, queue_id])
    assert bound.status_code == 201, bound.text
    shown = client.get(f"/api/v1/api-keys/{bound.json()['id']}").json()
    assert (shown["role"], shown["environment_ids"], shown["queue_ids"]) == ("worker", [environment_id], [queue_id])
    admin = key_of(client, "admin")
    assert issue(client, "worker", admin, queue_ids=[queue_id]).status_code == 201  # a stored admin key
    assert issue(client, "worker", JWTS["admin JWT"]).status_code == 201
    for headers in (key_of(client, "member"), key_of(client, "viewer"), JWTS["member JWT"], key_of(client, "worker")):
        assert forbidden(issue(client, "worker", headers))


def test_bindings_are_a_worker_keys_and_name_the_organizations_own(client: TestClient[Any]) -> None:
    environment_id, queue_id = setup_queue(client)
    theirs = client.post("/api/v1/environments", json={"name": "theirs"}, headers=OTHER).json()["id"]
    refused = [
        issue(client, "member", queue_ids=[queue_id]),
        issue(client, "admin", environment_ids=[environment_id]),
        issue(client, "worker", environment_ids=[theirs]),  # another organization's: as if there were none
        issue(client, "worker", environment_ids=[environment_id, "no-such-environment"]),
        issue(client, "worker", queue_ids=[environment_id]),  # an environment is no queue
        issue(client, "worker", queue_ids=[""]),
        issue(client, "worker", queue_ids=[queue_id] * 101),
    ]
    assert [response.status_code for response in refused] == [422] * len(refused), [r.text for r in refused]
    assert all(response.json()["error"]["code"] == "VALIDATION_ERROR" for response in refused)
    assert refused[3].json()["detail"][0]["loc"] == ["body", "environment_ids", 1]


def test_only_worker_keys_and_the_service_key_lease(client: TestClient[Any]) -> None:
    queue_id, agent_id = with_secret(client)
    execute(client, agent_id, queue_id)
    people = {"member key": key_of(client, "member"), "admin key": key_of(client, "admin"),
              "viewer key": key_of(client, "viewer"), **JWTS}  # fmt: skip
    for who, headers in people.items():
        refused = lease_with(client, queue_id, headers)
        assert forbidden(refused), (who, refused.text)
        assert "worker key" in refused.json()["error"]["message"]
        assert SECRET not in refused.text
    assert client.get(f"/api/v1/worker-queues/{queue_id}").json()["queued_executions"] == 1  # nothing was leased
    leased = lease_with(client, queue_id, key_of(client, "worker"))
    assert leased.status_code == 200, leased.text
    assert leased.json()["resolved"]["env_vars"] == {"LLM_KEY": SECRET}
    execute(client, agent_id, queue_id)
    leased = lease_with(client, queue_id, bearer(SERVICE_KEY), "w2")
    assert leased.status_code == 200, leased.text
    assert leased.json()["resolved"]["env_vars"] == {"LLM_KEY": SECRET}


def test_a_worker_key_calls_the_worker_protocol_and_nothing_else(client: TestClient[Any]) -> None:
    queue_id, agent_id = with_secret(client)
    execution = execute(client, agent_id, queue_id)
    worker = key_of(client, "worker")
    beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": "w1", "environment_name": "e"}, headers=worker)
    assert beat.status_code == 200, beat.text
    attempt = lease_with(client, queue_id, worker).json()["attempt"]
    path = f"/api/v1/executions/{execution['id']}"
    events = {"worker_id": "w1", "attempt": attempt, "events": [{"type": "log", "data": {"n": 1}}]}
    assert client.post(f"{path}/events", json=events, headers=worker).status_code == 200
    off_protocol = [
        client.get("/api/v1/agents", headers=worker),
        client.get(f"/api/v1/agents/{agent_id}", headers=worker),
        client.post("/api/v1/agents", json={"name": "by-a-worker"}, headers=worker),
        client.post(
            f"/api/v1/agents/{agent_id}/execute", json={"prompt": "p", "worker_queue_id": queue_id}, headers=worker
        ),
        client.get(path, headers=worker),
        client.get(f"{path}/events", headers=worker),
        client.post(f"{path}/cancel", headers=worker),
        client.get("/api/v1/secrets", headers=worker),
        client.get("/api/v1/workers", headers=worker),
        client.get(f"/api/v1/worker-queues/{queue_id}", headers=worker),
        client.get("/api/v1/api-keys", headers=worker),
        client.get(f"/api/v1/organizations/{DEFAULT_ORG}/settings", headers=worker),
    ]
    assert [response.status_code for response in off_protocol] == [403] * len(off_protocol), [
        response.text for response in off_protocol
    ]
    assert all(forbidden(response) for response in off_protocol)
    assert "worker protocol" in off_protocol[0].json()["error"]["message"]
    theirs = client.post("/api/v1/agents", json={"name": "theirs"}, headers=OTHER).json()["id"]
    assert client.get(f"/api/v1/agents/{theirs}", headers=worker).status_code == 404  # still 404, not 403
    done = {"worker_id": "w1", "attempt": attempt, "status": "completed", "response": "ok"}
    completed = client.post(f"{path}/complete", json=done, headers=worker)
    assert (completed.status_code, completed.json()["status"]) == (200, "completed"), completed.text


def test_a_bound_worker_key_works_on_its_queues_only(client: TestClient[Any]) -> None:
    environment_a, queue_a = setup_queue(client, "a")
    _, queue_b = setup_queue(client, "b")
    second_a = client.post(f"/api/v1/environments/{environment_a}/worker-queues", json={"name": "a2"}).json()["id"]
    theirs = client.post("/api/v1/environments", json={"name": "theirs"}, headers=OTHER).json()["id"]
    their_queue = client.post(f"/api/v1/environments/{theirs}/worker-queues", json={"name": "q"}, headers=OTHER)
    by_environment = key_of(client, "worker", environment_ids=[environment_a])
    by_queue = key_of(client, "worker", queue_ids=[queue_b])
    assert lease_with(client, queue_a, by_environment).status_code == 204  # its environment's queues: nothing queued
    assert lease_with(client, second_a, by_environment).status_code == 204
    assert forbidden(lease_with(client, queue_b, by_environment))
    assert lease_with(client, queue_b, by_queue).status_code == 204
    assert forbidden(lease_with(client, queue_a, by_queue))
    assert lease_with(client, their_queue.json()["id"], by_queue).status_code == 404  # another org's: 404
    assert lease_with(client, "no-such-queue", by_queue).status_code == 404

    # An execution of queue b, leased by the key bound to it: the key bound to environment a may not touch it.
    agent_id = create_agent(client)["id"]
    execution = execute(client, agent_id, queue_b)
    attempt = lease_with(client, queue_b, by_queue, "w-b").json()["attempt"]
    path = f"/api/v1/executions/{execution['id']}"
    events = {"worker_id": "w-b", "attempt": attempt, "events": [{"type": "log", "data": {}}]}
    done = {"worker_id": "w-b", "attempt": attempt, "status": "completed", "response": "ok"}
    assert forbidden(client.post(f"{path}/events", json=events, headers=by_environment))
    assert forbidden(client.post(f"{path}/complete", json=done, headers=by_environment))
    assert client.post("/api/v1/executions/no-such/events", json=events, headers=by_environment).status_code == 404
    # A heartbeat renews (or, idle, gives back) what its worker holds: not for a key bound elsewhere.
    beat = {"worker_id": "w-b", "environment_name": "env-a", "status": "idle"}
    assert forbidden(client.post("/api/v1/workers/heartbeat", json=beat, headers=by_environment))
    assert client.get(path).json()["status"] == "running"  # the refused idle heartbeat gave nothing back
    beat = {**beat, "environment_name": "env-b", "status": "busy"}  # its queue's environment
    assert client.post("/api/v1/workers/heartbeat", json=beat, headers=by_queue).status_code == 200
    fresh = {"worker_id": "w-new", "environment_name": "env-a"}  # a worker not seen before registers freely
    assert client.post("/api/v1/workers/heartbeat", json=fresh, headers=by_environment).status_code == 200
    assert client.post(f"{path}/events", json=events, headers=by_queue).status_code == 200
    assert client.post(f"{path}/complete", json=done, headers=by_queue).status_code == 200


def test_a_bound_worker_keys_heartbeat_names_one_of_its_environments(client: TestClient[Any]) -> None:
    environment_a, queue_a = setup_queue(client, "a")
    setup_queue(client, "b")
    client.post("/api/v1/environments", json={"name": "env-theirs"}, headers=OTHER)
    by_environment = key_of(client, "worker", environment_ids=[environment_a])
    by_queue = key_of(client, "worker", queue_ids=[queue_a])
    unbound = key_of(client, "worker")

    def beat(environment: str, headers: dict[str, str], worker: str = "w-fresh") -> Any:
        body = {"worker_id": worker, "environment_name": environment}
        return client.post("/api/v1/workers/heartbeat", json=body, headers=headers)

    for headers in (by_environment, by_queue):
        assert beat("env-a", headers).status_code == 200  # its environment, or its queue's
        for elsewhere in ("env-b", "env-theirs", "no-such-environment"):  # another, another org's, none: alike
            refused = beat(elsewhere, headers, "w-elsewhere")
            assert forbidden(refused), refused.text
            assert refused.json()["error"]["message"] == (
                f"this worker key is not bound to the environment {elsewhere!r} or one of its queues"
            )
    assert client.get("/api/v1/workers/w-elsewhere").status_code == 404  # nothing registered
    assert beat("anything", unbound, "w-unbound").status_code == 200  # unbound: a label, as before
    assert beat("anything", JWTS["member JWT"], "w-member").status_code == 200


def test_members_still_heartbeat(client: TestClient[Any]) -> None:
    for name, headers in (("k", key_of(client, "member")), ("j", JWTS["member JWT"])):
        beat = client.post("/api/v1/workers/heartbeat", json={"worker_id": f"w-{name}", "environment_name": "e"},
                           headers=headers)  # fmt: skip
        assert (beat.status_code, beat.json()["registered"]) == (200, True), beat.text


# -- both paths: the fast lane serves the allowed requests, Litestar answers the refused ones the same way ----------


Pair = tuple[TestClient[Any], TestClient[Any]]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    """Two apps on one SQLite file, with and without the fast lane."""
    clock = ManualClock()
    url = f"sqlite+aiosqlite:///{tmp_path / 'lane.db'}"
    with (
        TestClient(build_app(app_settings(url), clock=clock)) as fast,
        TestClient(build_app(replace(app_settings(url), fast_lane=False), clock=clock)) as slow,
    ):
        for side in (fast, slow):
            side.headers.update(bearer(SERVICE_KEY))
        yield fast, slow


def _protocol(client: TestClient[Any], side: str) -> tuple[list[Any], str, str]:
    """Leases, heartbeats and reads by each kind of caller, as one side sees them (ids named by their role)."""
    environment_id, queue_id = setup_queue(client, side)
    _, elsewhere = setup_queue(client, f"{side}-elsewhere")
    create_secret(client, f"LLM_KEY_{side.upper()}", SECRET)
    reference = f"{{{{secret:LLM_KEY_{side.upper()}}}}}"
    agent = create_agent(client, f"agent-{side}", execution_environment={"env_vars": {"LLM_KEY": reference}})
    agent_id = agent["id"]
    worker = key_of(client, "worker")
    bound = key_of(client, "worker", environment_ids=[environment_id])
    member = key_of(client, "member")
    seen = []
    for headers in (member, JWTS["admin JWT"], worker, bound, bearer(SERVICE_KEY)):
        execute(client, agent_id, queue_id)
        seen.append(lease_with(client, queue_id, headers, f"w-{side}"))
    seen.append(lease_with(client, elsewhere, bound, f"w-{side}"))
    beat = {"worker_id": f"w-{side}", "environment_name": f"env-{side}", "status": "busy"}
    for headers in (member, worker, bound, JWTS["viewer JWT"]):
        seen.append(client.post("/api/v1/workers/heartbeat", json=beat, headers=headers))
    seen.append(client.get(f"/api/v1/agents/{agent_id}", headers=worker))
    seen.append(client.get("/api/v1/agents", headers=worker))
    seen.append(client.post(f"/api/v1/agents/{agent_id}/execute", json={"prompt": "p", "worker_queue_id": queue_id},
                            headers=worker))  # fmt: skip
    names = {environment_id: "environment", queue_id: "queue", elsewhere: "elsewhere", agent_id: "agent",
             f"w-{side}": "worker", f"env-{side}": "env", side: "side", side.upper(): "SIDE"}  # fmt: skip
    shown = []
    for response in seen:
        status, kind, body, headers_seen = answer(response)
        text = repr(body)
        for actual, role in names.items():
            text = text.replace(actual, role)
        shown.append((status, kind, _without_moments(text), headers_seen))
    return shown, queue_id, agent_id


def _without_moments(text: str) -> str:
    """A lease's or heartbeat's answer less what differs between two runs (ids, times made on each side)."""
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>", text)
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z?", "<time>", text)


def test_the_worker_rules_hold_with_and_without_the_fast_lane(pair: Pair) -> None:
    fast, slow = pair
    handed = handed_on(fast.app)
    with_lane, queue_id, agent_id = _protocol(fast, "fast")
    # Handed by the lane to Litestar, which refuses them: the member key's and the admin JWT's leases, the viewer's
    # heartbeat, the worker key's read, list and execute. The worker keys' and the service key's leases (the
    # bound key's on a queue not its own too: its handler refuses it) and the others' heartbeats are the lane's.
    protocol = [h for h in handed if "/lease" in h or "/heartbeat" in h or h.startswith("GET /api/v1/agents")
                or h.endswith("/execute")]  # fmt: skip
    assert protocol == [
        f"POST /api/v1/worker-queues/{queue_id}/lease",
        f"POST /api/v1/worker-queues/{queue_id}/lease",
        "POST /api/v1/workers/heartbeat",
        f"GET /api/v1/agents/{agent_id}",
        "GET /api/v1/agents",
        f"POST /api/v1/agents/{agent_id}/execute",
    ]
    without_lane, _, _ = _protocol(slow, "slow")
    assert [status for status, *_ in with_lane] == [403, 403, 200, 200, 200, 403, 200, 200, 200, 403, 403, 403, 403]
    assert with_lane == without_lane
    assert SECRET in with_lane[2][2]  # the worker key's lease
    assert SECRET in with_lane[4][2]  # the service key's
    assert all(SECRET not in text for status, _, text, _ in with_lane if status != 200)
