"""Postgres connections run generic plans when asked (`create_engine(generic_plans=True)`, the
CONTROLPLANE_DATABASE_GENERIC_PLANS default), and Postgres's own choice otherwise."""

from __future__ import annotations

import sqlalchemy as sa

from controlplane_adapters.sql.engine import create_engine


async def plan_cache_mode(url: str, generic_plans: bool) -> str:
    engine = create_engine(url, generic_plans=generic_plans)
    try:
        async with engine.connect() as connection:
            return str((await connection.execute(sa.text("SHOW plan_cache_mode"))).scalar_one())
    finally:
        await engine.dispose()


async def test_a_connection_runs_generic_plans_only_when_asked(postgres_url: str) -> None:
    assert await plan_cache_mode(postgres_url, True) == "force_generic_plan"
    assert await plan_cache_mode(postgres_url, False) == "auto"
