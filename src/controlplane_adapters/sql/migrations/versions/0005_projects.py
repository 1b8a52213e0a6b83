"""projects and the agents and teams they hold

Create Date: 2026-11-25 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0005"
down_revision = "0004"


def _members(name: str, member: str, referred: str) -> None:
    op.create_table(
        name,
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column(member, sa.String(length=64), nullable=False),
        parts.organization_id_column(),
        parts.created_at_column(),
        parts.foreign_key(name, "project_id", "projects", ondelete="CASCADE"),
        parts.foreign_key(name, member, referred, ondelete="CASCADE"),
        parts.primary_key(name, "project_id", member),
    )
    op.create_index(op.f(f"ix_{name}_{member}"), name, [member], unique=False)


def upgrade() -> None:
    op.create_table(
        "projects",
        *parts.id_and_organization_columns(),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("key", sa.String(length=16), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("settings", parts.JSON, nullable=False),
        *parts.timestamp_columns(),
        parts.primary_key("projects"),
        parts.unique_in_organization("projects", "name"),
        parts.unique_in_organization("projects", "key"),
    )
    parts.create_page_index("projects")
    _members("project_agents", "agent_id", "agents")
    _members("project_teams", "team_id", "teams")


def downgrade() -> None:
    op.drop_table("project_teams")
    op.drop_table("project_agents")
    parts.drop_table("projects", ["ix_projects_org_created"])
