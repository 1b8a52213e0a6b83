"""skills and their attachments to agents, teams and environments

Create Date: 2026-11-26 10:00:00

Agents' and teams' `skill_ids` are left as they are: ids stored before skills existed name no skill, and the
skills' views leave them out (docs/api-decisions.md, "Skills").
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0006"
down_revision = "0005"


def _attachments(name: str, owner: str, referred: str) -> None:
    op.create_table(
        name,
        sa.Column(owner, sa.String(length=64), nullable=False),
        sa.Column("skill_id", sa.String(length=64), nullable=False),
        parts.organization_id_column(),
        sa.Column("configuration_override", parts.JSON, nullable=True),
        parts.created_at_column(),
        parts.foreign_key(name, owner, referred, ondelete="CASCADE"),
        parts.foreign_key(name, "skill_id", "skills", ondelete="CASCADE"),
        parts.primary_key(name, owner, "skill_id"),
    )
    op.create_index(op.f(f"ix_{name}_skill_id"), name, ["skill_id"], unique=False)


def upgrade() -> None:
    op.create_table(
        "skills",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("configuration", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("skills"),
        parts.unique_in_organization("skills", "name"),
    )
    parts.create_page_index("skills")
    _attachments("agent_skills", "agent_id", "agents")
    _attachments("team_skills", "team_id", "teams")
    _attachments("environment_skills", "environment_id", "environments")


def downgrade() -> None:
    op.drop_table("environment_skills")
    op.drop_table("team_skills")
    op.drop_table("agent_skills")
    parts.drop_table("skills", ["ix_skills_org_created"])
