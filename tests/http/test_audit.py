"""The audit log over HTTP: who, what, from where and in which request each change was made; admins only, one
organization's events only; never a secret's value or a key; the execution round trip records nothing."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.testing import TestClient

from tests.http.test_agents import create_agent
from tests.http.test_executions import setup_queue
from tests.support import DEFAULT_ORG, bearer, make_jwt

ALICE = bearer(make_jwt(DEFAULT_ORG, sub="alice", roles=["admin"]))
PATH = "/api/v1/audit-events"


def audit(client: TestClient[Any], **params: Any) -> list[dict[str, Any]]:
    response = client.get(PATH, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["total"] == len(body["items"])
    items: list[dict[str, Any]] = body["items"]
    return items


def actions(client: TestClient[Any], **params: Any) -> list[tuple[str, str]]:
    return [(event["action"], event["resource_id"]) for event in audit(client, **params)]


def test_each_change_says_who_what_where_and_which_request(client: TestClient[Any]) -> None:
    headers = {**ALICE, "User-Agent": "ops-console/2.1", "X-Request-ID": "req-create-1"}
    created = client.post("/api/v1/agents", json={"name": "scribe"}, headers=headers)
    assert created.status_code == 201, created.text
    agent_id = created.json()["id"]
    (event,) = audit(client)
    assert event["action"] == "agent.create"
    assert (event["resource_type"], event["resource_id"], event["outcome"]) == ("agent", agent_id, "succeeded")
    assert event["actor"] == {
        "subject": "alice",
        "kind": "jwt",
        "role": "admin",
        "credential_id": "jwt:7:default:alice",
    }
    assert event["client"] == {"ip": "testclient", "user_agent": "ops-console/2.1"}
    assert event["request_id"] == "req-create-1"
    assert event["organization_id"] == DEFAULT_ORG
    assert client.get(f"{PATH}/{event['id']}").json() == event

    patched = client.patch(f"/api/v1/agents/{agent_id}", json={"description": "writes"}, headers=ALICE)
    assert patched.status_code == 200, patched.text
    deleted = client.delete(f"/api/v1/agents/{agent_id}", headers=ALICE)
    assert deleted.status_code == 204
    newest = audit(client)
    assert [(e["action"], e["resource_id"]) for e in newest] == [
        ("agent.delete", agent_id),
        ("agent.update", agent_id),
        ("agent.create", agent_id),
    ]
    assert newest[1]["details"] == {"changed": ["description"]}
    generated = newest[0]["request_id"]
    assert generated, "a request without X-Request-ID gets a new id"
    assert generated == deleted.headers["X-Request-ID"], "the id the answer carried"
    assert generated not in ("req-create-1", newest[1]["request_id"])
    assert actions(client, request_id="req-create-1") == [("agent.create", agent_id)]
    assert actions(client, action="agent.update") == [("agent.update", agent_id)]
    assert len(audit(client, actor="alice", resource_type="agent", resource_id=agent_id, outcome="succeeded")) == 3
    assert audit(client, actor="bob") == []


def test_reads_and_refused_changes_record_nothing(client: TestClient[Any]) -> None:
    agent = create_agent(client, name="one")
    client.get(f"/api/v1/agents/{agent['id']}")
    client.get("/api/v1/agents")
    assert client.post("/api/v1/agents", json={"name": "one"}).status_code == 409
    assert client.post("/api/v1/agents", json={"name": ""}).status_code == 422
    assert actions(client) == [("agent.create", agent["id"])]


def test_only_admins_read_the_log_and_only_their_organizations(client: TestClient[Any]) -> None:
    create_agent(client, name="mine")
    (event,) = audit(client)
    for role in ("viewer", "member"):
        caller = bearer(make_jwt(DEFAULT_ORG, sub=role, roles=[role]))
        for path in (PATH, f"{PATH}/{event['id']}"):
            refused = client.get(path, headers=caller)
            assert refused.status_code == 403, (role, path)
            assert refused.json()["error"]["code"] == "FORBIDDEN"
    other_admin = bearer(make_jwt("org-other", sub="eve", roles=["admin"]))
    assert client.post("/api/v1/agents", json={"name": "theirs"}, headers=other_admin).status_code == 201
    theirs = client.get(PATH, headers=other_admin).json()
    assert [e["action"] for e in theirs["items"]] == ["agent.create"]
    assert event["id"] not in str(theirs)
    assert client.get(f"{PATH}/{event['id']}", headers=other_admin).status_code == 404
    other_viewer = bearer(make_jwt("org-other", sub="v", roles=["viewer"]))
    assert client.get(f"{PATH}/{event['id']}", headers=other_viewer).status_code == 404
    assert client.get(f"{PATH}/{uuid.uuid4()}").status_code == 404
    assert actions(client) == [("agent.create", event["resource_id"])]


def test_keys_and_secrets_are_recorded_without_their_values(client: TestClient[Any]) -> None:
    value, new_value = "sk-the-first-value-0123456789", "sk-the-second-value-9876543210"
    secret = client.post("/api/v1/secrets", json={"name": "OPENAI_API_KEY", "value": value})
    assert secret.status_code == 201, secret.text
    secret_id = secret.json()["id"]
    assert client.patch(f"/api/v1/secrets/{secret_id}", json={"value": new_value}).status_code == 200
    assert client.patch(f"/api/v1/secrets/{secret_id}", json={"description": "the model's"}).status_code == 200
    assert client.delete(f"/api/v1/secrets/{secret_id}").status_code == 204
    key = client.post("/api/v1/api-keys", json={"name": "ci", "role": "member"})
    assert key.status_code == 201, key.text
    key_id, plaintext = key.json()["id"], key.json()["key"]
    assert client.delete(f"/api/v1/api-keys/{key_id}").status_code == 204
    log = audit(client)
    assert [(e["action"], e["resource_id"]) for e in log] == [
        ("api_key.revoke", key_id),
        ("api_key.create", key_id),
        ("secret.delete", secret_id),
        ("secret.update", secret_id),
        ("secret.update", secret_id),
        ("secret.create", secret_id),
    ]
    assert [e["details"] for e in log[3:5]] == [{"changed": ["description"]}, {"changed": ["value", "version"]}]
    assert log[1]["details"] == {"name": "ci", "role": "member"}
    text = client.get(PATH).text
    for never in (value, new_value, plaintext, plaintext.split("_", 2)[2]):
        assert never not in text


def test_organization_settings_memberships_and_contexts_are_recorded(client: TestClient[Any]) -> None:
    agent = create_agent(client, name="member")
    team = client.post("/api/v1/teams", json={"name": "crew"}).json()
    project = client.post("/api/v1/projects", json={"name": "apollo", "key": "APL"}).json()
    assert client.post(f"/api/v1/teams/{team['id']}/agents/{agent['id']}").status_code == 200
    assert client.post(f"/api/v1/projects/{project['id']}/agents/{agent['id']}").status_code == 200
    context = {"instructions": "be brief"}
    assert client.put(f"/api/v1/agents/{agent['id']}/context", json=context).status_code == 200
    settings = {"tier": "enterprise", "rate_limit_per_minute": 5000}
    assert client.put(f"/api/v1/organizations/{DEFAULT_ORG}/settings", json=settings).status_code == 200
    log = audit(client)
    assert [(e["action"], e["resource_id"], e["details"]) for e in log[:4]] == [
        ("organization.update", DEFAULT_ORG, {"changed": ["rate_limit_per_minute", "tier"]}),
        ("context.put", agent["id"], {"owner_type": "agent"}),
        ("project.add_agent", project["id"], {"agent_id": agent["id"]}),
        ("team.add_agent", team["id"], {"agent_id": agent["id"]}),
    ]


def test_the_execution_round_trip_records_nothing(client: TestClient[Any]) -> None:
    agent = create_agent(client, name="runner")
    _, queue_id = setup_queue(client)
    before = audit(client)
    once = {"Idempotency-Key": "execute-1"}  # served by Litestar's path (the fast lane hands such requests on)
    execute = {"prompt": "hi", "worker_queue_id": queue_id}
    executed = client.post(f"/api/v1/agents/{agent['id']}/execute", json=execute, headers=once)
    assert executed.status_code == 201, executed.text
    leased = client.post(
        f"/api/v1/worker-queues/{queue_id}/lease",
        json={"worker_id": "w1", "wait_seconds": 0},
        headers={"Idempotency-Key": "lease-1"},
    )
    assert leased.status_code == 200, leased.text
    done = {"worker_id": "w1", "attempt": 1, "status": "completed", "response": "ok"}
    path = f"/api/v1/executions/{executed.json()['id']}/complete"
    assert client.post(path, json=done, headers={"Idempotency-Key": "complete-1"}).status_code == 200
    assert audit(client) == before


def test_bad_filters_are_422(client: TestClient[Any]) -> None:
    for params, field in (
        ({"from": "2026-01-01T00:00:00"}, "from"),
        ({"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "to"),
        ({"outcome": "maybe"}, "outcome"),
        ({"from": "yesterday"}, "from"),
        ({"actor_id": "x"}, "actor_id"),
    ):
        response = client.get(PATH, params=params)
        assert response.status_code == 422, params
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
        assert field in str(response.json()["detail"]), (params, response.json())
    window = {"from": "2020-01-01T00:00:00Z", "to": "2999-01-01T00:00:00+02:00"}
    create_agent(client, name="in-window")
    assert len(audit(client, **window)) == 1


def test_graph_nodes_edges_and_webhooks_are_recorded(client: TestClient[Any]) -> None:
    from tests.http.test_context_graph import GRAPH, create_edge, create_node
    from tests.http.test_webhooks import create as create_webhook

    first, second = create_node(client, "doc", title="a"), create_node(client, "doc", title="b")
    edge = create_edge(client, first, second, "cites")
    assert client.patch(f"{GRAPH}/nodes/{first}", json={"properties": {"title": "A"}}).status_code == 200
    assert client.delete(f"{GRAPH}/edges/{edge}").status_code == 204
    assert client.delete(f"{GRAPH}/nodes/{second}").status_code == 204
    hook = create_webhook(client)
    assert client.patch(f"/api/v1/webhooks/{hook['id']}", json={"enabled": False}).status_code == 200
    assert client.delete(f"/api/v1/webhooks/{hook['id']}").status_code == 204
    log = audit(client)
    assert [(e["action"], e["resource_id"]) for e in log] == [
        ("webhook.delete", hook["id"]),
        ("webhook.update", hook["id"]),
        ("webhook.create", hook["id"]),
        ("graph_node.delete", second),
        ("graph_edge.delete", edge),
        ("graph_node.update", first),
        ("graph_edge.create", edge),
        ("graph_node.create", second),
        ("graph_node.create", first),
    ]
    assert [log[1]["details"], log[5]["details"]] == [{"changed": ["enabled"]}, {"changed": ["properties"]}]
    assert hook["secret"] not in client.get(PATH).text
