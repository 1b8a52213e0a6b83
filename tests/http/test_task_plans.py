"""Task plans over HTTP, on every store: a plan's planning execution leased with its planning task, the worker's
plan checked when it completes (ready, or failed saying why), the run of a ready plan as a workflow run, and the
plan in the background workflows view (cancel included)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_executions import lease, setup_queue
from tests.http.test_teams import create_team
from tests.http.test_workflows import work
from tests.support import BEFORE_THE_STORE

URL = "/api/v1/task-plans"
FIELDS = {"id", "organization_id", "task", "worker_queue_id", "agent_ids", "status", "summary", "steps", "error",
          "execution_id", "workflow_id", "workflow_run_id", "created_at", "updated_at", "finished_at"}  # fmt: skip


def create_plan(client: TestClient[Any], queue_id: str, task: str = "write a poem", **fields: Any) -> dict[str, Any]:
    response = client.post(URL, json={"task": task, "worker_queue_id": queue_id, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def get_plan(client: TestClient[Any], plan_id: str) -> dict[str, Any]:
    response = client.get(f"{URL}/{plan_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def two_steps(target: dict[str, str]) -> dict[str, Any]:
    return {
        "summary": "research, then write",
        "steps": [
            {"id": "research", "title": "Research", **target, "prompt": "research {{input.task}}", "depends_on": []},
            {"id": "write", "title": "Write", **target, "prompt": "write {{steps.research.output}}",
             "depends_on": ["research"]},
        ],
    }  # fmt: skip


def plan_by_worker(
    client: TestClient[Any], queue_id: str, answer: Any, status: str = "completed", worker: str = "planner"
) -> dict[str, Any]:
    """Lease the queue's next execution (a planning one) and complete it with `answer` (JSON unless a string)."""
    leased = lease(client, queue_id, worker)
    assert leased is not None
    assert leased["resolved"]["planning"] is not None, leased
    response = answer if isinstance(answer, str) or answer is None else json.dumps(answer)
    body = {"worker_id": worker, "attempt": leased["attempt"], "status": status, "response": response,
            "error": "the model gave up" if status == "failed" else None}  # fmt: skip
    done = client.post(f"/api/v1/executions/{leased['execution']['id']}/complete", json=body)
    assert done.status_code == 200, done.text
    return leased


def test_a_plan_is_planned_by_a_worker_then_runs_as_a_workflow_run(client: TestClient[Any]) -> None:
    agent = create_agent(client, "writer", description="writes well", capabilities=["prose"])
    team = create_team(client, "crew", description="a crew")
    _, queue_id = setup_queue(client)
    plan = create_plan(client, queue_id, "write a poem about cats")
    assert set(plan) == FIELDS
    assert (plan["status"], plan["summary"], plan["steps"], plan["error"]) == ("planning", None, [], None)
    assert (plan["agent_ids"], plan["workflow_run_id"], plan["finished_at"]) == (None, None, None)
    execution = client.get(f"/api/v1/executions/{plan['execution_id']}").json()
    assert (execution["target_type"], execution["status"], execution["prompt"]) == ("plan", "queued", plan["task"])
    assert (execution["agent_id"], execution["team_id"]) == (None, None)

    leased = plan_by_worker(client, queue_id, two_steps({"agent_id": agent["id"]}))
    planning = leased["resolved"]["planning"]
    assert (leased["agent"], leased["team"], leased["execution"]["id"]) == (None, None, plan["execution_id"])
    assert (planning["plan_id"], planning["task"]) == (plan["id"], "write a poem about cats")
    assert planning["agents"] == [{"id": agent["id"], "name": "writer", "description": "writes well",
                                   "capabilities": ["prose"]}]  # fmt: skip
    assert planning["teams"] == [{"id": team["id"], "name": "crew", "description": "a crew", "capabilities": []}]
    assert "JSON" in planning["instructions"]
    assert planning["plan_schema"]["required"] == ["summary", "steps"]

    ready = get_plan(client, plan["id"])
    assert (ready["status"], ready["summary"], ready["error"]) == ("ready", "research, then write", None)
    assert ready["finished_at"] is not None
    assert ready["steps"][1] == {"id": "write", "title": "Write", "agent_id": agent["id"], "team_id": None,
                                 "prompt": "write {{steps.research.output}}", "depends_on": ["research"]}  # fmt: skip

    started = client.post(f"{URL}/{plan['id']}/run")
    assert started.status_code == 201, started.text
    run = started.json()
    assert (run["status"], run["input"], run["worker_queue_id"]) == ("running", {"task": plan["task"]}, queue_id)
    assert [step["id"] for step in run["steps"]] == ["research", "write"]
    after = get_plan(client, plan["id"])
    assert (after["status"], after["workflow_run_id"]) == ("started", run["id"])
    workflow = client.get(f"/api/v1/workflows/{after['workflow_id']}").json()
    assert (workflow["name"], workflow["description"]) == (f"task-plan-{plan['id']}", "research, then write")

    first = work(client, queue_id)
    assert first is not None
    assert first["prompt"] == "research write a poem about cats"
    second = work(client, queue_id)
    assert second is not None
    assert second["prompt"] == "write RESEARCH WRITE A POEM ABOUT CATS"
    done = client.get(f"/api/v1/workflow-runs/{run['id']}").json()
    assert done["status"] == "succeeded", done
    again = client.post(f"{URL}/{plan['id']}/run")
    assert again.status_code == 409, again.text
    assert again.json()["error"]["details"] == {"status": "started"}


def test_plans_that_break_a_rule_fail_saying_why(client: TestClient[Any]) -> None:
    agent = create_agent(client, "writer")["id"]
    other = create_agent(client, "other")["id"]
    team = create_team(client)["id"]
    _, queue_id = setup_queue(client)
    good = two_steps({"agent_id": agent})
    cycle = two_steps({"agent_id": agent})
    cycle["steps"][0]["depends_on"] = ["write"]
    twice = two_steps({"agent_id": agent})
    twice["steps"][1]["id"] = "research"
    unknown_dependency = two_steps({"agent_id": agent})
    unknown_dependency["steps"][1]["depends_on"] = ["nowhere"]
    other_input = two_steps({"agent_id": agent})
    other_input["steps"][0]["prompt"] = "about {{input.topic}}"
    untitled = two_steps({"agent_id": agent})
    del untitled["steps"][0]["title"]
    both = two_steps({"agent_id": agent, "team_id": team})
    cases: list[tuple[Any, dict[str, Any], str]] = [
        ("not json at all", {}, "the worker's answer is not JSON"),
        ("", {}, "the worker's answer is empty"),
        ("[1, 2]", {}, "the plan does not match the plan schema: the plan: [1, 2] is not of type 'object'"),
        (untitled, {}, "the plan does not match the plan schema: steps.0.title: is required"),
        ({"summary": "s", "steps": []}, {}, "the plan does not match the plan schema: steps"),
        (two_steps({"agent_id": str(uuid.uuid4())}), {}, "steps.0.agent_id: no agent of this organization has"),
        (two_steps({"team_id": str(uuid.uuid4())}), {}, "steps.0.team_id: no team of this organization has"),
        (both, {}, "steps.0.agent_id: give exactly one of agent_id and team_id"),
        (cycle, {}, "steps: the steps' dependencies form a cycle: research -> write -> research"),
        (twice, {}, "steps.1.id: step id 'research' is used twice"),
        (unknown_dependency, {}, "steps.1.depends_on.0: no step has the id 'nowhere'"),
        (other_input, {}, "steps.0.prompt: reads {{input.topic}}: a plan's run has only {{input.task}}"),
        (good, {"agent_ids": [other]}, f"steps.0.agent_id: agent '{agent}' is not one of the plan's agent_ids"),
        (two_steps({"team_id": team}), {"agent_ids": [agent]}, "steps.0.team_id: the plan may use only its agent_ids"),
    ]
    for answer, fields, why in cases:
        plan = create_plan(client, queue_id, **fields)
        plan_by_worker(client, queue_id, answer)
        failed = get_plan(client, plan["id"])
        assert failed["status"] == "failed", (answer, failed)
        assert failed["error"].startswith(f"the worker's plan was rejected: {why}"), (why, failed["error"])
        assert (failed["steps"], failed["summary"]) == ([], None)
        assert client.post(f"{URL}/{plan['id']}/run").status_code == 409
    limited = create_plan(client, queue_id, agent_ids=[agent])
    leased = plan_by_worker(client, queue_id, good)
    assert ([a["id"] for a in leased["resolved"]["planning"]["agents"]], leased["resolved"]["planning"]["teams"]) == (
        [agent],
        [],
    )
    assert get_plan(client, limited["id"])["status"] == "ready"


def test_a_planning_execution_that_fails_or_is_cancelled_ends_its_plan(client: TestClient[Any]) -> None:
    _, queue_id = setup_queue(client)
    failed = create_plan(client, queue_id)
    plan_by_worker(client, queue_id, None, status="failed")
    body = get_plan(client, failed["id"])
    assert (body["status"], body["error"]) == ("failed", "its planning execution failed: the model gave up")
    cancelled = create_plan(client, queue_id)
    stop = client.post(f"/api/v1/executions/{cancelled['execution_id']}/cancel")
    assert stop.status_code == 200, stop.text
    body = get_plan(client, cancelled["id"])
    assert (body["status"], body["error"]) == ("cancelled", "its planning execution was cancelled: cancelled before "
                                                            "a worker started it")  # fmt: skip


def test_the_background_view_lists_and_cancels_a_plan(client: TestClient[Any], clock: ManualClock) -> None:
    agent = create_agent(client)["id"]
    _, queue_id = setup_queue(client)
    waiting = create_plan(client, queue_id, "first")
    clock.advance(1)
    running = create_plan(client, queue_id, "second")
    listed = client.get("/api/v1/temporal-workflows?type=task_plan").json()
    assert [(item["id"], item["status"]) for item in listed["items"]] == [(running["id"], "running"),
                                                                          (waiting["id"], "running")]  # fmt: skip
    assert listed["items"][0]["links"] == {
        "self": f"/api/v1/temporal-workflows/{running['id']}",
        "task_plan": f"/api/v1/task-plans/{running['id']}",
        "execution": f"/api/v1/executions/{running['execution_id']}",
    }
    cancelled = client.post(f"/api/v1/temporal-workflows/{waiting['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert get_plan(client, waiting["id"])["status"] == "cancelled"
    execution = client.get(f"/api/v1/executions/{waiting['execution_id']}").json()
    assert (execution["status"], execution["error"]) == ("cancelled", "cancelled with its task plan")
    leased = lease(client, queue_id, "planner")  # the cancelled one is never leased: the second plan's is
    assert leased is not None
    assert leased["execution"]["id"] == running["execution_id"]
    held = client.post(f"/api/v1/temporal-workflows/{running['id']}/cancel")
    assert held.status_code == 200, held.text
    execution = client.get(f"/api/v1/executions/{running['execution_id']}").json()
    assert (execution["status"], execution["cancel_requested"]) == ("running", True)  # its worker is told to stop
    late = {"worker_id": "planner", "attempt": 1, "status": "completed", "response": json.dumps(two_steps({
        "agent_id": agent}))}  # fmt: skip
    assert client.post(f"/api/v1/executions/{running['execution_id']}/complete", json=late).status_code == 200
    assert get_plan(client, running["id"])["status"] == "cancelled"  # its planning ended first
    again = client.post(f"/api/v1/temporal-workflows/{running['id']}/cancel")
    assert again.status_code == 409, again.text
    ready = create_plan(client, queue_id, "third")
    plan_by_worker(client, queue_id, two_steps({"agent_id": agent}))
    shown = client.get(f"/api/v1/temporal-workflows/{ready['id']}").json()
    assert (shown["type"], shown["status"]) == ("task_plan", "succeeded")
    assert client.get("/api/v1/temporal-workflows?type=task_plan&status=cancelled").json()["total"] == 2


def test_list_pages_and_filters_by_status(client: TestClient[Any], clock: ManualClock) -> None:
    _, queue_id = setup_queue(client)
    made = []
    for index in range(3):
        made.append(create_plan(client, queue_id, f"task {index}")["id"])
        clock.advance(1)
    plan_by_worker(client, queue_id, "nonsense")
    page = client.get(f"{URL}?limit=2&offset=1").json()  # newest first by default
    assert ([item["id"] for item in page["items"]], page["total"], page["limit"], page["offset"]) == (
        made[1::-1],
        3,
        2,
        1,
    )
    oldest = client.get(f"{URL}?limit=2&offset=1&order=asc").json()
    assert [item["id"] for item in oldest["items"]] == made[1:]
    failed = client.get(f"{URL}?status=failed").json()
    assert [item["id"] for item in failed["items"]] == made[:1]
    assert_validation(client.get(f"{URL}?status=nope"), ["query", "status"])
    assert_validation(client.get(f"{URL}?limit=0"), ["query", "limit"])


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"task": "", "worker_queue_id": "Q"}, ["body", "task"]),
        ({"task": "   ", "worker_queue_id": "Q"}, ["body", "task"]),
        ({"worker_queue_id": "Q"}, ["body", "task"]),
        ({"task": "t"}, ["body", "worker_queue_id"]),
        ({"task": "t", "worker_queue_id": "not-a-uuid"}, ["body", "worker_queue_id"]),
        ({"task": "t", "worker_queue_id": str(uuid.UUID(int=7))}, ["body", "worker_queue_id"]),
        ({"task": "t", "worker_queue_id": "Q", "agent_ids": []}, ["body", "agent_ids"]),
        ({"task": "t", "worker_queue_id": "Q", "agent_ids": ["A", "A"]}, ["body", "agent_ids", 1]),
        ({"task": "t", "worker_queue_id": "Q", "agent_ids": [str(uuid.UUID(int=8))]}, ["body", "agent_ids", 0]),
        ({"task": "t", "worker_queue_id": "Q", "status": "ready"}, ["body", "status"]),
        ({"task": 5, "worker_queue_id": "Q"}, ["body", "task"]),
    ],
)
@BEFORE_THE_STORE
def test_create_validates_its_body(client: TestClient[Any], body: dict[str, Any], loc: list[Any]) -> None:
    agent = create_agent(client)["id"]
    _, queue_id = setup_queue(client)

    def filled(value: Any) -> Any:
        if isinstance(value, list):
            return [filled(each) for each in value]
        return {"Q": queue_id, "A": agent}.get(value, value) if isinstance(value, str) else value

    assert_validation(client.post(URL, json={key: filled(value) for key, value in body.items()}), loc)
    assert client.get(URL).json()["total"] == 0


def test_another_organizations_plans_and_agents_are_not_found(
    client: TestClient[Any], other_org: dict[str, str]
) -> None:
    agent = create_agent(client)["id"]
    _, queue_id = setup_queue(client)
    plan = create_plan(client, queue_id)
    for method, path in (("GET", f"{URL}/{plan['id']}"), ("POST", f"{URL}/{plan['id']}/run")):
        response = client.request(method, path, headers=other_org)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "NOT_FOUND"
    assert client.get(URL, headers=other_org).json()["total"] == 0
    assert client.get(f"{URL}/{uuid.uuid4()}").status_code == 404
    assert client.post(f"{URL}/{uuid.uuid4()}/run").status_code == 404
    _, their_queue = setup_queue_as(client, other_org)
    theirs = client.post(URL, json={"task": "t", "worker_queue_id": their_queue, "agent_ids": [agent]},
                         headers=other_org)  # fmt: skip
    assert_validation(theirs, ["body", "agent_ids", 0])  # our agent is not theirs


def setup_queue_as(client: TestClient[Any], headers: dict[str, str]) -> tuple[str, str]:
    environment = client.post("/api/v1/environments", json={"name": "their-env"}, headers=headers)
    assert environment.status_code == 201, environment.text
    queue = client.post(f"/api/v1/environments/{environment.json()['id']}/worker-queues", json={"name": "theirs"},
                        headers=headers)  # fmt: skip
    assert queue.status_code == 201, queue.text
    return environment.json()["id"], queue.json()["id"]


def test_run_answers_409_until_ready_and_when_a_step_target_is_gone(client: TestClient[Any]) -> None:
    agent = create_agent(client, "doomed")["id"]
    _, queue_id = setup_queue(client)
    plan = create_plan(client, queue_id)
    planning = client.post(f"{URL}/{plan['id']}/run")
    assert planning.status_code == 409, planning.text
    assert planning.json()["error"] == {"code": "CONFLICT", "message": "only a ready task plan runs; this one is "
                                        "planning", "details": {"status": "planning"}}  # fmt: skip
    plan_by_worker(client, queue_id, two_steps({"agent_id": agent}))
    in_use = client.delete(f"/api/v1/agents/{agent}")  # the ready plan names it (docs/api-decisions.md, References)
    assert in_use.status_code == 409, in_use.text
    assert in_use.json()["error"]["details"]["referrers"] == [{"type": "task_plan", "id": plan["id"]}]
    assert client.delete(f"/api/v1/agents/{agent}", params={"force": "true"}).status_code == 204
    gone = client.post(f"{URL}/{plan['id']}/run")
    assert gone.status_code == 409, gone.text
    assert "the task plan can no longer run: steps.0.agent_id" in gone.json()["error"]["message"]
    assert get_plan(client, plan["id"])["status"] == "ready"
    assert client.get("/api/v1/workflows").json()["total"] == 0
