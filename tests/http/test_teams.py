"""Teams over HTTP: the TeamWithAgentsResponse shape, configuration bounds, and membership with one truth."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from tests.http.test_agents import assert_validation, create_agent
from tests.support import BEFORE_THE_STORE

DEFAULT_CONFIGURATION = {
    "member_ids": [],
    "instructions": "",
    "reasoning": None,
    "llm": None,
    "tools": [],
    "knowledge_base": None,
    "session": None,
    "dependencies": {},
    "markdown": True,
    "add_datetime_to_instructions": False,
    "structured_outputs": False,
    "response_model": None,
    "debug_mode": False,
    "monitoring": False,
    "metadata": {},
}


def create_team(client: TestClient[Any], name: str = "crew", **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/teams", json={"name": name, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def team(client: TestClient[Any], team_id: str) -> dict[str, Any]:
    response = client.get(f"/api/v1/teams/{team_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def agent_team(client: TestClient[Any], agent_id: str) -> str | None:
    team_id: str | None = client.get(f"/api/v1/agents/{agent_id}").json()["team_id"]
    return team_id


def test_a_minimal_team_has_every_field_and_default(client: TestClient[Any]) -> None:
    body = create_team(client)
    assert body["configuration"] == DEFAULT_CONFIGURATION
    assert body["status"] == "active"
    assert body["runtime"] == "default"
    assert body["description"] is None
    assert body["agents"] == []
    assert body["projects"] == []
    assert body["skill_ids"] is None
    assert body["skills"] is None
    assert body["execution_environment"] is None
    assert {"id", "organization_id", "created_at", "updated_at"} <= set(body)


def test_nested_configs_get_their_defaults(client: TestClient[Any]) -> None:
    body = create_team(
        client,
        runtime="sdk_code",
        status="idle",
        configuration={"reasoning": {}, "llm": {}, "session": {}, "instructions": ["a", "b"]},
        execution_environment={"mcp_servers": {"fs": {"command": "mcp-fs"}}},
    )
    configuration = body["configuration"]
    assert configuration["reasoning"] == {
        "enabled": False, "model": None, "agent_id": None, "min_steps": 1, "max_steps": 10,
    }  # fmt: skip
    assert configuration["llm"] == dict.fromkeys(
        ["model", "temperature", "max_tokens", "top_p", "top_k", "stop", "frequency_penalty", "presence_penalty"]
    )
    assert configuration["session"] == {"user_id": None, "session_id": None, "auto_save": True, "persist": True}
    assert configuration["instructions"] == ["a", "b"]
    assert body["execution_environment"] == {
        "working_dir": None,
        "env_vars": {},
        "secrets": [],
        "integration_ids": [],
        "custom_integration_ids": [],
        "mcp_servers": {
            "fs": {"command": "mcp-fs", "args": None, "env": None, "transport_type": None, "url": None, "headers": None}
        },
    }
    assert (body["runtime"], body["status"]) == ("sdk_code", "idle")
    assert team(client, body["id"]) == body


@pytest.mark.parametrize("status", ["active", "inactive", "archived", "idle"])
def test_every_team_status_is_accepted(client: TestClient[Any], status: str) -> None:
    assert create_team(client, status=status)["status"] == status


EDGES = [
    ("llm", "temperature", 0, True),
    ("llm", "temperature", 2, True),
    ("llm", "temperature", -0.001, False),
    ("llm", "temperature", 2.001, False),
    ("llm", "max_tokens", 1, True),
    ("llm", "max_tokens", 0, False),
    ("llm", "max_tokens", 1.5, False),
    ("llm", "top_p", 0, True),
    ("llm", "top_p", 1, True),
    ("llm", "top_p", 1.0001, False),
    ("llm", "top_p", -0.0001, False),
    ("llm", "top_k", 0, True),
    ("llm", "top_k", -1, False),
    ("llm", "frequency_penalty", -2, True),
    ("llm", "frequency_penalty", 2, True),
    ("llm", "frequency_penalty", 2.01, False),
    ("llm", "frequency_penalty", -2.01, False),
    ("llm", "presence_penalty", -2, True),
    ("llm", "presence_penalty", 2, True),
    ("llm", "presence_penalty", 2.5, False),
    ("llm", "presence_penalty", -2.5, False),
    ("reasoning", "min_steps", 1, True),
    ("reasoning", "min_steps", 0, False),
    ("reasoning", "max_steps", 1, True),
    ("reasoning", "max_steps", 100, True),
    ("reasoning", "max_steps", 0, False),
    ("reasoning", "max_steps", 101, False),
    ("llm", "temperature", "1", False),
    ("llm", "max_tokens", "5", False),
]


@pytest.mark.parametrize(("section", "name", "value", "ok"), EDGES)
@BEFORE_THE_STORE
def test_configuration_bounds(client: TestClient[Any], section: str, name: str, value: Any, ok: bool) -> None:
    extra = {"min_steps": 1} if (section, name) == ("reasoning", "max_steps") else {}
    response = client.post("/api/v1/teams", json={"name": "t", "configuration": {section: {name: value, **extra}}})
    if ok:
        assert response.status_code == 201, response.text
        assert response.json()["configuration"][section][name] == value
    else:
        assert_validation(response, ["body", "configuration", section, name])


def test_min_steps_may_not_exceed_max_steps(client: TestClient[Any]) -> None:
    response = client.post("/api/v1/teams", json={"name": "t", "configuration": {"reasoning": {"min_steps": 11}}})
    assert_validation(response, ["body", "configuration", "reasoning", "min_steps"])


@pytest.mark.parametrize(
    ("server", "ok"),
    [
        ({"command": "npx", "args": ["-y", "srv"], "env": {"A": "${SECRET}"}}, True),
        ({"url": "https://mcp.example/sse", "transport_type": "sse", "headers": {"X": "y"}}, True),
        ({"url": "https://mcp.example/mcp", "transport_type": "http"}, True),
        ({"command": "npx", "url": "https://mcp.example"}, False),
        ({"command": "npx", "transport_type": "http"}, False),
        ({}, False),
        ({"env": {"A": "b"}}, False),
        ({"transport_type": "sse"}, False),
        ({"url": "https://mcp.example", "transport_type": "websocket"}, False),
    ],
)
@BEFORE_THE_STORE
def test_mcp_server_has_exactly_one_transport(client: TestClient[Any], server: dict[str, Any], ok: bool) -> None:
    response = client.post(
        "/api/v1/teams", json={"name": "t", "execution_environment": {"mcp_servers": {"tools": server}}}
    )
    if ok:
        assert response.status_code == 201, response.text
    else:
        assert response.status_code == 422, response.text
        loc = response.json()["detail"][0]["loc"]
        assert loc[:3] == ["body", "execution_environment", "mcp_servers"]
        assert loc[3] in ("tools", "...")  # msgspec does not name the map key of a type error


def test_unsupported_team_runtime_and_status_are_422(client: TestClient[Any]) -> None:
    assert_validation(client.post("/api/v1/teams", json={"name": "t", "runtime": "x"}), ["body", "runtime"])
    assert_validation(client.post("/api/v1/teams", json={"name": "t", "status": "busy"}), ["body", "status"])
    assert_validation(
        client.post("/api/v1/teams", json={"name": "t", "configuration": {"colour": "red"}}),
        ["body", "configuration", "colour"],
    )


def test_add_sets_team_id_and_adding_twice_is_harmless(client: TestClient[Any]) -> None:
    crew = create_team(client)
    agent = create_agent(client)
    for _ in range(2):
        response = client.post(f"/api/v1/teams/{crew['id']}/agents/{agent['id']}")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["configuration"]["member_ids"] == [agent["id"]]
        assert [member["id"] for member in body["agents"]] == [agent["id"]]
        assert body["agents"][0]["team_id"] == crew["id"]
    assert agent_team(client, agent["id"]) == crew["id"]


def test_adding_to_another_team_moves_the_agent(client: TestClient[Any]) -> None:
    first, second = create_team(client, "first"), create_team(client, "second")
    agent = create_agent(client)
    client.post(f"/api/v1/teams/{first['id']}/agents/{agent['id']}")
    client.post(f"/api/v1/teams/{second['id']}/agents/{agent['id']}")
    assert team(client, first["id"])["configuration"]["member_ids"] == []
    assert team(client, second["id"])["configuration"]["member_ids"] == [agent["id"]]
    assert agent_team(client, agent["id"]) == second["id"]


def test_remove_clears_team_id_and_is_harmless_for_non_members(client: TestClient[Any]) -> None:
    crew = create_team(client)
    agent = create_agent(client)
    client.post(f"/api/v1/teams/{crew['id']}/agents/{agent['id']}")
    for _ in range(2):
        response = client.delete(f"/api/v1/teams/{crew['id']}/agents/{agent['id']}")
        assert response.status_code == 200, response.text
        assert response.json()["configuration"]["member_ids"] == []
    assert agent_team(client, agent["id"]) is None


def test_patch_member_ids_is_the_same_truth(client: TestClient[Any]) -> None:
    first, second = create_team(client, "first"), create_team(client, "second")
    a, b, c = (create_agent(client, name)["id"] for name in ("a", "b", "c"))
    client.post(f"/api/v1/teams/{second['id']}/agents/{c}")
    response = client.patch(f"/api/v1/teams/{first['id']}", json={"configuration": {"member_ids": [a, c, a]}})
    assert response.status_code == 200, response.text
    assert sorted(response.json()["configuration"]["member_ids"]) == sorted([a, c])
    assert (agent_team(client, a), agent_team(client, b), agent_team(client, c)) == (first["id"], None, first["id"])
    assert team(client, second["id"])["configuration"]["member_ids"] == []
    client.patch(f"/api/v1/teams/{first['id']}", json={"configuration": {"member_ids": [b]}})
    assert (agent_team(client, a), agent_team(client, b), agent_team(client, c)) == (None, first["id"], None)


def test_patch_with_an_unknown_member_changes_nothing(client: TestClient[Any]) -> None:
    crew = create_team(client, description="before")
    agent = create_agent(client)
    response = client.patch(
        f"/api/v1/teams/{crew['id']}",
        json={"description": "after", "configuration": {"member_ids": [agent["id"], "ghost"]}},
    )
    assert_validation(response, ["body", "configuration", "member_ids"])
    assert team(client, crew["id"]) == crew
    assert agent_team(client, agent["id"]) is None


def test_patch_configuration_merges_given_fields(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    crew = create_team(
        client, configuration={"member_ids": [agent["id"]], "llm": {"temperature": 0.5}, "markdown": False}
    )
    response = client.patch(f"/api/v1/teams/{crew['id']}", json={"configuration": {"debug_mode": True}})
    configuration = response.json()["configuration"]
    assert configuration["debug_mode"] is True
    assert configuration["markdown"] is False
    assert configuration["llm"]["temperature"] == 0.5
    assert configuration["member_ids"] == [agent["id"]]
    bad = client.patch(f"/api/v1/teams/{crew['id']}", json={"configuration": {"llm": {"top_p": 3}}})
    assert_validation(bad, ["body", "configuration", "llm", "top_p"])


def test_creating_with_member_ids_moves_agents_in(client: TestClient[Any]) -> None:
    old = create_team(client, "old")
    agent = create_agent(client)
    client.post(f"/api/v1/teams/{old['id']}/agents/{agent['id']}")
    new = create_team(client, "new", configuration={"member_ids": [agent["id"]]})
    assert new["configuration"]["member_ids"] == [agent["id"]]
    assert team(client, old["id"])["configuration"]["member_ids"] == []
    assert_validation(
        client.post("/api/v1/teams", json={"name": "x", "configuration": {"member_ids": ["ghost"]}}),
        ["body", "configuration", "member_ids"],
    )
    assert client.get("/api/v1/teams").json()["total"] == 2


def test_agent_created_or_patched_into_a_team_shows_in_it(client: TestClient[Any], clock: Any) -> None:
    crew = create_team(client)
    born = create_agent(client, "born", team_id=crew["id"])
    clock.advance(1)
    moved = create_agent(client, "moved")
    client.patch(f"/api/v1/agents/{moved['id']}", json={"team_id": crew["id"]})
    assert team(client, crew["id"])["configuration"]["member_ids"] == [born["id"], moved["id"]]
    client.patch(f"/api/v1/agents/{born['id']}", json={"team_id": None})
    assert team(client, crew["id"])["configuration"]["member_ids"] == [moved["id"]]


def test_deleting_an_agent_or_a_team_leaves_no_dangling_reference(client: TestClient[Any]) -> None:
    crew = create_team(client)
    gone, stays = create_agent(client, "gone"), create_agent(client, "stays")
    client.patch(f"/api/v1/teams/{crew['id']}", json={"configuration": {"member_ids": [gone["id"], stays["id"]]}})
    assert client.delete(f"/api/v1/agents/{gone['id']}").status_code == 204
    assert team(client, crew["id"])["configuration"]["member_ids"] == [stays["id"]]
    assert client.delete(f"/api/v1/teams/{crew['id']}").json()["error"]["code"] == "IN_USE"  # it has a member
    assert client.delete(f"/api/v1/teams/{crew['id']}", params={"force": "true"}).status_code == 204
    assert client.get(f"/api/v1/teams/{crew['id']}").status_code == 404
    assert agent_team(client, stays["id"]) is None


def test_membership_only_within_the_organization(client: TestClient[Any], other_org: dict[str, str]) -> None:
    mine_team, mine_agent = create_team(client), create_agent(client)
    theirs_team = client.post("/api/v1/teams", json={"name": "theirs"}, headers=other_org).json()
    theirs_agent = client.post("/api/v1/agents", json={"name": "theirs"}, headers=other_org).json()
    assert client.post(f"/api/v1/teams/{mine_team['id']}/agents/{theirs_agent['id']}").status_code == 404
    assert client.post(f"/api/v1/teams/{theirs_team['id']}/agents/{mine_agent['id']}").status_code == 404
    assert (
        client.post(f"/api/v1/teams/{mine_team['id']}/agents/{mine_agent['id']}", headers=other_org).status_code == 404
    )
    response = client.patch(
        f"/api/v1/teams/{mine_team['id']}", json={"configuration": {"member_ids": [theirs_agent["id"]]}}
    )
    assert_validation(response, ["body", "configuration", "member_ids"])
    assert_validation(
        client.post("/api/v1/agents", json={"name": "spy", "team_id": theirs_team["id"]}), ["body", "team_id"]
    )
    assert client.get(f"/api/v1/agents/{theirs_agent['id']}", headers=other_org).json()["team_id"] is None
    for method in ("get", "delete"):
        assert getattr(client, method)(f"/api/v1/teams/{mine_team['id']}", headers=other_org).status_code == 404
    assert client.patch(f"/api/v1/teams/{mine_team['id']}", json={"name": "x"}, headers=other_org).status_code == 404
    assert client.get("/api/v1/teams", headers=other_org).json()["total"] == 1


def test_duplicate_team_name_is_409_and_list_pages(client: TestClient[Any], clock: Any) -> None:
    create_team(client, "one")
    assert client.post("/api/v1/teams", json={"name": "one"}).status_code == 409
    clock.advance(1)
    create_team(client, "two")
    page = client.get("/api/v1/teams", params={"limit": 1, "offset": 1}).json()
    assert (page["total"], page["limit"], page["offset"], len(page["items"])) == (2, 1, 1, 1)
    assert page["items"][0]["name"] == "two"
