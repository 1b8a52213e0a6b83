"""Analytics over HTTP on every store: a run through the worker protocol counted, the bounds of a range (422),
another organization's executions never counted, models' prices, the OpenAPI tag."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_executions import execute, lease, setup_queue
from tests.support import BEFORE_THE_STORE

SUMMARY = "/api/v1/analytics/summary"


def run_one(client: TestClient[Any], clock: ManualClock) -> dict[str, Any]:
    """An agent on a priced model: queued at the clock's start (2026-01-01), leased 2 s later, completed 8 s after
    that with 1,000 prompt and 200 completion tokens."""
    model = client.post(
        "/api/v1/models",
        json={"value": "gpt-x", "provider": "p", "input_cost_per_million": 3, "output_cost_per_million": 15},
    ).json()
    agent = create_agent(client, model_id=model["id"])
    _, queue_id = setup_queue(client)
    execution = execute(client, agent["id"], queue_id)
    clock.advance(2)
    assert lease(client, queue_id) is not None
    clock.advance(8)
    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    done = {"worker_id": "w1", "attempt": 1, "status": "completed", "response": "ok", "usage": usage}
    assert client.post(f"/api/v1/executions/{execution['id']}/complete", json=done).status_code == 200
    return agent


def test_a_completed_run_is_counted_with_its_tokens_and_cost(client: TestClient[Any], clock: ManualClock) -> None:
    agent = run_one(client, clock)
    summary = client.get(SUMMARY, params={"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}).json()
    assert (summary["executions"], summary["by_status"]["completed"], summary["success_rate"]) == (1, 1, 1.0)
    assert summary["duration_seconds"] == {"p50": 8.0, "p95": 8.0, "p99": 8.0}
    assert summary["queue_wait_seconds"] == {"p50": 2.0, "p95": 2.0, "p99": None}
    assert summary["tokens"] == {"prompt": 1000, "completion": 200, "total": 1200}
    assert summary["cost"] == pytest.approx((1000 * 3 + 200 * 15) / 1e6)
    ranked = client.get("/api/v1/analytics/agents", params={"to": "2026-01-02T00:00:00Z", "order_by": "cost"}).json()
    assert [(item["agent_id"], item["executions"]) for item in ranked["items"]] == [(agent["id"], 1)]
    assert (ranked["total"], ranked["from"]) == (1, "2025-12-03T00:00:00Z")  # 30 days before `to` by default


def test_another_organization_sees_none_of_it(
    client: TestClient[Any], clock: ManualClock, other_org: dict[str, str]
) -> None:
    agent = run_one(client, clock)
    window = {"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}
    theirs = client.get(SUMMARY, params=window, headers=other_org).json()
    assert (theirs["executions"], theirs["tokens"]["total"], theirs["cost"]) == (0, 0, 0.0)
    assert client.get(SUMMARY, params={**window, "agent_id": agent["id"]}, headers=other_org).json()["executions"] == 0
    series = client.get("/api/v1/analytics/timeseries", params=window, headers=other_org).json()["series"]
    assert [point["value"] for point in series[0]["points"]] == [0]
    assert client.get("/api/v1/analytics/agents", params=window, headers=other_org).json()["items"] == []


def test_a_series_has_every_bucket_of_the_range(client: TestClient[Any], clock: ManualClock) -> None:
    run_one(client, clock)
    params = {"from": "2025-12-31T22:30:00Z", "to": "2026-01-01T02:00:00Z", "bucket": "hour", "metric": "tokens"}
    body = client.get("/api/v1/analytics/timeseries", params=params).json()
    assert (body["metric"], body["bucket"], body["group_by"]) == ("tokens", "hour", None)
    points = [(point["start"], point["value"]) for point in body["series"][0]["points"]]
    assert points == [("2025-12-31T22:00:00Z", 0), ("2025-12-31T23:00:00Z", 0), ("2026-01-01T00:00:00Z", 1200),
                      ("2026-01-01T01:00:00Z", 0)]  # fmt: skip
    grouped = client.get("/api/v1/analytics/timeseries", params={**params, "group_by": "model", "metric": "cost"})
    assert [series["group"] for series in grouped.json()["series"]] == ["gpt-x"]


@pytest.mark.parametrize(
    ("path", "params", "loc"),
    [
        (SUMMARY, {"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "from"),
        (SUMMARY, {"from": "2026-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "from"),
        (SUMMARY, {"from": "2024-01-01T00:00:00Z", "to": "2025-02-04T00:00:01Z"}, "from"),  # 400 days and 1 s
        (SUMMARY, {"from": "yesterday"}, "from"),
        (SUMMARY, {"to": "0001-01-01T00:00:00+05:00"}, "to"),
        (SUMMARY, {"team": "x"}, "team"),
        ("/api/v1/analytics/timeseries", {"metric": "latency"}, "metric"),
        ("/api/v1/analytics/timeseries", {"bucket": "minute"}, "bucket"),
        ("/api/v1/analytics/timeseries", {"group_by": "project"}, "group_by"),
        ("/api/v1/analytics/agents", {"order_by": "name"}, "order_by"),
        ("/api/v1/analytics/agents", {"limit": "201"}, "limit"),
    ],
)
@BEFORE_THE_STORE
def test_bad_ranges_and_choices_are_422(client: TestClient[Any], path: str, params: dict[str, str], loc: str) -> None:
    assert_validation(client.get(path, params=params), ["query", loc])


def test_a_range_of_400_days_is_allowed(client: TestClient[Any]) -> None:
    params = {"from": "2024-01-01T00:00:00Z", "to": "2025-02-04T00:00:00Z", "bucket": "hour"}
    body = client.get("/api/v1/analytics/timeseries", params=params)
    assert body.status_code == 200, body.text
    assert len(body.json()["series"][0]["points"]) == 400 * 24


def test_models_carry_their_prices(client: TestClient[Any]) -> None:
    model = client.post("/api/v1/models", json={"value": "m", "provider": "p", "input_cost_per_million": 0.15})
    assert model.status_code == 201, model.text
    assert (model.json()["input_cost_per_million"], model.json()["output_cost_per_million"]) == (0.15, None)
    path = f"/api/v1/models/{model.json()['id']}"
    patched = client.patch(path, json={"input_cost_per_million": None, "output_cost_per_million": 0.6}).json()
    assert (patched["input_cost_per_million"], patched["output_cost_per_million"]) == (None, 0.6)
    assert client.get(path).json()["output_cost_per_million"] == 0.6
    assert_validation(client.patch(path, json={"input_cost_per_million": -1}), ["body", "input_cost_per_million"])


def test_the_routes_are_documented_under_analytics(client: TestClient[Any]) -> None:
    paths = client.get("/api/openapi.json").json()["paths"]
    operations = {path: paths[path]["get"] for path in paths if path.startswith("/api/v1/analytics/")}
    assert {path: op["operationId"] for path, op in operations.items()} == {
        "/api/v1/analytics/summary": "getAnalyticsSummary",
        "/api/v1/analytics/timeseries": "getAnalyticsTimeseries",
        "/api/v1/analytics/agents": "listAgentAnalytics",
    }
    assert all(op["tags"] == ["analytics"] for op in operations.values())
    names = {parameter["name"] for parameter in operations["/api/v1/analytics/summary"]["parameters"]}
    assert {"from", "to", "agent_id", "team_id", "project_id"} <= names
