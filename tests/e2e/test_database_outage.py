"""A lost database connection gives 503 (never 500) and the service recovers without a restart."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
import sqlalchemy as sa
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_domain.errors import DomainError
from controlplane_domain.ports import Ports
from controlplane_domain.workers.flushing import flush_heartbeats
from tests.conftest import build_test_app
from tests.databases import truncate
from tests.e2e.conftest import start_server, stop_server
from tests.proxy import TcpProxy
from tests.support import SERVICE_KEY, bearer, make_jwt, wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def proxy(postgres_url: str) -> Iterator[TcpProxy]:
    url = sa.make_url(postgres_url)
    relay = TcpProxy(url.host or "127.0.0.1", url.port or 5432)
    relay.start()
    try:
        yield relay
    finally:
        relay.close()


def test_outage_is_503_and_recovery_needs_no_restart(tmp_path: Path, postgres_url: str, proxy: TcpProxy) -> None:
    asyncio.run(truncate(postgres_url))
    through_proxy = sa.make_url(postgres_url).set(host="127.0.0.1", port=proxy.port)
    server = start_server(tmp_path, through_proxy.render_as_string(hide_password=False))
    try:
        with server.client() as client:
            agent_id = client.post("/api/v1/agents", json={"name": "before"}).json()["id"]
            proxy.cut()
            health = client.get("/api/health")
            assert health.status_code == 503, health.text
            assert health.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
            for response in (
                client.get(f"/api/v1/agents/{agent_id}"),
                client.post("/api/v1/agents", json={"name": "x"}),
            ):
                assert response.status_code == 503, response.text
                assert response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
                assert "Traceback" not in response.text
            # a caller of an organization not seen yet: its rate-limit figures cannot be read before routing
            newcomer = client.get("/api/v1/agents", headers=bearer(make_jwt("org-never-seen")))
            assert newcomer.status_code == 503, newcomer.text
            assert newcomer.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
            proxy.start()
            wait_until(lambda: client.get("/api/health").status_code == 200)
            # a pooled connection the outage broke answers one request 503 and is replaced (no pre-ping on the hot
            # path): the reads come back without a restart
            wait_until(lambda: client.get(f"/api/v1/agents/{agent_id}").status_code == 200)
            again = client.get(f"/api/v1/agents/{agent_id}")
            assert again.json()["name"] == "before"
            assert client.post("/api/v1/agents", json={"name": "after"}).status_code == 201
    finally:
        stop_server(server)


def test_heartbeats_waiting_during_an_outage_are_written_after_it(
    tmp_path: Path, postgres_url: str, proxy: TcpProxy
) -> None:
    asyncio.run(truncate(postgres_url))
    through_proxy = sa.make_url(postgres_url).set(host="127.0.0.1", port=proxy.port)
    app = build_test_app("postgres", tmp_path, ManualClock(), through_proxy.render_as_string(hide_password=False),
                         heartbeat_flush_ms=60_000)  # fmt: skip  # flushed by the test only
    ports: Ports = app.state["ports"]
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        for worker_id in ("w", "w2"):  # two reports: a failed flush of several tries each on its own
            beat = {"worker_id": worker_id, "environment_name": "e"}
            assert client.post("/api/v1/workers/heartbeat", json={**beat, "tasks_processed": 1}).json()["registered"]
            client.post("/api/v1/workers/heartbeat", json={**beat, "tasks_processed": 2})  # waits in the buffer
        proxy.cut()
        with pytest.raises(DomainError):
            client.blocking_portal.call(flush_heartbeats, ports)
        assert client.get("/api/v1/workers/w").status_code == 503
        proxy.start()
        wait_until(lambda: client.get("/api/health").status_code == 200)
        assert client.blocking_portal.call(flush_heartbeats, ports) == 2, "none was dropped during the outage"
    assert asyncio.run(stored_tasks_processed(postgres_url, "w")) == 2
    assert asyncio.run(stored_tasks_processed(postgres_url, "w2")) == 2


async def stored_tasks_processed(url: str, worker_id: str) -> int:
    target = sa.make_url(url)
    connection = await asyncpg.connect(host=target.host, port=target.port, user=target.username,
                                       database=target.database)  # fmt: skip
    try:
        value = await connection.fetchval("SELECT tasks_processed FROM workers WHERE worker_id = $1", worker_id)
    finally:
        await connection.close()
    return int(value)


def test_a_stop_ends_when_the_database_stops_answering(tmp_path: Path, postgres_url: str, proxy: TcpProxy) -> None:
    """Postgres hangs (connections open, nothing answered) and the server gets SIGTERM: each step of the stop
    (the last heartbeat flush, the notification listener's close, the pool's) is given a few seconds, and the
    process ends instead of waiting for SIGKILL."""
    asyncio.run(truncate(postgres_url))
    through_proxy = sa.make_url(postgres_url).set(host="127.0.0.1", port=proxy.port)
    server = start_server(tmp_path, through_proxy.render_as_string(hide_password=False))
    try:
        with server.client() as client:
            beat = {"worker_id": "w", "environment_name": "e"}
            assert client.post("/api/v1/workers/heartbeat", json=beat).status_code == 200
            assert client.post("/api/v1/workers/heartbeat", json={**beat, "tasks_processed": 1}).status_code == 200
        proxy.stall()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=90)  # raises if the stop hangs
    finally:
        stop_server(server)
    log = server.log.read_text()
    assert "did not finish within" in log, log[-3000:]
    assert "Application shutdown complete" in log
