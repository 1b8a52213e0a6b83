"""Projects over HTTP, on every store: fields, rules, memberships, counts, filters, roles."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.http.test_agents import assert_validation, create_agent
from tests.support import bearer, make_jwt

PROJECT_FIELDS = {
    "id", "organization_id", "name", "key", "description", "status", "settings", "agent_count", "team_count",
    "created_at", "updated_at",
}  # fmt: skip


def create_project(
    client: TestClient[Any], name: str = "Operations", key: str = "OPS", **fields: Any
) -> dict[str, Any]:
    response = client.post("/api/v1/projects", json={"name": name, "key": key, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def create_team(client: TestClient[Any], name: str = "crew") -> dict[str, Any]:
    response = client.post("/api/v1/teams", json={"name": name})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_create_returns_the_whole_project(client: TestClient[Any]) -> None:
    body = create_project(client, description="runs the place", settings={"region": "eu"})
    assert set(body) == PROJECT_FIELDS
    assert (body["name"], body["key"], body["description"]) == ("Operations", "OPS", "runs the place")
    assert (body["status"], body["settings"], body["agent_count"], body["team_count"]) == (
        "active",
        {"region": "eu"},
        0,
        0,
    )
    assert body["organization_id"] == "default"
    assert client.get(f"/api/v1/projects/{body['id']}").json() == body


def test_key_must_match_its_pattern(client: TestClient[Any]) -> None:
    for key in ("ops", "O", "OPERATIONS1", "1OPS", "OP-S"):
        assert_validation(client.post("/api/v1/projects", json={"name": key, "key": key}), ["body", "key"])
    assert_validation(
        client.patch(f"/api/v1/projects/{create_project(client)['id']}", json={"key": "x"}), ["body", "key"]
    )


def test_missing_and_unknown_fields_are_422(client: TestClient[Any]) -> None:
    assert_validation(client.post("/api/v1/projects", json={"name": "x"}), ["body", "key"])
    assert client.post("/api/v1/projects", json={"name": "x", "key": "XX", "agent_count": 3}).status_code == 422
    assert client.post("/api/v1/projects", json={"name": "x", "key": "XX", "status": "gone"}).status_code == 422


def test_duplicate_name_or_key_is_409_naming_the_field(client: TestClient[Any]) -> None:
    first = create_project(client)
    same_name = client.post("/api/v1/projects", json={"name": "Operations", "key": "OTHER"})
    same_key = client.post("/api/v1/projects", json={"name": "Other", "key": "OPS"})
    assert (same_name.status_code, same_key.status_code) == (409, 409)
    assert same_name.json()["error"]["code"] == same_key.json()["error"]["code"] == "CONFLICT"
    assert same_name.json()["error"]["details"]["field"] == "name"
    assert same_key.json()["error"]["details"]["field"] == "key"
    second = create_project(client, "Other", "OTHER")
    clash = client.patch(f"/api/v1/projects/{second['id']}", json={"key": "OPS"})
    assert clash.status_code == 409
    assert client.get(f"/api/v1/projects/{second['id']}").json()["key"] == "OTHER"
    assert client.get(f"/api/v1/projects/{first['id']}").json() == first


def test_patch_changes_only_the_given_fields(client: TestClient[Any]) -> None:
    project = create_project(client, description="d", settings={"a": 1})
    changed = client.patch(f"/api/v1/projects/{project['id']}", json={"status": "archived", "description": None})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["status"], body["description"], body["settings"], body["key"]) == ("archived", None, {"a": 1}, "OPS")
    assert body["created_at"] == project["created_at"]


def test_memberships_count_and_are_idempotent(client: TestClient[Any]) -> None:
    project = create_project(client)
    agent, other = create_agent(client, "a1"), create_agent(client, "a2")
    team = create_team(client)
    url = f"/api/v1/projects/{project['id']}"
    assert client.post(f"{url}/agents/{agent['id']}").json()["agent_count"] == 1
    assert client.post(f"{url}/agents/{agent['id']}").json()["agent_count"] == 1
    assert client.post(f"{url}/agents/{other['id']}").json()["agent_count"] == 2
    added = client.post(f"{url}/teams/{team['id']}")
    assert added.status_code == 200
    assert (added.json()["agent_count"], added.json()["team_count"]) == (2, 1)
    removed = client.delete(f"{url}/agents/{other['id']}")
    assert removed.status_code == 200
    assert removed.json()["agent_count"] == 1
    assert client.delete(f"{url}/agents/{other['id']}").json()["agent_count"] == 1
    listed = client.get("/api/v1/projects").json()["items"][0]
    assert (listed["agent_count"], listed["team_count"]) == (1, 1)


def test_an_agent_may_belong_to_several_projects_and_lists_filter_by_project(client: TestClient[Any]) -> None:
    ops, web = create_project(client), create_project(client, "Web", "WEB")
    shared, alone = create_agent(client, "shared"), create_agent(client, "alone")
    team = create_team(client)
    for project in (ops, web):
        assert client.post(f"/api/v1/projects/{project['id']}/agents/{shared['id']}").status_code == 200
    client.post(f"/api/v1/projects/{web['id']}/agents/{alone['id']}")
    client.post(f"/api/v1/projects/{web['id']}/teams/{team['id']}")
    in_ops = client.get("/api/v1/agents", params={"project_id": ops["id"]}).json()
    in_web = client.get("/api/v1/agents", params={"project_id": web["id"], "limit": 1}).json()
    assert [item["name"] for item in in_ops["items"]] == ["shared"]
    assert in_ops["total"] == 1
    assert len(in_web["items"]) == 1
    assert in_web["total"] == 2
    every = client.get("/api/v1/agents", params={"project_id": web["id"]}).json()["items"]
    assert sorted(item["name"] for item in every) == ["alone", "shared"]
    assert client.get("/api/v1/agents").json()["total"] == 2
    assert [item["id"] for item in client.get("/api/v1/teams", params={"project_id": web["id"]}).json()["items"]] == [
        team["id"]
    ]
    assert client.get("/api/v1/teams", params={"project_id": ops["id"]}).json()["total"] == 0
    assert client.get("/api/v1/agents", params={"project_id": "nope"}).json()["total"] == 0


def test_deleting_a_project_keeps_its_agents_and_deleting_an_agent_leaves_the_project(client: TestClient[Any]) -> None:
    project, agent, kept = create_project(client), create_agent(client, "gone"), create_agent(client, "kept")
    url = f"/api/v1/projects/{project['id']}"
    client.post(f"{url}/agents/{agent['id']}")
    client.post(f"{url}/agents/{kept['id']}")
    assert client.delete(f"/api/v1/agents/{agent['id']}").status_code == 204
    assert client.get(url).json()["agent_count"] == 1
    in_use = client.delete(url).json()["error"]
    assert (in_use["code"], in_use["details"]["referrers"]) == ("IN_USE", [{"type": "agent", "id": kept["id"]}])
    forced = client.delete(url, params={"force": "true"})
    assert (forced.status_code, forced.headers.get("x-dangling-references")) == (204, None)  # memberships went
    assert client.get(url).status_code == 404
    assert client.get(f"/api/v1/agents/{kept['id']}").status_code == 200
    assert client.delete(url).status_code == 404


def test_unknown_project_agent_or_team_is_404(client: TestClient[Any]) -> None:
    project = create_project(client)
    agent = create_agent(client)
    missing = "00000000-0000-0000-0000-000000000000"
    assert client.post(f"/api/v1/projects/{missing}/agents/{agent['id']}").status_code == 404
    response = client.post(f"/api/v1/projects/{project['id']}/agents/{missing}")
    assert response.status_code == 404
    assert response.json()["error"]["details"] == {"resource": "agent", "id": missing}
    assert client.post(f"/api/v1/projects/{project['id']}/teams/{agent['id']}").status_code == 404
    assert client.patch(f"/api/v1/projects/{missing}", json={"name": "x"}).status_code == 404


def test_another_organizations_agent_cannot_join(client: TestClient[Any]) -> None:
    project = create_project(client)
    theirs = client.post("/api/v1/agents", json={"name": "theirs"}, headers=bearer(make_jwt("org-other")))
    assert theirs.status_code == 201
    assert client.post(f"/api/v1/projects/{project['id']}/agents/{theirs.json()['id']}").status_code == 404
    assert client.get(f"/api/v1/projects/{project['id']}").json()["agent_count"] == 0


def test_viewers_read_and_members_write(client: TestClient[Any]) -> None:
    project = create_project(client)
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(f"/api/v1/projects/{project['id']}", headers=viewer).status_code == 200
    assert client.get("/api/v1/projects", headers=viewer).json()["total"] == 1
    denied = client.post("/api/v1/projects", json={"name": "n", "key": "NN"}, headers=viewer)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "FORBIDDEN"
    assert client.patch(f"/api/v1/projects/{project['id']}", json={"name": "n"}, headers=viewer).status_code == 403
    assert client.delete(f"/api/v1/projects/{project['id']}", headers=viewer).status_code == 403
    member = bearer(make_jwt("default", roles=["member"]))
    assert client.post("/api/v1/projects", json={"name": "n", "key": "NN"}, headers=member).status_code == 201


def test_pages_cover_every_project_once(client: TestClient[Any]) -> None:
    made = [create_project(client, f"p{index}", f"P{index}")["id"] for index in range(5)]
    seen = []
    for offset in range(0, 5, 2):
        page = client.get("/api/v1/projects", params={"limit": 2, "offset": offset}).json()
        assert page["total"] == 5
        assert (page["limit"], page["offset"]) == (2, offset)
        seen.extend(item["id"] for item in page["items"])
    assert sorted(seen) == sorted(made)
    assert len(seen) == 5
    assert client.get("/api/v1/projects", params={"limit": 0}).status_code == 422
