"""Skills in SQL: the skills table, the attachment tables (agents', teams', environments'), the row mapping and
the repository."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, UtcDateTime, metadata, organization_column, owned_table
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import one_of, values_of
from controlplane_domain.config import JSONObject
from controlplane_domain.skills.entity import Skill, SkillOwner

skills = owned_table(
    "skills",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("type", sa.String(64), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("configuration", Json, nullable=False),
    unique=("name",),
)


def _attachments(name: str, owner: str, referred: str) -> sa.Table:
    """Where skills are attached, with each one's override: deleting the owner or the skill deletes the row."""
    return sa.Table(
        name,
        metadata,
        sa.Column(owner, sa.String(64), sa.ForeignKey(f"{referred}.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("skill_id", sa.String(64), sa.ForeignKey("skills.id", ondelete="CASCADE"), primary_key=True),
        organization_column(),
        sa.Column("configuration_override", Json, nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Index(f"ix_{name}_skill_id", "skill_id"),
    )


agent_skills = _attachments("agent_skills", "agent_id", "agents")
team_skills = _attachments("team_skills", "team_id", "teams")
environment_skills = _attachments("environment_skills", "environment_id", "environments")
SKILL_ROWS = RowMapping(Skill, skills)
ATTACHMENTS = {
    SkillOwner.AGENT: (agent_skills, "agent_id"),
    SkillOwner.TEAM: (team_skills, "team_id"),
    SkillOwner.ENVIRONMENT: (environment_skills, "environment_id"),
}


@functools.cache
def _attached_of(owner: SkillOwner, postgres: bool) -> sa.Select[Any]:
    """The skills attached to several owners with each attachment's override, in attachment order (built once)."""
    table, column = ATTACHMENTS[owner]
    mine: sa.BindParameter[str] = sa.bindparam("organization_id")
    return hot(
        sa.select(table.c[column].label("owner_id"), table.c.configuration_override, *skills.c)
        .select_from(table.join(skills, skills.c.id == table.c.skill_id))
        .where(
            table.c.organization_id == mine,
            skills.c.organization_id == mine,
            one_of(table.c[column], "owner_ids", postgres),
        )
        .order_by(table.c.created_at, table.c.skill_id)
    )


class SqlSkillRepository(SqlRepository[Skill]):
    rows = SKILL_ROWS
    noun = "skill"
    audited = Skill.audited

    async def get_many(self, organization_id: str, skill_ids: Sequence[str]) -> list[Skill]:
        if not skill_ids:
            return []
        t = self.table
        statement = sa.select(t).where(t.c.organization_id == organization_id, t.c.id.in_(list(set(skill_ids))))
        return [self._saw(row) for row in await self.connection.execute(statement)]

    async def attachments(self, organization_id: str, owner: SkillOwner, owner_id: str) -> dict[str, JSONObject | None]:
        table, column = ATTACHMENTS[owner]
        statement = (
            sa.select(table.c.skill_id, table.c.configuration_override)
            .where(table.c.organization_id == organization_id, table.c[column] == owner_id)
            .order_by(table.c.created_at, table.c.skill_id)
        )
        return {
            skill_id: None if override is None else dict(override)
            for skill_id, override in await self.connection.execute(statement)
        }

    async def attached_of(
        self, organization_id: str, owner: SkillOwner, owner_ids: Sequence[str]
    ) -> dict[str, dict[str, tuple[Skill, JSONObject | None]]]:
        if not owner_ids:
            return {}
        postgres = self.connection.dialect.name == "postgresql"
        parameters = {"organization_id": organization_id, "owner_ids": values_of(owner_ids, postgres)}
        found: dict[str, dict[str, tuple[Skill, JSONObject | None]]] = {}
        for row in await self.connection.execute(_attached_of(owner, postgres), parameters):
            override = None if row.configuration_override is None else dict(row.configuration_override)
            found.setdefault(row.owner_id, {})[row.id] = (SKILL_ROWS.to_domain(row), override)
        return found

    async def attach(
        self,
        organization_id: str,
        owner: SkillOwner,
        owner_id: str,
        skill_id: str,
        override: JSONObject | None,
        now: datetime,
    ) -> None:
        table, column = ATTACHMENTS[owner]
        where = (table.c[column] == owner_id, table.c.skill_id == skill_id)
        changed = await self.connection.execute(
            table.update().where(*where).values(configuration_override=sa.null() if override is None else override)
        )
        if changed.rowcount == 0:
            row = {
                column: owner_id,
                "skill_id": skill_id,
                "organization_id": organization_id,
                "configuration_override": sa.null() if override is None else override,
                "created_at": now,
            }
            await self.connection.execute(table.insert().values(**row))

    async def detach(self, organization_id: str, owner: SkillOwner, owner_id: str, skill_ids: Sequence[str]) -> None:
        table, column = ATTACHMENTS[owner]
        await self.connection.execute(
            table.delete().where(
                table.c.organization_id == organization_id,
                table.c[column] == owner_id,
                table.c.skill_id.in_(list(skill_ids)),
            )
        )

    async def owners(self, organization_id: str, owner: SkillOwner, skill_id: str) -> list[str]:
        table, column = ATTACHMENTS[owner]
        statement = (
            sa.select(table.c[column])
            .where(table.c.organization_id == organization_id, table.c.skill_id == skill_id)
            .order_by(table.c[column])
        )
        return [owner_id for (owner_id,) in await self.connection.execute(statement)]
