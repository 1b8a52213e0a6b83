"""The lease's `resolved` over HTTP, on every store: skills, the stored context, the execution environment with its
secret references filled, the secrets' values for the lease's worker only (each read recorded), team members."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import create_agent
from tests.http.test_contexts import put_context
from tests.http.test_executions import execute, lease, setup_queue
from tests.http.test_secrets import create_secret
from tests.http.test_skills import create_skill
from tests.http.test_teams import create_team

TOKEN = "tok-0123456789-never-shown"
DB_PASSWORD = "pw-9876543210-never-shown"
ENVIRONMENT = {
    "working_dir": "/srv/agent",
    "env_vars": {"REGION": "eu", "AUTH": "Bearer {{secret:API_TOKEN}}", "DSN": "pg://u:{{ secret:DB_PASSWORD }}@db"},
    "secrets": ["DB_PASSWORD"],
    "mcp_servers": {
        "search": {"url": "https://mcp.example/sse", "transport_type": "sse",
                   "headers": {"Authorization": "Bearer {{secret:API_TOKEN}}", "X-Plain": "p"}},
        "files": {"command": "mcp-files", "args": ["--root", "/srv"], "env": {"KEY": "{{secret:DB_PASSWORD}}"}},
    },
}  # fmt: skip
EMPTY_RUN = {"skills": [], "working_dir": None, "env_vars": {}, "secrets": {}, "files": [], "mcp_servers": {}}


def leased(client: TestClient[Any], queue_id: str, worker: str = "w1") -> dict[str, Any]:
    body = lease(client, queue_id, worker)
    assert body is not None
    return body


def test_a_bare_agent_has_nothing_resolved_but_an_empty_context(client: TestClient[Any]) -> None:
    _, queue_id = setup_queue(client)
    execution = execute(client, create_agent(client)["id"], queue_id)
    resolved = leased(client, queue_id)["resolved"]
    context = resolved.pop("context")
    assert resolved == {**EMPTY_RUN, "members": [], "planning": None}  # (a task plan's planning lease only)
    assert context == {"execution_id": execution["id"], "instructions": "", "knowledge": [], "variables": {},
                       "storage_paths": [], "sources": []}  # fmt: skip


def test_the_lease_carries_skills_context_and_the_environment_filled_in(client: TestClient[Any]) -> None:
    token = create_secret(client, "API_TOKEN", TOKEN)
    password = create_secret(client, "DB_PASSWORD", DB_PASSWORD)
    create_secret(client, "UNUSED", "unused-value")
    environment_id, queue_id = setup_queue(client)
    shell = create_skill(client, configuration={"timeout_seconds": 30})
    web = create_skill(client, "web", "web")
    path = f"/api/v1/environments/{environment_id}/skills/{shell['id']}"
    assert client.post(path, json={"configuration_override": {"timeout_seconds": 60}}).status_code == 200
    agent = create_agent(client, skill_ids=[web["id"]], execution_environment=ENVIRONMENT)
    put_context(client, f"/api/v1/agents/{agent['id']}", {"instructions": "Be brief.",
                                                          "knowledge": [{"name": "kb", "text": "Facts."}]})  # fmt: skip
    execution = execute(client, agent["id"], queue_id)
    answer = leased(client, queue_id, "worker-7")
    resolved = answer["resolved"]
    assert answer["agent"]["execution_environment"]["env_vars"]["AUTH"] == "Bearer {{secret:API_TOKEN}}"
    assert [(s["name"], s["source"], s["configuration"].get("timeout_seconds")) for s in resolved["skills"]] == [
        ("sh", "environment", 60), ("web", "agent", None),
    ]  # fmt: skip
    assert (resolved["context"]["instructions"], resolved["context"]["knowledge"]) == (
        "Be brief.", [{"name": "kb", "text": "Facts."}],
    )  # fmt: skip
    assert resolved["working_dir"] == "/srv/agent"
    assert resolved["env_vars"] == {"REGION": "eu", "AUTH": f"Bearer {TOKEN}", "DSN": f"pg://u:{DB_PASSWORD}@db"}
    assert resolved["secrets"] == {"DB_PASSWORD": DB_PASSWORD}  # listed; API_TOKEN is only referred to
    assert resolved["mcp_servers"]["search"]["headers"] == {"Authorization": f"Bearer {TOKEN}", "X-Plain": "p"}
    assert resolved["mcp_servers"]["search"]["url"] == "https://mcp.example/sse"
    assert resolved["mcp_servers"]["files"]["env"] == {"KEY": DB_PASSWORD}
    assert resolved["mcp_servers"]["files"]["args"] == ["--root", "/srv"]
    assert (resolved["files"], resolved["members"]) == ([], [])
    for secret in (token, password):  # one read each, for this worker and this execution
        accesses = client.get(f"/api/v1/secrets/{secret['id']}/accesses").json()["items"]
        assert [(a["worker_id"], a["execution_id"]) for a in accesses] == [("worker-7", execution["id"])]
    unused = client.get("/api/v1/secrets").json()["items"]
    assert [s["last_accessed_at"] is None for s in unused if s["name"] == "UNUSED"] == [True]
    shown = [
        client.get(f"/api/v1/executions/{execution['id']}"),
        client.get(f"/api/v1/executions/{execution['id']}/events"),
        client.get(f"/api/v1/executions/{execution['id']}/context"),
        client.get(f"/api/v1/agents/{agent['id']}"),
        client.get("/api/v1/executions"),
    ]
    assert all(r.status_code == 200 and TOKEN not in r.text and DB_PASSWORD not in r.text for r in shown)


def test_each_lease_reveals_anew_for_its_own_worker(client: TestClient[Any]) -> None:
    secret = create_secret(client, "API_TOKEN", TOKEN)
    _, queue_id = setup_queue(client)
    agent = create_agent(client, execution_environment={"secrets": ["API_TOKEN"]})
    execute(client, agent["id"], queue_id), execute(client, agent["id"], queue_id)
    first = leased(client, queue_id, "wa")
    assert first["resolved"]["secrets"] == {"API_TOKEN": TOKEN}
    client.patch(f"/api/v1/secrets/{secret['id']}", json={"value": "rotated"})
    second = leased(client, queue_id, "wb")
    assert second["resolved"]["secrets"] == {"API_TOKEN": "rotated"}
    accesses = client.get(f"/api/v1/secrets/{secret['id']}/accesses").json()["items"]
    assert sorted((a["worker_id"], a["execution_id"]) for a in accesses) == [
        ("wa", first["execution"]["id"]), ("wb", second["execution"]["id"]),
    ]  # fmt: skip


def test_an_agent_of_a_team_runs_with_the_teams_environment_under_its_own(client: TestClient[Any]) -> None:
    create_secret(client, "API_TOKEN", TOKEN)
    _, queue_id = setup_queue(client)
    web = create_skill(client, "web", "web")
    team = create_team(client, skill_ids=[web["id"]], execution_environment={
        "working_dir": "/team", "env_vars": {"A": "team", "B": "team"}, "secrets": ["API_TOKEN"],
    })  # fmt: skip
    agent = create_agent(client, team_id=team["id"], execution_environment={"env_vars": {"B": "agent"}})
    execute(client, agent["id"], queue_id)
    resolved = leased(client, queue_id)["resolved"]
    assert (resolved["working_dir"], resolved["env_vars"]) == ("/team", {"A": "team", "B": "agent"})
    assert resolved["secrets"] == {"API_TOKEN": TOKEN}
    assert [(s["name"], s["source"]) for s in resolved["skills"]] == [("web", "team")]


def test_a_team_lease_resolves_the_team_and_each_member(client: TestClient[Any]) -> None:
    create_secret(client, "API_TOKEN", TOKEN)
    create_secret(client, "DB_PASSWORD", DB_PASSWORD)
    environment_id, queue_id = setup_queue(client)
    shell, web = create_skill(client), create_skill(client, "web", "web")
    assert client.post(f"/api/v1/environments/{environment_id}/skills/{shell['id']}").status_code == 200
    team = create_team(client, execution_environment={"env_vars": {"T": "{{secret:API_TOKEN}}"}})
    first = create_agent(client, "first", team_id=team["id"], skill_ids=[web["id"]],
                         execution_environment={"secrets": ["DB_PASSWORD"]})  # fmt: skip
    second = create_agent(client, "second", team_id=team["id"])
    put_context(client, f"/api/v1/teams/{team['id']}", {"instructions": "Work together."})
    response = client.post(f"/api/v1/teams/{team['id']}/execute", json={"prompt": "p", "worker_queue_id": queue_id})
    assert response.status_code == 201, response.text
    answer = leased(client, queue_id)
    resolved = answer["resolved"]
    assert resolved["context"]["instructions"] == "Work together."
    assert (resolved["env_vars"], resolved["secrets"]) == ({"T": TOKEN}, {})
    assert [s["name"] for s in resolved["skills"]] == ["sh"]
    members = {member["agent_id"]: member for member in resolved["members"]}
    in_order = [member["id"] for member in answer["team"]["agents"]]
    assert [member["agent_id"] for member in resolved["members"]] == in_order
    assert set(in_order) == {first["id"], second["id"]}
    assert [s["name"] for s in members[first["id"]]["skills"]] == ["sh", "web"]
    assert (members[first["id"]]["env_vars"], members[first["id"]]["secrets"]) == (
        {"T": TOKEN}, {"DB_PASSWORD": DB_PASSWORD},
    )  # fmt: skip
    assert [s["name"] for s in members[second["id"]]["skills"]] == ["sh"]
    assert (members[second["id"]]["env_vars"], members[second["id"]]["secrets"]) == ({"T": TOKEN}, {})


def test_an_execution_whose_secret_is_gone_fails_saying_why_and_the_next_is_leased(
    client: TestClient[Any], clock: ManualClock
) -> None:
    secret = create_secret(client, "API_TOKEN", TOKEN)
    _, queue_id = setup_queue(client)
    needy = create_agent(client, "needy", execution_environment={"env_vars": {"A": "{{secret:API_TOKEN}}"}})
    doomed = execute(client, needy["id"], queue_id)
    clock.advance(1)  # queued after it
    fine = execute(client, create_agent(client, "plain")["id"], queue_id)
    assert client.delete(f"/api/v1/secrets/{secret['id']}", params={"force": "true"}).status_code == 204
    assert leased(client, queue_id)["execution"]["id"] == fine["id"]
    failed = client.get(f"/api/v1/executions/{doomed['id']}").json()
    assert failed["status"] == "failed"
    assert "secret 'API_TOKEN' not found" in failed["error"]
    assert lease(client, queue_id) is None


def test_the_environments_integrations_reach_the_lease(client: TestClient[Any]) -> None:
    create_secret(client, "DEPLOY_KEY", "deploy-key-never-shown")
    github = client.post(
        "/api/v1/integrations",
        json={"name": "gh", "kind": "github", "configuration": {"token": "ghp-never-shown", "organization": "acme"}},
    )
    custom = client.post(
        "/api/v1/custom-integrations",
        json={
            "name": "tools",
            "env_vars": {"TOOLS_HOME": "/opt/tools", "GITHUB_ORGANIZATION": "custom-wins"},
            "secret_names": ["DEPLOY_KEY"],
            "files": [{"path": "/etc/tools.conf", "content": "x=1", "mode": "600"}],
        },
    )
    assert (github.status_code, custom.status_code) == (201, 201), (github.text, custom.text)
    environment = {"env_vars": {"TOOLS_HOME": "/mine"}, "integration_ids": [github.json()["id"]],
                   "custom_integration_ids": [custom.json()["id"]]}  # fmt: skip
    _, queue_id = setup_queue(client)
    agent = create_agent(client, execution_environment=environment)
    execution = execute(client, agent["id"], queue_id)
    resolved = leased(client, queue_id)["resolved"]
    assert resolved["env_vars"]["GITHUB_TOKEN"] == "ghp-never-shown"
    assert resolved["env_vars"]["GITHUB_ORGANIZATION"] == "custom-wins"  # a later integration's variable wins
    assert resolved["env_vars"]["TOOLS_HOME"] == "/mine"  # the environment's own variables win over integrations'
    assert resolved["secrets"] == {"DEPLOY_KEY": "deploy-key-never-shown"}
    assert resolved["files"] == [{"path": "/etc/tools.conf", "content": "x=1", "mode": "0600"}]
    shown = client.get(f"/api/v1/executions/{execution['id']}").text + client.get("/api/v1/integrations").text
    assert "ghp-never-shown" not in shown
    assert "deploy-key-never-shown" not in shown
