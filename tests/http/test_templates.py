"""Templates over HTTP, on every store: built-in and organization templates, their rules, instantiation, roles."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.testing import TestClient

from tests.http.test_agents import assert_validation, create_agent
from tests.support import bearer, make_jwt

TEMPLATE_FIELDS = {
    "id", "organization_id", "builtin", "name", "kind", "description", "parameters", "body", "created_at",
    "updated_at",
}  # fmt: skip
BUILTIN_NAMESPACE = uuid.UUID("6f1c2d3e-8a4b-5c6d-9e0f-a1b2c3d4e5f6")
CODING = str(uuid.uuid5(BUILTIN_NAMESPACE, "coding-agent"))
PAIR = str(uuid.uuid5(BUILTIN_NAMESPACE, "pair-team"))
WRITER_BODY = {"name": "writer-{{topic}}", "system_prompt": "You write about {{topic}}.", "capabilities": ["{{skill}}"]}
WRITER_PARAMETERS = [
    {"name": "topic", "description": "what to write about", "required": True},
    {"name": "skill", "default": "writing"},
]


def create_template(
    client: TestClient[Any],
    name: str = "writer",
    body: dict[str, Any] | None = None,
    parameters: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    payload = {"name": name, "kind": "agent", "parameters": WRITER_PARAMETERS if parameters is None else parameters,
               "body": WRITER_BODY if body is None else body, **fields}  # fmt: skip
    response = client.post("/api/v1/templates", json=payload)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def instantiate(client: TestClient[Any], template_id: str, **payload: Any) -> Any:
    return client.post(f"/api/v1/templates/{template_id}/instantiate", json=payload)


def test_builtin_templates_are_listed_for_every_organization_with_stable_ids(client: TestClient[Any]) -> None:
    listed = client.get("/api/v1/templates", params={"scope": "builtin"}).json()
    names = {item["name"]: item for item in listed["items"]}
    assert {"coding-agent", "research-agent", "support-agent", "pair-team"} <= set(names)
    assert listed["total"] == len(listed["items"])
    for name, item in names.items():
        assert item["id"] == str(uuid.uuid5(BUILTIN_NAMESPACE, name))
        assert (item["builtin"], item["organization_id"]) == (True, None)
        assert set(item) == TEMPLATE_FIELDS
    other = bearer(make_jwt("org-other", roles=["viewer"]))
    assert client.get("/api/v1/templates", params={"scope": "builtin"}, headers=other).json() == listed
    assert client.get(f"/api/v1/templates/{CODING}", headers=other).json() == names["coding-agent"]
    assert client.get("/api/v1/templates", params={"scope": "organization"}).json()["total"] == 0


def test_create_returns_the_whole_template_and_lists_show_it_after_the_builtin_ones(client: TestClient[Any]) -> None:
    created = create_template(client, description="writes")
    assert set(created) == TEMPLATE_FIELDS
    assert (created["organization_id"], created["builtin"], created["kind"]) == ("default", False, "agent")
    assert created["parameters"] == [
        {"name": "topic", "description": "what to write about", "required": True, "default": None},
        {"name": "skill", "description": None, "required": False, "default": "writing"},
    ]
    assert created["body"] == WRITER_BODY
    assert client.get(f"/api/v1/templates/{created['id']}").json() == created
    mine = client.get("/api/v1/templates", params={"scope": "organization"}).json()
    assert (mine["items"], mine["total"]) == ([created], 1)
    builtin_total = client.get("/api/v1/templates", params={"scope": "builtin"}).json()["total"]
    every = client.get("/api/v1/templates").json()
    assert every["total"] == builtin_total + 1
    assert every["items"][-1] == created
    assert all(item["builtin"] for item in every["items"][:-1])
    last = client.get("/api/v1/templates", params={"limit": 1, "offset": builtin_total}).json()
    assert (last["items"], last["total"]) == ([created], builtin_total + 1)
    assert client.get("/api/v1/templates", params={"scope": "nope"}).status_code == 422
    assert client.get("/api/v1/templates", params={"limit": 0}).status_code == 422


def test_pages_cover_every_template_once(client: TestClient[Any]) -> None:
    made = {create_template(client, f"t{index}")["id"] for index in range(3)}
    seen: list[str] = []
    total = client.get("/api/v1/templates").json()["total"]
    for offset in range(0, total, 2):
        page = client.get("/api/v1/templates", params={"limit": 2, "offset": offset}).json()
        assert page["total"] == total
        seen.extend(item["id"] for item in page["items"])
    assert len(seen) == len(set(seen)) == total
    assert made <= set(seen)


def test_every_placeholder_must_name_a_declared_parameter(client: TestClient[Any]) -> None:
    body = {"name": "x", "system_prompt": "Hello {{ who }} and {{nobody}}"}
    response = client.post(
        "/api/v1/templates", json={"name": "t", "kind": "agent", "parameters": [{"name": "who"}], "body": body}
    )
    assert_validation(response, ["body", "body", "system_prompt"])
    assert "nobody" in response.json()["error"]["message"]


def test_parameters_are_unique_identifiers(client: TestClient[Any]) -> None:
    def post(parameters: list[dict[str, Any]]) -> Any:
        return client.post("/api/v1/templates", json={"name": "t", "kind": "agent", "parameters": parameters,
                                                      "body": {"name": "x"}})  # fmt: skip

    assert_validation(post([{"name": "not-an-identifier"}]), ["body", "parameters", 0, "name"])
    assert_validation(post([{"name": "a"}, {"name": "a"}]), ["body", "parameters", 1, "name"])
    assert_validation(post([{"name": "a", "required": True, "default": 1}]), ["body", "parameters", 0, "default"])
    assert_validation(post([{"name": "a", "colour": "red"}]), ["body", "parameters", 0, "colour"])


def test_the_body_must_have_the_shape_of_the_kinds_create_payload(client: TestClient[Any]) -> None:
    def post(body: dict[str, Any], kind: str = "agent") -> Any:
        return client.post("/api/v1/templates", json={"name": "t", "kind": kind, "body": body})

    assert_validation(post({"name": "x", "capabilities": "code"}), ["body", "body", "capabilities"])
    assert_validation(post({"name": "x", "organization_id": "other"}), ["body", "body", "organization_id"])
    assert_validation(post({"name": "x", "capabilities": []}, "team"), ["body", "body", "capabilities"])
    assert_validation(post({"name": "x", "configuration": {"member_ids": 3}}, "team"),
                      ["body", "body", "configuration", "member_ids"])  # fmt: skip
    assert_validation(client.post("/api/v1/templates", json={"name": "t", "kind": "robot", "body": {}}),
                      ["body", "kind"])  # fmt: skip
    assert_validation(client.post("/api/v1/templates", json={"name": "t", "kind": "agent"}), ["body", "body"])
    assert post({"configuration": {"retries": 3}}).status_code == 201  # no name: instantiations must give one


def test_a_whole_string_placeholder_takes_any_json_value(client: TestClient[Any]) -> None:
    body = {"name": "{{name_}}", "capabilities": "{{capabilities}}", "configuration": {"depth": "{{depth}}"},
            "system_prompt": "Depth {{depth}}, tags {{capabilities}}, extra [{{extra}}]"}  # fmt: skip
    parameters = [{"name": "name_", "required": True}, {"name": "capabilities", "required": True},
                  {"name": "depth", "default": 2}, {"name": "extra"}]  # fmt: skip
    template = create_template(client, body=body, parameters=parameters)
    made = instantiate(client, template["id"], parameters={"name_": "deep", "capabilities": ["a", "b"]})
    assert made.status_code == 201, made.text
    agent = made.json()
    assert (agent["name"], agent["capabilities"], agent["configuration"]) == ("deep", ["a", "b"], {"depth": 2})
    assert agent["system_prompt"] == 'Depth 2, tags ["a","b"], extra []'
    wrong = instantiate(client, template["id"], parameters={"name_": "x", "capabilities": "a"})
    direct = client.post("/api/v1/agents", json={"name": "x", "capabilities": "a"})
    assert_validation(wrong, ["body", "capabilities"])
    assert wrong.json() == direct.json()


def test_secret_references_are_not_placeholders(client: TestClient[Any]) -> None:
    body = {"name": "n", "system_prompt": "token {{secret:GITHUB_TOKEN}}", "description": "{{ who }}"}
    template = create_template(client, body=body, parameters=[{"name": "who", "default": "me"}])
    agent = instantiate(client, template["id"]).json()
    assert (agent["system_prompt"], agent["description"]) == ("token {{secret:GITHUB_TOKEN}}", "me")


def test_duplicate_names_are_409_and_builtin_names_are_taken(client: TestClient[Any]) -> None:
    first = create_template(client)
    again = client.post("/api/v1/templates", json={"name": "writer", "kind": "agent", "body": {"name": "x"}})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "CONFLICT"
    assert client.post("/api/v1/templates", json={"name": "coding-agent", "kind": "agent",
                                                  "body": {"name": "x"}}).status_code == 409  # fmt: skip
    second = create_template(client, "other")
    assert client.patch(f"/api/v1/templates/{second['id']}", json={"name": "writer"}).status_code == 409
    assert client.get(f"/api/v1/templates/{first['id']}").json() == first
    theirs = bearer(make_jwt("org-other"))
    assert client.post("/api/v1/templates", json={"name": "writer", "kind": "team", "body": {}},
                       headers=theirs).status_code == 201  # fmt: skip


def test_patch_changes_only_the_given_fields_and_rechecks_the_template(client: TestClient[Any]) -> None:
    template = create_template(client, description="d")
    url = f"/api/v1/templates/{template['id']}"
    changed = client.patch(url, json={"description": None, "name": "renamed"})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["name"], body["description"], body["body"]) == ("renamed", None, WRITER_BODY)
    assert body["parameters"] == template["parameters"]
    assert body["created_at"] == template["created_at"]
    assert_validation(client.patch(url, json={"parameters": [{"name": "topic"}]}), ["body", "body", "capabilities", 0])
    as_team = client.patch(url, json={"kind": "team"})  # a team has no system prompt, nor capabilities
    assert as_team.status_code == 422
    assert as_team.json()["detail"][0]["loc"] in (["body", "body", "system_prompt"], ["body", "body", "capabilities"])
    assert_validation(client.patch(url, json={"bogus": 1}), ["body", "bogus"])
    assert client.get(url).json() == body
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404
    assert client.delete(url).status_code == 404


def test_builtin_templates_are_read_only(client: TestClient[Any]) -> None:
    for response in (
        client.patch(f"/api/v1/templates/{CODING}", json={"description": "mine"}),
        client.delete(f"/api/v1/templates/{CODING}"),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "FORBIDDEN"
        assert "built in and read-only" in response.json()["error"]["message"]
    assert client.get(f"/api/v1/templates/{CODING}").json()["description"] != "mine"


def test_instantiate_answers_as_a_direct_create(client: TestClient[Any]) -> None:
    template = create_template(client)
    made = instantiate(client, template["id"], parameters={"topic": "birds"})
    assert made.status_code == 201, made.text
    agent = made.json()
    assert (agent["name"], agent["system_prompt"], agent["capabilities"]) == (
        "writer-birds", "You write about birds.", ["writing"],
    )  # fmt: skip
    assert client.get(f"/api/v1/agents/{agent['id']}").json() == agent
    direct = client.post("/api/v1/agents", json={"name": "direct"}).json()
    assert set(direct) == set(agent)
    assert instantiate(client, template["id"], parameters={"topic": "birds"}).status_code == 409
    renamed = instantiate(client, template["id"], parameters={"topic": "birds", "skill": "poems"}, name="poet")
    assert renamed.status_code == 201
    assert (renamed.json()["name"], renamed.json()["capabilities"]) == ("poet", ["poems"])


def test_instantiate_parameters_are_checked(client: TestClient[Any]) -> None:
    template = create_template(client)
    missing = instantiate(client, template["id"], parameters={"skill": "x"})
    assert_validation(missing, ["body", "parameters", "topic"])
    assert_validation(instantiate(client, template["id"], parameters={"topic": "t", "nope": 1}),
                      ["body", "parameters", "nope"])  # fmt: skip
    assert_validation(instantiate(client, template["id"], parameters={"topic": "t"}, extra=1), ["body", "extra"])
    assert_validation(instantiate(client, template["id"], parameters={"topic": "t"}, name=""), ["body", "name"])
    unnamed = create_template(client, "unnamed", body={"description": "d"}, parameters=[])
    assert_validation(instantiate(client, unnamed["id"]), ["body", "name"])
    assert instantiate(client, unnamed["id"], name="named").status_code == 201
    assert instantiate(client, str(uuid.uuid4())).status_code == 404
    assert client.get("/api/v1/agents").json()["total"] == 1


def test_a_substituted_body_that_breaks_a_rule_is_422_as_a_direct_create(client: TestClient[Any]) -> None:
    parameters = [{"name": "name_", "default": "a"}, {"name": "runtime", "default": "default"}]
    template = create_template(client, body={"name": "{{name_}}", "runtime": "{{runtime}}"}, parameters=parameters)
    for given in ({"runtime": "no-such-runtime"}, {"name_": "   "}):
        response = instantiate(client, template["id"], parameters=given)
        body = {"name": given.get("name_", "a"), "runtime": given.get("runtime", "default")}
        direct = client.post("/api/v1/agents", json=body)
        assert response.status_code == direct.status_code == 422
        assert response.json() == direct.json()
    assert client.get("/api/v1/agents").json()["total"] == 0


def test_builtin_templates_instantiate(client: TestClient[Any]) -> None:
    coder = instantiate(client, CODING, parameters={"language": "Rust"})
    assert coder.status_code == 201, coder.text
    assert "senior Rust engineer" in coder.json()["system_prompt"]
    assert coder.json()["model_id"] is None
    for name in ("research-agent", "support-agent"):
        template_id = str(uuid.uuid5(BUILTIN_NAMESPACE, name))
        required = [p["name"] for p in client.get(f"/api/v1/templates/{template_id}").json()["parameters"]
                    if p["required"]]  # fmt: skip
        assert instantiate(client, template_id, parameters=dict.fromkeys(required, "x")).status_code == 201
    lead, worker = create_agent(client, "lead"), create_agent(client, "worker")
    team = instantiate(client, PAIR, parameters={"lead_agent_id": lead["id"], "worker_agent_id": worker["id"],
                                                 "goal": "ship it"}, name="shippers")  # fmt: skip
    assert team.status_code == 201, team.text
    assert team.json()["name"] == "shippers"
    assert sorted(agent["name"] for agent in team.json()["agents"]) == ["lead", "worker"]
    assert team.json()["configuration"]["instructions"][0] == "The team's goal: ship it."
    assert client.get(f"/api/v1/teams/{team.json()['id']}").json() == team.json()
    missing = str(uuid.uuid4())
    broken = instantiate(client, PAIR, parameters={"lead_agent_id": lead["id"], "worker_agent_id": missing,
                                                   "goal": "g"})  # fmt: skip
    direct = client.post("/api/v1/teams", json={"name": "pair-team",
                                                "configuration": {"member_ids": [lead["id"], missing]}})  # fmt: skip
    assert broken.status_code == direct.status_code == 422
    assert broken.json() == direct.json()


def test_viewers_read_and_members_write(client: TestClient[Any]) -> None:
    template = create_template(client)
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    url = f"/api/v1/templates/{template['id']}"
    assert client.get(url, headers=viewer).status_code == 200
    assert client.get("/api/v1/templates", headers=viewer).status_code == 200
    for response in (
        client.post("/api/v1/templates", json={"name": "v", "kind": "agent", "body": {}}, headers=viewer),
        client.patch(url, json={"name": "v"}, headers=viewer),
        client.delete(url, headers=viewer),
        client.post(f"{url}/instantiate", json={"parameters": {"topic": "t"}}, headers=viewer),
        client.post(f"/api/v1/templates/{CODING}/instantiate", json={"parameters": {"language": "Go"}},
                    headers=viewer),
    ):  # fmt: skip
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "FORBIDDEN"
    member = bearer(make_jwt("default", roles=["member"]))
    assert client.patch(url, json={"description": "m"}, headers=member).status_code == 200
    assert instantiate(client, template["id"], parameters={"topic": "t"}).status_code == 201
    other = bearer(make_jwt("org-other"))
    assert client.get(url, headers=other).status_code == 404
    assert client.post(f"{url}/instantiate", json={"parameters": {"topic": "t"}}, headers=other).status_code == 404


def test_deeply_nested_bodies_and_values_are_422(client: TestClient[Any]) -> None:
    nested: Any = "x"
    for _ in range(900):
        nested = [nested]
    body = {"name": "d", "configuration": {"k": nested}}
    deep_body = client.post("/api/v1/templates", json={"name": "d", "kind": "agent", "body": body})
    assert_validation(deep_body, ["body", "body"])
    parameters = [{"name": "p", "default": nested}]
    deep_default = client.post(
        "/api/v1/templates", json={"name": "d", "kind": "agent", "body": {"name": "d"}, "parameters": parameters}
    )
    assert_validation(deep_default, ["body", "parameters", 0, "default"])
    template = create_template(client)
    deep_value = instantiate(client, template["id"], parameters={"topic": nested})
    assert_validation(deep_value, ["body", "parameters", "topic"])
    assert client.get("/api/v1/agents").json()["total"] == 0
