"""A policy's refusal is in the audit log (who, what, from where, which request), whichever path served it: the
fast lane (execute) or Litestar's (a secret's write)."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.http.test_agents import create_agent
from tests.http.test_executions import setup_queue
from tests.http.test_policies import FORBIDDEN_WORD, create_policy

NO_SECRETS = """package nosecrets
import rego.v1

deny contains "secrets are frozen" if input.action == "secret.write"
"""


def denials(client: TestClient[Any]) -> list[dict[str, Any]]:
    response = client.get("/api/v1/audit-events", params={"outcome": "denied"})
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_refused_actions_are_audited_with_who_what_and_the_request(client: TestClient[Any]) -> None:
    _, queue = setup_queue(client)
    agent = create_agent(client)["id"]
    create_policy(client, "prompts", FORBIDDEN_WORD, ["execute"])
    create_policy(client, "frozen", NO_SECRETS, ["secret.write"])
    assert denials(client) == []

    refused = client.post(
        f"/api/v1/agents/{agent}/execute",
        json={"prompt": "the PASSWORD please", "worker_queue_id": queue},
        headers={"X-Request-ID": "req-execute-1", "User-Agent": "ops-cli/1.0"},
    )
    assert refused.status_code == 403, refused.text
    secret = client.post(
        "/api/v1/secrets", json={"name": "db", "value": "hunter2"}, headers={"X-Request-ID": "req-secret-1"}
    )
    assert secret.status_code == 403, secret.text
    allowed = client.post(f"/api/v1/agents/{agent}/execute", json={"prompt": "hello", "worker_queue_id": queue})
    assert allowed.status_code == 201, allowed.text

    events = denials(client)
    assert [(e["action"], e["resource_type"], e["request_id"]) for e in events] == [
        ("secret.write", "secret", "req-secret-1"),
        ("agent.execute", "agent", "req-execute-1"),
    ]
    execute_event = events[1]
    assert execute_event["resource_id"] == agent
    assert execute_event["details"]["messages"] == ["the prompt may not mention password"]
    assert execute_event["client"]["user_agent"] == "ops-cli/1.0"
    assert execute_event["actor"]["subject"]
    assert "hunter2" not in str(events), "a refused secret's value is never recorded"
