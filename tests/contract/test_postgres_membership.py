"""Postgres: a membership change is one statement that re-checks the rows it locks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from datetime import timedelta
from typing import TypeVar

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.sql.database import SqlUnitOfWork, create_engine
from controlplane_adapters.sql.notify import asyncpg_dsn
from tests.contract.test_repositories import T0, agent, team
from tests.databases import truncate

T = TypeVar("T")


@pytest.fixture
async def engine(postgres_url: str) -> AsyncIterator[AsyncEngine]:
    await truncate(postgres_url)
    engine = create_engine(postgres_url)
    try:
        yield engine
    finally:
        await engine.dispose()


async def _behind(postgres_url: str, held: Sequence[str], change: Awaitable[T]) -> T:
    """Run `change` while another transaction holds what `held`'s statements lock; commit that transaction once
    `change` waits for a row lock (polled from `pg_stat_activity`: it is the server's state); `change`'s result."""
    holder = await asyncpg.connect(asyncpg_dsn(postgres_url))
    observer = await asyncpg.connect(asyncpg_dsn(postgres_url))
    try:
        transaction = holder.transaction()
        await transaction.start()
        for statement in held:
            await holder.execute(statement)
        task = asyncio.ensure_future(change)  # its snapshot is taken before the holder commits
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        deadline = time.monotonic() + 10
        while not await observer.fetchval(query):
            assert time.monotonic() < deadline, "the membership change never waited for a row lock"
            await asyncio.sleep(0.01)
        await transaction.commit()
        return await task
    finally:
        await holder.close()
        await observer.close()


async def test_a_removal_that_waited_for_a_move_to_another_team_does_not_undo_it(
    engine: AsyncEngine, postgres_url: str
) -> None:
    async with SqlUnitOfWork(engine) as work:
        await work.teams.add(team("b"))
        await work.teams.add(team("c"))
        await work.agents.add(agent("a", team_id="org-a-team-b"))
        await work.commit()

    async def remove_from_b() -> bool:
        async with SqlUnitOfWork(engine) as work:
            _, found = await work.teams.set_member("org-a", "org-a-team-b", "org-a-a", False, T0 + timedelta(1))
            await work.commit()
        return found

    move_to_c = [  # another change moves the agent to team c, as membership changes lock: team, then agent
        "UPDATE teams SET updated_at = now() WHERE id = 'org-a-team-c'",
        "UPDATE agents SET team_id = 'org-a-team-c' WHERE id = 'org-a-a'",
    ]
    assert await _behind(postgres_url, move_to_c, remove_from_b()) is True
    async with SqlUnitOfWork(engine) as work:
        moved = await work.agents.get("org-a", "org-a-a")
    assert moved is not None
    assert moved.team_id == "org-a-team-c"


async def test_an_add_that_waited_for_a_rename_of_the_team_answers_with_the_new_name(
    engine: AsyncEngine, postgres_url: str
) -> None:
    async with SqlUnitOfWork(engine) as work:
        await work.teams.add(team("b"))
        await work.agents.add(agent("a"))
        await work.commit()

    async def add_to_b() -> str | None:
        async with SqlUnitOfWork(engine) as work:
            found, _ = await work.teams.set_member("org-a", "org-a-team-b", "org-a-a", True, T0 + timedelta(1))
            await work.commit()
        return found.name if found else None

    rename = ["UPDATE teams SET name = 'renamed' WHERE id = 'org-a-team-b'"]
    assert await _behind(postgres_url, rename, add_to_b()) == "renamed"


async def test_an_add_that_waited_for_a_delete_of_the_team_finds_no_team(
    engine: AsyncEngine, postgres_url: str
) -> None:
    async with SqlUnitOfWork(engine) as work:
        await work.teams.add(team("b"))
        await work.agents.add(agent("a"))
        await work.commit()

    async def add_to_b() -> tuple[bool, bool]:
        async with SqlUnitOfWork(engine) as work:
            found, agent_found = await work.teams.set_member(
                "org-a", "org-a-team-b", "org-a-a", True, T0 + timedelta(1)
            )
            await work.commit()
        return found is not None, agent_found

    delete = ["DELETE FROM teams WHERE id = 'org-a-team-b'"]
    assert await _behind(postgres_url, delete, add_to_b()) == (False, True)  # the use case's 404 for the team
    async with SqlUnitOfWork(engine) as work:
        left = await work.agents.get("org-a", "org-a-a")
    assert left is not None
    assert left.team_id is None
