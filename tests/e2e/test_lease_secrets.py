"""End to end: a real server and a real reference worker; a secret reaches the worker's model call through the
lease's `resolved`, and no answer to a client (GET, events, stream, lists) nor any log line holds it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Server, start_worker
from tests.e2e.test_executions import finished, make_agent, make_queue, run, unique

pytestmark = pytest.mark.e2e

SECRET = "sk-tenant-e2e-0123456789-must-not-leak"


def test_a_secret_reaches_the_model_call_and_no_client(
    tmp_path: Path, shared_server: Server, shared_fake_llm: str
) -> None:
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        created = client.post("/api/v1/secrets", json={"name": "TENANT_LLM_KEY", "value": SECRET})
        assert created.status_code == 201, created.text
        secret_id = created.json()["id"]
        environment_name = unique("e2e")
        queue_id = make_queue(client, environment_name)
        environment = {"env_vars": {"OPENAI_API_KEY": "{{secret:TENANT_LLM_KEY}}"}}
        agent_id = make_agent(client, execution_environment=environment)
        context = {"instructions": "Answer in French.", "knowledge": [{"name": "kb", "text": "Paris is the capital."}]}
        assert client.put(f"/api/v1/agents/{agent_id}/context", json=context).status_code == 200
        execution = run(client, agent_id, queue_id, "hello")
        issued = client.post("/api/v1/api-keys", json={"name": "worker", "role": "worker", "queue_ids": [queue_id]})
        assert issued.status_code == 201, issued.text
        worker_key = issued.json()["key"]  # the worker's own key: the lease takes no person's
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "w-secret", "--api-key", worker_key,
                              "--environment", environment_name)  # fmt: skip
        try:
            result = finished(client, execution["id"])
        finally:
            assert worker.stop() == 0, worker.log.read_text()
        assert result["status"] == "completed", result
        # The context joined the system prompt (the fake model echoes it): be brief, then the context.
        assert "be brief\n\nAnswer in French.\n\nkb:\nParis is the capital. | hello" in result["response"]
        seen = [r for r in httpx.get(f"{fake_llm}/_requests").json() if "Paris is the capital." in str(r["body"])]
        assert [r["authorization"] for r in seen] == [f"Bearer {SECRET}"]  # the worker side got it
        assert all(SECRET not in str(r["body"]) for r in seen), "only as the call's key, not in the prompt"
        path = f"/api/v1/executions/{execution['id']}"
        answers = [
            client.get(path),
            client.get(f"{path}/events", params={"limit": 200}),
            client.get(f"{path}/stream"),
            client.get(f"{path}/context"),
            client.get("/api/v1/executions"),
            client.get(f"/api/v1/agents/{agent_id}"),
            client.get(f"/api/v1/secrets/{secret_id}"),
        ]
        assert [answer.status_code for answer in answers] == [200] * len(answers)
        assert "event: done" in answers[2].text
        assert all(SECRET not in answer.text for answer in answers)
        accesses = client.get(f"/api/v1/secrets/{secret_id}/accesses").json()["items"]
        assert [(a["worker_id"], a["execution_id"]) for a in accesses] == [("w-secret", execution["id"])]
    assert SECRET not in server.log.read_text()
    assert SECRET not in worker.log.read_text()
    assert worker_key not in server.log.read_text()
