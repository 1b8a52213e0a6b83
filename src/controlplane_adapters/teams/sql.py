"""Teams in SQL: the table, its row mapping, and the repository (a member's move is the domain's rule:
`teams.usecases.set_member_in_steps`, on rows read locked)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.agents.sql import SqlAgentRepository
from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import (
    Json,
    execution_environment,
    from_json,
    id_column,
    metadata,
    organization_column,
    timestamps,
    to_json,
)
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


class SqlTeamRepository(SqlRepository[Team]):
    table = teams
    to_row = staticmethod(team_to_row)
    to_domain = staticmethod(team_to_domain)
    noun = "team"

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        return await set_member_in_steps(self, SqlAgentRepository(self.connection), organization_id, team_id,
                                         agent_id, member, now)  # fmt: skip
