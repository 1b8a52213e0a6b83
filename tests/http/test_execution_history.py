"""History is immutable, over HTTP on every store: an execution keeps the name, model and prices it was run with,
and analytics counts what it kept, whatever is renamed, repriced or deleted later."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, lease, setup_queue

WINDOW = {"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}
COST = (750 * 0.25 + 250 * 1.5) / 1e6  # 0.0005625


def run_priced(client: TestClient[Any], clock: ManualClock) -> dict[str, Any]:
    """A priced agent of a team, executed and completed with 750 prompt and 250 completion tokens."""
    model = client.post("/api/v1/models", json={"value": "gpt-x", "provider": "p", "input_cost_per_million": 0.25,
                                                "output_cost_per_million": 1.5}).json()  # fmt: skip
    team = client.post("/api/v1/teams", json={"name": "writers"}).json()
    agent = create_agent(client, "scribe", model_id=model["id"], team_id=team["id"])
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    assert lease(client, queue_id) is not None
    clock.advance(1)
    done = {"worker_id": "w1", "attempt": 1, "status": "completed", "response": "ok",
            "usage": {"prompt_tokens": 750, "completion_tokens": 250}}  # fmt: skip
    assert client.post(f"/api/v1/executions/{execution['id']}/complete", json=done).status_code == 200
    return {"model": model, "team": team, "agent": agent, "execution": execution}


def figures(client: TestClient[Any], run: dict[str, Any]) -> dict[str, Any]:
    def get(path: str, **params: str) -> Any:
        response = client.get(path, params={**WINDOW, **params})
        assert response.status_code == 200, response.text
        return response.json()

    series = {"metric": "cost", "bucket": "day"}
    return {
        "summary": get("/api/v1/analytics/summary"),
        "of the team": get("/api/v1/analytics/summary", team_id=run["team"]["id"]),
        "of the agent": get("/api/v1/analytics/summary", agent_id=run["agent"]["id"]),
        "by model": get("/api/v1/analytics/timeseries", **series, group_by="model")["series"],
        "by team": get("/api/v1/analytics/timeseries", **series, group_by="team")["series"],
        "ranking": get("/api/v1/analytics/agents", order_by="cost")["items"],
        "execution": client.get(f"/api/v1/executions/{run['execution']['id']}").json(),
    }


CHANGES: dict[str, Callable[[TestClient[Any], dict[str, Any]], Any]] = {
    "the agent deleted": lambda client, run: client.delete(f"/api/v1/agents/{run['agent']['id']}"),
    "the agent renamed, moved, given another model": lambda client, run: client.patch(
        f"/api/v1/agents/{run['agent']['id']}", json={"name": "renamed", "team_id": None, "model_id": "other"}
    ),
    "the model repriced and renamed": lambda client, run: client.patch(
        f"/api/v1/models/{run['model']['id']}",
        json={"value": "gpt-y", "input_cost_per_million": 100, "output_cost_per_million": None},
    ),
    "the model deleted": lambda client, run: client.delete(f"/api/v1/models/{run['model']['id']}?force=true"),
    "the team renamed": lambda client, run: client.patch(f"/api/v1/teams/{run['team']['id']}", json={"name": "x"}),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_later_change_changes_no_past_figure(client: TestClient[Any], clock: ManualClock, change: str) -> None:
    run = run_priced(client, clock)
    before = figures(client, run)
    assert before["summary"]["cost"] == pytest.approx(COST)
    assert before["of the team"]["cost"] == pytest.approx(COST)
    assert [series["group"] for series in before["by model"]] == ["gpt-x"]
    assert [series["group"] for series in before["by team"]] == [run["team"]["id"]]
    assert [(item["name"], item["cost"]) for item in before["ranking"]] == [("scribe", pytest.approx(COST))]
    execution = before["execution"]
    assert (execution["target_name"], execution["model"], execution["agent_team_id"]) == (
        "scribe", "gpt-x", run["team"]["id"],
    )  # fmt: skip
    assert (execution["input_cost_per_million"], execution["output_cost_per_million"]) == (0.25, 1.5)
    response = CHANGES[change](client, run)
    assert response.status_code in (200, 204), response.text
    assert figures(client, run) == before


def test_what_an_execution_runs_with_is_in_its_first_answer(client: TestClient[Any]) -> None:
    team = client.post("/api/v1/teams", json={"name": "editors"}).json()
    agent = create_agent(client, "plain", model_id="unregistered-model")
    _, queue_id = setup_queue(client)
    queued = execute(client, agent["id"], queue_id)
    assert (queued["target_name"], queued["model"], queued["input_cost_per_million"]) == (
        "plain", "unregistered-model", None,
    )  # fmt: skip
    assert client.get(f"/api/v1/executions/{queued['id']}").json() == queued
    response = client.post(f"/api/v1/teams/{team['id']}/execute", json={"prompt": "p", "worker_queue_id": queue_id})
    assert response.status_code == 201, response.text
    assert (response.json()["target_name"], response.json()["model"]) == ("editors", None)
    assert client.patch(f"/api/v1/teams/{team['id']}", json={"name": "renamed"}).status_code == 200
    listed = client.get("/api/v1/executions", params={"team_id": team["id"]}).json()["items"]
    assert [item["target_name"] for item in listed] == ["editors"]


def test_a_workflow_step_keeps_what_its_agent_ran_with(client: TestClient[Any]) -> None:
    model = client.post("/api/v1/models", json={"value": "gpt-w", "provider": "p", "input_cost_per_million": 2}).json()
    agent = create_agent(client, "stepper", model_id="gpt-w")  # named by value
    team = client.post("/api/v1/teams", json={"name": "reviewers"}).json()
    _, queue_id = setup_queue(client)
    steps = [{"id": "draft", "agent_id": agent["id"], "prompt": "p", "depends_on": []},
             {"id": "review", "team_id": team["id"], "prompt": "r", "depends_on": []}]  # fmt: skip
    workflow = client.post("/api/v1/workflows", json={"name": "flow", "steps": steps}).json()
    run = client.post(f"/api/v1/workflows/{workflow['id']}/runs", json={"worker_queue_id": queue_id, "input": {}})
    assert run.status_code == 201, run.text
    ok = client.patch(f"/api/v1/models/{model['id']}", json={"input_cost_per_million": 9})
    assert ok.status_code == 200, ok.text
    by_step = {each["id"]: each["execution_id"] for each in run.json()["steps"]}
    draft = client.get(f"/api/v1/executions/{by_step['draft']}").json()
    review = client.get(f"/api/v1/executions/{by_step['review']}").json()
    assert (draft["target_name"], draft["model"], draft["input_cost_per_million"]) == ("stepper", "gpt-w", 2.0)
    assert (review["target_name"], review["model"]) == ("reviewers", None)
