"""Integrations over HTTP, on every store: the templates, CRUD with schema-checked configurations whose secret fields
are masked, the mask kept on PATCH, roles, and the ids an execution environment names; what the lease resolves."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_domain.integrations.resolve import ResolvedIntegrations, resolve_integrations
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_secrets import create_secret
from tests.support import bearer, make_jwt

KINDS = {"github", "gitlab", "slack", "jira", "aws", "http"}
FIELDS = {"id", "organization_id", "name", "kind", "configuration", "enabled", "created_at", "updated_at"}
TOKEN = "ghp_0123456789-do-not-leak"
MASK = "********"


def create_integration(
    client: TestClient[Any], name: str = "gh", kind: str = "github", configuration: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:  # fmt: skip
    configuration = {"token": TOKEN} if configuration is None else configuration
    response = client.post(
        "/api/v1/integrations", json={"name": name, "kind": kind, "configuration": configuration, **fields}
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def _resolve(client: TestClient[Any], ids: list[str], custom_ids: list[str]) -> ResolvedIntegrations:
    ports = client.app.state["ports"]
    async with ports.read() as uow:
        return await resolve_integrations(uow, ports.secrets_cipher, "default", ids, custom_ids)


def resolve(client: TestClient[Any], ids: list[str], custom_ids: list[str] | None = None) -> ResolvedIntegrations:
    return client.blocking_portal.call(_resolve, client, ids, custom_ids or [])


def test_templates_list_the_built_in_kinds_with_schemas_secret_fields_and_env_vars(client: TestClient[Any]) -> None:
    body = client.get("/api/v1/integration-templates").json()
    assert {item["kind"] for item in body["items"]} >= KINDS
    assert (body["total"], body["limit"], body["offset"]) == (len(body["items"]), 50, 0)
    for item in body["items"]:
        schema = item["configuration_schema"]
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert set(item["secret_fields"]) <= set(schema["properties"])
        assert all(schema["properties"][name]["writeOnly"] is True for name in item["secret_fields"])
        assert all(variable["field"] in schema["properties"] for variable in item["env_vars"])
    github = client.get("/api/v1/integration-templates/github").json()
    assert github["secret_fields"] == ["token"]
    assert {"name": "GITHUB_TOKEN", "field": "token", "secret": True} in github["env_vars"]
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    paged = client.get("/api/v1/integration-templates", params={"limit": 2, "offset": 1}, headers=viewer).json()
    assert paged["items"] == body["items"][1:3]
    unknown = client.get("/api/v1/integration-templates/nope")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "NOT_FOUND")


def test_create_get_list_patch_delete_never_answer_a_secret(client: TestClient[Any], clock: ManualClock) -> None:
    body = create_integration(client, configuration={"token": TOKEN, "organization": "acme"})
    assert set(body) == FIELDS
    assert (body["kind"], body["enabled"]) == ("github", True)
    assert body["configuration"] == {"organization": "acme", "token": MASK}
    path = f"/api/v1/integrations/{body['id']}"
    clock.advance(1)
    answers = [
        client.get(path),
        client.get("/api/v1/integrations"),
        client.patch(path, json={"enabled": False}),
        client.patch(path, json={"configuration": {"token": TOKEN + "-2"}}),
    ]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 200]
    assert all(TOKEN not in answer.text for answer in answers)
    assert answers[0].json() == body
    assert answers[1].json()["items"] == [body]
    assert (answers[2].json()["enabled"], answers[2].json()["updated_at"] > body["updated_at"]) == (False, True)
    assert answers[3].json()["configuration"] == {"token": MASK}
    assert answers[3].json()["enabled"] is False
    assert client.delete(path).status_code == 204
    assert client.get(path).status_code == 404
    assert client.delete(path).status_code == 404


def test_configurations_follow_the_kinds_schema(client: TestClient[Any]) -> None:
    def post(kind: str, configuration: Any) -> Any:
        return client.post("/api/v1/integrations", json={"name": "x", "kind": kind, "configuration": configuration})

    assert_validation(post("github", {}), ["body", "configuration", "token"])
    assert_validation(post("github", {"token": TOKEN, "surprise": 1}), ["body", "configuration", "surprise"])
    assert_validation(post("github", {"token": TOKEN, "base_url": "ftp://x"}), ["body", "configuration", "base_url"])
    assert_validation(post("aws", {"region": "us-east-1", "access_key_id": "AKIA0123456789ABCDEF"}),
                      ["body", "configuration", "secret_access_key"])  # fmt: skip
    assert_validation(post("nope", {}), ["body", "kind"])
    assert_validation(client.post("/api/v1/integrations", json={"kind": "http"}), ["body", "name"])
    extra = client.post("/api/v1/integrations", json={"name": "x", "kind": "http", "configuration": {}, "id": "1"})
    assert extra.status_code == 422
    long_secret = "leak" + "x" * 8200
    rejected = post("http", {"base_url": "https://api.example", "authorization": long_secret})
    assert_validation(rejected, ["body", "configuration", "authorization"])
    assert "leak" not in rejected.text
    created = create_integration(client, "api", "http", {"base_url": "https://api.example"})
    assert created["configuration"] == {"base_url": "https://api.example"}
    path = f"/api/v1/integrations/{created['id']}"
    assert_validation(client.patch(path, json={"kind": "github"}), ["body", "configuration", "token"])
    assert_validation(client.patch(path, json={"name": ""}), ["body", "name"])
    assert client.get(path).json() == created


def test_the_mask_keeps_the_stored_value_and_a_left_out_secret_is_removed(client: TestClient[Any]) -> None:
    secret, session = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "session-0123"
    aws = create_integration(client, "aws", "aws", {"region": "eu-west-1", "access_key_id": "AKIA0123456789ABCDEF",
                                                   "secret_access_key": secret, "session_token": session})  # fmt: skip
    assert aws["configuration"]["secret_access_key"] == aws["configuration"]["session_token"] == MASK
    path = f"/api/v1/integrations/{aws['id']}"
    moved = {"region": "us-east-1", "access_key_id": "AKIA0123456789ABCDEF", "secret_access_key": MASK}
    patched = client.patch(path, json={"configuration": moved})
    assert patched.status_code == 200, patched.text
    assert patched.json()["configuration"] == moved  # the session token was left out: removed
    env = resolve(client, [aws["id"]]).env_vars
    assert env == {"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIA0123456789ABCDEF",
                   "AWS_SECRET_ACCESS_KEY": secret}  # fmt: skip
    unstored = client.patch(path, json={"configuration": {**moved, "session_token": MASK}})
    assert_validation(unstored, ["body", "configuration", "session_token"])
    assert_validation(
        client.post("/api/v1/integrations", json={"name": "g", "kind": "github", "configuration": {"token": MASK}}),
        ["body", "configuration", "token"],
    )
    renamed = client.patch(path, json={"name": "aws-prod"}).json()
    assert (renamed["name"], renamed["configuration"]) == ("aws-prod", moved)
    assert resolve(client, [aws["id"]]).env_vars["AWS_SECRET_ACCESS_KEY"] == secret


def test_names_are_unique_organizations_apart_and_viewers_read_only(client: TestClient[Any]) -> None:
    first = create_integration(client, "gh")
    clash = client.post("/api/v1/integrations", json={"name": "gh", "kind": "http",
                                                      "configuration": {"base_url": "https://a.example"}})  # fmt: skip
    assert (clash.status_code, clash.json()["error"]["details"]["field"]) == (409, "name")
    second = create_integration(client, "other")
    assert client.patch(f"/api/v1/integrations/{second['id']}", json={"name": "gh"}).status_code == 409
    other_org = bearer(make_jwt("org-other"))
    assert client.get(f"/api/v1/integrations/{first['id']}", headers=other_org).status_code == 404
    assert client.patch(f"/api/v1/integrations/{first['id']}", json={"enabled": False},
                        headers=other_org).status_code == 404  # fmt: skip
    assert client.delete(f"/api/v1/integrations/{first['id']}", headers=other_org).status_code == 404
    assert client.get("/api/v1/integrations", headers=other_org).json()["total"] == 0
    theirs = {"name": "gh", "kind": "github", "configuration": {"token": "t"}}
    created = client.post("/api/v1/integrations", json=theirs, headers=other_org)
    assert created.status_code == 201
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(f"/api/v1/integrations/{first['id']}", headers=viewer).status_code == 200
    assert client.get("/api/v1/integrations", headers=viewer).json()["total"] == 2
    for response in (
        client.post("/api/v1/integrations", json={"name": "v", "kind": "github", "configuration": {"token": "t"}},
                    headers=viewer),
        client.patch(f"/api/v1/integrations/{first['id']}", json={"enabled": False}, headers=viewer),
        client.delete(f"/api/v1/integrations/{first['id']}", headers=viewer),
    ):  # fmt: skip
        assert response.status_code == 403, response.text
    assert client.get(f"/api/v1/integrations/{first['id']}").json() == first


def test_execution_environments_name_integrations_of_the_organization(client: TestClient[Any]) -> None:
    integration = create_integration(client)
    custom = client.post("/api/v1/custom-integrations", json={"name": "tools"}).json()
    environment = {"integration_ids": [integration["id"]], "custom_integration_ids": [custom["id"]]}
    agent = create_agent(client, execution_environment=environment)
    assert agent["execution_environment"]["integration_ids"] == [integration["id"]]
    assert agent["execution_environment"]["custom_integration_ids"] == [custom["id"]]
    assert create_agent(client, "plain")["execution_environment"] is None
    bare = create_agent(client, "bare", execution_environment={})["execution_environment"]
    assert (bare["integration_ids"], bare["custom_integration_ids"]) == ([], [])
    foreign = client.post("/api/v1/integrations", json={"name": "gh", "kind": "github", "configuration": {
        "token": "t"}}, headers=bearer(make_jwt("org-other"))).json()  # fmt: skip
    for field, value in (("integration_ids", foreign["id"]), ("custom_integration_ids", integration["id"]),
                         ("integration_ids", "nope")):  # fmt: skip
        body = {"name": "x", "execution_environment": {field: [value]}}
        assert_validation(client.post("/api/v1/agents", json=body), ["body", "execution_environment", field])
        assert_validation(client.post("/api/v1/teams", json=body), ["body", "execution_environment", field])
        patched = client.patch(f"/api/v1/agents/{agent['id']}", json={"execution_environment": {field: [value]}})
        assert_validation(patched, ["body", "execution_environment", field])
    team = client.post("/api/v1/teams", json={"name": "t", "execution_environment": environment})
    assert team.status_code == 201, team.text
    assert team.json()["execution_environment"]["custom_integration_ids"] == [custom["id"]]
    assert client.get(f"/api/v1/agents/{agent['id']}").json()["execution_environment"] == agent["execution_environment"]
    assert client.patch(f"/api/v1/agents/{agent['id']}", json={"name": "renamed"}).status_code == 200


def test_the_lease_resolves_env_vars_files_secret_names_and_setup_commands(client: TestClient[Any]) -> None:
    create_secret(client, "NPM_TOKEN")
    github = create_integration(client, configuration={"token": TOKEN, "organization": "acme"})
    api = create_integration(client, "api", "http", {"base_url": "https://a.example", "authorization": "Bearer z"})
    off = create_integration(client, "off", "slack", {"bot_token": "xoxb"}, enabled=False)
    tools = client.post("/api/v1/custom-integrations", json={
        "name": "tools", "env_vars": {"GITHUB_ORGANIZATION": "override", "TOOL": "1"}, "secret_names": ["NPM_TOKEN"],
        "files": [{"path": "/home/agent/.npmrc", "content": "registry=x", "mode": "0600"}],
        "setup_commands": ["npm ci"],
    }).json()  # fmt: skip
    disabled = client.post("/api/v1/custom-integrations", json={"name": "d", "env_vars": {"D": "1"},
                                                                "enabled": False}).json()  # fmt: skip
    resolved = resolve(client, [github["id"], off["id"], api["id"], "gone"], [tools["id"], disabled["id"]])
    assert resolved.env_vars == {
        "GITHUB_TOKEN": TOKEN, "GITHUB_ORGANIZATION": "override", "HTTP_API_BASE_URL": "https://a.example",
        "HTTP_API_AUTHORIZATION": "Bearer z", "TOOL": "1",
    }  # fmt: skip
    assert [(f.path, f.content, f.mode) for f in resolved.files] == [("/home/agent/.npmrc", "registry=x", 0o600)]
    assert (resolved.secret_names, resolved.setup_commands) == (["NPM_TOKEN"], ["npm ci"])
    assert resolve(client, [], []) == ResolvedIntegrations()
