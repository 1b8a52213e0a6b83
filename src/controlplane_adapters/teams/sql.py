"""Teams in SQL: the table, its row mapping, and the repository (a member's move as one statement on Postgres)."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.agents.sql import SqlAgentRepository, agents
from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import (
    Json,
    UtcDateTime,
    execution_environment,
    from_json,
    id_column,
    metadata,
    organization_column,
    timestamps,
    to_json,
)
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.statements import slices
from controlplane_domain.config import TeamSettings
from controlplane_domain.teams.entity import Team, TeamStatus
from controlplane_domain.teams.usecases import set_member_in_steps

teams = sa.Table(
    "teams",
    metadata,
    id_column(),
    organization_column(),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("runtime", sa.String(64), nullable=False),
    sa.Column("configuration", Json, nullable=False),
    sa.Column("skill_ids", Json, nullable=True),
    sa.Column("execution_environment", Json, nullable=True),
    *timestamps(),
    sa.UniqueConstraint("organization_id", "name"),
    sa.Index("ix_teams_org_created", "organization_id", "created_at", "id"),
)


def team_to_row(team: Team) -> dict[str, Any]:
    return {
        "id": team.id,
        "organization_id": team.organization_id,
        "name": team.name,
        "description": team.description,
        "status": team.status.value,
        "runtime": team.runtime,
        "configuration": to_json(team.settings),
        "skill_ids": None if team.skill_ids is None else list(team.skill_ids),
        "execution_environment": to_json(team.execution_environment),
        "created_at": team.created_at,
        "updated_at": team.updated_at,
    }


def team_to_domain(row: Any) -> Team:
    return Team(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        description=row.description,
        status=TeamStatus(row.status),
        runtime=row.runtime,
        settings=from_json(row.configuration, TeamSettings),
        skill_ids=None if row.skill_ids is None else list(row.skill_ids),
        execution_environment=execution_environment(row.execution_environment),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


@functools.cache
def _set_member(member: bool) -> sa.Select[Any]:
    """Postgres: `TeamRepository.set_member` as one statement of its own transaction, so that the team's and the
    agent's rows stay locked only while it runs (reads, two writes and a commit a round trip apart each held
    them for four round trips, and the changes of one team queued behind each other for all of them).

    `agent`: the agent's team as the statement's snapshot sees it. `bumped`: the team's `updated_at`, if the agent
    exists and is elsewhere (`member`) or in this team (not `member`); it locks the team's row first. `moved`:
    the agent into the team or out of it, only once the team was bumped (its condition reads `bumped`, so the
    team's row is locked before the agent's, as `set_team` after `update` does), and only if the agent's row, once
    locked, is still where the snapshot saw it (a removal never undoes a concurrent move to another team). Then
    the team as the snapshot saw it (outer-joined: no team columns mean no such team), the team as bumped (its
    row once locked: a change committed meanwhile is in it), whether the agent was found and whether the snapshot
    wanted the change (wanted and not bumped: the team was deleted while the statement waited for its lock)."""
    tm, ag = teams, agents
    organization: sa.BindParameter[str] = sa.bindparam("member_organization_id", type_=sa.String())
    team_id: sa.BindParameter[str] = sa.bindparam("member_team_id", type_=sa.String())
    agent_id: sa.BindParameter[str] = sa.bindparam("member_agent_id", type_=sa.String())
    now = sa.bindparam("member_now", type_=UtcDateTime())
    agent = sa.select(ag.c.team_id).where(ag.c.organization_id == organization, ag.c.id == agent_id).cte("agent")

    def elsewhere(column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return column.is_distinct_from(team_id) if member else column == team_id

    wanted = sa.exists().where(elsewhere(agent.c.team_id))  # the snapshot's agent is where the change moves it from
    bumped = (
        tm.update()
        .where(tm.c.organization_id == organization, tm.c.id == team_id, wanted)
        .values(updated_at=now)
        .returning(*tm.columns)
        .cte("bumped")
    )
    moved = (
        ag.update()
        .where(
            ag.c.organization_id == organization,
            ag.c.id == agent_id,
            elsewhere(ag.c.team_id),  # checked again on the row as it is once locked (another change got in first)
            sa.exists(sa.select(bumped.c.id)),
        )
        .values(team_id=team_id if member else sa.null(), updated_at=now)
        .returning(ag.c.id)
        .cte("moved")
    )
    one = sa.select(sa.literal_column("1").label("one")).subquery("one")
    team_of = sa.and_(tm.c.organization_id == organization, tm.c.id == team_id)
    return hot(
        sa.select(
            *tm.columns,
            *(bumped.c[column.name].label(f"bumped_{column.name}") for column in tm.columns),
            sa.exists(sa.select(agent.c.team_id)).label("agent_found"),
            wanted.label("wanted"),
        )
        .select_from(one.outerjoin(tm, team_of).outerjoin(bumped, sa.true()))
        .add_cte(moved)
    )


class SqlTeamRepository(SqlRepository[Team]):
    table = teams
    to_row = staticmethod(team_to_row)
    to_domain = staticmethod(team_to_domain)
    noun = "team"

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        if self.connection.dialect.name != "postgresql":  # SQLite's writer holds the database lock: reads, then writes
            members = SqlAgentRepository(self.connection)
            return await set_member_in_steps(self, members, organization_id, team_id, agent_id, member, now)
        parameters = {"member_organization_id": organization_id, "member_team_id": team_id,
                      "member_agent_id": agent_id, "member_now": now}  # fmt: skip
        row = (await self.connection.execute(_set_member(member), parameters)).first()
        seen, bumped = slices(row, (teams, teams))
        if seen is None or (bumped is None and row.wanted):  # no such team, or deleted while this waited for it
            return None, bool(row.agent_found)
        return team_to_domain(bumped or seen), bool(row.agent_found)
