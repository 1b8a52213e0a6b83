"""End to end: a three-step diamond workflow run by the reference worker against the fake OpenAI-compatible
server, followed over its SSE stream on the real server (and resumed with Last-Event-ID)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, start_worker
from tests.e2e.test_executions import make_agent, make_queue, unique

pytestmark = pytest.mark.e2e


def read_stream(client: httpx.Client, run_id: str, after: int | None = None) -> list[tuple[int, str, dict[str, Any]]]:
    """The run's events (id, event, data) from its stream, which ends after the run's end."""
    headers = {} if after is None else {"Last-Event-ID": str(after)}
    events = []
    with client.stream("GET", f"/api/v1/workflow-runs/{run_id}/stream", headers=headers, timeout=60) as response:
        assert response.status_code == 200
        fields: dict[str, str] = {}
        for line in response.iter_lines():
            if not line:
                if "id" in fields:
                    events.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value
    return events


def test_a_diamond_runs_with_the_reference_worker(tmp_path: Path, shared_server: Server, shared_fake_llm: str) -> None:
    server, fake_llm = shared_server, shared_fake_llm
    with server.client() as client:
        queue_id = make_queue(client)
        agent_id = make_agent(client)
        steps = [
            {"id": "plan", "agent_id": agent_id, "prompt": "topic {{input.topic}}"},
            {"id": "left", "agent_id": agent_id, "prompt": "L<{{steps.plan.output}}>", "depends_on": ["plan"]},
            {"id": "right", "agent_id": agent_id, "prompt": "R<{{steps.plan.output}}>", "depends_on": ["plan"]},
            {"id": "join", "agent_id": agent_id, "prompt": "J<{{steps.left.output}}|{{steps.right.output}}>",
             "depends_on": ["left", "right"]},
        ]  # fmt: skip
        workflow = client.post("/api/v1/workflows", json={"name": unique("diamond"), "steps": steps})
        assert workflow.status_code == 201, workflow.text
        started = client.post(f"/api/v1/workflows/{workflow.json()['id']}/runs",
                              json={"worker_queue_id": queue_id, "input": {"topic": "cats"}})  # fmt: skip
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "w-diamond")
        try:
            events = read_stream(client, run_id)  # live: it ends when the run does
        finally:
            assert worker.stop() == 0, worker.log.read_text()
        assert [seq for seq, _, _ in events] == list(range(1, len(events) + 1))
        assert (events[0][1], events[-1][1]) == ("run", "run")
        assert events[-1][2]["data"]["status"] == "succeeded"
        started_order = [data["data"]["step_id"] for _, kind, data in events
                         if kind == "step" and data["data"]["status"] == "running"]  # fmt: skip
        assert started_order[0] == "plan"
        assert started_order[-1] == "join"
        run = client.get(f"/api/v1/workflow-runs/{run_id}").json()
        assert run["status"] == "succeeded"
        outputs = {step["id"]: step["output"] for step in run["steps"]}
        plan = "[fake-model] be brief | topic cats"
        assert outputs["plan"] == plan
        assert outputs["left"] == f"[fake-model] be brief | L<{plan}>"
        assert outputs["join"] == f"[fake-model] be brief | J<{outputs['left']}|{outputs['right']}>"
        join = client.get(f"/api/v1/executions/{run['steps'][3]['execution_id']}").json()
        assert (join["status"], join["worker_id"]) == ("completed", "w-diamond")
        resumed = read_stream(client, run_id, after=len(events) - 2)
        assert resumed == events[-2:]
