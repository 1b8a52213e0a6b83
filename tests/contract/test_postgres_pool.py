"""The Postgres pool: never more connections than its size; a unit of work that finds them all busy waits, then 503."""

from __future__ import annotations

import asyncio

import pytest

from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.errors import Unavailable
from tests.databases import truncate


async def test_a_unit_of_work_beyond_the_pool_opens_no_connection_and_is_unavailable_after_the_timeout(
    postgres_url: str,
) -> None:
    await truncate(postgres_url)
    engine = create_engine(postgres_url, pool_size=2, pool_timeout=0.3)
    try:
        async with SqlUnitOfWork(engine) as first, SqlUnitOfWork(engine) as second:
            assert await first.agents.get("org", "a") is None
            assert await second.agents.get("org", "a") is None
            with pytest.raises(Unavailable, match="busy"):  # an overflow connection would have let it in
                async with SqlUnitOfWork(engine) as third:  # it takes a connection with its first statement
                    await third.agents.get("org", "a")
    finally:
        await engine.dispose()


async def test_a_unit_of_work_beyond_the_pool_waits_for_a_connection(postgres_url: str) -> None:
    await truncate(postgres_url)
    engine = create_engine(postgres_url, pool_size=1, pool_timeout=30)
    try:
        held = asyncio.Event()
        release = asyncio.Event()

        async def holder() -> None:
            async with SqlUnitOfWork(engine) as uow:
                assert await uow.agents.get("org", "a") is None  # takes the one connection
                held.set()
                await release.wait()

        holding = asyncio.create_task(holder())
        await held.wait()

        async def waiter() -> None:
            async with SqlUnitOfWork(engine) as uow:
                assert await uow.agents.get("org", "a") is None

        waiting = asyncio.create_task(waiter())
        done, _ = await asyncio.wait({waiting}, timeout=0.2)
        assert not done  # queued behind the held connection
        release.set()
        await asyncio.wait_for(waiting, timeout=30)
        await holding
    finally:
        await engine.dispose()
