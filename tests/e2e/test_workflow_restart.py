"""A workflow run survives its server's crash: `controlplane serve` on Postgres is killed (SIGKILL) while the
reference worker runs the run's second step; restarted on the same database, the run finishes `succeeded` with
every step run once (one attempt each, one model call each).

The second step's model thinks for 2 seconds before it answers (the fake's `think:2`): the worker holds the step
through the crash, and sends its events and completion once the server is back. The worker reaches the server
through a loopback proxy that holds new connections while the server is down (as a load balancer would), so that
the worker's growing back-off between tries does not add to the test's time."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.databases import truncate
from tests.e2e.conftest import start_server, start_worker, stop_server
from tests.e2e.test_executions import make_agent, make_queue
from tests.proxy import TcpProxy
from tests.support import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

# Heartbeats every second; leases keep their default minute: the dead server's seconds must not expire the lease
# of the step the worker is running (that would be a second attempt, not a crash survived).
ENV = {"CONTROLPLANE_WORKER_HEARTBEAT_INTERVAL_SECONDS": "1"}


def test_a_run_finishes_once_after_its_server_is_killed_mid_run(
    tmp_path: Path, postgres_url: str, fake_llm: str
) -> None:
    asyncio.run(truncate(postgres_url))
    server = start_server(tmp_path, postgres_url, **ENV)
    port = int(server.url.rsplit(":", 1)[1])
    proxy = TcpProxy("127.0.0.1", port, patience=60)
    worker = None
    try:
        proxy.start()
        with server.client() as client:
            queue_id = make_queue(client)
            agent_id = make_agent(client)
            steps = [
                {"id": "first", "agent_id": agent_id, "prompt": "first {{input.topic}}"},
                {"id": "middle", "agent_id": agent_id, "prompt": "think:2", "depends_on": ["first"]},
                {"id": "last", "agent_id": agent_id, "prompt": "last <{{steps.middle.output}}>",
                 "depends_on": ["middle"]},
            ]  # fmt: skip
            workflow = client.post("/api/v1/workflows", json={"name": "chain", "steps": steps})
            assert workflow.status_code == 201, workflow.text
            started = client.post(f"/api/v1/workflows/{workflow.json()['id']}/runs",
                                  json={"worker_queue_id": queue_id, "input": {"topic": "crash"}})  # fmt: skip
            assert started.status_code == 201, started.text
            run_id = started.json()["id"]
            worker = start_worker(tmp_path, f"http://127.0.0.1:{proxy.port}", queue_id, fake_llm, "w1")

            def middle_is_running() -> bool:  # the first step completed; the worker holds the second
                run = client.get(f"/api/v1/workflow-runs/{run_id}").json()
                middle = run["steps"][1]
                if run["steps"][0]["status"] != "succeeded" or middle["execution_id"] is None:
                    return False
                return bool(client.get(f"/api/v1/executions/{middle['execution_id']}").json()["status"] == "running")

            wait_until(middle_is_running)
        server.process.send_signal(signal.SIGKILL)
        assert server.process.wait(timeout=10) == -signal.SIGKILL
        server = start_server(tmp_path, postgres_url, port=port, **ENV)  # the proxy's target: the same port
        with server.client() as client:

            def finished() -> bool:
                return client.get(f"/api/v1/workflow-runs/{run_id}").json()["status"] not in ("pending", "running")

            wait_until(finished)
            run = client.get(f"/api/v1/workflow-runs/{run_id}").json()
            assert run["status"] == "succeeded", run
            assert [(s["status"], s["attempt"]) for s in run["steps"]] == [("succeeded", 1)] * 3
            executions = [client.get(f"/api/v1/executions/{s['execution_id']}").json() for s in run["steps"]]
            assert [(e["status"], e["attempt"], e["worker_id"]) for e in executions] == [("completed", 1, "w1")] * 3
            outputs = [s["output"] for s in run["steps"]]
            assert outputs[0] == "[fake-model] be brief | first crash"
            assert outputs[1] == "[fake-model] be brief | think:2"
            assert outputs[2] == f"[fake-model] be brief | last <{outputs[1]}>"
        prompts = [p for request in httpx.get(f"{fake_llm}/_requests").json() if (p := _prompt(request))]
        assert sorted(prompts) == sorted(["first crash", "think:2", f"last <{outputs[1]}>"]), "one model call a step"
    finally:
        if worker is not None:
            assert worker.stop() == 0, worker.log.read_text()
        stop_server(server)
        proxy.close()


def _prompt(request: dict[str, Any]) -> str:
    messages = request["body"]["messages"]
    return str(next((m["content"] for m in reversed(messages) if m["role"] == "user"), ""))  # "": a readiness probe
