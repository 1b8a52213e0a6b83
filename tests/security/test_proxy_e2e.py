"""End to end: `controlplane serve` takes the socket's peer as the client, X-Forwarded-For from loopback included
(uvicorn's own proxy-header handling trusted loopback), unless CONTROLPLANE_TRUSTED_PROXIES names the peer."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import start_server, stop_server

pytestmark = pytest.mark.e2e


def audited_ip(client: httpx.Client, name: str, forwarded: str) -> str | None:
    made = client.post("/api/v1/agents", json={"name": name}, headers={"X-Forwarded-For": forwarded})
    assert made.status_code == 201, made.text
    events = client.get("/api/v1/audit-events", params={"resource_id": made.json()["id"]}).json()["items"]
    ip: str | None = events[0]["client"]["ip"]
    return ip


@pytest.mark.parametrize(("trusted", "expected"), [("", "127.0.0.1"), ("127.0.0.0/8", "203.0.113.9")])
def test_the_audited_client_is_the_peer_unless_it_is_a_trusted_proxy(
    tmp_path: Path, trusted: str, expected: str
) -> None:
    server = start_server(
        tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'proxy.db'}", CONTROLPLANE_TRUSTED_PROXIES=trusted
    )
    try:
        with server.client() as client:
            assert audited_ip(client, "a", "203.0.113.9") == expected
    finally:
        stop_server(server)
