"""Atomic rate limiting and idempotency under concurrency, against real server processes."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, start_server, stop_server
from tests.support import SERVICE_KEY, bearer

pytestmark = pytest.mark.e2e


async def _burst(
    urls: list[str], count: int, path: str = "/api/v1/agents", method: str = "GET", **kwargs: Any
) -> list[httpx.Response]:
    clients = [httpx.AsyncClient(base_url=url, headers=bearer(SERVICE_KEY), timeout=30) for url in urls]
    try:
        calls = [clients[i % len(clients)].request(method, path, **kwargs) for i in range(count)]
        return await asyncio.gather(*calls)
    finally:
        for client in clients:
            await client.aclose()


def _limited(tmp_path: Path, limit: int, **env: str) -> Server:
    url = f"sqlite+aiosqlite:///{tmp_path / 'limits.db'}"
    # (the bursts and the readiness probe call with the service key, whose figure is its own: set to the same)
    figures = {
        "CONTROLPLANE_RATE_LIMIT_PER_MINUTE": str(limit),
        "CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE": str(limit),
    }
    return start_server(tmp_path, url, **figures, **env)


def _through_redis(redis: str) -> dict[str, str]:
    """A fresh namespace, and a Redis timeout no busy machine reaches. With the default 250 ms, a burst of 60
    requests (each opening its own Redis connection, in a loop that is busy serving the others) on a loaded 2-core
    machine timed out on a healthy Redis: the limiter then admits every request for its pause (its documented
    availability-first rule, tests/unit/test_redis_outage.py), and 24 were admitted where the budget left 19."""
    return {"CONTROLPLANE_REDIS_URL": redis, "CONTROLPLANE_REDIS_NAMESPACE": uuid.uuid4().hex,
            "CONTROLPLANE_REDIS_TIMEOUT_MS": "30000"}  # fmt: skip


def _admitted_without_redis(*servers: Server) -> list[str]:
    """The log lines of requests admitted because Redis did not answer (none, with `_through_redis`)."""
    return [line for server in servers for line in server.log.read_text().splitlines() if "store unavailable" in line]


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_concurrent_requests_never_exceed_the_limit(tmp_path: Path, store: str, request: pytest.FixtureRequest) -> None:
    env = _through_redis(request.getfixturevalue("redis")) if store == "redis" else {}
    server = _limited(tmp_path, 20, **env)
    try:
        # the readiness probe spent one request of the budget
        responses = asyncio.run(_burst([server.url], 60))
    finally:
        stop_server(server)
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 19, (statuses, _admitted_without_redis(server))
    assert statuses.count(429) == 41
    assert all(r.json()["error"]["code"] == "RATE_LIMITED" for r in responses if r.status_code == 429)


def test_two_nodes_share_one_budget_through_redis(tmp_path: Path, redis: str) -> None:
    env = _through_redis(redis)
    first = _limited(tmp_path, 30, **env)
    second = _limited(tmp_path, 30, **env)
    try:
        responses = asyncio.run(_burst([first.url, second.url], 80))
    finally:
        stop_server(first)
        stop_server(second)
    admitted = [r.status_code for r in responses].count(200)
    # 30 a minute across both nodes, less the two readiness probes
    assert admitted == 28, (admitted, _admitted_without_redis(first, second))


def test_concurrent_retries_with_one_idempotency_key_create_once(sqlite_server: Server) -> None:
    key = {"Idempotency-Key": "create-crew-1"}
    responses = asyncio.run(
        _burst([sqlite_server.url], 12, path="/api/v1/teams", method="POST", json={"name": "crew"}, headers=key)
    )
    statuses = [r.status_code for r in responses]
    assert all(status in (201, 409) for status in statuses), statuses
    created = [r for r in responses if r.status_code == 201]
    assert len({r.json()["id"] for r in created}) == 1
    assert sum(1 for r in created if "idempotent-replayed" not in r.headers) == 1
    assert all(r.json()["error"]["code"] == "IDEMPOTENCY_IN_FLIGHT" for r in responses if r.status_code == 409)
    with sqlite_server.client() as client:
        assert client.get("/api/v1/teams").json()["total"] == 1
        replay = client.post("/api/v1/teams", json={"name": "crew"}, headers=key)
        assert replay.status_code == 201
        assert replay.headers["idempotent-replayed"] == "true"
        assert replay.json()["id"] == created[0].json()["id"]
