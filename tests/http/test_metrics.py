"""`GET /metrics`: who may read it (the metrics token, or loopback callers), and what it counts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from controlplane_adapters.clock import ManualClock
from controlplane_http.bootstrap import build_app
from tests.conftest import app_settings, database_url
from tests.http.test_agents import create_agent
from tests.http.test_executions import execute, lease, setup_queue
from tests.support import SERVICE_KEY, bearer

TOKEN = "metrics-scrape-token-1234"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def from_address(app: Litestar, host: str) -> Litestar:
    """The app as callers from `host` reach it (Litestar's test client calls itself `testclient`)."""
    inner = app.asgi_handler

    async def handler(scope: Any, receive: Any, send: Any) -> None:
        scope["client"] = (host, 40000)
        await inner(scope, receive, send)

    app.asgi_handler = handler
    return app


def samples(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def local(request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock) -> Iterator[TestClient[Any]]:
    """A client on loopback, no metrics token set."""
    app = build_app(app_settings(database_url(request.param, tmp_path, request)), clock=clock)
    with TestClient(from_address(app, "127.0.0.1")) as client:
        client.headers.update(bearer(SERVICE_KEY))
        yield client


def scrape(client: TestClient[Any], **headers: str) -> Samples:
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return samples(response.text)


def test_without_a_token_only_loopback_callers_get_the_metrics(tmp_path: Path) -> None:
    for host, status in [
        ("127.0.0.1", 200),
        ("127.8.9.10", 200),
        ("::1", 200),
        ("10.1.2.3", 403),
        ("::ffff:10.0.0.1", 403),
    ]:
        with TestClient(from_address(build_app(app_settings("memory://")), host)) as client:
            response = client.get("/metrics")  # no API key asked
            assert response.status_code == status, (host, response.text)
            if status == 403:
                assert response.json()["error"]["code"] == "FORBIDDEN"
    with TestClient(build_app(app_settings("memory://"))) as client:  # the test client's own address: "testclient"
        assert client.get("/metrics").status_code == 403


@pytest.mark.parametrize("host", ["127.0.0.1", "10.1.2.3"])
def test_with_a_token_every_caller_needs_it(host: str) -> None:
    settings = replace(app_settings("memory://"), metrics_token=TOKEN)
    with TestClient(from_address(build_app(settings), host)) as client:
        for headers in [{}, bearer("wrong-token"), bearer(SERVICE_KEY), {"Authorization": TOKEN}]:
            response = client.get("/metrics", headers=headers)
            assert response.status_code == 401, (headers, response.text)
            assert response.json()["error"]["code"] == "UNAUTHORIZED"
            assert response.headers["www-authenticate"].startswith("Bearer")
        assert client.get("/metrics", headers=bearer(TOKEN)).status_code == 200


def test_requests_are_counted_by_route_template_and_status(local: TestClient[Any]) -> None:
    agent = create_agent(local, "counted")["id"]
    before = scrape(local)
    for _ in range(3):
        assert local.get(f"/api/v1/agents/{agent}").status_code == 200  # the fast lane
    assert local.get("/api/v1/agents/00000000-0000-4000-8000-000000000000").status_code == 404
    assert local.get(f"/api/v1/agents/{agent}", headers=bearer("nope")).status_code == 401  # before routing
    assert local.get("/api/v1/teams").status_code == 200  # Litestar's own path
    assert local.get("/api/v1/no-such-thing").status_code == 404
    after = scrape(local)
    route = "/api/v1/agents/{agent_id}"
    requests = "controlplane_http_requests_total"

    def counted(**labels: str) -> float:
        return value(after, requests, **labels) - value(before, requests, **labels)

    assert counted(method="GET", route=route, status="200") == 3
    assert counted(method="GET", route=route, status="404") == 1
    assert counted(method="GET", route=route, status="401") == 1
    assert counted(method="GET", route="/api/v1/teams", status="200") == 1
    assert counted(method="GET", route="unmatched", status="404") == 1
    assert not any(agent in str(labels) for _, labels in after)  # never the raw path
    latency = "controlplane_http_request_duration_seconds"
    count = value(after, f"{latency}_count", method="GET", route=route)
    assert count - value(before, f"{latency}_count", method="GET", route=route) == 5
    assert value(after, f"{latency}_bucket", method="GET", route=route, le="+Inf") == count


def test_the_gauges_read_the_store(local: TestClient[Any], clock: ManualClock) -> None:
    agent = create_agent(local, "gauged")["id"]
    _, queue = setup_queue(local)
    for _ in range(3):
        execute(local, agent, queue)
    clock.advance(seconds=7)
    assert lease(local, queue) is not None
    worker = {"worker_id": "w-gauge", "environment_name": "env-default", "status": "busy"}
    assert local.post("/api/v1/workers/heartbeat", json=worker).status_code == 200
    found = scrape(local)
    assert value(found, "controlplane_executions", status="queued") == 2
    assert value(found, "controlplane_executions", status="running") == 1
    assert value(found, "controlplane_executions", status="waiting_for_input") == 0
    assert value(found, "controlplane_queue_depth", organization_id="default", worker_queue_id=queue) == 2
    age = value(found, "controlplane_queue_oldest_age_seconds", organization_id="default", worker_queue_id=queue)
    assert age == pytest.approx(7, abs=0.5)
    assert value(found, "controlplane_scheduler_lag_seconds") == 0
    assert value(found, "controlplane_webhook_deliveries_total", outcome="failed") >= 0
    assert ("controlplane_webhook_deliveries_total", frozenset({("outcome", "delivered")})) in found


def test_workers_are_counted_by_effective_status(tmp_path: Path) -> None:
    clock = ManualClock()
    app = build_app(app_settings("memory://", heartbeat_flush_ms=10), clock=clock)
    with TestClient(from_address(app, "127.0.0.1")) as client:
        client.headers.update(bearer(SERVICE_KEY))
        for worker, status in [("a", "busy"), ("b", "idle"), ("c", "idle")]:
            body = {"worker_id": worker, "environment_name": "prod", "status": status}
            assert client.post("/api/v1/workers/heartbeat", json=body).status_code == 200
        found = scrape(client)
        assert [value(found, "controlplane_workers", status=s) for s in ("busy", "idle", "offline")] == [1, 2, 0]
        clock.advance(seconds=3 * 30 + 1)
        found = scrape(client)
        assert [value(found, "controlplane_workers", status=s) for s in ("busy", "idle", "offline")] == [0, 0, 3]
