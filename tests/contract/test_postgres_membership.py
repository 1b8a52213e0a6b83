"""Postgres: a membership change is one statement that re-checks the rows it locks."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.sql.database import SqlUnitOfWork
from tests.contract.conftest import behind
from tests.contract.test_repositories import T0, agent, team


async def test_a_removal_that_waited_for_a_move_to_another_team_does_not_undo_it(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    async with SqlUnitOfWork(postgres_engine) as work:
        await work.teams.add(team("b"))
        await work.teams.add(team("c"))
        await work.agents.add(agent("a", team_id="org-a-team-b"))
        await work.commit()

    async def remove_from_b() -> bool:
        async with SqlUnitOfWork(postgres_engine) as work:
            _, found = await work.teams.set_member("org-a", "org-a-team-b", "org-a-a", False, T0 + timedelta(1))
            await work.commit()
        return found

    move_to_c = [  # another change moves the agent to team c, as membership changes lock: team, then agent
        "UPDATE teams SET updated_at = now() WHERE id = 'org-a-team-c'",
        "UPDATE agents SET team_id = 'org-a-team-c' WHERE id = 'org-a-a'",
    ]
    assert await behind(postgres_url, move_to_c, remove_from_b()) is True
    async with SqlUnitOfWork(postgres_engine) as work:
        moved = await work.agents.get("org-a", "org-a-a")
    assert moved is not None
    assert moved.team_id == "org-a-team-c"


async def test_an_add_that_waited_for_a_rename_of_the_team_answers_with_the_new_name(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    async with SqlUnitOfWork(postgres_engine) as work:
        await work.teams.add(team("b"))
        await work.agents.add(agent("a"))
        await work.commit()

    async def add_to_b() -> str | None:
        async with SqlUnitOfWork(postgres_engine) as work:
            found, _ = await work.teams.set_member("org-a", "org-a-team-b", "org-a-a", True, T0 + timedelta(1))
            await work.commit()
        return found.name if found else None

    rename = ["UPDATE teams SET name = 'renamed' WHERE id = 'org-a-team-b'"]
    assert await behind(postgres_url, rename, add_to_b()) == "renamed"


async def test_an_add_that_waited_for_a_delete_of_the_team_finds_no_team(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    async with SqlUnitOfWork(postgres_engine) as work:
        await work.teams.add(team("b"))
        await work.agents.add(agent("a"))
        await work.commit()

    async def add_to_b() -> tuple[bool, bool]:
        async with SqlUnitOfWork(postgres_engine) as work:
            found, agent_found = await work.teams.set_member(
                "org-a", "org-a-team-b", "org-a-a", True, T0 + timedelta(1)
            )
            await work.commit()
        return found is not None, agent_found

    delete = ["DELETE FROM teams WHERE id = 'org-a-team-b'"]
    assert await behind(postgres_url, delete, add_to_b()) == (False, True)  # the use case's 404 for the team
    async with SqlUnitOfWork(postgres_engine) as work:
        left = await work.agents.get("org-a", "org-a-a")
    assert left is not None
    assert left.team_id is None
