"""Projects in SQL: the projects table, the two membership tables, the row mapping and the repository."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.agents.sql import SqlAgentRepository
from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, metadata, organization_column, owned_table
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import one_of, values_of
from controlplane_adapters.teams.sql import SqlTeamRepository
from controlplane_domain.agents.entity import Agent
from controlplane_domain.paging import PageRequest
from controlplane_domain.projects.entity import MemberKind, Project, ProjectCounts
from controlplane_domain.teams.entity import Team

projects = owned_table(
    "projects",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("key", sa.String(16), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("settings", Json, nullable=False),
    unique=("name", "key"),
)


def _members(name: str, member: str, referred: str) -> sa.Table:
    """A project's agents or teams: deleting the project or the member deletes the row (foreign keys)."""
    return sa.Table(
        name,
        metadata,
        sa.Column("project_id", sa.String(64), sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
        sa.Column(member, sa.String(64), sa.ForeignKey(f"{referred}.id", ondelete="CASCADE"), primary_key=True),
        organization_column(),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Index(f"ix_{name}_{member}", member),
    )


project_agents = _members("project_agents", "agent_id", "agents")
project_teams = _members("project_teams", "team_id", "teams")
PROJECT_ROWS = RowMapping(Project, projects)
MEMBERS = {MemberKind.AGENT: (project_agents, "agent_id"), MemberKind.TEAM: (project_teams, "team_id")}


def member_of(kind: MemberKind, project_id: str) -> sa.Select[Any]:
    """The ids of the agents (or teams) a project holds: a list's filter (`id IN (...)`)."""
    table, column = MEMBERS[kind]
    return sa.select(table.c[column]).where(table.c.project_id == project_id)


@functools.cache
def _projects_of(kind: MemberKind, postgres: bool) -> sa.Select[Any]:
    """The projects of several agents (or teams), each row with its member's id, in the projects' order."""
    table, column = MEMBERS[kind]
    mine: sa.BindParameter[str] = sa.bindparam("organization_id")
    return hot(
        sa.select(table.c[column].label("member_id"), *projects.c)
        .select_from(table.join(projects, projects.c.id == table.c.project_id))
        .where(
            table.c.organization_id == mine,
            projects.c.organization_id == mine,
            one_of(table.c[column], "member_ids", postgres),
        )
        .order_by(projects.c.created_at, projects.c.id)
    )


class SqlProjectRepository(SqlRepository[Project]):
    rows = PROJECT_ROWS
    noun = "project"
    audited = Project.audited
    unique_fields = ("name", "key")

    async def counts(self, organization_id: str, project_ids: Sequence[str]) -> dict[str, ProjectCounts]:
        if not project_ids:
            return {}
        found: dict[str, list[int]] = {}
        for index, (table, _) in enumerate(MEMBERS.values()):
            statement = (
                sa.select(table.c.project_id, sa.func.count())
                .where(table.c.organization_id == organization_id, table.c.project_id.in_(list(project_ids)))
                .group_by(table.c.project_id)
            )
            for project_id, count in await self.connection.execute(statement):
                found.setdefault(project_id, [0, 0])[index] = count
        return {project_id: ProjectCounts(agents, teams) for project_id, (agents, teams) in found.items()}

    async def set_member(
        self, organization_id: str, project_id: str, kind: MemberKind, member_id: str, member: bool, now: datetime
    ) -> None:
        table, column = MEMBERS[kind]
        if not member:
            await self.connection.execute(
                table.delete().where(table.c.project_id == project_id, table.c[column] == member_id)
            )
            return
        present = sa.select(table.c.project_id).where(table.c.project_id == project_id, table.c[column] == member_id)
        if (await self.connection.execute(present)).first() is None:
            row = {"project_id": project_id, column: member_id, "organization_id": organization_id, "created_at": now}
            await self.connection.execute(table.insert(), row)

    async def of_teams(self, organization_id: str, team_ids: Sequence[str]) -> dict[str, list[Project]]:
        return await self._of_members(organization_id, MemberKind.TEAM, team_ids)

    async def _of_members(
        self, organization_id: str, kind: MemberKind, member_ids: Sequence[str]
    ) -> dict[str, list[Project]]:
        if not member_ids:
            return {}
        postgres = self.connection.dialect.name == "postgresql"
        parameters = {"organization_id": organization_id, "member_ids": values_of(member_ids, postgres)}
        found: dict[str, list[Project]] = {}
        for row in await self.connection.execute(_projects_of(kind, postgres), parameters):
            found.setdefault(row.member_id, []).append(PROJECT_ROWS.to_domain(row))
        return found

    async def agent_page(self, organization_id: str, project_id: str, page: PageRequest) -> tuple[list[Agent], int]:
        agents = SqlAgentRepository(self.connection)
        return await agents.list_where(
            organization_id, page, agents.table.c.id.in_(member_of(MemberKind.AGENT, project_id))
        )

    async def team_page(self, organization_id: str, project_id: str, page: PageRequest) -> tuple[list[Team], int]:
        teams = SqlTeamRepository(self.connection)
        return await teams.list_where(
            organization_id, page, teams.table.c.id.in_(member_of(MemberKind.TEAM, project_id))
        )
