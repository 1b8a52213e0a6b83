"""Agents in SQL: the table, its row mapping, and the repository (which renders rows too: rendered_reads.py)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, owned_table
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.rendered_reads import RenderedReads
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import insert_row, one_of, values_of
from controlplane_domain.agents.entity import Agent
from controlplane_domain.errors import DomainError, ValidationFailed

agents = owned_table(
    "agents",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("runtime", sa.String(64), nullable=False),
    sa.Column("model_id", sa.String(255), nullable=True),
    sa.Column("system_prompt", sa.Text(), nullable=True),
    sa.Column("team_id", sa.String(64), sa.ForeignKey("teams.id", ondelete="SET NULL"), nullable=True),
    sa.Column("capabilities", Json, nullable=False),
    sa.Column("skill_ids", Json, nullable=False),
    sa.Column("execution_environment", Json, nullable=True),
    sa.Column("configuration", Json, nullable=False),
    sa.Index("ix_agents_org_team", "organization_id", "team_id", "created_at", "id"),
    unique=("name",),
)


AGENT_ROWS = RowMapping(Agent, agents)
agent_to_row, agent_to_domain = AGENT_ROWS.to_row, AGENT_ROWS.to_domain


@functools.cache
def _team_members() -> sa.Select[Any]:
    t = agents
    where = (t.c.organization_id == sa.bindparam("organization_id"), t.c.team_id == sa.bindparam("team_id"))
    return hot(sa.select(t).where(*where).order_by(t.c.created_at, t.c.id))


@functools.cache
def _teams_members(postgres: bool) -> sa.Select[Any]:
    t = agents
    where = (t.c.organization_id == sa.bindparam("organization_id"), one_of(t.c.team_id, "team_ids", postgres))
    return hot(sa.select(t).where(*where).order_by(t.c.created_at, t.c.id))


@functools.cache
def _set_one_team(only_from: bool = False) -> sa.Update:
    """`only_from`: only if the agent is in team `only_from` (re-checked on Postgres once its row is locked)."""
    t = agents
    where = [t.c.organization_id == sa.bindparam("where_organization_id"), t.c.id == sa.bindparam("where_id")]
    if only_from:
        where.append(t.c.team_id == sa.bindparam("only_from"))
    return hot(t.update().where(*where).values(team_id=sa.bindparam("team_id"), updated_at=sa.bindparam("updated_at")))


class SqlAgentRepository(RenderedReads, SqlRepository[Agent]):
    """Agents; their rows are rendered as JSON by the database for the agents' list and get (rendered_reads.py)."""

    rows = AGENT_ROWS
    noun = "agent"
    audited = Agent.audited

    def _missing_reference(self, obj: Agent) -> DomainError:  # the team, as the use case's own check says it
        return ValidationFailed("team_id", f"team '{obj.team_id}' does not exist")

    async def add(self, obj: Agent) -> None:
        await self._add(obj, insert_row(self.table, atomic=True))  # (the last statement of the add)

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]:
        if not agent_ids:
            return []
        t = self.table
        rows = await self.connection.execute(
            sa.select(t).where(t.c.organization_id == organization_id, t.c.id.in_(list(agent_ids)))
        )
        return [agent_to_domain(row) for row in rows]

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        if not team_ids:
            return []
        if len(team_ids) == 1:  # one team's members (every membership answer): a statement built once
            parameters = {"organization_id": organization_id, "team_id": team_ids[0]}
            return [agent_to_domain(row) for row in await self.connection.execute(_team_members(), parameters)]
        postgres = self.connection.dialect.name == "postgresql"  # a page of teams' members: built once too
        parameters = {"organization_id": organization_id, "team_ids": values_of(team_ids, postgres)}
        return [agent_to_domain(row) for row in await self.connection.execute(_teams_members(postgres), parameters)]

    async def set_team(
        self,
        organization_id: str,
        agent_ids: Sequence[str],
        team_id: str | None,
        now: datetime,
        *,
        only_from: str | None = None,
    ) -> None:
        t = self.table
        ids = sorted(set(agent_ids))
        if len(ids) == 1:  # one agent joins or leaves: its UPDATE locks the one row (no lock order to keep)
            one = {"where_organization_id": organization_id, "where_id": ids[0], "team_id": team_id, "updated_at": now}
            if only_from is not None:
                one["only_from"] = only_from
            await self.connection.execute(_set_one_team(only_from is not None), one)
            return
        where = [t.c.organization_id == organization_id, t.c.id.in_(ids)]
        if only_from is not None:  # READ COMMITTED evaluates it again on a row a concurrent change updated
            where.append(t.c.team_id == only_from)
        if self.connection.dialect.name == "postgresql":
            # Lock the rows in one global order so concurrent membership changes cannot deadlock.
            await self.connection.execute(sa.select(t.c.id).where(*where).order_by(t.c.id).with_for_update())
        await self.connection.execute(t.update().where(*where).values(team_id=team_id, updated_at=now))
