"""Postgres: a membership change is one statement that re-checks the agent's row once it holds its lock."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import asyncpg

from controlplane_adapters.sql.database import SqlUnitOfWork, create_engine
from controlplane_adapters.sql.notify import asyncpg_dsn
from tests.contract.test_repositories import T0, agent, team
from tests.databases import truncate


async def _waits_for_a_lock(observer: asyncpg.Connection, deadline: float) -> None:
    """Until another session of this database waits for a row lock (polled: it is the server's state)."""
    query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    while not await observer.fetchval(query):
        assert time.monotonic() < deadline, "the membership change never waited for a row lock"
        await asyncio.sleep(0.01)


async def test_a_removal_that_waited_for_a_move_to_another_team_does_not_undo_it(postgres_url: str) -> None:
    await truncate(postgres_url)
    engine = create_engine(postgres_url)
    mover = await asyncpg.connect(asyncpg_dsn(postgres_url))
    observer = await asyncpg.connect(asyncpg_dsn(postgres_url))
    try:
        async with SqlUnitOfWork(engine) as work:
            await work.teams.add(team("b"))
            await work.teams.add(team("c"))
            await work.agents.add(agent("a", team_id="org-a-team-b"))
            await work.commit()
        move = mover.transaction()
        await move.start()  # another change moves the agent to team c, as membership changes lock: team, then agent
        await mover.execute("UPDATE teams SET updated_at = now() WHERE id = 'org-a-team-c'")
        await mover.execute("UPDATE agents SET team_id = 'org-a-team-c' WHERE id = 'org-a-a'")

        async def remove_from_b() -> bool:
            async with SqlUnitOfWork(engine) as work:
                _, found = await work.teams.set_member("org-a", "org-a-team-b", "org-a-a", False, T0 + timedelta(1))
                await work.commit()
            return found

        removal = asyncio.create_task(remove_from_b())  # its snapshot still has the agent in team b
        await _waits_for_a_lock(observer, time.monotonic() + 10)
        await move.commit()
        assert await removal is True
        async with SqlUnitOfWork(engine) as work:
            moved = await work.agents.get("org-a", "org-a-a")
        assert moved is not None
        assert moved.team_id == "org-a-team-c"
    finally:
        await mover.close()
        await observer.close()
        await engine.dispose()


async def test_an_add_that_waited_for_a_rename_of_the_team_answers_with_the_new_name(postgres_url: str) -> None:
    await truncate(postgres_url)
    engine = create_engine(postgres_url)
    renamer = await asyncpg.connect(asyncpg_dsn(postgres_url))
    observer = await asyncpg.connect(asyncpg_dsn(postgres_url))
    try:
        async with SqlUnitOfWork(engine) as work:
            await work.teams.add(team("b"))
            await work.agents.add(agent("a"))
            await work.commit()
        rename = renamer.transaction()
        await rename.start()
        await renamer.execute("UPDATE teams SET name = 'renamed' WHERE id = 'org-a-team-b'")

        async def add_to_b() -> str | None:
            async with SqlUnitOfWork(engine) as work:
                found, _ = await work.teams.set_member("org-a", "org-a-team-b", "org-a-a", True, T0 + timedelta(1))
                await work.commit()
            return found.name if found else None

        adding = asyncio.create_task(add_to_b())  # its snapshot still has the old name
        await _waits_for_a_lock(observer, time.monotonic() + 10)
        await rename.commit()
        assert await adding == "renamed"
    finally:
        await renamer.close()
        await observer.close()
        await engine.dispose()
