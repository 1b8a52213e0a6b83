"""Walk the app's own route table: for every route with an id in its path, another organization gets 404
and the first organization's object is unchanged. A route added without a factory here fails this test."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from tests.support import bearer, make_jwt

Factory = Callable[[TestClient[Any], dict[str, str]], str]


def _post(path: str, body: dict[str, Any], key: str = "id") -> Factory:
    def create(client: TestClient[Any], ids: dict[str, str]) -> str:
        response = client.post(
            path.format(**ids), json={k: v.format(**ids) if isinstance(v, str) else v for k, v in body.items()}
        )
        assert response.status_code in (200, 201), response.text
        value: str = response.json()[key]
        return value

    return create


def _attached_skill(client: TestClient[Any], ids: dict[str, str]) -> str:
    """A skill attached to the agent, the team and the environment (their skill lists are then not empty)."""
    skill_id = _post("/api/v1/skills", {"name": "victim-skill", "type": "shell", "description": "secret-skill"})(
        client, ids
    )
    for owner in ("agents/{agent_id}", "teams/{team_id}", "environments/{environment_id}"):
        attached = client.post(f"/api/v1/{owner.format(**ids)}/skills/{skill_id}", json={"configuration_override": {}})
        assert attached.status_code == 200, attached.text
    return skill_id


def _workflow(client: TestClient[Any], ids: dict[str, str]) -> str:
    """A workflow of two steps of the agent (its run then has a queued execution and a pending step)."""
    steps = [
        {"id": "first", "agent_id": ids["agent_id"], "prompt": "secret step"},
        {"id": "then", "agent_id": ids["agent_id"], "prompt": "{{steps.first.output}}", "depends_on": ["first"]},
    ]
    response = client.post(
        "/api/v1/workflows", json={"name": "victim-workflow", "description": "secret", "steps": steps}
    )
    assert response.status_code == 201, response.text
    value: str = response.json()["id"]
    return value


def _contexts(body: dict[str, Any]) -> Factory:
    """Set the same context on the agent, team, environment and project made before (not a path parameter)."""

    def put(client: TestClient[Any], ids: dict[str, str]) -> str:
        for kind, name in (("agents", "agent_id"), ("teams", "team_id"), ("environments", "environment_id"),
                           ("projects", "project_id")):  # fmt: skip
            response = client.put(f"/api/v1/{kind}/{ids[name]}/context", json=body)
            assert response.status_code == 200, response.text
        return ""

    return put


def _runner(client: TestClient[Any], name: str) -> str:
    """A worker that names its runner (`/api/v1/runners/{name}`)."""
    body = {"worker_id": "victim-runner-worker", "environment_name": "secret-env", "worker_metadata": {"runner": name}}
    assert client.post("/api/v1/workers/heartbeat", json=body).status_code == 200
    return name


def _stored_file(client: TestClient[Any], path: str) -> str:
    """A file (JSON, so that the snapshot can read it back as the other objects)."""
    response = client.put(f"/api/v1/storage/files/{path}", json={"plan": "confidential"})
    assert response.status_code == 201, response.text
    return path


# In creation order: later factories may use the ids of earlier ones.
FACTORIES: dict[str, Factory] = {
    "agent_id": _post("/api/v1/agents", {"name": "victim-agent", "description": "secret-agent-data"}),
    "team_id": _post("/api/v1/teams", {"name": "victim-team", "description": "secret-team-data"}),
    "worker_id": _post("/api/v1/workers/heartbeat", {"worker_id": "victim-worker", "environment_name": "secret-env"},
                       "worker_id"),
    "model_id": _post("/api/v1/models", {"value": "victim-model", "provider": "secret-provider"}),
    "key_id": _post("/api/v1/api-keys", {"name": "victim-key"}),
    "organization_id": lambda client, ids: "default",
    "environment_id": _post("/api/v1/environments", {"name": "victim-env", "description": "secret-env-data"}),
    "queue_id": _post("/api/v1/environments/{environment_id}/worker-queues", {"name": "victim-queue"}),
    "execution_id": _post("/api/v1/agents/{agent_id}/execute",
                          {"prompt": "secret prompt", "worker_queue_id": "{queue_id}"}),
    "project_id": _post("/api/v1/projects", {"name": "victim-project", "key": "VICTIM", "description": "secret"}),
    "template_id": _post("/api/v1/templates", {"name": "victim-template", "kind": "agent", "description": "secret",
                                               "body": {"name": "secret-agent-{{x}}"}, "parameters": [{"name": "x"}]}),
    "skill_id": lambda client, ids: _attached_skill(client, ids),
    "secret_id": _post("/api/v1/secrets", {"name": "victim_secret", "value": "secret-value", "description": "secret"}),
    "contexts": _contexts({"instructions": "secret-context", "variables": {"TOKEN": "secret"}}),
    "name": lambda client, ids: _runner(client, "victim-runner"),
    "integration_id": _post("/api/v1/integrations", {"name": "victim-integration", "kind": "github",
                                                     "configuration": {"token": "secret-token"}}),
    "custom_integration_id": _post("/api/v1/custom-integrations", {"name": "victim-custom", "description": "secret",
                                                                   "env_vars": {"TOKEN": "secret"}}),
    "job_id": lambda client, ids: _post("/api/v1/jobs", {
        "name": "victim-job", "trigger": {"type": "webhook"}, "prompt": "secret prompt",
        "target": {"agent_id": ids["agent_id"]}, "worker_queue_id": "{queue_id}"})(client, ids),
    "workflow_id": lambda client, ids: _workflow(client, ids),
    "run_id": _post("/api/v1/workflows/{workflow_id}/runs", {"worker_queue_id": "{queue_id}", "input": {}}),
    "temporal_workflow_id": lambda client, ids: ids["run_id"],
    "plan_id": _post("/api/v1/task-plans", {"task": "secret task", "worker_queue_id": "{queue_id}"}),
    "path": lambda client, ids: _stored_file(client, "victim/report.json"),
    "policy_id": _post("/api/v1/policies", {"name": "victim-policy", "description": "secret policy",
                                            "actions": ["execute"],
                                            "rego": 'package secret\ndeny contains "secret" if input.x\n'}),
    "event_id": lambda client, ids: client.get("/api/v1/audit-events", params={"limit": 1}).json()["items"][0]["id"],
    "node_id": _post("/api/v1/context-graph/nodes", {"labels": ["Victim"], "properties": {"note": "secret-node"}}),
    "edge_id": lambda client, ids: _post("/api/v1/context-graph/edges", {
        "type": "victim", "source_id": ids["node_id"], "target_id": _post("/api/v1/context-graph/nodes", {})(
            client, ids), "properties": {"note": "secret-edge"}})(client, ids),
    "webhook_id": _post("/api/v1/webhooks", {"url": "https://93.184.215.14/victim", "events": ["*"],
                                             "description": "secret"}),  # (test apps deliver nothing)
    "delivery_id": lambda client, ids: client.post(f"/api/v1/webhooks/{ids['webhook_id']}/test").json()["id"],
}  # fmt: skip
GLOBAL = frozenset({"kind"})
"""Path parameters naming what every organization shares (the built-in integration templates): not walked."""

BODIES: dict[str, dict[str, Any]] = {
    "/api/v1/agents/{agent_id}": {"name": "hijacked"},
    "/api/v1/teams/{team_id}": {"name": "hijacked"},
    "/api/v1/models/{model_id}": {"enabled": False},
    "/api/v1/organizations/{organization_id}/settings": {"tier": "enterprise", "rate_limit_per_minute": 1},
    "/api/v1/environments/{environment_id}": {"name": "hijacked"},
    "/api/v1/environments/{environment_id}/worker-queues": {"name": "hijack-queue"},
    "/api/v1/worker-queues/{queue_id}": {"name": "hijacked"},
    "/api/v1/worker-queues/{queue_id}/lease": {"worker_id": "thief", "wait_seconds": 0},
    "/api/v1/agents/{agent_id}/execute": {"prompt": "steal", "worker_queue_id": "{queue_id}"},
    "/api/v1/teams/{team_id}/execute": {"prompt": "steal", "worker_queue_id": "{queue_id}"},
    "/api/v1/executions/{execution_id}/events": {"worker_id": "thief", "attempt": 1, "events": [{"type": "log"}]},
    "/api/v1/executions/{execution_id}/complete": {"worker_id": "thief", "attempt": 1, "status": "completed"},
    "/api/v1/projects/{project_id}": {"name": "hijacked"},
    "/api/v1/templates/{template_id}": {"name": "hijacked"},
    "/api/v1/templates/{template_id}/instantiate": {"parameters": {"x": "stolen"}},
    "/api/v1/skills/{skill_id}": {"name": "hijacked"},
    "/api/v1/secrets/{secret_id}": {"value": "hijacked"},
    "/api/v1/integrations/{integration_id}": {"name": "hijacked"},
    "/api/v1/custom-integrations/{custom_integration_id}": {"name": "hijacked"},
    "/api/v1/jobs/{job_id}": {"enabled": False},
    "/api/v1/jobs/{job_id}/trigger": {"payload": {"x": "stolen"}},
    "/api/v1/workflows/{workflow_id}": {"name": "hijacked"},
    "/api/v1/workflows/{workflow_id}/runs": {"worker_queue_id": "{queue_id}"},
    "/api/v1/policies/{policy_id}": {"enabled": False},
    "/api/v1/context-graph/nodes/{node_id}": {"labels": ["hijacked"]},
    "/api/v1/webhooks/{webhook_id}": {"url": "https://93.184.215.14/stolen"},
    **{f"/api/v1/{kind}/{{{name}}}/context": {"instructions": "hijacked"}
       for kind, name in (("agents", "agent_id"), ("teams", "team_id"), ("environments", "environment_id"),
                          ("projects", "project_id"))},
}  # fmt: skip

SNAPSHOTS = [
    "/api/v1/agents",
    "/api/v1/teams",
    "/api/v1/workers",
    "/api/v1/models",
    "/api/v1/api-keys",
    "/api/v1/organizations/default/settings",
    "/api/v1/environments",
    "/api/v1/worker-queues",
    "/api/v1/executions",
    "/api/v1/projects",
    "/api/v1/templates",
    "/api/v1/skills",
    "/api/v1/secrets",
    "/api/v1/runners",
    "/api/v1/integrations",
    "/api/v1/custom-integrations",
    "/api/v1/jobs",
    "/api/v1/workflows",
    "/api/v1/workflow-runs",
    "/api/v1/task-plans",
    "/api/v1/temporal-workflows",
    "/api/v1/storage/files",
    "/api/v1/policies",
    "/api/v1/audit-events",
    "/api/v1/context-graph/nodes",
    "/api/v1/context-graph/edges",
    "/api/v1/webhooks",
]
# Public routes: no bearer, no organization (a job's webhook is authenticated by its signature: tests/http/
# test_job_webhooks.py), so they are not walked here.
PUBLIC_PREFIXES = ("/api/v1/webhooks/jobs/",)
# A file's path names a file in the caller's own organization: another organization's PUT there makes its own file
# (tests/http/test_storage_quota.py checks that ours is unchanged), so it is not walked.
OWN_NAMESPACE = frozenset({("PUT", "/api/v1/storage/files/{path}")})


def routes_with_ids(client: TestClient[Any]) -> list[tuple[str, str]]:
    found = []
    for route in client.app.routes:
        if not isinstance(route, HTTPRoute) or "{" not in route.path or not route.path.startswith("/api/v1/"):
            continue
        if route.path.startswith(PUBLIC_PREFIXES):
            continue
        template = re.sub(r"{(\w+):\w+}", r"{\1}", route.path)
        if set(re.findall(r"{(\w+)}", template)) <= GLOBAL:
            continue
        found.extend(
            (method, template)
            for method in sorted(route.methods)
            if method not in ("OPTIONS", "HEAD") and (method, template) not in OWN_NAMESPACE
        )
    return found


def snapshot(client: TestClient[Any], ids: dict[str, str]) -> dict[str, Any]:
    state = {path: client.get(path).json() for path in SNAPSHOTS}
    for method, template in routes_with_ids(client):
        if method == "GET" and not template.endswith("/stream"):
            path = template.format(**ids)
            state[path] = client.get(path).json()
    return state


def test_every_route_with_an_id_is_404_for_another_organization(client: TestClient[Any]) -> None:
    routes = routes_with_ids(client)
    names = {name.split(":")[0] for _, path in routes for name in re.findall(r"{([^}]+)}", path)}
    assert names <= set(FACTORIES), f"no isolation coverage for path parameters {names - set(FACTORIES)}"
    assert len(routes) >= 15
    ids: dict[str, str] = {}
    for name, factory in FACTORIES.items():
        ids[name] = factory(client, ids)
    client.post(f"/api/v1/teams/{ids['team_id']}/agents/{ids['agent_id']}")
    before = snapshot(client, ids)
    intruders = [bearer(make_jwt("intruder-org", roles=[role])) for role in ("admin", "member", "viewer")]
    for headers in intruders:
        for method, template in routes:
            path = template.format(**{name: ids[name] for name in names})
            body = BODIES.get(template)
            if body is not None:
                body = {k: v.format(**ids) if isinstance(v, str) else v for k, v in body.items()}
            response = client.request(method, path, json=body, headers=headers)
            assert response.status_code == 404, (method, template, response.status_code, response.text)
            assert response.json()["error"]["code"] == "NOT_FOUND"
            noun = (f"secret '{ids['secret_id']}' not found", '"resource":"secret"')  # a secret's own 404 names it
            assert "secret" not in response.text.replace(noun[0], "").replace(noun[1], "")
    assert snapshot(client, ids) == before
