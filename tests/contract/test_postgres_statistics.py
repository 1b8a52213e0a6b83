"""Young Postgres tables get planner statistics long before autovacuum's first look."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.executions.table import executions
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.hot import plan_for
from controlplane_adapters.sql.schema import metadata
from controlplane_adapters.sql.statements import by_id
from controlplane_adapters.sql.statistics import analyze_young_tables
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.executions.entity import ExecutionStatus
from tests.contract.test_execution_records import events
from tests.contract.test_hot_statements import execution
from tests.databases import truncate

NAMES = [table.name for table in metadata.sorted_tables]


async def flush_statistics(engine: AsyncEngine) -> None:
    """A backend reports its table counts at most once a second; this one reports them as it goes idle."""
    async with engine.connect() as connection:
        await connection.execute(sa.text("SELECT pg_stat_force_next_flush()"))
        await connection.commit()


async def test_tables_that_doubled_are_analyzed_once_and_plans_use_the_primary_key(postgres_url: str) -> None:
    await truncate(postgres_url)
    engine = create_engine(postgres_url, pool_size=1)  # one backend: its statistics are flushed on demand
    try:
        await analyze_young_tables(engine, NAMES)  # whatever earlier tests left
        for number in range(600):  # a record is the last write of its unit of work
            async with SqlUnitOfWork(engine) as work:
                new = replace(execution(f"e{number:04}", None, ExecutionStatus.QUEUED), last_seq=1)
                await work.executions.record(None, new, events(new, 1))
                await work.commit()
        await flush_statistics(engine)
        assert {"executions", "execution_events"} <= set(await analyze_young_tables(engine, NAMES))
        assert await analyze_young_tables(engine, NAMES) == []  # nothing changed since
        async with engine.connect() as connection:
            counted = await connection.execute(
                sa.text("SELECT relname, reltuples FROM pg_class WHERE relname IN ('executions', 'execution_events')")
            )
            rows = {str(name): float(count) for name, count in counted.all()}
            assert rows == {"executions": 600, "execution_events": 600}
            parameters = {"organization_id": "org-a", "id": "e0300"}
            hot = plan_for(by_id(executions), connection.dialect, parameters)
            assert hot is not None
            driver: Any = (await connection.get_raw_connection()).driver_connection
            plan = await driver.fetch("EXPLAIN " + hot.sql, *hot.values(parameters))
            assert "pk_executions" in "\n".join(row[0] for row in plan), plan
    finally:
        await engine.dispose()
