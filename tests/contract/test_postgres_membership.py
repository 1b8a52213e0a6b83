"""Postgres: a membership change reads its rows locked (team, then agent), so it decides on them as committed."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.teams.entity import Team
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


async def _seed_team_b_and_agent_a(engine: AsyncEngine) -> None:
    async with SqlUnitOfWork(engine) as work:
        await work.teams.add(team("b"))
        await work.agents.add(agent("a"))
        await work.commit()


async def _add_a_to_b(engine: AsyncEngine) -> tuple[Team | None, bool]:
    async with SqlUnitOfWork(engine) as work:
        answer = await work.teams.set_member("org-a", "org-a-team-b", "org-a-a", True, T0 + timedelta(1))
        await work.commit()
    return answer


async def test_an_add_that_waited_for_a_rename_of_the_team_answers_with_the_new_name(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    await _seed_team_b_and_agent_a(postgres_engine)
    rename = ["UPDATE teams SET name = 'renamed' WHERE id = 'org-a-team-b'"]
    found, _ = await behind(postgres_url, rename, _add_a_to_b(postgres_engine))
    assert found is not None
    assert found.name == "renamed"


async def test_an_add_that_waited_for_a_delete_of_the_team_finds_no_team(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    await _seed_team_b_and_agent_a(postgres_engine)
    delete = ["DELETE FROM teams WHERE id = 'org-a-team-b'"]
    found, agent_found = await behind(postgres_url, delete, _add_a_to_b(postgres_engine))
    assert (found, agent_found) == (None, True)  # the use case's 404 for the team
    async with SqlUnitOfWork(postgres_engine) as work:
        left = await work.agents.get("org-a", "org-a-a")
    assert left is not None
    assert left.team_id is None
