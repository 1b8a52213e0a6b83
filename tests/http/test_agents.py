"""Agents over HTTP, on the memory and SQLite stores."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.support import BEFORE_THE_STORE

AGENT_FIELDS = {
    "id", "organization_id", "name", "description", "status", "runtime", "model_id", "system_prompt", "team_id",
    "capabilities", "skill_ids", "execution_environment", "configuration", "created_at", "updated_at",
}  # fmt: skip


def create_agent(client: TestClient[Any], name: str = "writer", **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/agents", json={"name": name, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def assert_validation(response: Any, loc: list[Any]) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"]["code"] == "VALIDATION_ERROR"
    assert any(item["loc"] == loc for item in body["detail"]), body["detail"]
    assert all({"loc", "msg", "type"} <= set(item) for item in body["detail"])
    assert {"field", "issue"} <= set(body["error"]["details"])


def test_create_returns_the_whole_agent(client: TestClient[Any]) -> None:
    body = create_agent(
        client,
        description="writes things",
        runtime="sdk_code",
        model_id="gpt-4o",
        system_prompt="You write.",
        capabilities=["write"],
    )
    assert set(body) >= AGENT_FIELDS
    assert body["organization_id"] == "default"
    assert (body["runtime"], body["model_id"], body["system_prompt"]) == ("sdk_code", "gpt-4o", "You write.")
    assert body["status"] == "active"
    assert body["team_id"] is None
    assert body["capabilities"] == ["write"]
    assert client.get(f"/api/v1/agents/{body['id']}").json() == body


def test_defaults_of_a_minimal_agent(client: TestClient[Any]) -> None:
    body = create_agent(client)
    assert body["runtime"] == "default"
    assert body["description"] is None
    assert body["skill_ids"] == []
    assert body["execution_environment"] is None


def test_unsupported_runtime_is_422(client: TestClient[Any]) -> None:
    response = client.post("/api/v1/agents", json={"name": "a", "runtime": "langgraph"})
    assert_validation(response, ["body", "runtime"])
    assert client.get("/api/v1/agents").json()["total"] == 0


@pytest.mark.parametrize(
    ("payload", "loc"),
    [
        ({}, ["body", "name"]),
        ({"name": ""}, ["body", "name"]),
        ({"name": "   "}, ["body", "name"]),
        ({"name": 5}, ["body", "name"]),
        ({"name": "a", "organization_id": "evil"}, ["body", "organization_id"]),
        ({"name": "a", "id": "chosen"}, ["body", "id"]),
        ({"name": "a", "status": "sleeping"}, ["body", "status"]),
        ({"name": "a", "capabilities": "write"}, ["body", "capabilities"]),
        ({"name": "a", "capabilities": ["ok", 3]}, ["body", "capabilities", 1]),
        (
            {"name": "a", "execution_environment": {"mcp_servers": {"fs": {"command": "x", "url": "http://h"}}}},
            ["body", "execution_environment", "mcp_servers", "fs"],
        ),
    ],
)
@BEFORE_THE_STORE
def test_invalid_bodies_are_422(client: TestClient[Any], payload: dict[str, Any], loc: list[Any]) -> None:
    assert_validation(client.post("/api/v1/agents", json=payload), loc)


@pytest.mark.parametrize(
    "body",
    [
        b'{"name": "a"',
        b'{"name": "caf\xe9"}',
        b'{"name": "a", "configuration": {"x": ' + b"[" * 20000 + b"]" * 20000 + b"}}",
    ],
    ids=["truncated", "not-utf-8", "nested-too-deeply"],
)
@BEFORE_THE_STORE
def test_unparseable_json_is_400(client: TestClient[Any], body: bytes) -> None:
    response = client.post("/api/v1/agents", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BAD_REQUEST"


def test_missing_body_is_422(client: TestClient[Any]) -> None:
    response = client.post("/api/v1/agents")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_duplicate_name_is_409(client: TestClient[Any]) -> None:
    create_agent(client, "twin")
    response = client.post("/api/v1/agents", json={"name": "twin"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "CONFLICT"


def test_patch_changes_only_given_fields(client: TestClient[Any]) -> None:
    agent = create_agent(client, description="old", system_prompt="keep me")
    response = client.patch(f"/api/v1/agents/{agent['id']}", json={"description": None, "model_id": "m-2"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["description"] is None
    assert body["model_id"] == "m-2"
    assert body["system_prompt"] == "keep me"
    assert body["created_at"] == agent["created_at"]
    assert client.get(f"/api/v1/agents/{agent['id']}").json() == body


def test_patch_validates_like_create(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    assert_validation(client.patch(f"/api/v1/agents/{agent['id']}", json={"runtime": "nope"}), ["body", "runtime"])
    assert_validation(client.patch(f"/api/v1/agents/{agent['id']}", json={"name": None}), ["body", "name"])
    assert_validation(client.patch(f"/api/v1/agents/{agent['id']}", json={"team_id": "missing"}), ["body", "team_id"])
    assert client.get(f"/api/v1/agents/{agent['id']}").json() == agent


def test_patch_to_a_taken_name_is_409(client: TestClient[Any]) -> None:
    create_agent(client, "first")
    second = create_agent(client, "second")
    assert client.patch(f"/api/v1/agents/{second['id']}", json={"name": "first"}).status_code == 409


def test_delete_then_404(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    assert client.delete(f"/api/v1/agents/{agent['id']}").status_code == 204
    for method in ("get", "delete"):
        response = getattr(client, method)(f"/api/v1/agents/{agent['id']}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
    assert client.patch(f"/api/v1/agents/{agent['id']}", json={"name": "x"}).status_code == 404


def test_list_pages_in_creation_order(client: TestClient[Any], clock: Any) -> None:
    ids = []
    for index in range(5):
        ids.append(create_agent(client, f"agent-{index}")["id"])
        clock.advance(1)
    first = client.get("/api/v1/agents", params={"limit": 2}).json()
    assert (first["total"], first["limit"], first["offset"]) == (5, 2, 0)
    seen = [item["id"] for item in first["items"]]
    seen += [item["id"] for item in client.get("/api/v1/agents", params={"limit": 2, "offset": 2}).json()["items"]]
    seen += [item["id"] for item in client.get("/api/v1/agents", params={"limit": 2, "offset": 4}).json()["items"]]
    assert seen == ids
    assert client.get("/api/v1/agents", params={"offset": 10}).json()["items"] == []
    assert client.get("/api/v1/agents").json()["limit"] == 50


@pytest.mark.parametrize(
    ("params", "name"),
    [({"limit": 0}, "limit"), ({"limit": 201}, "limit"), ({"limit": "ten"}, "limit"), ({"offset": -1}, "offset")],
)
@BEFORE_THE_STORE
def test_bad_paging_is_422(client: TestClient[Any], params: dict[str, Any], name: str) -> None:
    assert_validation(client.get("/api/v1/agents", params=params), ["query", name])


def test_another_organization_sees_nothing(client: TestClient[Any], other_org: dict[str, str]) -> None:
    agent = create_agent(client, description="secret")
    path = f"/api/v1/agents/{agent['id']}"
    for response in (
        client.get(path, headers=other_org),
        client.patch(path, json={"name": "stolen"}, headers=other_org),
        client.delete(path, headers=other_org),
    ):
        assert response.status_code == 404
        assert "secret" not in response.text
    assert client.get("/api/v1/agents", headers=other_org).json() == {"items": [], "total": 0, "limit": 50, "offset": 0}
    assert client.get(path).json() == agent
    mine = client.post("/api/v1/agents", json={"name": agent["name"]}, headers=other_org)
    assert mine.status_code == 201, "names are unique per organization, not globally"
    assert mine.json()["organization_id"] == "org-other"


def test_unknown_query_parameters_are_422(client: TestClient[Any]) -> None:
    assert_validation(client.get("/api/v1/agents", params={"skip": 5}), ["query", "skip"])
    assert_validation(client.get("/api/v1/agents", params={"limit": 5, "sort": "name"}), ["query", "sort"])


def test_nul_characters_are_refused_everywhere(client: TestClient[Any]) -> None:
    response = client.post("/api/v1/agents", json={"name": "a\u0000b"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    literal = client.post("/api/v1/agents", json={"name": "a\\u0000b"})
    assert literal.status_code == 201, "the six characters \\u0000 are ordinary text"
    assert literal.json()["name"] == "a\\u0000b"


def test_a_nul_in_an_id_is_not_found_and_in_a_query_value_is_rejected(client: TestClient[Any]) -> None:
    """No store keeps a NUL in an id (Postgres text cannot hold one): never a 500."""
    missing = client.get("/api/v1/agents/x%00y")
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"]["code"] == "NOT_FOUND"
    rejected = client.get("/api/v1/executions", params={"agent_id": "a\x00b"})
    assert rejected.status_code == 422, rejected.text
    assert rejected.json()["detail"][0]["loc"] == ["query", "agent_id"]


def test_an_offset_past_what_a_database_counts_is_rejected(client: TestClient[Any]) -> None:
    client.post("/api/v1/agents", json={"name": "only"})
    last = client.get("/api/v1/agents", params={"offset": 2**63 - 1})
    assert last.status_code == 200, last.text
    assert (last.json()["items"], last.json()["total"]) == ([], 1)
    beyond = client.get("/api/v1/agents", params={"offset": 2**63})
    assert beyond.status_code == 422, beyond.text
    assert beyond.json()["detail"][0]["loc"] == ["query", "offset"]
