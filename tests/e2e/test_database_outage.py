"""A lost database connection gives 503 (never 500) and the service recovers without a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.databases import truncate
from tests.e2e.conftest import start_server, stop_server
from tests.proxy import TcpProxy
from tests.support import wait_until

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
            proxy.start()
            wait_until(lambda: client.get("/api/health").status_code == 200, timeout=30)
            assert client.get(f"/api/v1/agents/{agent_id}").json()["name"] == "before"
            assert client.post("/api/v1/agents", json={"name": "after"}).status_code == 201
    finally:
        stop_server(server)
