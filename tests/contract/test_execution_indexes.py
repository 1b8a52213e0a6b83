"""The queries that look for queued or held executions can use the partial indexes made for them, on both
databases, with the values they are run with bound (Postgres: also under a generic plan, as prepared statements
end up with); and the indexes hold only the rows their predicate names."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from controlplane_adapters.executions.lease import lease_candidate, lease_in_one
from controlplane_adapters.executions.statements import extend_held_leases
from controlplane_adapters.executions.table import executions, is_held
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.workers.sql import held_by_worker
from tests.databases import truncate

ORG = "org-a"


def _expired(limit: int = 10) -> sa.Select[Any]:
    """The reaper's query, as `SqlExecutionRepository.expired_leases` builds it."""
    t = executions
    return (
        sa.select(t)
        .where(is_held(t.c.status), t.c.lease_expires_at < sa.bindparam("now"))
        .order_by(t.c.lease_expires_at, t.c.id)
        .limit(limit)
    )


CASES = {  # statement, its parameters, the index it should be able to use
    "held by a worker": (held_by_worker(), {"organization_id": ORG, "worker_id": "w"}, "ix_executions_held_by"),
    "extend leases": (
        extend_held_leases(),
        {"where_organization_id": ORG, "where_worker_id": "w", "until": "2026-01-01T00:00:00+00:00"},
        "ix_executions_held_by",
    ),
    "expired leases": (_expired(), {"now": "2026-01-01T00:00:00+00:00"}, "ix_executions_held_until"),
    "lease candidate": (
        lease_candidate(),
        {"organization_id": ORG, "queue_id": "q", "worker_id": "w"},
        "ix_executions_queued",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_sqlite_plans_use_the_partial_indexes(case: str, tmp_path: Path) -> None:
    path = tmp_path / "plans.db"
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    await migrate.upgrade(engine)
    await engine.dispose()
    statement, parameters, index = CASES[case]
    compiled = statement.compile(dialect=sqlite.dialect(), column_keys=list(parameters))
    values = [parameters.get(name, 1) for name in compiled.positiontup or []]
    with sqlite3.connect(path) as connection:
        plan = " | ".join(row[-1] for row in connection.execute(f"EXPLAIN QUERY PLAN {compiled.string}", values))
    assert f"INDEX {index}" in plan, plan


async def _postgres_plan(url: str, sql: str, values: list[Any]) -> str:
    parsed = sa.make_url(url)
    connection = await asyncpg.connect(host=parsed.host, port=parsed.port or 5432, user=parsed.username,
                                       database=parsed.database)  # fmt: skip
    try:
        await connection.execute("SET enable_seqscan = off")  # the tables are empty: ask whether it *can*
        await connection.execute("SET plan_cache_mode = force_generic_plan")  # as a prepared statement ends up
        statement = await connection.prepare(f"EXPLAIN {sql}")
        return " | ".join(row[0] for row in await statement.fetch(*values))
    finally:
        await connection.close()


def _postgres_values(compiled: Any, parameters: dict[str, Any]) -> list[Any]:
    from datetime import UTC, datetime

    out = []
    for name in compiled.positiontup or []:
        value = parameters.get(name, 1)
        out.append(datetime(2026, 1, 1, tzinfo=UTC) if isinstance(value, str) and value.startswith("2026") else value)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
async def test_postgres_generic_plans_use_the_partial_indexes(case: str, postgres_url: str) -> None:
    await truncate(postgres_url)
    statement, parameters, index = CASES[case]
    compiled = statement.compile(dialect=postgresql.asyncpg.dialect(), column_keys=list(parameters))
    plan = await _postgres_plan(postgres_url, compiled.string, _postgres_values(compiled, parameters))
    assert index in plan, plan


async def test_postgres_lease_uses_the_queued_index_under_a_generic_plan(postgres_url: str) -> None:
    from datetime import UTC, datetime

    await truncate(postgres_url)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    parameters = {"lease_organization_id": ORG, "lease_queue_id": "q", "lease_worker_id": "w", "lease_now": now,
                  "lease_until": now}  # fmt: skip
    compiled = lease_in_one().compile(dialect=postgresql.asyncpg.dialect(), column_keys=list(parameters))
    values = [parameters.get(name, 1) for name in compiled.positiontup or []]
    plan = await _postgres_plan(postgres_url, compiled.string, values)
    assert "ix_executions_queued" in plan, plan


async def test_the_partial_indexes_hold_only_their_rows(postgres_url: str) -> None:
    """A finished execution of an agent is in none of them; a queued one only in the queued index."""
    await truncate(postgres_url)
    parsed = sa.make_url(postgres_url)
    connection = await asyncpg.connect(host=parsed.host, port=parsed.port or 5432, user=parsed.username,
                                       database=parsed.database)  # fmt: skip
    try:
        definitions = dict(
            await connection.fetch("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'executions'")
        )
    finally:
        await connection.close()
    assert "WHERE ((status)::text = 'queued'::text)" in definitions["ix_executions_queued"]
    for name in ("ix_executions_held_by", "ix_executions_held_until"):
        assert "'running'" in definitions[name]
        assert "'waiting_for_input'" in definitions[name]
    assert "WHERE (agent_id IS NOT NULL)" in definitions["ix_executions_org_agent"]
    assert "WHERE (team_id IS NOT NULL)" in definitions["ix_executions_org_team"]
