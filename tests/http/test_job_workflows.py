"""Jobs that target a workflow, over HTTP on every store: a firing starts a workflow run (the payload as its input,
the job's queue as its queue) recorded in the job's run; `overlap: skip` looks at that run's status."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_executions import setup_queue
from tests.http.test_jobs import create_job, job_body, runs
from tests.http.test_workflows import create_workflow, step, work
from tests.support import wait_until


def workflow_job(client: TestClient[Any], name: str = "flow-job", **fields: Any) -> tuple[dict[str, Any], str]:
    agent = create_agent(client, f"agent-{name}")
    _, queue_id = setup_queue(client, f"queue-{name}")
    workflow = create_workflow(client, [step("only", agent["id"], "write about {{input.topic}}")], f"wf-{name}")
    job = create_job(client, name, target={"workflow_id": workflow["id"]}, worker_queue_id=queue_id, **fields)
    return job, queue_id


def test_a_manual_trigger_starts_a_workflow_run_with_the_payload_as_input(client: TestClient[Any]) -> None:
    job, queue_id = workflow_job(client)
    assert set(job["target"]) == {"workflow_id"}
    response = client.post(f"/api/v1/jobs/{job['id']}/trigger", json={"payload": {"topic": "tides"}})
    assert response.status_code == 201, response.text
    run = response.json()
    assert (run["status"], run["execution_id"], run["skipped_reason"]) == ("fired", None, None)
    workflow_run = client.get(f"/api/v1/workflow-runs/{run['workflow_run_id']}").json()
    assert workflow_run["workflow_id"] == job["target"]["workflow_id"]
    assert (workflow_run["status"], workflow_run["input"]) == ("running", {"topic": "tides"})
    assert workflow_run["worker_queue_id"] == queue_id
    done = work(client, queue_id)
    assert done is not None
    assert done["prompt"] == "write about tides"
    wait_until(lambda: client.get(f"/api/v1/workflow-runs/{run['workflow_run_id']}").json()["status"] == "succeeded")
    assert runs(client, job["id"])[0]["workflow_run_id"] == run["workflow_run_id"]


def test_a_workflow_target_must_be_a_workflow_of_the_organization_with_a_queue(
    client: TestClient[Any], other_org: dict[str, str]
) -> None:
    job, queue_id = workflow_job(client)
    workflow_id = job["target"]["workflow_id"]
    base = job_body(client, "again", target={"workflow_id": workflow_id})
    assert_validation(client.post("/api/v1/jobs", json={**base, "worker_queue_id": None}), ["body", "worker_queue_id"])
    theirs = client.post("/api/v1/jobs", json={**base, "name": "theirs"}, headers=other_org)
    assert_validation(theirs, ["body", "target", "workflow_id"])
    assert_validation(
        client.patch(f"/api/v1/jobs/{job['id']}", json={"target": {"workflow_id": queue_id}}),
        ["body", "target", "workflow_id"],
    )


def test_overlap_skip_waits_for_the_last_workflow_run(client: TestClient[Any], clock: ManualClock) -> None:
    job, _ = workflow_job(client, overlap="skip")
    first = client.post(f"/api/v1/jobs/{job['id']}/trigger", json={"payload": {"topic": "a"}}).json()
    clock.advance(1)
    second = client.post(f"/api/v1/jobs/{job['id']}/trigger", json={"payload": {"topic": "b"}}).json()
    assert (second["status"], second["workflow_run_id"]) == ("skipped", None)
    assert second["skipped_reason"].startswith("overlap")
    cancelled = client.post(f"/api/v1/workflow-runs/{first['workflow_run_id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    clock.advance(1)
    third = client.post(f"/api/v1/jobs/{job['id']}/trigger", json={"payload": {"topic": "c"}}).json()
    assert third["status"] == "fired"
    assert third["workflow_run_id"] not in (None, first["workflow_run_id"])


def test_a_firing_that_cannot_start_the_run_is_a_failed_run(client: TestClient[Any], clock: ManualClock) -> None:
    job, _ = workflow_job(client)
    missing = client.post(f"/api/v1/jobs/{job['id']}/trigger", json={"payload": {}}).json()
    assert (missing["status"], missing["workflow_run_id"]) == ("failed", None)
    assert "input.topic" in missing["skipped_reason"]
    assert client.get("/api/v1/workflow-runs").json()["total"] == 0
    forced = client.delete(f"/api/v1/workflows/{job['target']['workflow_id']}", params={"force": "true"})
    assert forced.status_code == 204
    clock.advance(1)
    gone = client.post(f"/api/v1/jobs/{job['id']}/trigger", json={"payload": {"topic": "x"}}).json()
    assert gone["status"] == "failed"
    assert "not found" in gone["skipped_reason"]


def test_the_scheduler_starts_a_workflow_run_for_a_due_cron_job(client: TestClient[Any], clock: ManualClock) -> None:
    agent = create_agent(client, "cron-agent")
    _, queue_id = setup_queue(client, "cron-queue")
    workflow = create_workflow(client, [step("only", agent["id"], "tick")], "cron-flow")
    job = create_job(
        client, "cron", target={"workflow_id": workflow["id"]}, worker_queue_id=queue_id,
        trigger={"type": "cron", "cron": "*/5 * * * *"},
    )  # fmt: skip
    clock.advance(5 * 60)
    wait_until(lambda: len(runs(client, job["id"])) == 1)
    run = runs(client, job["id"])[0]
    assert (run["trigger"], run["status"]) == ("cron", "fired")
    assert client.get(f"/api/v1/workflow-runs/{run['workflow_run_id']}").json()["status"] == "running"
