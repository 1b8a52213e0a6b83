"""The seed's Team, whole, on every store: every team answer (create, get, list, update, membership) fills
`projects` with the projects the team belongs to and `skills` with its skills' details."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import create_agent
from tests.http.test_projects import create_project
from tests.http.test_skills import create_skill
from tests.http.test_teams import create_team


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def projects_of(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(each["id"], each["name"], each["key"]) for each in body["projects"]]


def test_every_answer_names_the_projects_of_the_team(client: TestClient[Any], clock: ManualClock) -> None:
    ops = create_project(client, "Operations", "OPS")
    clock.advance(1)
    web = create_project(client, "Website", "WEB")
    crew, other = create_team(client, "crew"), create_team(client, "other")
    assert crew["projects"] == []  # a new team belongs to no project
    for project in (web, ops):
        ok(client.post(f"/api/v1/projects/{project['id']}/teams/{crew['id']}"))
    ok(client.post(f"/api/v1/projects/{web['id']}/teams/{other['id']}"))
    both = [(ops["id"], "Operations", "OPS"), (web["id"], "Website", "WEB")]  # in the projects' order
    assert projects_of(ok(client.get(f"/api/v1/teams/{crew['id']}"))) == both
    listed = {item["id"]: projects_of(item) for item in ok(client.get("/api/v1/teams"))["items"]}
    assert listed == {crew["id"]: both, other["id"]: [(web["id"], "Website", "WEB")]}
    filtered = ok(client.get("/api/v1/teams", params={"project_id": ops["id"]}))["items"]
    assert [(item["id"], projects_of(item)) for item in filtered] == [(crew["id"], both)]
    assert projects_of(ok(client.patch(f"/api/v1/teams/{crew['id']}", json={"description": "d"}))) == both
    agent = create_agent(client)
    assert projects_of(ok(client.post(f"/api/v1/teams/{crew['id']}/agents/{agent['id']}"))) == both
    assert projects_of(ok(client.delete(f"/api/v1/teams/{crew['id']}/agents/{agent['id']}"))) == both
    ok(client.delete(f"/api/v1/projects/{ops['id']}/teams/{crew['id']}"))
    ok(client.patch(f"/api/v1/projects/{web['id']}", json={"name": "Site"}))
    assert projects_of(ok(client.get(f"/api/v1/teams/{crew['id']}"))) == [(web["id"], "Site", "WEB")]


def test_every_answer_details_the_skills_of_the_team(client: TestClient[Any]) -> None:
    shell = create_skill(client, "sh", "shell", description="a shell")
    web = create_skill(client, "web", "web")
    crew = create_team(client, "crew", skill_ids=[web["id"], shell["id"]])
    assert crew["skill_ids"] == [web["id"], shell["id"]]
    expected = [{**web, "configuration_override": None}, {**shell, "configuration_override": None}]
    assert crew["skills"] == expected
    assert ok(client.get(f"/api/v1/teams/{crew['id']}"))["skills"] == expected
    override = {"configuration_override": {"timeout_seconds": 5}}
    ok(client.post(f"/api/v1/teams/{crew['id']}/skills/{shell['id']}", json=override))
    expected[1] = {**shell, **override}
    assert ok(client.get(f"/api/v1/teams/{crew['id']}"))["skills"] == expected
    bare = create_team(client, "bare")
    assert (bare["skill_ids"], bare["skills"]) == (None, None)
    listed = {item["id"]: item["skills"] for item in ok(client.get("/api/v1/teams"))["items"]}
    assert listed == {crew["id"]: expected, bare["id"]: None}
    patched = ok(client.patch(f"/api/v1/teams/{crew['id']}", json={"skill_ids": [shell["id"]]}))
    assert patched["skills"] == [expected[1]]
    assert ok(client.patch(f"/api/v1/teams/{crew['id']}", json={"skill_ids": []}))["skills"] == []
