"""End to end: the reference worker plans a task with the fake OpenAI-compatible server (its plan in a code fence,
taken out by the worker), the real server checks it, and the plan runs to completion as a workflow run; a plan
whose steps form a cycle fails saying so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, start_worker
from tests.e2e.test_executions import make_agent, make_queue
from tests.e2e.test_workflows import read_stream
from tests.support import wait_until

pytestmark = pytest.mark.e2e


def planned(client: httpx.Client, plan_id: str) -> dict[str, Any]:
    """The plan once its planning ended (polled with a deadline)."""
    state: dict[str, Any] = {}

    def ended() -> bool:
        state.update(client.get(f"/api/v1/task-plans/{plan_id}").json())
        return state["status"] != "planning"

    wait_until(ended)
    return state


def test_a_plan_made_by_the_reference_worker_runs_to_completion(tmp_path: Path, server: Server, fake_llm: str) -> None:
    with server.client() as client:
        queue_id = make_queue(client)
        agent_id = make_agent(client)
        task = "a haiku about rivers plan:fenced"
        created = client.post("/api/v1/task-plans", json={"task": task, "worker_queue_id": queue_id})
        assert created.status_code == 201, created.text
        cyclic = client.post("/api/v1/task-plans", json={"task": "plan:cycle", "worker_queue_id": queue_id})
        assert cyclic.status_code == 201, cyclic.text
        worker = start_worker(tmp_path, server, queue_id, fake_llm, "planner")
        try:
            plan = planned(client, created.json()["id"])
            assert plan["status"] == "ready", plan
            assert plan["summary"] == f"research, then write: {task}"
            assert [(s["id"], s["agent_id"], s["depends_on"]) for s in plan["steps"]] == [
                ("research", agent_id, []),
                ("write", agent_id, ["research"]),
            ]
            failed = planned(client, cyclic.json()["id"])
            assert failed["status"] == "failed"
            assert "the steps' dependencies form a cycle: research -> write -> research" in failed["error"]
            started = client.post(f"/api/v1/task-plans/{plan['id']}/run")
            assert started.status_code == 201, started.text
            events = read_stream(client, started.json()["id"])  # live: it ends when the run does
        finally:
            assert worker.stop() == 0, worker.log.read_text()
        assert events[-1][2]["data"]["status"] == "succeeded"
        run = client.get(f"/api/v1/workflow-runs/{started.json()['id']}").json()
        outputs = {step["id"]: step["output"] for step in run["steps"]}
        research = f"[fake-model] be brief | Research {task}"
        assert outputs == {"research": research, "write": f"[fake-model] be brief | Write up {research}"}
        planning = client.get(f"/api/v1/executions/{plan['execution_id']}").json()
        assert (planning["target_type"], planning["status"], planning["worker_id"]) == ("plan", "completed", "planner")
        assert planning["response"].startswith('{"summary"')  # the plan, out of its code fence
        background = client.get(f"/api/v1/temporal-workflows/{plan['id']}").json()
        assert (background["type"], background["status"]) == ("task_plan", "succeeded")
        assert background["links"]["workflow_run"] == f"/api/v1/workflow-runs/{run['id']}"
