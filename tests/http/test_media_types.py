"""A body that says it is not JSON is 415 on every route that reads a JSON body (the fast lane's included); no
Content-Type, `application/json` with parameters and `application/*+json` are read as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, setup_queue
from tests.http.test_jobs import create_job
from tests.http.test_policies import ADMINS_ONLY, create_policy
from tests.http.test_projects import create_project
from tests.http.test_secrets import create_secret
from tests.http.test_teams import create_team
from tests.http.test_templates import create_template
from tests.http.test_workers_models import create_model
from tests.http.test_workflows import create_workflow, step
from tests.support import BEFORE_THE_STORE, DEFAULT_ORG, bearer, make_jwt

VIEWER = bearer(make_jwt(DEFAULT_ORG, sub="viewer", roles=["viewer"]))
FOREIGN = [
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "text/json",
    "application/jsonx",
    "application/json-seq",
    "json",
]
JSON_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON;charset=UTF-8",
    "application/merge-patch+json",
    "application/vnd.controlplane+json; charset=utf-8",
]
HEARTBEAT = {"worker_id": "w-1", "environment_name": "prod"}


def send(client: TestClient[Any], method: str, path: str, body: Any, content_type: str | None, **more: str) -> Any:
    headers = {**more, **({"content-type": content_type} if content_type is not None else {})}
    return client.request(method, path, content=json.dumps(body).encode(), headers=headers)


def assert_unsupported(response: Any, content_type: str) -> None:
    assert response.status_code == 415, response.text
    assert response.json() == {
        "error": {
            "code": "UNSUPPORTED_MEDIA_TYPE",
            "message": "the request body must be JSON: Content-Type application/json (or application/*+json)",
            "details": {"content_type": content_type},
        }
    }


def test_every_route_that_reads_a_json_body_refuses_another_media_type(client: TestClient[Any]) -> None:
    """Every operation the document gives a JSON request body, fast lane routes included, with real objects in its
    path: 415 before anything is read or looked up, and nothing changes. (A file's upload takes any media type.)"""
    agent = create_agent(client)["id"]
    team = create_team(client)["id"]
    model = create_model(client)["id"]
    environment, queue = setup_queue(client)
    execution = execute(client, agent, queue)["id"]
    skill = client.post("/api/v1/skills", json={"name": "s", "type": "shell"}).json()["id"]
    ids = {"agent_id": agent, "team_id": team, "model_id": model, "environment_id": environment, "queue_id": queue,
           "execution_id": execution, "organization_id": DEFAULT_ORG, "project_id": create_project(client)["id"],
           "template_id": create_template(client)["id"], "skill_id": skill,
           "secret_id": create_secret(client)["id"],
           "integration_id": client.post("/api/v1/integrations", json={
               "name": "i", "kind": "http", "configuration": {"base_url": "https://a.example"}}).json()["id"],
           "custom_integration_id": client.post("/api/v1/custom-integrations", json={"name": "c"}).json()["id"],
           }  # fmt: skip
    ids["workflow_id"] = create_workflow(client, [step("s", agent)])["id"]
    ids["job_id"] = create_job(client, "media", target={"agent_id": agent}, worker_queue_id=queue)["id"]
    ids["policy_id"] = create_policy(client, "media", ADMINS_ONLY, ["job.create"])["id"]
    ids["node_id"] = client.post("/api/v1/context-graph/nodes", json={}).json()["id"]
    ids["webhook_id"] = client.post("/api/v1/webhooks", json={"url": "https://93.184.215.14/", "events": ["*"]}).json()[
        "id"
    ]
    document = client.get("/api/openapi.json").json()
    with_body = [
        (method.upper(), path.format(**ids))
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if "application/json" in operation.get("requestBody", {}).get("content", {})
    ]
    # 18, projects' 2, templates' 3, skills' 5 (3 attachments), secrets' 2, contexts' 4, integrations' 2, custom 2,
    # jobs' 3, workflows' 3, task plans' 1, policies' 3, context graph's 3, webhooks' 2
    assert len(with_body) == 53, with_body
    kinds = ("agents", "teams", "workers", "executions", "projects", "templates", "skills", "secrets", "integrations",
             "custom-integrations", "jobs", "workflows", "workflow-runs", "task-plans", "policies",
             "context-graph/nodes", "context-graph/edges", "webhooks")  # fmt: skip
    before = {kind: client.get(f"/api/v1/{kind}").json() for kind in kinds}
    for method, path in with_body:
        for content_type in FOREIGN:
            assert_unsupported(send(client, method, path, HEARTBEAT, content_type), content_type)
    after = {kind: client.get(f"/api/v1/{kind}").json() for kind in kinds}
    assert after == before


@pytest.mark.parametrize("content_type", [None, "", *JSON_TYPES])
@BEFORE_THE_STORE
def test_json_and_no_content_type_are_read_as_json(client: TestClient[Any], content_type: str | None) -> None:
    created = send(client, "POST", "/api/v1/agents", {"name": "typed"}, content_type)
    assert created.status_code == 201, created.text
    agent = created.json()["id"]
    patched = send(client, "PATCH", f"/api/v1/agents/{agent}", {"description": "d"}, content_type)
    assert (patched.status_code, patched.json()["description"]) == (200, "d"), patched.text
    beat = send(client, "POST", "/api/v1/workers/heartbeat", HEARTBEAT, content_type)  # a fast lane route
    assert (beat.status_code, beat.json()["worker_id"]) == (200, "w-1"), beat.text


def test_a_role_that_falls_short_is_told_first(client: TestClient[Any]) -> None:
    agent = create_agent(client)["id"]
    assert send(client, "PATCH", f"/api/v1/agents/{agent}", {}, "text/plain", **VIEWER).status_code == 403


def test_a_refused_body_does_not_use_up_its_idempotency_key(client: TestClient[Any]) -> None:
    refused = send(client, "POST", "/api/v1/agents", {"name": "once"}, "text/plain", **{"Idempotency-Key": "k-1"})
    assert_unsupported(refused, "text/plain")
    accepted = send(
        client, "POST", "/api/v1/agents", {"name": "once"}, "application/json", **{"Idempotency-Key": "k-1"}
    )
    assert accepted.status_code == 201, accepted.text
    assert "idempotent-replayed" not in accepted.headers


def test_routes_that_read_a_body_document_415(client: TestClient[Any]) -> None:
    document = client.get("/api/openapi.json").json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            documented = operation.get("responses", {}).get("415")
            if "application/json" not in operation.get("requestBody", {}).get("content", {}):
                assert documented is None, (method, path)  # no body, or a raw one (a file: any media type)
                assert "requestBody" not in operation or "413" in operation["responses"], (method, path)
                continue
            assert documented is not None, (method, path)
            assert documented["content"]["application/json"]["schema"]["$ref"].endswith("ErrorResponse")
            assert "413" in operation["responses"], (method, path)  # the body limit's answer
