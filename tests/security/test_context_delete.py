"""A deleted context is gone: GET after DELETE is 404 `NOT_FOUND` naming the context (not 200 with an empty context
that looks as if it existed), on every kind of owner and every store; a PUT brings it back as a new context. An
owner that never had one is 404 alike; an owner that does not exist is 404 naming the owner."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.http.test_contexts import FULL, owners, put_context
from tests.support import bearer, make_jwt

VIEWER = bearer(make_jwt("default", roles=["viewer"]))


def test_get_after_delete_is_404_on_every_owner(client: TestClient[Any]) -> None:
    for owner_type, url in owners(client).items():
        owner_id = url.rsplit("/", 1)[1]
        first = put_context(client, url, FULL)
        assert client.get(f"{url}/context").json() == first
        assert client.delete(f"{url}/context").status_code == 204
        for headers in ({}, VIEWER):
            gone = client.get(f"{url}/context", headers=headers)
            assert gone.status_code == 404, (owner_type, gone.text)
            assert gone.json()["error"]["code"] == "NOT_FOUND"
            assert gone.json()["error"]["details"] == {"resource": "context", "id": owner_id}
        assert client.delete(f"{url}/context").status_code == 204  # (idempotent: nothing left to delete)
        assert client.get(f"{url}/context").status_code == 404
        again = put_context(client, url, {"instructions": "back"})
        assert (again["instructions"], again["knowledge"], again["variables"]) == ("back", [], {})
        assert again["created_at"] is not None
        assert client.get(f"{url}/context").json() == again


def test_an_owner_that_never_had_one_is_404_and_a_missing_owner_names_itself(client: TestClient[Any]) -> None:
    for owner_type, url in owners(client).items():
        never = client.get(f"{url}/context")
        assert (never.status_code, never.json()["error"]["details"]["resource"]) == (404, "context"), owner_type
    missing = client.get("/api/v1/agents/00000000-0000-0000-0000-000000000000/context")
    assert (missing.status_code, missing.json()["error"]["details"]["resource"]) == (404, "agent")


def test_a_deleted_context_no_longer_reaches_new_executions(client: TestClient[Any]) -> None:
    from tests.http.test_agents import create_agent
    from tests.http.test_executions import execute, setup_queue

    _, queue_id = setup_queue(client)
    agent = create_agent(client)
    url = f"/api/v1/agents/{agent['id']}"
    put_context(client, url, {"instructions": "old"})
    before = execute(client, agent["id"], queue_id)
    assert client.delete(f"{url}/context").status_code == 204
    after = execute(client, agent["id"], queue_id)
    assert client.get(f"/api/v1/executions/{before['id']}/context").json()["instructions"] == "old"
    assert client.get(f"/api/v1/executions/{after['id']}/context").json()["instructions"] == ""
