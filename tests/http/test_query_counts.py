"""No N+1: a list request issues the same number of SQL statements whatever the page holds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.conftest import build_test_app
from tests.support import SERVICE_KEY, bearer

# What SQLite itself executes (SQLAlchemy's statements and the hot statements run on the driver alike).
_TRACE: list[list[str]] = []


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    def trace(statement: str) -> None:
        if _TRACE and not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA")):
            _TRACE[-1].append(statement)

    if hasattr(dbapi_connection, "set_trace_callback"):  # the units of work's (synchronous) connections
        dbapi_connection.set_trace_callback(trace)


@contextmanager
def counting() -> Iterator[list[str]]:
    statements: list[str] = []
    _TRACE.append(statements)
    try:
        yield statements
    finally:
        _TRACE.remove(statements)


@pytest.fixture
def sql_client(tmp_path: Path) -> Iterator[TestClient[Any]]:
    sa.event.listen(sa.Engine, "connect", _on_connect)
    try:
        with TestClient(build_test_app("sqlite", tmp_path, ManualClock())) as client:
            client.headers.update(bearer(SERVICE_KEY))
            yield client
    finally:
        sa.event.remove(sa.Engine, "connect", _on_connect)


def statements_for(client: TestClient[Any], path: str) -> int:
    with counting() as statements:
        assert client.get(path).status_code == 200
    return len(statements)


def grow(client: TestClient[Any], size: int, prefix: str) -> None:
    environment = client.post("/api/v1/environments", json={"name": f"{prefix}-env"}).json()["id"]
    queue = client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": "q"}).json()["id"]
    for index in range(size):
        agent = client.post("/api/v1/agents", json={"name": f"{prefix}-agent-{index}"}).json()["id"]
        client.post("/api/v1/teams", json={"name": f"{prefix}-team-{index}", "configuration": {"member_ids": [agent]}})
        client.post(f"/api/v1/agents/{agent}/execute", json={"prompt": "p", "worker_queue_id": queue})
        client.post("/api/v1/workers/heartbeat", json={"worker_id": f"{prefix}-w{index}", "environment_name": "e"})
        client.post("/api/v1/models", json={"value": f"{prefix}-m{index}", "provider": "p"})


PATHS = [
    "/api/v1/agents?limit=200",
    "/api/v1/teams?limit=200",
    "/api/v1/workers?limit=200",
    "/api/v1/models?limit=200",
    "/api/v1/worker-queues?limit=200",
    "/api/v1/executions?limit=200",
    "/api/v1/environments?limit=200",
]


@pytest.mark.parametrize("path", PATHS)
def test_lists_issue_a_constant_number_of_statements(sql_client: TestClient[Any], path: str) -> None:
    grow(sql_client, 1, "small")
    small = statements_for(sql_client, path)
    grow(sql_client, 12, "large")
    assert statements_for(sql_client, path) == small
    assert small <= 5


def test_the_counter_sees_statements(sql_client: TestClient[Any]) -> None:
    with counting() as statements:
        sql_client.post("/api/v1/agents", json={"name": "counted"})
    assert any("INSERT INTO agents" in statement for statement in statements)


def test_a_bare_agents_lease_reads_once_beyond_the_lease(sql_client: TestClient[Any]) -> None:
    """The lease's `resolved` costs an agent without team, skills, execution environment or context one read."""
    environment = sql_client.post("/api/v1/environments", json={"name": "env"}).json()["id"]
    queue = sql_client.post(f"/api/v1/environments/{environment}/worker-queues", json={"name": "q"}).json()["id"]
    agent = sql_client.post("/api/v1/agents", json={"name": "bare"}).json()["id"]
    sql_client.post(f"/api/v1/agents/{agent}/execute", json={"prompt": "p", "worker_queue_id": queue})
    with counting() as statements:
        leased = sql_client.post(f"/api/v1/worker-queues/{queue}/lease", json={"worker_id": "w", "wait_seconds": 0})
    assert leased.status_code == 200
    writes = ("UPDATE EXECUTIONS", "INSERT INTO EXECUTION_")
    beyond = [s for s in statements if not s.lstrip().upper().startswith(writes)]
    assert len(beyond) == 2, beyond  # the lease's own read, and the one read of the stored context and skills
    assert "execution_contexts" in beyond[1]
    assert "environment_skills" in beyond[1]
