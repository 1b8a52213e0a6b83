"""Teams in SQL: the table, its row mapping, and the repository (a member's move is the domain's rule:
`teams.usecases.set_member_in_steps`, on rows read locked)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from controlplane_adapters.agents.sql import SqlAgentRepository
from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, owned_table
from controlplane_adapters.sql.rows import RowMapping, renamed
from controlplane_domain.teams.entity import Team
from controlplane_domain.teams.usecases import set_member_in_steps

teams = owned_table(
    "teams",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("runtime", sa.String(64), nullable=False),
    sa.Column("configuration", Json, nullable=False),
    sa.Column("skill_ids", Json, nullable=True),
    sa.Column("execution_environment", Json, nullable=True),
    unique=("name",),
)


TEAM_ROWS = RowMapping(Team, teams, settings=renamed("configuration"))


class SqlTeamRepository(SqlRepository[Team]):
    rows = TEAM_ROWS
    noun = "team"
    audited = Team.audited

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        return await set_member_in_steps(self, SqlAgentRepository(self.connection), organization_id, team_id,
                                         agent_id, member, now)  # fmt: skip
