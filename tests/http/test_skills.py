"""Skills over HTTP, on every store: the type catalog, CRUD with schema-checked configurations, attachments to
agents, teams and environments, the resolved view, and `skill_ids` as the same truth as the attachments."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation, create_agent
from tests.support import bearer, make_jwt

SKILL_FIELDS = {
    "id", "organization_id", "name", "type", "description", "enabled", "configuration", "created_at", "updated_at",
}  # fmt: skip
TYPES = {"shell", "file_system", "python", "docker", "web", "data_visualization", "workflow_executor", "custom"}


def create_skill(client: TestClient[Any], name: str = "sh", kind: str = "shell", **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/skills", json={"name": name, "type": kind, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def created(client: TestClient[Any], path: str, **fields: Any) -> dict[str, Any]:
    response = client.post(path, json=fields)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_types_each_have_a_json_schema(client: TestClient[Any]) -> None:
    body = client.get("/api/v1/skills/types").json()
    assert {item["type"] for item in body["items"]} >= TYPES
    assert (body["total"], body["limit"], body["offset"]) == (len(body["items"]), 50, 0)
    for item in body["items"]:
        schema = item["configuration_schema"]
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["type"] == "object"
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get("/api/v1/skills/types", params={"limit": 2}, headers=viewer).json()["items"] == body["items"][:2]


def test_create_get_list_patch_delete(client: TestClient[Any], clock: ManualClock) -> None:
    body = create_skill(client, description="runs things", configuration={"timeout_seconds": 30})
    clock.advance(1)
    assert set(body) == SKILL_FIELDS
    assert (body["type"], body["enabled"], body["configuration"]) == ("shell", True, {"timeout_seconds": 30})
    assert client.get(f"/api/v1/skills/{body['id']}").json() == body
    create_skill(client, "docker", "docker", enabled=False, configuration={"image": "python:3.12"})
    page = client.get("/api/v1/skills", params={"limit": 1, "offset": 1}).json()
    assert (page["total"], [item["name"] for item in page["items"]]) == (2, ["docker"])
    patched = client.patch(f"/api/v1/skills/{body['id']}", json={"enabled": False}).json()
    assert (patched["enabled"], patched["configuration"], patched["description"]) == (
        False,
        {"timeout_seconds": 30},
        "runs things",
    )
    assert client.delete(f"/api/v1/skills/{body['id']}").status_code == 204
    assert client.get(f"/api/v1/skills/{body['id']}").status_code == 404


def test_configuration_follows_its_types_schema(client: TestClient[Any]) -> None:
    post = "/api/v1/skills"
    bad_timeout = client.post(post, json={"name": "a", "type": "shell", "configuration": {"timeout_seconds": 0}})
    assert_validation(bad_timeout, ["body", "configuration", "timeout_seconds"])
    assert_validation(
        client.post(post, json={"name": "a", "type": "shell", "configuration": {"env": {"A": 1}}}),
        ["body", "configuration", "env", "A"],
    )
    assert_validation(
        client.post(post, json={"name": "a", "type": "shell", "configuration": {"surprise": True}}),
        ["body", "configuration", "surprise"],
    )
    assert_validation(client.post(post, json={"name": "a", "type": "docker"}), ["body", "configuration", "image"])
    assert_validation(client.post(post, json={"name": "a", "type": "teleport"}), ["body", "type"])
    assert_validation(client.post(post, json={"name": "", "type": "shell"}), ["body", "name"])
    assert_validation(client.post(post, json={"name": "a", "type": "shell", "owner": "x"}), ["body", "owner"])
    assert (
        client.post(post, json={"name": "a", "type": "custom", "configuration": {"anything": [1]}}).status_code == 201
    )
    skill = create_skill(client, "b")
    # a new type is checked with the configuration kept
    assert_validation(
        client.patch(f"/api/v1/skills/{skill['id']}", json={"type": "docker"}), ["body", "configuration", "image"]
    )
    assert client.get(f"/api/v1/skills/{skill['id']}").json() == skill


def test_names_are_unique_per_organization(client: TestClient[Any], other_org: dict[str, str]) -> None:
    first = create_skill(client)
    duplicate = client.post("/api/v1/skills", json={"name": "sh", "type": "web"})
    assert duplicate.status_code == 409, duplicate.text
    assert duplicate.json()["error"]["code"] == "CONFLICT"
    second = create_skill(client, "other")
    assert client.patch(f"/api/v1/skills/{second['id']}", json={"name": "sh"}).status_code == 409
    assert client.post("/api/v1/skills", json={"name": "sh", "type": "shell"}, headers=other_org).status_code == 201
    assert client.get(f"/api/v1/skills/{first['id']}", headers=other_org).status_code == 404


def test_another_organizations_skill_is_404_everywhere(client: TestClient[Any], other_org: dict[str, str]) -> None:
    theirs = create_skill(client)
    mine = created(client, "/api/v1/agents", name="mine")
    for method, path in (("GET", f"/api/v1/skills/{theirs['id']}"), ("PATCH", f"/api/v1/skills/{theirs['id']}"),
                         ("DELETE", f"/api/v1/skills/{theirs['id']}"),
                         ("POST", f"/api/v1/agents/{mine['id']}/skills/{theirs['id']}"),
                         ("GET", f"/api/v1/agents/{mine['id']}/skills/resolved")):  # fmt: skip
        response = client.request(method, path, json={} if method == "PATCH" else None, headers=other_org)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["error"]["code"] == "NOT_FOUND"
    hidden = client.post("/api/v1/agents", json={"name": "x", "skill_ids": [theirs["id"]]}, headers=other_org)
    assert_validation(hidden, ["body", "skill_ids"])


def test_viewers_read_and_members_write(client: TestClient[Any]) -> None:
    skill = create_skill(client)
    agent = create_agent(client)
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(f"/api/v1/skills/{skill['id']}", headers=viewer).status_code == 200
    assert client.get(f"/api/v1/agents/{agent['id']}/skills/resolved", headers=viewer).status_code == 200
    for method, path in (("POST", "/api/v1/skills"), ("PATCH", f"/api/v1/skills/{skill['id']}"),
                         ("DELETE", f"/api/v1/skills/{skill['id']}"),
                         ("POST", f"/api/v1/agents/{agent['id']}/skills/{skill['id']}"),
                         ("DELETE", f"/api/v1/agents/{agent['id']}/skills/{skill['id']}")):  # fmt: skip
        body = {"name": "n", "type": "shell"} if method != "DELETE" else None
        denied = client.request(method, path, json=body, headers=viewer)
        assert denied.status_code == 403, (method, path, denied.text)
    member = bearer(make_jwt("default", roles=["member"]))
    assert client.post(f"/api/v1/agents/{agent['id']}/skills/{skill['id']}", headers=member).status_code == 200


def test_skill_ids_and_attachments_are_one_truth(client: TestClient[Any]) -> None:
    shell, web = create_skill(client), create_skill(client, "web", "web")
    agent = create_agent(client, skill_ids=[shell["id"], shell["id"]])
    assert agent["skill_ids"] == [shell["id"]]
    attach = client.post(f"/api/v1/agents/{agent['id']}/skills/{web['id']}", json={"configuration_override": {
        "max_results": 3}})  # fmt: skip
    assert attach.status_code == 200, attach.text
    assert (attach.json()["configuration_override"], attach.json()["configuration"]) == ({"max_results": 3},) * 2
    assert client.get(f"/api/v1/agents/{agent['id']}").json()["skill_ids"] == [shell["id"], web["id"]]
    listed = client.get(f"/api/v1/agents/{agent['id']}/skills").json()
    assert [(item["skill"]["name"], item["configuration_override"]) for item in listed["items"]] == [
        ("sh", None),
        ("web", {"max_results": 3}),
    ]
    # a PATCH of skill_ids replaces the attachments; the override of one kept stays
    patched = client.patch(f"/api/v1/agents/{agent['id']}", json={"skill_ids": [web["id"]]})
    assert patched.json()["skill_ids"] == [web["id"]]
    listed = client.get(f"/api/v1/agents/{agent['id']}/skills").json()
    assert [(item["skill"]["name"], item["configuration_override"]) for item in listed["items"]] == [
        ("web", {"max_results": 3})
    ]
    assert client.delete(f"/api/v1/agents/{agent['id']}/skills/{web['id']}").status_code == 204
    assert client.delete(f"/api/v1/agents/{agent['id']}/skills/{web['id']}").status_code == 204  # idempotent
    assert client.get(f"/api/v1/agents/{agent['id']}").json()["skill_ids"] == []
    assert client.get(f"/api/v1/agents/{agent['id']}/skills").json()["total"] == 0
    missing = str(uuid.uuid4())
    team = created(client, "/api/v1/teams", name="crew")
    for method, path in (("POST", "/api/v1/agents"), ("PATCH", f"/api/v1/agents/{agent['id']}"),
                         ("POST", "/api/v1/teams"), ("PATCH", f"/api/v1/teams/{team['id']}")):  # fmt: skip
        refused = client.request(method, path, json={"name": "new", "skill_ids": [shell["id"], missing]})
        assert_validation(refused, ["body", "skill_ids"])
        assert missing in refused.json()["error"]["message"]
    assert client.get(f"/api/v1/teams/{team['id']}").json()["skill_ids"] is None


def test_deleting_a_skill_takes_it_from_every_agent_and_team(client: TestClient[Any]) -> None:
    shell, web = create_skill(client), create_skill(client, "web", "web")
    agent = create_agent(client, skill_ids=[shell["id"], web["id"]])
    team = created(client, "/api/v1/teams", name="crew", skill_ids=[web["id"], shell["id"]])
    environment = created(client, "/api/v1/environments", name="prod")
    assert client.post(f"/api/v1/environments/{environment['id']}/skills/{shell['id']}").status_code == 200
    assert client.delete(f"/api/v1/skills/{shell['id']}").json()["error"]["code"] == "IN_USE"
    forced = client.delete(f"/api/v1/skills/{shell['id']}", params={"force": "true"})
    assert (forced.status_code, forced.headers.get("x-dangling-references")) == (204, None)  # detached everywhere
    assert client.get(f"/api/v1/agents/{agent['id']}").json()["skill_ids"] == [web["id"]]
    assert client.get(f"/api/v1/teams/{team['id']}").json()["skill_ids"] == [web["id"]]
    assert client.get(f"/api/v1/environments/{environment['id']}/skills").json()["items"] == []
    assert client.get(f"/api/v1/teams/{team['id']}/skills").json()["total"] == 1


def test_attachments_check_the_merged_configuration_and_name_404s(client: TestClient[Any]) -> None:
    skill = create_skill(client, configuration={"timeout_seconds": 30})
    agent = create_agent(client)
    path = f"/api/v1/agents/{agent['id']}/skills/{skill['id']}"
    bad = client.post(path, json={"configuration_override": {"timeout_seconds": -1}})
    assert_validation(bad, ["body", "configuration_override", "timeout_seconds"])
    assert_validation(
        client.post(path, json={"configuration_override": {"nope": 1}}), ["body", "configuration_override", "nope"]
    )
    assert_validation(client.post(path, json={"override": {}}), ["body", "override"])
    assert client.get(f"/api/v1/agents/{agent['id']}").json()["skill_ids"] == []  # nothing written
    removed = client.post(path, json={"configuration_override": {"timeout_seconds": None}}).json()
    assert removed["configuration"] == {}  # null removes a key (RFC 7386)
    for method in ("POST", "DELETE"):
        for wrong in (f"/api/v1/agents/{uuid.uuid4()}/skills/{skill['id']}", f"/api/v1/agents/{agent['id']}/skills/"
                      f"{uuid.uuid4()}", f"/api/v1/teams/{uuid.uuid4()}/skills/{skill['id']}",
                      f"/api/v1/environments/{uuid.uuid4()}/skills/{skill['id']}"):  # fmt: skip
            assert client.request(method, wrong).status_code == 404, (method, wrong)
    for owner in ("agents", "teams", "environments"):
        assert client.get(f"/api/v1/{owner}/{uuid.uuid4()}/skills").status_code == 404


def test_resolved_skills_layer_environment_team_agent(client: TestClient[Any]) -> None:
    shell = create_skill(client, configuration={"timeout_seconds": 30, "working_dir": "/w"})
    web = create_skill(client, "web", "web")
    off = create_skill(client, "off", "python", enabled=False)
    environment = created(client, "/api/v1/environments", name="prod")
    team = created(client, "/api/v1/teams", name="crew", skill_ids=[web["id"]])
    agent = create_agent(client, team_id=team["id"], skill_ids=[off["id"]])
    env_path = f"/api/v1/environments/{environment['id']}/skills/{shell['id']}"
    assert client.post(env_path, json={"configuration_override": {"timeout_seconds": 60}}).status_code == 200
    team_path = f"/api/v1/teams/{team['id']}/skills/{shell['id']}"
    assert client.post(team_path, json={"configuration_override": {"env": {"A": "1"}}}).status_code == 200
    agent_path = f"/api/v1/agents/{agent['id']}/skills/{shell['id']}"
    assert client.post(agent_path, json={"configuration_override": {"working_dir": "/agent"}}).status_code == 200
    resolved = f"/api/v1/agents/{agent['id']}/skills/resolved"
    body = client.get(resolved, params={"environment_id": environment["id"]}).json()
    assert body["total"] == 2
    by_name = {item["name"]: item for item in body["items"]}
    assert set(by_name) == {"sh", "web"}  # the disabled skill is left out
    assert by_name["sh"]["configuration"] == {"timeout_seconds": 60, "working_dir": "/agent", "env": {"A": "1"}}
    assert (by_name["sh"]["source"], by_name["sh"]["layers"]) == ("agent", ["environment", "team", "agent"])
    assert (by_name["web"]["source"], by_name["web"]["layers"]) == ("team", ["team"])
    without = {item["name"]: item for item in client.get(resolved).json()["items"]}
    assert without["sh"]["configuration"] == {"timeout_seconds": 30, "working_dir": "/agent", "env": {"A": "1"}}
    assert_validation(client.get(resolved, params={"environment_id": str(uuid.uuid4())}), ["query", "environment_id"])
    assert_validation(client.get(resolved, params={"team_id": team["id"]}), ["query", "team_id"])
    client.patch(f"/api/v1/skills/{off['id']}", json={"enabled": True})
    assert client.get(resolved).json()["total"] == 3


HEAVY = [f"command-{n}" for n in range(2000)]  # over 1,000 values: checked in a worker thread


def test_heavy_configurations_are_checked_as_light_ones(client: TestClient[Any]) -> None:
    """A configuration over the heavy mark is checked off the event loop (docs/api-decisions.md, "Bounds"): the
    same answers as in place, on create, update and attach with an override."""
    skill = create_skill(client, "heavy", configuration={"allowed_commands": HEAVY})
    assert skill["configuration"] == {"allowed_commands": HEAVY}
    wrong = client.post("/api/v1/skills", json={"name": "wrong", "type": "shell",
                                                "configuration": {"allowed_commands": [*HEAVY, 7]}})  # fmt: skip
    assert_validation(wrong, ["body", "configuration", "allowed_commands", len(HEAVY)])
    patched = client.patch(f"/api/v1/skills/{skill['id']}", json={"configuration": {"denied_commands": HEAVY}})
    assert patched.status_code == 200, patched.text
    assert patched.json()["configuration"] == {"denied_commands": HEAVY}
    refused = client.patch(f"/api/v1/skills/{skill['id']}", json={"type": "docker", "configuration": {"env": {
        f"K{n}": "v" for n in range(2000)}}})  # fmt: skip
    assert_validation(refused, ["body", "configuration", "image"])  # the new type's schema
    agent = create_agent(client, "heavy-agent")
    attach = f"/api/v1/agents/{agent['id']}/skills/{skill['id']}"
    override = {"allowed_commands": HEAVY}
    attached = client.post(attach, json={"configuration_override": override})
    assert attached.status_code == 200, attached.text
    assert attached.json()["configuration"] == {"denied_commands": HEAVY, "allowed_commands": HEAVY}
    bad = client.post(attach, json={"configuration_override": {"allowed_commands": [*HEAVY, 7]}})
    assert_validation(bad, ["body", "configuration_override", "allowed_commands", len(HEAVY)])
    assert client.post(attach).status_code == 200  # no override: the skill's own (heavy) configuration
