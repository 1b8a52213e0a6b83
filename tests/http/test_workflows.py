"""Workflows over HTTP, on every store: definitions and their rules, runs advancing step by step as a worker
completes their executions, retries, failures, cancels and the run's stream."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.testing import TestClient

from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_executions import lease, setup_queue
from tests.support import bearer, make_jwt


def step(step_id: str, agent_id: str, prompt: str = "do it", *depends_on: str, **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "agent_id": agent_id, "prompt": prompt, "depends_on": list(depends_on), **fields}


def create_workflow(client: TestClient[Any], steps: list[dict[str, Any]], name: str = "flow") -> dict[str, Any]:
    response = client.post("/api/v1/workflows", json={"name": name, "steps": steps})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def diamond(client: TestClient[Any]) -> tuple[dict[str, Any], str]:
    agent = create_agent(client)
    _, queue_id = setup_queue(client)
    steps = [
        step("plan", agent["id"], "plan {{input.topic}}"),
        step("left", agent["id"], "left of {{steps.plan.output}}", "plan"),
        step("right", agent["id"], "right of {{steps.plan.output}}", "plan"),
        step("join", agent["id"], "join {{steps.left.output}} + {{steps.right.output}}", "left", "right"),
    ]
    return create_workflow(client, steps), queue_id


def start(client: TestClient[Any], workflow_id: str, queue_id: str, **run_input: Any) -> dict[str, Any]:
    response = client.post(
        f"/api/v1/workflows/{workflow_id}/runs", json={"worker_queue_id": queue_id, "input": run_input}
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def work(
    client: TestClient[Any], queue_id: str, status: str = "completed", answer: str | None = None, worker: str = "w1"
) -> dict[str, Any] | None:
    """Lease the next execution and finish it (its response: `answer`, else its prompt upper-cased)."""
    leased = lease(client, queue_id, worker)
    if leased is None:
        return None
    execution = leased["execution"]
    body = {
        "worker_id": worker,
        "attempt": leased["attempt"],
        "status": status,
        "response": answer if answer is not None else execution["prompt"].upper(),
        "error": "boom" if status == "failed" else None,
    }
    done = client.post(f"/api/v1/executions/{execution['id']}/complete", json=body)
    assert done.status_code == 200, done.text
    return execution


def steps_of(client: TestClient[Any], run_id: str) -> dict[str, str]:
    run = client.get(f"/api/v1/workflow-runs/{run_id}").json()
    return {s["id"]: s["status"] for s in run["steps"]}


def test_create_returns_the_whole_workflow(client: TestClient[Any]) -> None:
    agent = create_agent(client)
    body = create_workflow(client, [step("a", agent["id"]), step("b", agent["id"], "after", "a", max_attempts=3)])
    assert set(body) == {"id", "organization_id", "name", "description", "steps", "created_at", "updated_at"}
    assert body["steps"][1] == {
        "id": "b",
        "agent_id": agent["id"],
        "team_id": None,
        "prompt": "after",
        "depends_on": ["a"],
        "worker_queue_id": None,
        "max_attempts": 3,
        "timeout_seconds": None,
    }
    assert client.get(f"/api/v1/workflows/{body['id']}").json() == body
    assert client.get("/api/v1/workflows").json()["total"] == 1


def test_definition_rules_are_422_naming_the_field(client: TestClient[Any]) -> None:
    agent_id = create_agent(client)["id"]
    cases = [
        ([step("a", agent_id), step("a", agent_id)], ["body", "steps", "1", "id"]),
        ([step("a", agent_id, "x", "nope")], ["body", "steps", "0", "depends_on", "0"]),
        ([step("a", agent_id, "x", "a")], ["body", "steps", "0", "depends_on", "0"]),
        ([step("a", str(uuid.uuid4()))], ["body", "steps", "0", "agent_id"]),
        ([{"id": "a", "prompt": "x"}], ["body", "steps", "0", "agent_id"]),
        ([step("a", agent_id, "{{steps.b.output}}"), step("b", agent_id)], ["body", "steps", "0", "prompt"]),
        ([step("a", agent_id, worker_queue_id=str(uuid.uuid4()))], ["body", "steps", "0", "worker_queue_id"]),
        ([], ["body", "steps"]),
    ]
    for steps, loc in cases:
        response = client.post("/api/v1/workflows", json={"name": "bad", "steps": steps})
        assert response.status_code == 422, (steps, response.text)
        detail = response.json()["detail"][0]
        assert [str(part) for part in detail["loc"]] == loc, (steps, detail)
    assert_validation(
        client.post("/api/v1/workflows", json={"name": "x", "steps": [step("a b", agent_id)]}),
        ["body", "steps", 0, "id"],
    )
    assert client.post("/api/v1/workflows", json={"name": "x", "steps": [], "extra": 1}).status_code == 422
    assert client.get("/api/v1/workflows").json()["total"] == 0


def test_a_cycle_is_422_naming_it(client: TestClient[Any]) -> None:
    agent_id = create_agent(client)["id"]
    steps = [
        step("a", agent_id, "x", "c"),
        step("b", agent_id, "x", "a"),
        step("c", agent_id, "x", "b"),
        step("d", agent_id),
    ]
    response = client.post("/api/v1/workflows", json={"name": "loop", "steps": steps})
    assert response.status_code == 422
    message = response.json()["detail"][0]["msg"]
    assert "cycle" in message
    assert any(path in message for path in ("a -> c -> b -> a", "b -> a -> c -> b", "c -> b -> a -> c")), message


def test_duplicate_name_patch_delete_and_roles(client: TestClient[Any]) -> None:
    agent_id = create_agent(client)["id"]
    first = create_workflow(client, [step("a", agent_id)])
    again = client.post("/api/v1/workflows", json={"name": "flow", "steps": [step("a", agent_id)]})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "CONFLICT"
    patched = client.patch(f"/api/v1/workflows/{first['id']}", json={"description": "d"}).json()
    assert (patched["description"], patched["name"], patched["steps"]) == ("d", "flow", first["steps"])
    bad = client.patch(f"/api/v1/workflows/{first['id']}", json={"steps": [step("a", agent_id, "x", "a")]})
    assert bad.status_code == 422
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(f"/api/v1/workflows/{first['id']}", headers=viewer).status_code == 200
    assert (
        client.post("/api/v1/workflows", json={"name": "v", "steps": [step("a", agent_id)]}, headers=viewer).status_code
        == 403
    )
    assert client.delete(f"/api/v1/workflows/{first['id']}", headers=viewer).status_code == 403
    assert client.delete(f"/api/v1/workflows/{first['id']}").status_code == 204
    assert client.get(f"/api/v1/workflows/{first['id']}").status_code == 404


def test_another_organization_sees_nothing(client: TestClient[Any], other_org: dict[str, str]) -> None:
    workflow, queue_id = diamond(client)
    run = start(client, workflow["id"], queue_id, topic="t")
    for path in (
        f"/api/v1/workflows/{workflow['id']}",
        f"/api/v1/workflow-runs/{run['id']}",
        f"/api/v1/workflow-runs/{run['id']}/stream",
    ):
        assert client.get(path, headers=other_org).status_code == 404
    assert client.post(f"/api/v1/workflow-runs/{run['id']}/cancel", headers=other_org).status_code == 404
    assert client.get("/api/v1/workflow-runs", headers=other_org).json()["total"] == 0


def test_a_diamond_runs_step_by_step_with_outputs_flowing(client: TestClient[Any]) -> None:
    workflow, queue_id = diamond(client)
    run = start(client, workflow["id"], queue_id, topic="cats")
    assert run["status"] == "running"
    assert {s["id"]: s["status"] for s in run["steps"]} == {
        "plan": "running",
        "left": "pending",
        "right": "pending",
        "join": "pending",
    }
    first = work(client, queue_id)
    assert first is not None
    assert first["prompt"] == "plan cats"
    assert steps_of(client, run["id"]) == {
        "plan": "succeeded",
        "left": "running",
        "right": "running",
        "join": "pending",
    }
    prompts = {work(client, queue_id)["prompt"] for _ in range(2)}  # type: ignore[index]
    assert prompts == {"left of PLAN CATS", "right of PLAN CATS"}
    last = work(client, queue_id)
    assert last is not None
    assert last["prompt"] in ("join LEFT OF PLAN CATS + RIGHT OF PLAN CATS",)
    assert work(client, queue_id) is None
    final = client.get(f"/api/v1/workflow-runs/{run['id']}").json()
    assert final["status"] == "succeeded"
    assert final["finished_at"] is not None
    assert final["steps"][3]["output"] == last["prompt"].upper()
    assert all(s["execution_id"] for s in final["steps"])
    listed = client.get("/api/v1/workflow-runs", params={"workflow_id": workflow["id"], "status": "succeeded"})
    assert [r["id"] for r in listed.json()["items"]] == [run["id"]]
    assert client.get("/api/v1/workflow-runs", params={"status": "running"}).json()["total"] == 0


def test_a_missing_input_is_422_and_a_bad_queue_too(client: TestClient[Any]) -> None:
    workflow, queue_id = diamond(client)
    missing = client.post(f"/api/v1/workflows/{workflow['id']}/runs", json={"worker_queue_id": queue_id})
    assert_validation(missing, ["body", "input", "topic"])
    other = client.post(
        f"/api/v1/workflows/{workflow['id']}/runs", json={"worker_queue_id": str(uuid.uuid4()), "input": {"topic": "x"}}
    )
    assert_validation(other, ["body", "worker_queue_id"])
    assert client.post(f"/api/v1/workflows/{uuid.uuid4()}/runs", json={"worker_queue_id": queue_id}).status_code == 404
    assert client.get("/api/v1/workflow-runs").json()["total"] == 0


def test_a_failed_step_is_retried_then_fails_the_run_and_skips_what_follows(client: TestClient[Any]) -> None:
    agent_id = create_agent(client)["id"]
    _, queue_id = setup_queue(client)
    steps = [step("a", agent_id, "a", max_attempts=2), step("b", agent_id, "b", "a"), step("c", agent_id, "c")]
    workflow = create_workflow(client, steps)
    run = start(client, workflow["id"], queue_id)
    failed_attempts = []
    while (leased := lease(client, queue_id)) is not None:  # a fails twice (a new execution each time), c works
        execution = leased["execution"]
        if execution["prompt"] == "c":
            body = {"worker_id": "w1", "attempt": 1, "status": "completed", "response": "ok"}
        else:
            failed_attempts.append(execution["id"])
            body = {"worker_id": "w1", "attempt": 1, "status": "failed", "error": "boom"}
        assert client.post(f"/api/v1/executions/{execution['id']}/complete", json=body).status_code == 200
    assert len(set(failed_attempts)) == 2
    final = client.get(f"/api/v1/workflow-runs/{run['id']}").json()
    assert final["status"] == "failed"
    assert {s["id"]: s["status"] for s in final["steps"]} == {"a": "failed", "b": "skipped", "c": "succeeded"}
    assert (final["steps"][0]["attempt"], final["steps"][0]["execution_id"]) == (2, failed_attempts[-1])
    assert final["steps"][0]["error"] == "boom"
    assert final["error"] == "failed steps: a"


def test_cancel_reaches_running_steps(client: TestClient[Any]) -> None:
    agent_id = create_agent(client)["id"]
    _, queue_id = setup_queue(client)
    workflow = create_workflow(client, [step("a", agent_id), step("b", agent_id), step("c", agent_id, "x", "a")])
    run = start(client, workflow["id"], queue_id)
    held = lease(client, queue_id)
    assert held is not None
    cancelled = client.post(f"/api/v1/workflow-runs/{run['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert {s["status"] for s in cancelled.json()["steps"]} == {"cancelled"}
    running = client.get(f"/api/v1/executions/{held['execution']['id']}").json()
    assert (running["status"], running["cancel_requested"]) == ("running", True)
    assert lease(client, queue_id) is None, "the queued step's execution was cancelled"
    assert client.post(f"/api/v1/workflow-runs/{run['id']}/cancel").status_code == 409
    stop = {"worker_id": "w1", "attempt": 1, "status": "cancelled"}
    assert client.post(f"/api/v1/executions/{held['execution']['id']}/complete", json=stop).status_code == 200
    assert client.get(f"/api/v1/workflow-runs/{run['id']}").json()["status"] == "cancelled"


def test_the_stream_tells_every_transition_and_resumes(client: TestClient[Any]) -> None:
    agent_id = create_agent(client)["id"]
    _, queue_id = setup_queue(client)
    workflow = create_workflow(client, [step("a", agent_id), step("b", agent_id, "x", "a")])
    run = start(client, workflow["id"], queue_id)
    work(client, queue_id)
    work(client, queue_id)
    with client.stream("GET", f"/api/v1/workflow-runs/{run['id']}/stream") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    frames = [frame for frame in text.split("\n\n") if frame.startswith("id: ")]
    assert [frame.split("\n")[1] for frame in frames] == [
        "event: run",
        "event: step",
        "event: step",
        "event: step",
        "event: step",
        "event: run",
    ]
    assert '"status":"succeeded"' in frames[-1]
    with client.stream("GET", f"/api/v1/workflow-runs/{run['id']}/stream", headers={"Last-Event-ID": "4"}) as again:
        resumed = [f for f in "".join(again.iter_text()).split("\n\n") if f.startswith("id: ")]
    assert [frame.split("\n")[0] for frame in resumed] == ["id: 5", "id: 6"]
    assert client.get(f"/api/v1/workflow-runs/{uuid.uuid4()}/stream").status_code == 404
